"""What a kernel's code costs to fetch the first time an SM runs it: N FFMAs as straight-line code against
the same N FFMAs from a loop over a 64-FFMA body (N = 1024, 4096, 16384: 16 to 256 KB of straight code).

    python3 calibrate/icache_fill.py --out DIR      # on the GPU machine (nvcc, cupy)
    python3 calibrate/icache_fill.py --record DIR   # here: -> traces/hw/h200/micro/icache_fill.json

calibrate/icache_fill.cu, one warp per SM (132 CTAs of 32 threads), each launch between two CUDA events,
3 x 200 launches queued behind a 20 ms spin kernel. The straight kernel's time less the looped one's,
over the straight code's bytes beyond the loop's, is what fetching new code costs per KB; each launch
starts with whatever the SM's instruction caches kept from the one before (the same kernel again).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from micro_cli import BUILD_FLAGS, queued_times, provenance, gpu_provenance, out_or_record  # noqa: E402

SIZES = (1024, 4096, 16384)


def run_on_gpu(out: Path):
    import re
    import subprocess
    from gpusim.hw.gpu import cupy, summarize_times
    cubin = out / "icache_fill.cubin"
    subprocess.run(["nvcc", *BUILD_FLAGS, "-cubin", "-o", str(cubin), str(HERE / "icache_fill.cu")], check=True)
    sass = subprocess.run(["cuobjdump", "-sass", str(cubin)], check=True, capture_output=True, text=True).stdout
    # instructions per function in the SASS (each 16 B)
    counts, cur = {}, None
    for line in sass.splitlines():
        m = re.search(r"Function : (\S+)", line)
        if m:
            cur = m.group(1)
            counts[cur] = 0
        elif cur and re.search(r"/\*[0-9a-f]{4,}\*/", line):
            counts[cur] += 1
    cp = cupy()
    mod = cp.RawModule(path=str(cubin))
    spin = mod.get_function("spin")
    buf = cp.zeros(32, dtype=cp.float32)
    rows = []
    for n in SIZES:
        for kind in ("straight", "looped"):
            fn = mod.get_function(f"{kind}_{n}")
            times = queued_times(cp, spin, lambda: fn((132,), (32,), (cp.float32(0.5), cp.float32(0.999), buf)), 3, 200)
            q = summarize_times(times, 0)
            rows.append({"kernel": f"{kind}_{n}", "ffmas": n, "sass_instructions": counts.get(f"{kind}_{n}"),
                         "queued_us_median": 1e3 * q["time_ms_median"],
                         "queued_us_p10": 1e3 * q["time_ms_quantiles"]["p10"],
                         "queued_us_p90": 1e3 * q["time_ms_quantiles"]["p90"], "launches": len(times)})
            print(rows[-1], flush=True)
    cubin.unlink()
    (out / "icache_rows.json").write_text(json.dumps(rows, indent=1))
    (out / "icache_prov.json").write_text(json.dumps(gpu_provenance("icache_fill.py")))


def record(dir_: Path, dest: Path):
    prov = json.loads((dir_ / "icache_prov.json").read_text())
    rows = json.loads((dir_ / "icache_rows.json").read_text())
    t = {r["kernel"]: r for r in rows}
    per_kb = {}
    for n in SIZES:
        s, lp = t[f"straight_{n}"], t[f"looped_{n}"]
        extra_kb = ((s["sass_instructions"] or 0) - (lp["sass_instructions"] or 0)) * 16 / 1024
        per_kb[str(n)] = {"extra_us": s["queued_us_median"] - lp["queued_us_median"], "extra_code_kb": extra_kb,
                          "ns_per_kb": 1e3 * (s["queued_us_median"] - lp["queued_us_median"]) / extra_kb
                          if extra_kb > 0 else None}
    rec = {
        "schema": "gpusim.hw.micro/1", "bench": "icache_fill",
        "what": "what a kernel's code costs to fetch the first time an SM runs it: N FFMAs as straight-line code "
                "against the same N from a loop over a 64-FFMA body, one warp per SM",
        "how": "calibrate/icache_fill.cu, each launch between two CUDA events, 3 x 200 launches queued behind a "
               "20 ms spin kernel (calibrate/icache_fill.py); SASS instruction counts from cuobjdump",
        "command": prov["command"] + " (on the H200), then --record DIR here",
        "source": "calibrate/icache_fill.cu",
        **provenance(prov),
        "unit": "ns per KB of straight-line code beyond the loop's; value: N = 16384",
        "value": per_kb[str(SIZES[-1])]["ns_per_kb"],
        "details": {"by_ffmas": per_kb, "rows": rows},
    }
    dest.write_text(json.dumps(rec, indent=1))
    print(f"wrote {dest}")


if __name__ == "__main__":
    out_or_record(run_on_gpu, record, "icache_fill.json")
