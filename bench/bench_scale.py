"""Cost against problem size: wall time and peak memory of one prediction (simulate + predict, as
`gpusim run KERNEL --size N --json` does) for each ladder kernel at 4096 ... 32768, each in a fresh
process with a warm numba cache; with --before, the same with the chip-wide L2 stream simulated whole
(memory.cache.WINDOW_LINES = inf: how every size ran before the L2 model's time windows), and the
ratio. The machine is shared and noisy: one run per point, so read the ratios, not the third digit.

Usage: python bench/bench_scale.py [--kernels a,b] [--sizes 4096,8192,16384,32768] [--before]
"""
import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LADDER = ("naive", "coalesced", "smemtile", "regtile1d", "regtile2d", "vectorized", "tiled32", "regblock")
CHILD = """
import json, resource, sys, time
from gpusim.memory import cache as C
if {whole}:
    C.WINDOW_LINES = float("inf")
import gpusim
from gpusim.estimate.kernel_time import predict
t0 = time.perf_counter()
r = gpusim.simulate({kernel!r}, {size}, keep_trace=True)
p = predict(r)
print(json.dumps({{"wall_s": time.perf_counter() - t0, "time_ms": p.time_ms,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""


def point(kernel: str, size: int, whole: bool) -> dict:
    code = CHILD.format(kernel=kernel, size=size, whole=whole)
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)))
    if r.returncode != 0:
        raise SystemExit(f"{kernel} at {size} failed:\n{r.stderr[-2000:]}")
    out = json.loads(r.stdout.strip().splitlines()[-1])
    out["process_s"] = time.perf_counter() - t0
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", default=",".join(LADDER))
    ap.add_argument("--sizes", default="4096,8192,16384,32768")
    ap.add_argument("--before", action="store_true", help="also the whole-stream L2 (slow at 16384 and up)")
    a = ap.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    point(a.kernels.split(",")[0], 1024, False)         # warms numba's cache; not reported
    print("one prediction in a fresh process (simulate + predict): seconds of the process, peak MB"
          + ("; before: the L2 stream simulated whole" if a.before else ""))
    print(f"{'kernel':11s} " + " ".join(f"{n:>16d}" for n in sizes))
    worst_ratio = 1.0
    for k in a.kernels.split(","):
        now = [point(k, n, False) for n in sizes]
        print(f"{k:11s} " + " ".join(f"{p['process_s']:7.1f}s {p['peak_mb']:6.0f}MB" for p in now), flush=True)
        if a.before:
            old = [point(k, n, True) for n in sizes]
            print(f"{'  before':11s} " + " ".join(f"{p['process_s']:7.1f}s {p['peak_mb']:6.0f}MB" for p in old))
            print(f"{'  time ms':11s} " + " ".join(f"{o['time_ms']:8.3f}>{p['time_ms']:<7.3f}" for o, p in zip(old, now)))
        worst_ratio = max(worst_ratio, now[-1]["process_s"] / now[0]["process_s"])
    print(f"largest ratio of the process time at {sizes[-1]} to that at {sizes[0]}: {worst_ratio:.2f} "
          "(target: within 1.5)")


if __name__ == "__main__":
    main()
