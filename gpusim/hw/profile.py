"""The program ncu runs: one warm-up and one profiled launch per job, at one size.

    python -m gpusim.hw.profile --size 4096 --jobs jobs.json --manifest manifest.json

Run under `ncu --profile-from-start off`: only the launches between
cudaProfilerStart and cudaProfilerStop are profiled, so the warm-up launch,
the random fills and the C resets stay out. The manifest records, per job,
how many kernels its profiled range launched (cuBLAS may launch more than one),
so the runner can match ncu's rows to the jobs.
"""
from __future__ import annotations

import argparse
import ctypes
import json
import sys


def _profiler(cp):
    """(start, stop) for cudaProfilerStart/Stop."""
    prof = getattr(cp.cuda, "profiler", None)
    if prof is not None and hasattr(prof, "start"):
        return prof.start, prof.stop
    rt = cp.cuda.runtime
    if hasattr(rt, "profilerStart"):
        return rt.profilerStart, rt.profilerStop
    for lib in ("libcudart.so", "libcudart.so.13", "libcudart.so.12"):
        try:
            h = ctypes.CDLL(lib)
            return h.cudaProfilerStart, h.cudaProfilerStop
        except OSError:
            continue
    raise RuntimeError("no way to call cudaProfilerStart from this cupy")


def warm_then_profile(cp, launch, start, stop):
    """One warm-up launch, then one between cudaProfilerStart and Stop: the one ncu profiles."""
    launch()
    cp.cuda.runtime.deviceSynchronize()
    start()
    launch()
    cp.cuda.runtime.deviceSynchronize()
    stop()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, required=True)
    ap.add_argument("--jobs", required=True)
    ap.add_argument("--manifest", required=True)
    a = ap.parse_args(argv)
    from gpusim.hw import gpu, twins
    cp = gpu.cupy()
    start, stop = _profiler(cp)
    M = N = K = a.size
    jobs = json.load(open(a.jobs))
    manifest = []
    for job in jobs:
        if job["kernel"] == "cublas":
            rs = cp.random.RandomState(0)
            A = rs.uniform(-1.0, 1.0, (M, K), dtype=cp.float32)
            B = rs.uniform(-1.0, 1.0, (K, N), dtype=cp.float32)
            C = cp.empty((M, N), dtype=cp.float32)
            warm_then_profile(cp, lambda: cp.matmul(A, B, out=C), start, stop)
            manifest.append({"label": job["label"], "n": None})
            del A, B, C
        else:
            name, p = job["kernel"], job["params"]
            grid, block, _ = twins.geometry(name, p, M, N, K)
            fn = cp.RawModule(path=job["cubin"]).get_function(name)
            prob = gpu.problem(cp, twins.spec(name), M, N, K, seed=0)
            prob.reset()
            warm_then_profile(cp, gpu.launcher(fn, grid, block, prob), start, stop)
            manifest.append({"label": job["label"], "n": 1})
            del prob
        cp.get_default_memory_pool().free_all_blocks()
        with open(a.manifest, "w") as f:
            json.dump(manifest, f)
        print(f"profiled {job['label']} at {a.size}", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
