"""The ladder in a minute: wall time of 36 predictions (the eight SGEMM ladder kernels at 1024, 2048,
4096 and 8192, and dbuf and smem2buf at 2048 and 4096), each as `gpusim run KERNEL --size N` computes
it (simulate, then predict), one after another in one process with a warm numba cache (each kernel once
at 256 first, unreported: a new worktree's numba cache starts cold). With --before REF the same 36 points run in a checkout of the git revision REF (a
temporary worktree) in the same invocation, and the ratio and every predicted time's agreement are
printed: speed measured against the code before, on the same machine at the same time.
The machine is shared and noisy: read the ratio, not the third digit. The CPU seconds (all threads, user and
system) say whether a change did less work or only overlapped it better: on 2 CPUs a prediction keeps
both busy most of the time, so the wall time follows the CPU time.

--workers N also runs the 36 points on a Dask LocalCluster of N worker processes (gpusim.estimate.sweep's
run_points, as `gpusim sweep` runs its points; largest sizes first), its wall time counted from the
cluster's start to the last point, and checks that every predicted time equals the one-process run's.

--stages also prints the CPU seconds of each stage (the counting run, the first-round probe, the window
traces, the memory levels, the lowering, the engine, the chip-wide L2 model; each on whichever thread ran
it, a stage inside another counted as the outer one's), the wrappers that count them costing well under 1 %.

Usage: python bench/bench_ladder.py [--before REF] [--sizes 1024,2048,4096,8192] [--workers 2] [--stages]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LADDER = ("naive", "coalesced", "smemtile", "tiled32", "regtile1d", "regblock", "regtile2d", "vectorized")
EXTRA = (("dbuf", 2048), ("dbuf", 4096), ("smem2buf", 2048), ("smem2buf", 4096))
CHILD = """
import json, sys, time
import gpusim
from gpusim.estimate.kernel_time import predict
points = json.loads(sys.argv[1])
simulate = gpusim.simulate
CPU, CALLS = {}, []
if sys.argv[2] == "stages":       # each stage's CPU seconds, on whichever thread it ran (bench/stage_clock.py)
    sys.path.insert(0, "bench")
    from stage_clock import STAGES, install
    simulate = install(lambda _thread, stage, _t0, _t1, cpu, _faults: CALLS.append((STAGES[stage], cpu)))
for k in dict.fromkeys(k for k, _ in points):     # loads (or compiles) what each kernel needs: not timed
    predict(simulate(k, 256, keep_trace=True))
CALLS.clear()
out = []
t_all, c_all = time.perf_counter(), time.process_time()
for k, n in points:
    t0 = time.perf_counter()
    p = predict(simulate(k, n, keep_trace=True))
    out.append([k, n, time.perf_counter() - t0, p.time_ms])
    print(f"  {k:11s} {n:5d} {out[-1][2]:6.2f} s", file=sys.stderr, flush=True)
for name, cpu in CALLS:
    CPU[name] = CPU.get(name, 0.0) + cpu
print(json.dumps({"wall_s": time.perf_counter() - t_all, "cpu_s": time.process_time() - c_all, "points": out,
                  "stages": CPU}))
"""


def run_points(tree: Path, points: list, stages: bool = False) -> dict:
    r = subprocess.run([sys.executable, "-c", CHILD, json.dumps(points), "stages" if stages else ""], cwd=tree,
                       text=True,
                       stdout=subprocess.PIPE, env=dict(os.environ, PYTHONPATH=str(tree)))
    if r.returncode != 0:
        raise SystemExit(f"the ladder failed in {tree} ({r.returncode})")
    return json.loads(r.stdout.strip().splitlines()[-1])


CLUSTER = """
import json, sys, time
t0 = time.perf_counter()
from gpusim.estimate.sweep import run_points, sweep_points
points = json.loads(sys.argv[1])
todo = []
for k, n in points:
    p = sweep_points(k, sizes=[n])[0]
    todo.append(dict(p, point=len(todo)))
order = sorted(todo, key=lambda p: -p["M"])       # the largest first: the last to start is a short one
rows, how = run_points(order, workers=int(sys.argv[2]))
by = {r["point"]: r for r in rows}
print(json.dumps({"wall_s": time.perf_counter() - t0, "how": how,
                  "points": [[k, n, None, by[i]["time_ms"]] for i, (k, n) in enumerate(points)]}))
"""


def run_cluster(points: list, workers: int) -> dict:
    r = subprocess.run([sys.executable, "-c", CLUSTER, json.dumps(points), str(workers)], cwd=ROOT, text=True,
                       stdout=subprocess.PIPE, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    if r.returncode != 0:
        raise SystemExit(f"the ladder on the local cluster failed ({r.returncode})")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", metavar="REF", help="also time the git revision REF and print the ratio")
    ap.add_argument("--sizes", default="1024,2048,4096,8192")
    ap.add_argument("--workers", type=int, help="also run the points on a Dask LocalCluster of this many processes")
    ap.add_argument("--stages", action="store_true", help="the CPU seconds of each stage of the predictions")
    a = ap.parse_args()
    points = [[k, int(n)] for n in a.sizes.split(",") for k in LADDER] + [list(x) for x in EXTRA]
    print(f"{len(points)} predictions in one process (simulate + predict each), warm numba cache")
    now = run_points(ROOT, points, a.stages)
    print(f"this tree, one process: {now['wall_s']:.1f} s (target <= 60 s); {now['cpu_s']:.0f} s of CPU, "
          f"{now['cpu_s'] / now['wall_s']:.2f} cores busy on average")
    if a.stages:
        rest = now["cpu_s"] - sum(now["stages"].values())
        for name, sec in sorted(now["stages"].items(), key=lambda x: -x[1]) + [("the rest", rest)]:
            print(f"  {name:45s} {sec:6.1f} s CPU  {100 * sec / now['cpu_s']:5.1f} %")
    if a.workers:
        par = run_cluster(points, a.workers)
        same = sum(x[3] == y[3] for x, y in zip(now["points"], par["points"]))
        print(f"this tree, {par['how']}: {par['wall_s']:.1f} s from the cluster's start (target <= 60 s); "
              f"{now['wall_s'] / par['wall_s']:.2f}x the one-process run; predicted times identical at {same} of "
              f"{len(points)} points")
    if not a.before:
        return
    with tempfile.TemporaryDirectory(prefix="gpusim-before-") as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(tree), a.before], cwd=ROOT, check=True)
        try:
            before = run_points(tree, points)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=False)
    same = sum(x[3] == y[3] for x, y in zip(now["points"], before["points"]))
    print(f"{a.before}: {before['wall_s']:.1f} s; speed-up {before['wall_s'] / now['wall_s']:.2f}x; CPU "
          f"{before['cpu_s']:.0f} -> {now['cpu_s']:.0f} s; "
          f"predicted times identical at {same} of {len(points)} points")
    for x, y in zip(now["points"], before["points"]):
        if x[3] != y[3]:
            print(f"  {x[0]} {x[1]}: {y[3]:.6g} ms before, {x[3]:.6g} ms now")


if __name__ == "__main__":
    main()
