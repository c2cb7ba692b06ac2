"""How a one-round launch's time grows with its grid: sgemv and softmax (the memory ladder's twins, one warp
a row, 8 rows a CTA) on grids of 1 to 264 CTAs, every CTA resident at once.

    python3 calibrate/one_round.py --out DIR      # on the GPU machine (nvcc, cupy)
    python3 calibrate/one_round.py --record DIR   # here: -> traces/hw/h200/micro/one_round.json

Each point is the twin at M = 8 x grid rows and N columns, launched as the ladder's records launch it:
its time is gpusim.hw.gpu.time_launches's queued CUDA-event median (inputs warm in the L2), and one launch
of the stamped twin (calibrate/cta_stamp.cu, as gpusim.hw.ctasched builds it) gives each CTA's SM cycles
(clock64 from the twin's start to the CTA's end) and the span of its %globaltimer stamps. A lone CTA's
cycles are the SM's own time for one CTA's work; the growth from 1 to 132 CTAs is what a full chip adds
(the slowest of many CTAs, the L2's load), which the engine, timing the busiest SM, has to account for.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from micro_cli import BUILD_FLAGS, provenance, gpu_provenance, out_or_record  # noqa: E402  (beside this script)

KERNELS = ("sgemv", "softmax")
COLUMNS = (1024, 2048)
GRIDS = (1, 2, 8, 33, 66, 128, 132, 256, 264)
ROWS = 8                         # the twins' default rows per CTA
BLOCK = 256                      # the synthetic kernels' threads per CTA, as the twins'
SPIN_CYCLES = (2500, 10000)      # spin: SM cycles a CTA waits
CHASE_STEPS = (8, 32)            # chase: dependent L2 loads a warp makes
SGEMV_X_N = 1024                 # sgemv_x: columns; its work is x's stride (0: one x for all CTAs, N: a copy each)
CHASE_LINES = 65536              # chase's buffer: 8 MB of 128-byte lines, L2-resident after the warm-up


def _stamped(cp, launch, g, stamp, clk) -> dict:
    """One launch after a warm-up: the CTAs' clock64 cycles and the span of their %globaltimer stamps."""
    import numpy as np
    launch()
    cp.cuda.runtime.deviceSynchronize()
    stamp.fill(0)
    launch()
    cp.cuda.runtime.deviceSynchronize()
    s = stamp[: 3 * g].get().reshape(g, 3).astype(np.int64)
    c = clk[:g].get().astype(np.int64)
    return {"cta_cycles_median": float(np.median(c)), "cta_cycles_max": int(c.max()),
            "cta_cycles_min": int(c.min()), "span_ns": int(s[:, 1].max() - s[:, 0].min()),
            "start_spread_ns": int(s[:, 0].max() - s[:, 0].min()), "sms": len(set(s[:, 2].tolist()))}


def _synthetic(cp, out: Path) -> list:
    """spin and chase (calibrate/one_round.cu) on each grid of GRIDS."""
    import subprocess
    import numpy as np
    from gpusim.hw import gpu
    cubin = out / "one_round.cubin"
    subprocess.run(["nvcc", *BUILD_FLAGS, "-cubin", "-o", str(cubin), str(HERE / "one_round.cu")], check=True)
    mod = cp.RawModule(path=str(cubin))
    stamp = cp.ndarray((3 * 2048,), dtype=cp.uint64, memptr=mod.get_global("one_round_stamp"))
    clk = cp.ndarray((2048,), dtype=cp.uint64, memptr=mod.get_global("one_round_cycles"))
    spin, chase = mod.get_function("spin"), mod.get_function("chase")
    order = np.random.default_rng(0).permutation(CHASE_LINES).astype(np.uint32)   # one cycle through every line
    succ = np.empty(CHASE_LINES, dtype=np.uint32)
    succ[order] = np.roll(order, -1)
    nxt = cp.asarray(np.repeat(succ, 32))
    sink = cp.zeros(1024 * 32, dtype=cp.float32)
    rows = []
    cases = [("spin", c, (lambda c: lambda g: spin((g,), (BLOCK,), (np.int64(c), sink)))(c)) for c in SPIN_CYCLES]
    cases += [("chase", n, (lambda n: lambda g: chase((g,), (BLOCK,), (nxt, np.int32(n), np.uint32(CHASE_LINES),
                                                                       sink)))(n)) for n in CHASE_STEPS]
    A = cp.asarray(np.random.default_rng(1).uniform(-1, 1, ROWS * max(GRIDS) * SGEMV_X_N).astype(np.float32))
    xs = cp.asarray(np.random.default_rng(2).uniform(-1, 1, max(GRIDS) * SGEMV_X_N).astype(np.float32))
    sgemv_x = mod.get_function("sgemv_x")
    cases += [("sgemv_x", stride, (lambda st: lambda g: sgemv_x((g,), (BLOCK,), (
        np.int32(ROWS * g), np.int32(SGEMV_X_N), A, xs, np.int32(st), sink)))(stride)) for stride in (0, SGEMV_X_N)]
    for kind, work, make in cases:
        for g in GRIDS:
            launch = lambda: make(g)   # noqa: E731
            t = gpu.time_launches(cp, launch, target_s=0.2)
            row = {"kernel": kind, "work": work, "grid": g, "time_us_median": 1e3 * t["time_ms_median"],
                   "launches": t["timing"]["launches"], **_stamped(cp, launch, g, stamp, clk)}
            rows.append(row)
            print(row, flush=True)
    cubin.unlink()
    return rows


