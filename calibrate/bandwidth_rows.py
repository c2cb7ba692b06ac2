"""Read bandwidth of many row streams at once (sgemv's pattern) against one grid-stride stream.

    python3 calibrate/bandwidth_rows.py --out DIR      # on the GPU machine (nvcc, cupy)
    python3 calibrate/bandwidth_rows.py --record DIR   # here: -> traces/hw/h200/micro/bandwidth_rows.json

sgemv (one warp a row, lane-strided 4-byte loads) reads its matrix at about 3.9 TB/s at 4096 where the
engine, DRAM-bound at micro/bandwidth_pattern.json's 4.7 TB/s, finished it 9 % sooner. This asks whether the
pattern costs DRAM bandwidth: the same bytes read by the same launch shape (256-thread CTAs, one warp a
row) with the same loads (plain LDG, 4 in flight a warp), as rows (calibrate/bandwidth_rows.cu: rows_f1,
each warp its own row, the rows a power of two apart or padded by 512 B) and grid-stride (grid_f1: the
grid on one moving window); float4 variants (rows_f4, grid_f4) tell the request's width apart. Shapes:
sgemv's at 4096 (4096 rows of 16 KB, 64 MB, 512 CTAs: one round), at 2048 (2048 rows of 8 KB, 16 MB,
L2-resident), and 65536 rows of 16 KB (1 GB, 8192 CTAs: many rounds). Each launch between two CUDA events,
3 x 40 launches queued behind a 20 ms spin kernel (3 x 10 at 1 GB); GB/s = bytes over the median launch
less micro/launch_overhead.json's 3.55 us.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from micro_cli import build_keeping_sass, queued_times, gpu_provenance, out_or_record, write_record  # noqa: E402

BLOCK = 256
LAUNCH_OVERHEAD_US = 3.55                     # micro/launch_overhead.json
# (name, rows, floats a row): sgemv's shapes at 4096 and 2048, and a DRAM stream of many rounds
SHAPES = (("sgemv4096", 4096, 4096), ("sgemv2048", 2048, 2048), ("rows1g", 65536, 4096))
PAD = 128                                     # floats (512 B) added to a row's pitch in the padded case


def run_on_gpu(out: Path):
    import numpy as np
    from gpusim.hw.gpu import cupy, summarize_times
    cubin = build_keeping_sass(out, "bandwidth_rows")
    cp = cupy()
    mod = cp.RawModule(path=str(cubin))
    spin = mod.get_function("spin")
    fn = {k: mod.get_function(k) for k in ("rows_f1", "grid_f1", "rows_f4", "grid_f4")}
    sink = cp.zeros(1, cp.float32)
    rows_out = []
    for shape, n, row in SHAPES:
        grid = n * 32 // BLOCK
        buf = cp.ones(n * (row + PAD), cp.float32)       # room for the padded pitch
        nbytes = n * row * 4
        per = 10 if nbytes > 2**28 else 40
        cases = {
            "rows_f1": lambda: fn["rows_f1"]((grid,), (BLOCK,), (buf, np.int32(row), np.int64(row), sink)),
            "rows_f1_padded": lambda: fn["rows_f1"]((grid,), (BLOCK,), (buf, np.int32(row), np.int64(row + PAD),
                                                                        sink)),
            "grid_f1": lambda: fn["grid_f1"]((grid,), (BLOCK,), (buf, np.int64(n * row), sink)),
            "rows_f4": lambda: fn["rows_f4"]((grid,), (BLOCK,), (buf, np.int32(row // 4), np.int64(row // 4),
                                                                 sink)),
            "grid_f4": lambda: fn["grid_f4"]((grid,), (BLOCK,), (buf, np.int64(n * row // 4), sink)),
        }
        for name, launch in cases.items():
            q = summarize_times(queued_times(cp, spin, launch, 3, per), 0)
            us = 1e3 * q["time_ms_median"]
            rows_out.append({"shape": shape, "rows": n, "row_bytes": row * 4, "grid": grid, "block": BLOCK,
                             "case": name, "bytes": nbytes, "us_median": us,
                             "us_p10": 1e3 * q["time_ms_quantiles"]["p10"],
                             "us_p90": 1e3 * q["time_ms_quantiles"]["p90"],
                             "gb_per_s": nbytes / (us - LAUNCH_OVERHEAD_US) / 1e3, "launches": 3 * per})
            print(rows_out[-1], flush=True)
        del buf
    cubin.unlink()
    (out / "rows_rows.json").write_text(json.dumps(rows_out, indent=1))
    (out / "rows_prov.json").write_text(json.dumps(gpu_provenance("bandwidth_rows.py")))


def record(dir_: Path, dest: Path):
    prov = json.loads((dir_ / "rows_prov.json").read_text())
    rows = json.loads((dir_ / "rows_rows.json").read_text())
    value = {f"{r['shape']}_{r['case']}": round(r["gb_per_s"], 1) for r in rows}
    write_record(
        dest, prov, "bandwidth_rows",
        what="read bandwidth of one row stream a warp (sgemv's pattern) against one grid-stride stream: the "
             "same bytes, launch shape and loads; rows a power of two apart or padded; 4-byte and 16-byte loads",
        how="calibrate/bandwidth_rows.cu's rows_f1, grid_f1, rows_f4, grid_f4, 256-thread CTAs, one warp a "
            "row, 4 loads in flight a warp; each launch between two CUDA events, queued behind a 20 ms spin "
            "kernel (3 x 40 launches, 3 x 10 at 1 GB); GB/s = bytes over the median less 3.55 us of launch "
            "overhead (calibrate/bandwidth_rows.py)",
        source="calibrate/bandwidth_rows.cu:rows_f1,grid_f1,rows_f4,grid_f4",
        unit="GB/s (1e9 B/s) by shape and case",
        value=value, details={"rows": rows}, sass=dir_ / "bandwidth_rows.sass")


if __name__ == "__main__":
    out_or_record(run_on_gpu, record, "bandwidth_rows.json")
