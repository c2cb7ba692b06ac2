"""What a kernel launch costs beside its work, measured as the ladder's times are measured.

    python3 calibrate/launch_overhead.py --out DIR      # on the GPU machine (nvcc, cupy)
    python3 calibrate/launch_overhead.py --record DIR   # here: -> traces/hw/h200/micro/launch_overhead.json

calibrate/launch_overhead.cu's empty_kernel (its threads do nothing) is launched at every grid and
block size of the ladder's records, each launch between two CUDA events as gpusim.hw.gpu.time_launches
times the ladder, in two ways:

* "queued": a spin kernel (one thread, 20 ms) is launched first and the timed launches are queued behind
  it, so the GPU runs them back to back. This is how the ladder's launches run (each takes longer than the
  CPU needs to queue the next): the median is what the events see of a launch besides its work.
* "paced": time_launches itself, with nothing ahead: the GPU waits for the CPU to queue each launch, so
  this measures the host's launch path (cupy's), not the GPU's; kept to show the difference.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from micro_cli import BUILD_FLAGS, queued_times, provenance, gpu_provenance, out_or_record  # noqa: E402  (beside this script)

# (grid CTAs, threads per CTA): one CTA; one and two per SM; every launch shape of the ladder's records
CONFIGS = [(1, 32), (1, 256), (1, 1024), (132, 256), (264, 256),
           (64, 256), (128, 128), (256, 256), (256, 512), (512, 128), (1024, 128), (1024, 256), (1024, 512),
           (1024, 1024), (2048, 128), (4096, 512), (4096, 1024), (16384, 1024)]


def run_on_gpu(out: Path):
    import subprocess
    from gpusim.hw.gpu import cupy, summarize_times, time_launches
    out.mkdir(parents=True, exist_ok=True)
    cubin = out / "launch_overhead.cubin"
    subprocess.run(["nvcc", *BUILD_FLAGS, "-cubin", "-o", str(cubin), str(HERE / "launch_overhead.cu")], check=True)
    cp = cupy()
    mod = cp.RawModule(path=str(cubin))
    fn, spin = mod.get_function("empty_kernel"), mod.get_function("spin")
    buf = cp.zeros(1024, dtype=cp.float32)
    rows = []
    for grid, block in CONFIGS:
        launch = lambda: fn((grid,), (block,), (buf,))      # noqa: E731
        paced = time_launches(cp, launch, target_s=0.3)
        queued = queued_times(cp, spin, launch, 5, 400)     # 5 x 400 launches queued behind a 20 ms spin
        q = summarize_times(queued, 0)
        rows.append({"grid": grid, "block": block,
                     "queued_us_median": 1e3 * q["time_ms_median"], "queued_us_p10": 1e3 * q["time_ms_quantiles"]["p10"],
                     "queued_us_p90": 1e3 * q["time_ms_quantiles"]["p90"], "queued_launches": len(queued),
                     "paced_us_median": 1e3 * paced["time_ms_median"], "paced_launches": paced["timing"]["launches"]})
        print(rows[-1], flush=True)
    cubin.unlink()
    (out / "launch_rows.json").write_text(json.dumps(rows, indent=1))
    (out / "launch_prov.json").write_text(json.dumps(gpu_provenance("launch_overhead.py")))


def record(dir_: Path, dest: Path):
    prov = json.loads((dir_ / "launch_prov.json").read_text())
    rows = json.loads((dir_ / "launch_rows.json").read_text())
    one = next(r for r in rows if r["grid"] == 1 and r["block"] == 256)
    rec = {
        "schema": "gpusim.hw.micro/1", "bench": "launch_overhead",
        "what": "the time CUDA events see of a launch whose threads do nothing, at the ladder's grid and block "
                "sizes: what a measured kernel time holds besides the kernel's work",
        "how": "calibrate/launch_overhead.cu's empty_kernel, each launch between two CUDA events as the "
               "ladder's records time theirs; queued: 5 x 400 launches queued behind a 20 ms spin kernel, so the "
               "GPU runs them back to back as it runs the ladder's; paced: gpusim.hw.gpu.time_launches with "
               "nothing ahead, where each launch waits for the host (calibrate/launch_overhead.py)",
        "command": prov["command"] + " (on the H200), then --record DIR here",
        "source": "calibrate/launch_overhead.cu:empty_kernel",
        **provenance(prov),
        "unit": "microseconds; value: queued median of one CTA of 256 threads",
        "value": one["queued_us_median"],
        "details": {"rows": rows},
    }
    dest.write_text(json.dumps(rec, indent=1))
    print(f"wrote {dest}")


if __name__ == "__main__":
    out_or_record(run_on_gpu, record, "launch_overhead.json")
