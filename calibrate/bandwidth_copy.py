"""DRAM copy bandwidth with float4 accesses: 1 GiB copied to another 1 GiB by 256-thread CTAs whose
threads copy 16 float4s each (16384 CTAs: the CTA slots' gaps between CTAs, micro/cta_turnaround.json,
cost under 1 % of the launch), and, for comparison, 1 and 4 float4s a thread.

    python3 calibrate/bandwidth_copy.py --out DIR      # on the GPU machine (nvcc, cupy)
    python3 calibrate/bandwidth_copy.py --record DIR   # here: -> traces/hw/h200/micro/bandwidth_copy.json

micro/bandwidth_dram.json's copy figure is cupy.copyto's (a float32 elementwise kernel); a kernel that
moves float4s (copy4) reaches more. Each launch between two CUDA events, 3 x 20 launches queued behind a
20 ms spin kernel; bytes read plus written over the median time, the launch overhead included as the
ladder's records include it.
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
NBYTES = 2**30
PER_THREAD = (16, 4, 1)


def run_on_gpu(out: Path):
    import subprocess
    from gpusim.hw.gpu import cupy, summarize_times
    cubin = out / "bandwidth_copy.cubin"
    subprocess.run(["nvcc", *BUILD_FLAGS, "-cubin", "-o", str(cubin), str(HERE / "bandwidth_copy.cu")], check=True)
    cp = cupy()
    mod = cp.RawModule(path=str(cubin))
    fn, spin = mod.get_function("copy_cta"), mod.get_function("spin")
    src = cp.ones(NBYTES // 4, dtype=cp.float32)
    dst = cp.zeros(NBYTES // 4, dtype=cp.float32)
    rows = []
    for k in PER_THREAD:
        grid = NBYTES // (BLOCK * 16 * k)
        times = queued_times(cp, spin, lambda: fn((grid,), (BLOCK,), (src, dst, cp.int32(k))), 3, 20)
        assert float(dst[-1]) == 1.0
        q = summarize_times(times, 0)
        rows.append({"per_thread_float4": k, "grid": grid, "block": BLOCK, "bytes_read": NBYTES,
                     "bytes_written": NBYTES, "time_ms_median": q["time_ms_median"],
                     "gb_per_s_read_plus_write": 2 * NBYTES / (q["time_ms_median"] * 1e-3) / 1e9,
                     "launches": len(times)})
        print(rows[-1], flush=True)
    cubin.unlink()
    (out / "copy_rows.json").write_text(json.dumps(rows, indent=1))
    (out / "copy_prov.json").write_text(json.dumps(gpu_provenance("bandwidth_copy.py")))


def record(dir_: Path, dest: Path):
    prov = json.loads((dir_ / "copy_prov.json").read_text())
    rows = json.loads((dir_ / "copy_rows.json").read_text())
    big = next(r for r in rows if r["per_thread_float4"] == max(PER_THREAD))
    rec = {
        "schema": "gpusim.hw.micro/1", "bench": "bandwidth_copy",
        "what": "DRAM copy bandwidth with float4 accesses: 1 GiB copied by 256-thread CTAs of 16 (and 4, 1) "
                "float4s a thread",
        "how": "calibrate/bandwidth_copy.cu's copy_cta, each launch between two CUDA events, 3 x 20 launches "
               "queued behind a 20 ms spin kernel; bytes read + written over the median (calibrate/bandwidth_copy.py)",
        "command": prov["command"] + " (on the H200), then --record DIR here",
        "source": "calibrate/bandwidth_copy.cu:copy_cta",
        **provenance(prov),
        "unit": "GB/s (1e9 B/s) read + written; value: 16 float4s a thread",
        "value": big["gb_per_s_read_plus_write"],
        "details": {"rows": rows},
    }
    dest.write_text(json.dumps(rec, indent=1))
    print(f"wrote {dest}")


if __name__ == "__main__":
    out_or_record(run_on_gpu, record, "bandwidth_copy.json")
