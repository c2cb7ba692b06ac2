"""Whole-kernel time prediction against the recorded H200 times (issue 4's acceptance table).

For every ladder kernel x {1024, 2048, 4096}: recorded ms (CUDA events, traces/hw/h200), predicted
ms (gpusim.simulate + gpusim.estimate.kernel_time.predict), error %; MAPE and max |error|; rank
agreement at 2048 and 4096; at 4096 the largest non-selected stall reason (ncu vs sim) and warp
cycles per issued instruction (ncu vs sim, error %); wall time of simulate+predict at 4096 (what
`gpusim run <k> --size 4096` does before printing); then the engine's simulated warp-instructions
per second (bench/bench_engine.py's measure).
--schedule measured replays the H200's recorded CTA schedules in the L2 model (traces/hw/h200/
ctasched/, 2048 and 4096 only): a diagnosis of how much of the error the L2 schedule makes, not a
prediction.
--scoreboards global / none: ptxas's dependency barriers on the global loads only / on no load
(default all: global and shared loads, kernel_time.predict), a diagnosis of that rule.
--no-l2-pending: every L2 hit at the L2 latency, none waiting for a fill another CTA's miss has in
flight (kernel_time.predict's l2_pending, on by default), a diagnosis of that rule.
--dram-rows grouped: the L2 model's DRAM share of a window's global loads goes to whole load
instructions of a CTA (all its warps) instead of row by row (kernel_time.predict's dram_rows), a
diagnosis of how the barrier / long_scoreboard split depends on which warps wait on DRAM.
--no-chain: every round timed as the first, its CTAs starting together, instead of each later CTA
following the one before it in its slot (kernel_time.predict's chain), a diagnosis of that rule.
--windows W1,W2: the two loop-trip windows whose difference gives a round's steady trip (default 16,48,
kernel_time.W1/W2); --full times every trip instead: diagnoses of the sampling error on a launch.
--variants: the same table for the held-out set, each ladder kernel with other tile parameters
(traces/hw/h200/variants/, the parameters in each record): no parameter of the engine or the cache
model was chosen while these records existed, so they test the model out of sample.
--shapes: the ladder kernels (default parameters) at non-square shapes (traces/hw/h200/shapes/, times
only): the second held-out set; MAPE, max error and the kernels' order at each shape.
--ladder memory: the second ladder (copies, transposes, reductions, softmax, stencil, SGEMV), with the
transposes' and the reductions' order at every size and the top stall at the middle size (2048).
Usage: python bench/bench_timing.py [--kernels a,b | --ladder memory] [--sizes 1024,2048,4096] [--schedule phased]
       [--scoreboards all] [--no-l2-pending] [--no-chain] [--windows 16,48 | --full] [--variants | --shapes]
"""
import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import gpusim  # noqa: E402
from gpusim.report.compare import _rank_agreement, top_stall, stall_name, variant_records, warm_stall_ratios  # noqa: E402
from gpusim.timing import run_lowered  # noqa: E402
from gpusim.estimate.kernel_time import predict  # noqa: E402

LADDER = ("naive", "coalesced", "smemtile", "tiled32", "regtile1d", "regblock", "regtile2d", "vectorized")
WL = "smsp__average_warp_latency_per_inst_issued.ratio"


def stalls_of(d):
    return {stall_name(k): v for k, v in d.items() if stall_name(k)}


SIM_KW: dict = {}         # gpusim.simulate's switches (--frontend)


def variant_cases(kernels, sizes):
    """{(label, size): (kernel, params, record path)} of the recorded variants of these kernels, the
    label being the record's name without its size (e.g. regtile2d-BN64TM4)."""
    out = {(label, n): (rec["kernel"], rec["params"], Path(rec.path))
           for n in sizes for label, rec in variant_records(n, kernels=kernels)}
    if not out:
        raise SystemExit("no variant records under traces/hw/h200/variants/ for these kernels and sizes")
    return dict(sorted(out.items(), key=lambda kv: (kernels.index(kv[1][0]), kv[0][1])))


