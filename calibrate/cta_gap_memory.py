"""Does a CTA slot's empty time between CTAs (micro/cta_turnaround.json: 201 ns) cost a memory-bound
kernel, or do the other resident CTAs' loads hide it?

    python3 calibrate/cta_gap_memory.py --out DIR      # on the GPU machine (nvcc, cupy)
    python3 calibrate/cta_gap_memory.py --record DIR   # here: -> traces/hw/h200/micro/cta_gap_memory.json

The same bytes read by many small CTAs or fewer large ones (calibrate/cta_gap_memory.cu's read_cta:
256 threads, each reading 1, 4 or 16 float4s): 256 MB from DRAM (a fresh 256 MB buffer written between
launches would cost more than the read; the 256 MB buffer is four times the L2, so each launch reads it
from DRAM) and 24 MB from the L2 (the buffer stays there launch after launch). Each launch is timed
between two CUDA events, 3 x 100 launches queued behind a 20 ms spin kernel. If the slot's gap were
exposed, the small CTAs' launch would take (rounds - rounds of the large) x 201 ns longer (rounds of 8
CTAs per SM over 132 SMs); if the loads of the other slots hide it, the times are the same.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from micro_cli import BUILD_FLAGS, queued_times, provenance, gpu_provenance, out_or_record  # noqa: E402  (beside this script)

BLOCK = 256
SIZES = {"dram": 256 * 2**20, "l2": 24 * 2**20}
PER_THREAD = (1, 4, 16)


def run_on_gpu(out: Path):
    import subprocess
    from gpusim.hw.gpu import cupy, summarize_times
    cubin = out / "cta_gap_memory.cubin"
    subprocess.run(["nvcc", *BUILD_FLAGS, "-cubin", "-o", str(cubin), str(HERE / "cta_gap_memory.cu")], check=True)
    cp = cupy()
    mod = cp.RawModule(path=str(cubin))
    fn, spin = mod.get_function("read_cta"), mod.get_function("spin")
    rows = []
    for where, nbytes in SIZES.items():
        buf = cp.ones(nbytes // 4, dtype=cp.float32)
        for k in PER_THREAD:
            grid = nbytes // (BLOCK * 16 * k)
            res = cp.zeros(grid * BLOCK, dtype=cp.float32)
            times = queued_times(cp, spin, lambda: fn((grid,), (BLOCK,), (buf, res, cp.int32(k))), 3, 100)
            assert float(res[0]) == 4.0 * k
            q = summarize_times(times, 0)
            rows.append({"where": where, "bytes": nbytes, "per_thread_float4": k, "grid": grid, "block": BLOCK,
                         "queued_us_median": 1e3 * q["time_ms_median"],
                         "queued_us_p10": 1e3 * q["time_ms_quantiles"]["p10"],
                         "queued_us_p90": 1e3 * q["time_ms_quantiles"]["p90"], "launches": len(times)})
            print(rows[-1], flush=True)
    cubin.unlink()
    (out / "gap_rows.json").write_text(json.dumps(rows, indent=1))
    (out / "gap_prov.json").write_text(json.dumps(gpu_provenance("cta_gap_memory.py")))


def record(dir_: Path, dest: Path):
    prov = json.loads((dir_ / "gap_prov.json").read_text())
    rows = json.loads((dir_ / "gap_rows.json").read_text())
    slots = 132 * (2048 // BLOCK)
    summary = {}
    for where in SIZES:
        rs = sorted((r for r in rows if r["where"] == where), key=lambda r: r["grid"])
        small, large = rs[-1], rs[0]            # most CTAs (1 float4 a thread), fewest (16)
        extra_rounds = (small["grid"] - large["grid"]) / slots
        summary[where] = {"extra_us": small["queued_us_median"] - large["queued_us_median"],
                          "extra_rounds": extra_rounds,
                          "ns_per_extra_round": 1e3 * (small["queued_us_median"] - large["queued_us_median"])
                          / extra_rounds}
    rec = {
        "schema": "gpusim.hw.micro/1", "bench": "cta_gap_memory",
        "what": "whether a CTA slot's empty time between CTAs costs a memory-bound kernel: the same bytes read "
                "by 256-thread CTAs of 1, 4 or 16 float4s a thread, from DRAM (256 MB) and from the L2 (24 MB)",
        "how": "calibrate/cta_gap_memory.cu's read_cta, each launch between two CUDA events, 3 x 100 launches "
               "queued behind a 20 ms spin kernel (calibrate/cta_gap_memory.py)",
        "command": prov["command"] + " (on the H200), then --record DIR here",
        "source": "calibrate/cta_gap_memory.cu:read_cta",
        **provenance(prov),
        "unit": "ns per extra round of 8 CTAs an SM (the small CTAs' launch time minus the large ones', over the "
                "rounds they add); value: DRAM",
        "value": summary["dram"]["ns_per_extra_round"],
        "details": {"summary": summary, "rows": rows},
    }
    dest.write_text(json.dumps(rec, indent=1))
    print(f"wrote {dest}")


if __name__ == "__main__":
    out_or_record(run_on_gpu, record, "cta_gap_memory.json")
