"""Wall time of `gpusim run <kernel> --size N --json --no-time` for every ladder kernel.

The exact counts (issue 2's <= 5 s target); the whole-kernel time prediction that `gpusim run`
adds by default is timed by bench/bench_timing.py (issue 4's <= 10 s target). Runs each command
as a user would (a fresh process, so imports and numba caches count), a few times, and prints
the median. Usage: python bench/bench_counts.py [--size 4096] [--repeat 3]
"""
import argparse
import json
import statistics
import subprocess
import sys
import time

from gpusim.kernel import list_kernels


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("kernels", nargs="*")
    a = ap.parse_args()
    print(f"{'kernel':12s} {'median s':>9s} {'min s':>7s} {'inst_executed':>16s}")
    for k in a.kernels or list_kernels():
        times, out = [], None
        for _ in range(a.repeat):
            t0 = time.perf_counter()
            p = subprocess.run([sys.executable, "-m", "gpusim.report.cli", "run", k, "--size", str(a.size),
                                "--json", "--no-time"], capture_output=True, text=True)
            times.append(time.perf_counter() - t0)
            if p.returncode:
                print(f"{k:12s} failed: {p.stderr.strip()}")
                break
            out = json.loads(p.stdout)
        if out:
            print(f"{k:12s} {statistics.median(times):9.2f} {min(times):7.2f} "
                  f"{out['metrics']['smsp__inst_executed.sum']:16,d}")


if __name__ == "__main__":
    main()