def shapes(kernels, **kw):
    """Predicted against recorded time for every non-square record of these kernels (kw: predict's
    switches, as for the ladder)."""
    recs = [json.loads(f.read_text()) for f in sorted((ROOT / "traces/hw/h200/shapes").glob("*.json"))]
    recs = sorted((r for r in recs if r["kernel"] in kernels), key=lambda r: (kernels.index(r["kernel"]), r["M"], r["N"], r["K"]))
    if not recs:
        raise SystemExit("no records under traces/hw/h200/shapes/ for these kernels")
    print(f"{'kernel':11s} {'M x N x K':>16s} {'H200 ms':>10s} {'sim ms':>10s} {'error':>8s}")
    by_shape, errs = {}, []
    for r in recs:
        shape = f"{r['M']}x{r['N']}x{r['K']}"
        p = predict(gpusim.simulate(r["kernel"], M=r["M"], N=r["N"], K=r["K"], keep_trace=True, **SIM_KW), **kw)
        e = 100 * (p.time_ms / r["time_ms_median"] - 1)
        errs.append(e)
        by_shape.setdefault(shape, ({}, {}))
        by_shape[shape][0][r["kernel"]] = p.time_ms
        by_shape[shape][1][r["kernel"]] = r["time_ms_median"]
        print(f"{r['kernel']:11s} {shape:>16s} {r['time_ms_median']:10.4f} {p.time_ms:10.4f} {e:+7.1f} %", flush=True)
    print(f"\nMAPE {sum(map(abs, errs)) / len(errs):.1f} %, max |error| {max(map(abs, errs)):.1f} % over {len(errs)} points")
    for shape, (sim, hw) in by_shape.items():
        same, tau = _rank_agreement(sim, hw)
        if tau is None:
            continue                        # one kernel: no order to compare
        print(f"order at {shape}: {'same' if same else 'differs'} (Kendall tau {tau:.2f})"
              + ("" if same else f"; H200 {sorted(hw, key=hw.get)}, sim {sorted(sim, key=sim.get)}"))


def retimed(label: str, n: int) -> list:
    """The medians of each device session that timed this launch again (traces/hw/h200/retime/, gpusim.hw.retime:
    each session's median over its passes), oldest first."""
    import statistics
    out = []
    for f in sorted((ROOT / "traces/hw/h200/retime").glob("retime_*.json")):
        v = json.loads(f.read_text())["time_ms_median_by_pass"].get(f"{label}_{n}")
        if v:
            out.append(statistics.median(v))
    return out


