"""How much of the L2 a streaming kernel keeps between launches: reads, and read-plus-write copies, of
buffers from 8 to 128 MB, launched again and again.

    python3 calibrate/l2_resident.py --out DIR      # on the GPU machine (nvcc, cupy)
    python3 calibrate/l2_resident.py --record DIR   # here: -> traces/hw/h200/micro/l2_resident.json

calibrate/l2_write.cu's load_full (float4 loads, one read-only stream) and copy_full (a float4 copy:
one read and one write stream), grid-stride over 132 x 8 CTAs of 256 threads, timed by
gpusim.hw.gpu.time_launches (queued CUDA events). While the bytes a launch touches fit in what the L2 keeps,
each launch finds them there and runs near the L2's bandwidth; past it, at DRAM's. The record gives each
size's rate and the largest working set still served from the L2 (within 25 % of the smallest buffers'
rate): the timing model's warm-L2 limit for streaming kernels.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from micro_cli import BUILD_FLAGS, provenance, gpu_provenance, out_or_record  # noqa: E402  (beside this script)

GRID, BLOCK = 132 * 8, 256
MB = 1 << 20
SIZES_MB = (8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 128)    # bytes touched per launch


def run_on_gpu(out: Path):
    import subprocess
    import numpy as np
    from gpusim.hw.gpu import cupy, time_launches
    out.mkdir(parents=True, exist_ok=True)
    cubin = out / "l2_write.cubin"
    subprocess.run(["nvcc", *BUILD_FLAGS, "-cubin", "-o", str(cubin), str(HERE / "l2_write.cu")], check=True)
    cp = cupy()
    mod = cp.RawModule(path=str(cubin))
    load, copy = mod.get_function("load_full"), mod.get_function("copy_full")
    a = cp.zeros(max(SIZES_MB) * MB // 4, dtype=cp.float32)
    b = cp.zeros(max(SIZES_MB) * MB // 4, dtype=cp.float32)
    sink = cp.zeros(1, dtype=cp.float32)
    rows = []
    for mb in SIZES_MB:
        n4 = mb * MB // 16
        t = time_launches(cp, lambda: load((GRID,), (BLOCK,), (a, sink, np.int32(n4))), target_s=0.3)
        rows.append({"kernel": "load_full", "touched_mb": mb, "time_us_median": 1e3 * t["time_ms_median"]})
        n4 = mb * MB // 32              # half read, half written
        t = time_launches(cp, lambda: copy((GRID,), (BLOCK,), (a, b, np.int32(n4))), target_s=0.3)
        rows.append({"kernel": "copy_full", "touched_mb": mb, "time_us_median": 1e3 * t["time_ms_median"]})
        print(rows[-2], rows[-1], flush=True)
    cubin.unlink()
    (out / "l2_resident_rows.json").write_text(json.dumps(rows, indent=1))
    (out / "l2_resident_prov.json").write_text(json.dumps(gpu_provenance("l2_resident.py")))


def record(dir_: Path, dest: Path):
    prov = json.loads((dir_ / "l2_resident_prov.json").read_text())
    rows = json.loads((dir_ / "l2_resident_rows.json").read_text())
    overhead = json.loads((dest.parent / "launch_overhead.json").read_text())["value"]
    kept = {}
    for r in rows:
        r["gb_per_s"] = r["touched_mb"] * MB / max(r["time_us_median"] - overhead, 1e-3) / 1e3
    for k in ("load_full", "copy_full"):
        mine = sorted((r for r in rows if r["kernel"] == k), key=lambda r: r["touched_mb"])
        top = max(r["gb_per_s"] for r in mine[:3])
        kept[k] = max(r["touched_mb"] for r in mine if r["gb_per_s"] >= 0.75 * top)
    rec = {
        "schema": "gpusim.hw.micro/1", "bench": "l2_resident",
        "what": "the largest working set a streaming kernel finds in the L2 launch after launch: float4 reads, "
                "and float4 copies (half the bytes read, half written), 8-128 MB",
        "how": "calibrate/l2_write.cu's load_full and copy_full, grid-stride over 132 x 8 CTAs x 256 "
               "threads, timed by gpusim.hw.gpu.time_launches (queued CUDA events); rate = bytes touched over "
               "the median less launch_overhead.json's value; kept = the largest size within 25 % of the best "
               "rate of the three smallest (calibrate/l2_resident.py)",
        "command": prov["command"] + " (on the H200), then --record DIR here",
        "source": "calibrate/l2_write.cu:load_full,copy_full",
        **provenance(prov),
        "unit": "MB (2^20 B) touched per launch, the largest still served from the L2 (the copy's)",
        "value": kept["copy_full"],
        "details": {"kept_mb": kept, "rows": rows},
    }
    dest.write_text(json.dumps(rec, indent=1))
    print(f"wrote {dest}: kept {kept}")


if __name__ == "__main__":
    out_or_record(run_on_gpu, record, "l2_resident.json")