def run_on_gpu(out: Path):
    from gpusim.hw import ctasched, gpu, twins
    cp = gpu.cupy()
    rows = _synthetic(cp, out)
    for k in KERNELS:
        params = twins.resolve_params(k, None)
        assert params.get("ROWS", ROWS) == ROWS, params
        plain = twins.build(k, params, out)[0]
        stamped = REPO / "kernels_cuda" / ".build" / f"one_round_{k}.cubin"   # (the build's header goes beside it)
        stamped.parent.mkdir(parents=True, exist_ok=True)
        ctasched.build(k, stamped)
        fn = cp.RawModule(path=str(plain)).get_function(k)
        mod = cp.RawModule(path=str(stamped))
        sfn = mod.get_function("stamped")
        stamp = cp.ndarray((3 * 65536,), dtype=cp.uint64, memptr=mod.get_global("gpusim_cta_stamp"))
        clk = cp.ndarray((65536,), dtype=cp.uint64, memptr=mod.get_global("gpusim_cta_cycles"))
        for n in COLUMNS:
            for g in GRIDS:
                M = ROWS * g
                grid, block, _ = twins.geometry(k, params, M, n, 1)
                prob = gpu.problem(cp, twins.spec(k), M, n, 1, seed=0)
                prob.reset()
                t = gpu.time_launches(cp, gpu.launcher(fn, grid, block, prob), target_s=0.2)
                row = {"kernel": k, "N": n, "grid": g, "M": M, "time_us_median": 1e3 * t["time_ms_median"],
                       "launches": t["timing"]["launches"],
                       **_stamped(cp, gpu.launcher(sfn, grid, block, prob), g, stamp, clk)}
                rows.append(row)
                print(row, flush=True)
                del prob
                cp.get_default_memory_pool().free_all_blocks()
        plain.unlink()
        stamped.unlink()
    (out / "one_round_rows.json").write_text(json.dumps(rows, indent=1))
    (out / "one_round_prov.json").write_text(json.dumps(gpu_provenance("one_round.py")))


def spread_fit(rows: list) -> float:
    """The chase CTAs' spread: the least-squares sigma of (slowest / median CTA cycles - 1) = sigma x
    expected_max(CTAs), over the chase launches of 2 CTAs or more."""
    from gpusim.estimate.kernel_time import expected_max      # the model's own, so the fit is what it applies
    pts = [(r["cta_cycles_max"] / r["cta_cycles_median"] - 1.0, expected_max(r["grid"]))
           for r in rows if r["kernel"] == "chase" and r["grid"] >= 2]
    return sum(y * m for y, m in pts) / sum(m * m for _, m in pts)


def record(dir_: Path, dest: Path):
    prov = json.loads((dir_ / "one_round_prov.json").read_text())
    rows = json.loads((dir_ / "one_round_rows.json").read_text())
    sigma = spread_fit(rows)
    rec = {
        "schema": "gpusim.hw.micro/1", "bench": "one_round",
        "what": "launches whose CTAs are all resident at once, on 1 to 264 CTAs: how their time, their CTAs' "
                "cycles and the spread between their slowest and median CTA grow with the grid; spin (no memory "
                "work), chase (dependent L2 hits), sgemv's loop with one shared x or a copy per CTA (sgemv_x), "
                "and the sgemv and softmax twins at N = 1024 and 2048",
        "how": "calibrate/one_round.cu's spin (2500 / 10000 cycles a CTA), chase (8 / 32 dependent coalesced .cg "
               "loads a warp through an 8 MB L2-resident cycle of lines) and sgemv_x (x stride 0 / N, N = 1024), "
               "256 threads a CTA, each stamping its CTAs; the ladder twins at M = 8 x grid, stamped through "
               "calibrate/cta_stamp.cu (gpusim.hw.ctasched.build). Times: gpusim.hw.gpu.time_launches (queued CUDA "
               "events, median; the twins' unstamped). CTA cycles and stamps: one launch after a warm-up. "
               "value: sigma fitted to chase's slowest / median CTA over its grids (calibrate/one_round.py)",
        "command": prov["command"] + " (on the H200), then --record DIR here",
        "source": "calibrate/one_round.cu:spin,chase,sgemv_x; kernels_cuda/sgemv.cu; kernels_cuda/softmax.cu; "
                  "calibrate/cta_stamp.cu",
        **provenance(prov),
        "unit": "share of a CTA's cycles: the standard deviation of chase CTAs' cycles, from slowest / median - 1 = "
                "sigma x the expected largest of n standard normal draws (n CTAs)",
        "value": round(sigma, 4),
        "details": {"rows": rows},
    }
    dest.write_text(json.dumps(rec, indent=1))
    print(f"wrote {dest}: sigma {sigma:.4f}")


if __name__ == "__main__":
    out_or_record(run_on_gpu, record, "one_round.json")
