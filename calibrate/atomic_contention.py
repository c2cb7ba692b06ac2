"""What atomics to one address cost when every CTA makes one: the launch time of CTAs whose first thread
makes a plain store, an atomicAdd to an address of its own, or an atomicAdd to one address shared by all
(reduce_atomic's last step), at 132 to 65536 CTAs of 256 threads.

    python3 calibrate/atomic_contention.py --out DIR      # on the GPU machine (nvcc, cupy)
    python3 calibrate/atomic_contention.py --record DIR   # here: -> traces/hw/h200/micro/atomic_contention.json

calibrate/atomic_contention.cu's one_update; each launch between two CUDA events, 3 x 200 launches queued
behind a 20 ms spin kernel (as launch_overhead.py's "queued" rows). The slope of the shared-address rows
against the grid, less the private-address rows' slope, is what each more atomic on one address costs:
the L2 applies them one after another.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from micro_cli import BUILD_FLAGS, queued_times, provenance, gpu_provenance, out_or_record  # noqa: E402  (beside this script)

GRIDS = (132, 264, 528, 1024, 2048, 4096, 8192, 16384, 32768, 65536)
MODES = {0: "store", 1: "atomic_private", 2: "atomic_shared"}
BLOCK = 256


def run_on_gpu(out: Path):
    import subprocess
    from gpusim.hw.gpu import cupy, summarize_times
    cubin = out / "atomic_contention.cubin"
    subprocess.run(["nvcc", *BUILD_FLAGS, "-cubin", "-o", str(cubin), str(HERE / "atomic_contention.cu")], check=True)
    subprocess.run(["cuobjdump", "-sass", str(cubin)], check=True, stdout=open(out / "atomic_contention.sass", "w"))
    cp = cupy()
    mod = cp.RawModule(path=str(cubin))
    fn, spin = mod.get_function("one_update"), mod.get_function("spin")
    buf = cp.zeros(max(GRIDS), dtype=cp.float32)
    rows = []
    for mode, name in MODES.items():
        for grid in GRIDS:
            times = queued_times(cp, spin, lambda: fn((grid,), (BLOCK,), (buf, cp.int32(mode))), 3, 200)
            q = summarize_times(times, 0)
            rows.append({"mode": name, "grid": grid, "block": BLOCK, "queued_us_median": 1e3 * q["time_ms_median"],
                         "queued_us_p10": 1e3 * q["time_ms_quantiles"]["p10"],
                         "queued_us_p90": 1e3 * q["time_ms_quantiles"]["p90"], "launches": len(times)})
            print(rows[-1], flush=True)
    cubin.unlink()
    (out / "atomic_rows.json").write_text(json.dumps(rows, indent=1))
    (out / "atomic_prov.json").write_text(json.dumps(gpu_provenance("atomic_contention.py")))


def slope_ns(rows: list, mode: str, lo: int, hi: int) -> float:
    """ns per CTA between the grids lo and hi."""
    t = {r["grid"]: r["queued_us_median"] for r in rows if r["mode"] == mode}
    return (t[hi] - t[lo]) * 1e3 / (hi - lo)


def record(dir_: Path, dest: Path):
    prov = json.loads((dir_ / "atomic_prov.json").read_text())
    rows = json.loads((dir_ / "atomic_rows.json").read_text())
    lo, hi = GRIDS[-3], GRIDS[-1]
    slopes = {m: slope_ns(rows, m, lo, hi) for m in MODES.values()}
    sass = (dir_ / "atomic_contention.sass").read_text() if (dir_ / "atomic_contention.sass").exists() else ""
    rec = {
        "schema": "gpusim.hw.micro/1", "bench": "atomic_contention",
        "what": "what atomics to one address cost when every CTA makes one: plain stores, atomicAdd to an "
                "address each, atomicAdd to one address, one per CTA of 256 threads, 132 to 65536 CTAs",
        "how": "calibrate/atomic_contention.cu's one_update, each launch between two CUDA events, 3 x 200 "
               "launches queued behind a 20 ms spin kernel (calibrate/atomic_contention.py); slopes over the "
               f"grids {lo} to {hi}",
        "command": prov["command"] + " (on the H200), then --record DIR here",
        "source": "calibrate/atomic_contention.cu:one_update",
        **provenance(prov),
        "unit": "ns per atomic on one address (the shared-address slope less the private-address one)",
        "value": slopes["atomic_shared"] - slopes["atomic_private"],
        "details": {"slope_ns_per_cta": slopes, "red_in_sass": "RED" in sass, "rows": rows},
    }
    dest.write_text(json.dumps(rec, indent=1))
    print(f"wrote {dest}")


if __name__ == "__main__":
    out_or_record(run_on_gpu, record, "atomic_contention.json")