def retimed_errors(res: dict):
    """The predictions against the launches timed again in other sessions, where there are such: how far the
    records sit from them, and the errors against their median."""
    import statistics
    rows = [(label, n, r["time_ms_median"], p.time_ms, retimed(label, n)) for (label, n), (r, p) in res.items()]
    rows = [row for row in rows if row[4]]
    if not rows:
        return
    k = min(len(row[4]) for row in rows)
    print(f"\nthe same launches timed again (traces/hw/h200/retime/, {k}+ sessions; the record beside their median):")
    errs, offs = [], []
    for label, n, rec, sim, sess in rows:
        mid = statistics.median(sess + [rec])
        errs.append(100 * (sim / mid - 1))
        offs.append(100 * (rec / mid - 1))
        print(f"  {label:16s} {n:5d} record {rec:.5f}  sessions {' '.join(f'{x:.5f}' for x in sess)}  "
              f"record {offs[-1]:+5.1f} %  sim {errs[-1]:+6.1f} % against the median of all")
    print(f"against the median of the record and its retimed sessions: MAPE {sum(map(abs, errs)) / len(errs):.1f} %, "
          f"max |error| {max(map(abs, errs)):.1f} %; the records sit {statistics.median(offs):+.1f} % (median) from it, "
          f"{min(offs):+.1f} to {max(offs):+.1f} %")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", default=",".join(LADDER))
    ap.add_argument("--ladder", choices=("sgemm", "memory"), default=None,
                    help="a whole ladder instead of --kernels (memory: the second ladder)")
    ap.add_argument("--sizes", default="1024,2048,4096")
    ap.add_argument("--schedule", default="phased", choices=("phased", "fluid", "waves", "measured"))
    ap.add_argument("--scoreboards", default="all", choices=("all", "global", "none"))
    ap.add_argument("--no-l2-pending", action="store_true",
                    help="time L2 hits on fills in flight as plain L2 hits (a diagnosis)")
    ap.add_argument("--dram-rows", default="spread", choices=("spread", "grouped"),
                    help="which global loads of a window the L2 model's DRAM share goes to: row by row "
                         "(default) or whole load instructions of a CTA (a diagnosis)")
    ap.add_argument("--no-read-barriers", action="store_true",
                    help="leave out ptxas's read barriers on memory instructions (a diagnosis)")
    ap.add_argument("--no-chain", action="store_true",
                    help="time every round as the first, its CTAs starting together (a diagnosis)")
    ap.add_argument("--windows", default=None,
                    help="W1,W2: the loop-trip windows of the steady-trip estimate (default kernel_time.W1,W2; a diagnosis)")
    ap.add_argument("--full", action="store_true", help="time every trip, no window extrapolation (a diagnosis)")
    ap.add_argument("--variants", action="store_true",
                    help="the held-out tile-parameter variants (traces/hw/h200/variants/) instead of the ladder")
    ap.add_argument("--shapes", action="store_true",
                    help="the held-out non-square shapes (traces/hw/h200/shapes/) instead of the ladder")
    ap.add_argument("--sweep", action="store_true",
                    help="the parameter sweep (traces/hw/h200/sweep/, 2048, SASS compiled on demand) instead of "
                         "the ladder; the spilling set is left out (its loop runs in full: minutes)")
    ap.add_argument("--frontend", default="auto", choices=("auto", "sass", "python"),
                    help="the instruction stream: the compiled twin's SASS (auto, sass) or the Python kernel's "
                         "own (python: the hand-written issue order and SASS tables)")
    a = ap.parse_args()
    SIM_KW["frontend"] = a.frontend
    stall_size = 4096
    if a.ladder:
        from gpusim.kernel.spec import LADDERS
        a.kernels = ",".join(LADDER if a.ladder == "sgemm" else LADDERS[a.ladder])
        stall_size = 4096 if a.ladder == "sgemm" else 2048
    kw = {"full": a.full, "scoreboards": a.scoreboards, "read_barriers": not a.no_read_barriers,
          "l2_pending": not a.no_l2_pending, "dram_rows": a.dram_rows, "chain": not a.no_chain}
    if a.windows:
        try:
            w1, w2 = (int(x) for x in a.windows.split(","))
        except ValueError:
            raise SystemExit(f"--windows takes two trip counts, W1,W2 (e.g. 8,16), got {a.windows!r}")
        if not 0 < w1 < w2:
            raise SystemExit(f"--windows needs 0 < W1 < W2, got {a.windows}")
        kw["windows"] = (w1, w2)
    if a.shapes:
        return shapes(a.kernels.split(","), **kw)
    sizes = [int(s) for s in a.sizes.split(",")]
    if a.sweep:
        sizes = [2048]
        cases = {}
        for f in sorted((ROOT / "traces/hw/h200/sweep").glob("*.json")):
            rec = json.loads(f.read_text())
            if rec["kernel"] in a.kernels.split(",") and not rec["ptxas"].get("spill_stores"):
                cases[f.stem.rsplit("_", 1)[0], rec["M"]] = (rec["kernel"], rec["params"], f)
    elif a.variants:
        cases = variant_cases(a.kernels.split(","), sizes)
    else:
        cases = {
        (k, n): (k, None, ROOT / f"traces/hw/h200/{k}_{n}.json") for k in a.kernels.split(",") for n in sizes}
    kernels = list(dict.fromkeys(label for label, _ in cases))
    res, walls = {}, {}
    w = max(11, max(map(len, kernels)))
    print(f"{'kernel':{w}s} {'size':>5s} {'H200 ms':>10s} {'sim ms':>10s} {'error':>8s}")
    for (label, n), (k, params, path) in cases.items():
        rec = json.loads(path.read_text())
        t0 = time.perf_counter()
        p = predict(gpusim.simulate(k, n, params=params, keep_trace=True, **SIM_KW), schedule=a.schedule,   # (1024: A, B, C stay in the L2)
                    **kw)
        wall = time.perf_counter() - t0
        if n == 4096:
            walls[label] = wall
        res[label, n] = (rec, p)
        e = 100 * (p.time_ms / rec["time_ms_median"] - 1)
        print(f"{label:{w}s} {n:5d} {rec['time_ms_median']:10.4f} {p.time_ms:10.4f} {e:+7.1f} %", flush=True)
    errs = [100 * (p.time_ms / r["time_ms_median"] - 1) for r, p in res.values()]
    print(f"\nMAPE {sum(map(abs, errs)) / len(errs):.1f} %, max |error| {max(map(abs, errs)):.1f} % "
          f"over {len(errs)} points")
    retimed_errors(res)
    groups = {"transposes": [k for k in kernels if k.startswith("transpose")],
              "reductions": [k for k in kernels if k.startswith("reduce")]}
    for name, ks in groups.items():
        if len(ks) < 2:
            continue
        for n in sizes:
            same, tau = _rank_agreement({k: res[k, n][1].time_ms for k in ks},
                                        {k: res[k, n][0]["time_ms_median"] for k in ks})
            print(f"{name} at {n}: {'same order' if same else 'order differs'} (Kendall tau {tau:.2f})")
    for n in sizes:
        if n in (2048, 4096):
            sim = {k: res[k, n][1].time_ms for k in kernels}
            hw = {k: res[k, n][0]["time_ms_median"] for k in kernels}
            same, tau = _rank_agreement(sim, hw)
            if tau is None:
                continue                    # one kernel: no order to compare
            print(f"rank at {n}: {'same order' if same else 'differs'} (Kendall tau {tau:.2f}); "
                  f"H200 {sorted(hw, key=hw.get)}, sim {sorted(sim, key=sim.get)}")
    if stall_size in sizes:
        print(f"\nat {stall_size}: {'kernel':{w}s} {'top stall H200':>18s} {'top stall sim':>18s}  "
              f"{'warp cyc/inst H200':>18s} {'sim':>7s} {'error':>8s}")
        agree = 0
        for k in kernels:
            rec, p = res[k, stall_size]
            m = rec["ncu"]["metrics"]
            # the stalls with warm caches, as the timed launches find them, where a PC-sample record has them
            warm = warm_stall_ratios(rec["kernel"], stall_size, rec.get("params", {}))
            th, ts = top_stall(stalls_of(warm or m)), top_stall(stalls_of(p.stalls))
            agree += th == ts
            wh, ws = (sum(warm.values()) if warm else m[WL]), p.metrics[WL]     # PC samples: all states over selected
            print(f"         {k:{w}s} {th:>18s} {ts:>18s}  {wh:18.2f} {ws:7.2f} {100 * (ws / wh - 1):+7.1f} %")
        print(f"top stall agrees for {agree}/{len(kernels)} kernels at {stall_size}")
        print("\nwall time of simulate + predict at 4096 (s): " +
              ", ".join(f"{k} {w:.1f}" for k, w in walls.items()))
    # engine speed: regtile2d's first round at 4096 (2 CTAs) over 64 trips, as gpusim run gives it to the
    # engine (the cache model's levels, ptxas's stall counts and barriers)
    from gpusim.estimate.kernel_time import lowered_round
    r = gpusim.simulate("regtile2d", 4096, keep_trace=True, **SIM_KW)
    arch = gpusim.get_arch("h200")
    lw = lowered_round(r, predict(r), 64)
    run_lowered(lw, arch)
    best = float("inf")
    for _ in range(3):
        t0 = time.thread_time()
        out = run_lowered(lw, arch)
        best = min(best, time.thread_time() - t0)
    print(f"engine: {out.inst_issued:,} warp-instructions in {best:.3f} s CPU -> "
          f"{out.inst_issued / best / 1e6:.1f} M warp-inst/s (regtile2d 4096, 2 CTAs, 64 trips, as gpusim run runs it)")


if __name__ == "__main__":
    main()
