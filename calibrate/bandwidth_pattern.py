"""Read bandwidth by address pattern: the whole grid on one moving window, or each CTA on its own slice.

    python3 calibrate/bandwidth_pattern.py --out DIR      # on the GPU machine (nvcc, cupy)
    python3 calibrate/bandwidth_pattern.py --record DIR   # here: -> traces/hw/h200/micro/bandwidth_pattern.json

micro/bandwidth_dram.json (4.33 TB/s) and bandwidth_l2.json (7.37 TB/s) read a buffer grid-stride: at any
moment the 528 CTAs read one window of it together. micro/loaded_latency.json's streams, each SM on its own
slice, reached 4.72 and 9.69 TB/s. Here the same launch shape (528 CTAs x 512 threads, float4 .cg loads,
4 in flight per thread) reads the same buffers both ways (calibrate/bandwidth_pattern.cu: read_grid,
read_slice): 16.5 and 33 MB (L2-resident, about 4 GB read per launch), 264 MB, 1 GB and 4 GB (from DRAM,
1 GB or more a launch), so the pattern and the buffer's size (TLB reach) are told apart. Each launch is
timed between two CUDA events, 3 x 10 launches queued behind a 20 ms spin kernel; GB/s = bytes read over
the median launch less micro/launch_overhead.json's 3.55 us.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from micro_cli import BUILD_FLAGS, queued_times, gpu_provenance, out_or_record, write_record  # noqa: E402  (beside this script)

GRID, BLOCK = 528, 512
UNIT_F4 = 4 * GRID * BLOCK                    # 16.5 MB: every buffer is a whole number of these
UNITS = {"l2": (1, 2), "dram": (16, 64, 256)}
LAUNCH_OVERHEAD_US = 3.55                     # micro/launch_overhead.json


def run_on_gpu(out: Path):
    import subprocess
    import numpy as np
    from gpusim.hw.gpu import cupy, summarize_times
    cubin = out / "bandwidth_pattern.cubin"
    subprocess.run(["nvcc", *BUILD_FLAGS, "-cubin", "-I", str(HERE), "-o", str(cubin),
                    str(HERE / "bandwidth_pattern.cu")], check=True)
    cp = cupy()
    mod = cp.RawModule(path=str(cubin))
    spin = mod.get_function("spin")
    sink = cp.zeros(1, cp.float32)
    rows = []
    for where, units in UNITS.items():
        for u in units:
            n4 = u * UNIT_F4
            buf = cp.ones(n4 * 4, cp.float32)
            nbytes = n4 * 16
            passes = max(1, (4 << 30) // nbytes) if where == "l2" else max(1, (1 << 30) // nbytes)
            for name in ("read_grid", "read_slice"):
                fn = mod.get_function(name)
                times = queued_times(cp, spin, lambda: fn((GRID,), (BLOCK,), (buf, np.int64(n4), np.int32(passes),
                                                                           sink)), 3, 10)
                q = summarize_times(times, 0)
                us = 1e3 * q["time_ms_median"]
                rows.append({"where": where, "kernel": name, "buffer_mb": nbytes / 2**20, "passes": passes,
                             "us_median": us, "gb_per_s": nbytes * passes / (us - LAUNCH_OVERHEAD_US) / 1e3,
                             "launches": len(times)})
                print(rows[-1], flush=True)
    cubin.unlink()
    (out / "pattern_rows.json").write_text(json.dumps(rows, indent=1))
    (out / "pattern_prov.json").write_text(json.dumps(gpu_provenance("bandwidth_pattern.py")))


def record(dir_: Path, dest: Path):
    prov = json.loads((dir_ / "pattern_prov.json").read_text())
    rows = json.loads((dir_ / "pattern_rows.json").read_text())
    best = {f"{w}_{k}": max(r["gb_per_s"] for r in rows if r["where"] == w and r["kernel"] == k)
            for w in UNITS for k in ("read_grid", "read_slice")}
    write_record(
        dest, prov, "bandwidth_pattern",
        what="chip-wide read bandwidth from the L2 and from DRAM by address pattern: the grid on one moving "
            "window (grid-stride) against each CTA on its own slice, at several buffer sizes",
        how=f"calibrate/bandwidth_pattern.cu's read_grid and read_slice, {GRID} CTAs x {BLOCK} threads, float4 "
            ".cg loads 4 in flight per thread; each launch between two CUDA events, 3 x 10 launches queued "
            "behind a 20 ms spin kernel; GB/s = bytes over the median less 3.55 us of launch overhead "
            "(calibrate/bandwidth_pattern.py)",
        source="calibrate/bandwidth_pattern.cu:read_grid,read_slice",
        unit="GB/s (1e9 B/s); value: the best of each (where, pattern)",
        value=best,
        details={"rows": rows},
    )


if __name__ == "__main__":
    out_or_record(run_on_gpu, record, "bandwidth_pattern.json")
