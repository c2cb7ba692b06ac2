"""Wall time of `gpusim run <kernel> --size N` for each ladder kernel, numba cache cold and warm.

Each run is the command line a user types, in a fresh process (`python -m gpusim.report.cli run ...
--json`, output discarded). Cold: NUMBA_CACHE_DIR points at an empty folder, so the timing engine
and the other numba functions compile first. Warm: a shared folder after one unreported run of the
kernel, so they load from it. Warm runs are repeated (--repeat) and the median is printed; the
machine is shared and noisy.
Issue 4's target: warm <= 10 s at 4096 for every ladder kernel.
Usage: python bench/bench_run.py [--kernels a,b] [--size 4096] [--repeat 3] [--no-cold]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LADDER = ("naive", "coalesced", "smemtile", "tiled32", "regtile1d", "regblock", "regtile2d", "vectorized")


def timed_run(kernel: str, size: int, cache: str) -> float:
    """Seconds for one `gpusim run` in a new process with numba's cache in `cache`."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-m", "gpusim.report.cli", "run", kernel, "--size", str(size), "--json"]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[1:])} failed ({r.returncode}):\n{r.stderr[-2000:]}")
    return wall


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", default=",".join(LADDER))
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--repeat", type=int, default=3, help="warm runs per kernel (median printed)")
    ap.add_argument("--no-cold", action="store_true", help="skip the cold runs (one cold run warms the cache)")
    a = ap.parse_args()
    kernels = a.kernels.split(",")
    print(f"gpusim run <kernel> --size {a.size}: wall seconds, a new process each "
          f"(cold: empty numba cache; warm: median of {a.repeat})")
    print(f"{'kernel':11s} {'cold':>7s} {'warm':>7s}")
    with tempfile.TemporaryDirectory(prefix="gpusim-numba-") as cache:
        worst = 0.0
        for k in kernels:
            cold = ""
            if not a.no_cold:
                with tempfile.TemporaryDirectory(prefix="gpusim-numba-cold-") as empty:
                    cold = f"{timed_run(k, a.size, empty):7.1f}"
            timed_run(k, a.size, cache)              # whatever this kernel compiles is now cached; not reported
            warm = statistics.median(timed_run(k, a.size, cache) for _ in range(a.repeat))
            worst = max(worst, warm)
            print(f"{k:11s} {cold:>7s} {warm:7.1f}", flush=True)
    print(f"slowest warm run: {worst:.1f} s (target <= 10 s)")


if __name__ == "__main__":
    main()
