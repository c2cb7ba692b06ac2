"""Wall time of `gpusim run <kernel> --size N` for each ladder kernel: a first run on a fresh install,
one that compiles, and a warm one.

Each run is the command line a user types, in a fresh process (`python -m gpusim.report.cli run ...
--json`, output discarded). First: NUMBA_CACHE_DIR points at an empty folder, so the timing engine and
the other numba functions load from the compiled copy shipped in gpusim/jit_cache/ (or compile, where it
does not fit this machine: the run's progress bar says why). Compile (--compile): the same with
GPUSIM_NO_SHIPPED=1, so they compile. Warm: a shared folder after one unreported run of the kernel, so
they load from numba's own cache. Warm runs are repeated (--repeat) and the median is printed; the
machine is shared and noisy.
Targets: a first run under 15 s; a warm run at 4096 under 3 s for every ladder kernel.
Usage: python bench/bench_run.py [--kernels a,b] [--size 4096] [--repeat 3] [--no-cold] [--compile]
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


def timed_run(kernel: str, size: int, cache: str, shipped: bool = True) -> float:
    """Seconds for one `gpusim run` in a new process with numba's cache in `cache` (shipped: the compiled
    copy in gpusim/jit_cache/ may serve)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(ROOT))
    env.pop("GPUSIM_NO_SHIPPED", None)
    if not shipped:
        env["GPUSIM_NO_SHIPPED"] = "1"
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
    ap.add_argument("--no-cold", action="store_true", help="skip the first runs (empty numba cache)")
    ap.add_argument("--compile", action="store_true", help="also time a first run that compiles (no shipped copy)")
    a = ap.parse_args()
    kernels = a.kernels.split(",")
    sys.path.insert(0, str(ROOT))       # this checkout's gpusim, not an installed one
    from gpusim.jit import shipped_miss
    print(f"gpusim run <kernel> --size {a.size}: wall seconds, a new process each (first: empty numba cache, "
          f"the shipped copy {'serves' if shipped_miss() is None else 'cannot serve: ' + shipped_miss()}; "
          f"compile: without it; warm: median of {a.repeat})")
    print(f"{'kernel':11s} {'first':>7s} {'compile':>8s} {'warm':>7s}")
    with tempfile.TemporaryDirectory(prefix="gpusim-numba-") as cache:
        worst_first, worst = 0.0, 0.0
        for k in kernels:
            first = compiled = ""
            if not a.no_cold:
                with tempfile.TemporaryDirectory(prefix="gpusim-numba-cold-") as empty:
                    t = timed_run(k, a.size, empty)
                    worst_first = max(worst_first, t)
                    first = f"{t:7.1f}"
            if a.compile:
                with tempfile.TemporaryDirectory(prefix="gpusim-numba-cold-") as empty:
                    compiled = f"{timed_run(k, a.size, empty, shipped=False):8.1f}"
            timed_run(k, a.size, cache)              # whatever this kernel loads is now cached; not reported
            warm = statistics.median(timed_run(k, a.size, cache) for _ in range(a.repeat))
            worst = max(worst, warm)
            print(f"{k:11s} {first:>7s} {compiled:>8s} {warm:7.1f}", flush=True)
    if not a.no_cold:
        print(f"slowest first run: {worst_first:.1f} s (target < 15 s)")
    print(f"slowest warm run: {worst:.1f} s (target < 3 s at 4096)")


if __name__ == "__main__":
    main()
