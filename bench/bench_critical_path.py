"""Where the wall time of one `gpusim run KERNEL --size N` goes, thread by thread.

Each kernel runs in a fresh process, as the command's prediction does (glibc's malloc set as the
command sets it, numba's cache warm: one unreported run of the kernel first), with clocks around its
stages (bench/stage_clock.py). It prints the stages that run one after another on the main thread before
the chip-wide L2 model can start (import, counting run, first-round probe), when the L2 model ends, when
the last engine run ends, each thread's CPU seconds and page faults, and the same prediction made again
in that process (its memory and compiled functions already there: what no start-up work can beat).
--timeline also prints every stage call: thread, start, end, CPU seconds, minor page faults.

Usage: python bench/bench_critical_path.py [--kernels regtile2d,naive] [--size 4096] [--timeline]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHILD = """
import json, sys, time
T0 = time.perf_counter()
from gpusim.pages import large_block_malloc
large_block_malloc()                       # as the gpusim command sets it
sys.path.insert(0, "bench")
from stage_clock import install
from gpusim.estimate.kernel_time import predict
CALLS = []
simulate = install(lambda th, stage, t0, t1, cpu, flt: CALLS.append([th, stage, t0 - T0, t1 - T0, cpu, flt]))
k, n = sys.argv[1], int(sys.argv[2])
imported = time.perf_counter() - T0
predict(simulate(k, n, keep_trace=True))
first = time.perf_counter() - T0
calls = list(CALLS)
t = time.perf_counter()
predict(simulate(k, n, keep_trace=True))
print(json.dumps({"import_s": imported, "first_s": first, "again_s": time.perf_counter() - t, "calls": calls}))
"""


def run(kernel: str, size: int, cache: str) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-c", CHILD, kernel, str(size)]
    r = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{kernel} {size} failed ({r.returncode}):\n{r.stderr[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def report(kernel: str, size: int, got: dict, timeline: bool):
    calls = sorted(got["calls"], key=lambda c: c[2])
    main = [c for c in calls if c[0] == "MainThread"]

    def end_of(stage, among=calls):
        """When the stage's last call ended; None where it did not run (no probe or L2 model for a launch
        whose arrays the L2 keeps)."""
        return max((c[3] for c in among if c[1] == stage), default=None)

    def at(t):
        return "none" if t is None else f"{t:.2f} s"
    count_end, probe_end = end_of("count", main), end_of("probe", main)
    before_l2 = min((c[2] for c in calls if c[1] == "L2"), default=None)
    print(f"{kernel} {size}: {got['first_s']:.2f} s in a fresh process, {got['again_s']:.2f} s made again in it")
    print(f"  main thread: import {got['import_s']:.2f} s, counting run {count_end - got['import_s']:.2f} s, "
          f"first-round probe {at(None if probe_end is None else probe_end - count_end)}; "
          f"the L2 model starts at {at(before_l2)}, ends at {at(end_of('L2'))}; "
          f"the last engine run ends at {at(end_of('engine'))}")
    by_thread: dict = {}
    for th, _stage, _t0, _t1, cpu, flt in calls:
        cpu0, flt0 = by_thread.get(th, (0.0, 0))
        by_thread[th] = (cpu0 + cpu, flt0 + flt)
    for th, (cpu, flt) in by_thread.items():
        print(f"  {th:18s} {cpu:6.2f} s of CPU in the stages, {flt:8d} page faults")
    if timeline:
        for th, stage, t0, t1, cpu, flt in calls:
            if t1 - t0 >= 0.01:
                print(f"    {th:18s} {stage:7s} {t0:6.2f} {t1:6.2f}  cpu {cpu:5.2f} s  faults {flt:7d}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", default="regtile2d,naive")
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--timeline", action="store_true", help="also every stage call")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="gpusim-numba-") as cache:
        for k in a.kernels.split(","):
            run(k, 256, cache)          # numba's cache filled for this kernel: not reported
            report(k, a.size, run(k, a.size, cache), a.timeline)


if __name__ == "__main__":
    main()
