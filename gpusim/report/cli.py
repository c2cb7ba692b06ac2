"""`gpusim` command line: run, check, list, compare, hw record."""
from __future__ import annotations

import argparse
import json
import sys

from gpusim.errors import GpusimError
from gpusim.timing.kernel_time import W1

DEFAULT_SIZE = 1024


def _params(pairs):
    out = {}
    for item in pairs or []:
        if "=" not in item:
            raise GpusimError(f"--param takes NAME=VALUE, got {item!r}")
        k, v = item.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def _sizes(a):
    def pick(*vals):
        return next(v for v in vals if v is not None)
    M = pick(a.M, a.size, DEFAULT_SIZE)
    return M, pick(a.N, a.size, M), pick(a.K, a.size, M)


def _engine_step(what: str) -> str:
    """A progress bar's text for a step that runs the cycle engine: on a machine whose numba cache does
    not hold it yet, the step first compiles it (the bar would otherwise seem stuck for that long)."""
    from gpusim.timing import engine_compiled
    if engine_compiled() is False:
        return f"{what}: compiling the engine (once, 20-60 s)"
    return what


def cmd_run(a):
    from gpusim import simulate
    from gpusim.report import render
    M, N, K = _sizes(a)
    if a.trace and a.no_time:
        raise GpusimError("--trace shows the timing engine's run: it cannot go with --no-time")
    with render.progress_bar(f"simulating {a.kernel}", enabled=not a.json) as prog:
        # the timing's cache model reads the trace: kept, it need not be simulated a second time
        r = simulate(a.kernel, M, N, K, arch=a.arch, params=_params(a.param), mode=a.mode,
                     keep_trace=bool(a.save_trace) or not a.no_time, progress=prog, frontend=a.frontend)
    if a.save_trace:
        r.trace.save(a.save_trace)
    pred = None
    if not a.no_time:
        from gpusim.timing.kernel_time import predict
        with render.progress_bar(_engine_step("timing"), enabled=not a.json) as prog:
            pred = predict(r, not_issued=True, progress=prog)
    window = None
    if a.trace:
        from gpusim.report.perfetto import write_timeline
        from gpusim.timing.window import time_window
        with render.progress_bar("timing the --trace window", enabled=not a.json):
            window = time_window(r, pred, trips=a.window)
        path = a.timeline or f"traces/sim/{r.kernel}_{r.M}x{r.N}x{r.K}.json"
        shown = write_timeline(window, path)
    if a.json:
        out = r.to_json()
        if pred is not None:
            notes = out["notes"]
            out.update(pred.to_json())
            out["notes"] = notes + [n for n in pred.notes if n not in notes]
            rec = render.h200_record(r)
            if rec is not None:     # what the H200 measured for this very launch, beside the prediction
                out["h200"] = {"record": f"traces/hw/h200/{rec.path}", "time_ms": rec["time_ms_median"],
                               "stalls": {k: v for k, v in rec.metrics.items() if k in pred.stalls
                                          or k == "smsp__average_warp_latency_per_inst_issued.ratio"},
                               # ncu's value of every metric the output has under the same name
                               "metrics": {k: v for k, v in rec.metrics.items()
                                           if k in out["metrics"] or k in out.get("timing_metrics", {})}}
            lsu = render.lsu_record(r)
            if lsu:     # ncu's count of the loads in the LSU pipe for this launch (traces/hw/h200/lsu/)
                out.setdefault("h200", {})["lsu"] = {k: v for k, v in lsu.items() if k in out["lsu"]}
        if window is not None:
            out["timeline"] = {"path": str(path), "window": window.describe(), **shown}
        print(json.dumps(out, indent=1))
    else:
        render.print_summary(r, pred)
        if a.save_trace:
            render.console.print(f"trace written to {a.save_trace}")
        if window is not None:
            render.print_window(window, path, shown)
    return 0


def cmd_list(a):
    from gpusim.kernel import get_kernel, list_kernels
    from gpusim.report import render
    render.print_kernel_list([get_kernel(n) for n in list_kernels()])
    return 0


def cmd_compare(a):
    from gpusim.report import render
    from gpusim.report.compare import compare_rows, timed_sim, timing_summary
    rows = []
    sizes = [a.size] if a.size else [1024, 2048, 4096]
    for size in sizes:
        with render.progress_bar(f"simulating at {size}" if a.no_time else _engine_step(f"simulating at {size}"),
                                 enabled=not a.json):
            rows += [dict(r._asdict(), size=size) for r in compare_rows(a.kernels or None, size,
                                                                        sim_fn=None if a.no_time else timed_sim,
                                                                        variants=a.variants)]
    summary = None if a.no_time else timing_summary(rows)
    if a.json:
        print(json.dumps({"rows": rows, "summary": summary} if summary else rows, indent=1))
    else:
        render.print_compare(rows, "simulated vs recorded on the H200 (traces/hw/h200" +
                             ("/variants: the held-out set)" if a.variants else ")"))
        if summary:
            render.print_timing_summary(summary)
    return 0


def cmd_hw_record(a):
    from gpusim.hw.runner import record
    from gpusim.report import render
    sizes = [int(s) for s in a.sizes] if a.sizes else (1024, 2048, 4096)
    over = _params(a.param)
    params = {k: over for k in a.kernels} if over and a.kernels else None
    if over and not a.kernels:
        raise GpusimError("--param needs the kernel(s) it applies to")
    with render.progress_bar("recording on the GPU") as prog:
        recs = record(a.kernels or None, sizes, ncu=a.ncu, out_dir=a.out,
                      command="gpusim " + " ".join(sys.argv[1:]),
                      progress=(lambda d, t, label=None: prog(d, t)) if prog else None, params=params)
    for r in recs:
        print(f"{r['kernel']:12s} {r['M']:6d}  {r['time_ms_median']:10.4f} ms  check "
              f"{'passed' if r['check']['passed'] else 'FAILED'} (rel. error {r['check']['rel_err']:.1e})")
    return 0


def cmd_check(a):
    from gpusim.estimate.check import check, DEFAULT_TOL
    from gpusim.report import render
    sizes = (a.M, a.N, a.K) if a.size is None else (a.size, a.size, a.size)
    with render.progress_bar(f"checking {a.kernel}", enabled=not a.json) as prog:
        res = check(a.kernel, *sizes, params=_params(a.param), arch=a.arch,
                    tol=DEFAULT_TOL if a.tol is None else a.tol, progress=prog)
    if a.json:
        print(json.dumps(res.to_json(), indent=1))
    else:
        render.print_check(res)
    return 0 if res.ok else 1


def build_parser():
    ap = argparse.ArgumentParser(prog="gpusim", description="warp-level GPU simulator for SGEMM kernels")
    sub = ap.add_subparsers(dest="cmd", required=True)

    r = sub.add_parser("run", help="simulate a kernel and print its counters")
    r.add_argument("kernel")
    r.add_argument("--size", type=int, help=f"M = N = K (default {DEFAULT_SIZE})")
    r.add_argument("--M", type=int)
    r.add_argument("--N", type=int)
    r.add_argument("--K", type=int)
    r.add_argument("--arch", default="h200", help="GPU preset: h200, a6000, rtx5080")
    r.add_argument("--param", action="append", metavar="NAME=VALUE", help="tile parameter, repeatable")
    r.add_argument("--mode", default="auto", choices=("auto", "full", "sampled"),
                   help="full: every CTA and iteration (checks C); sampled: exact totals from classes")
    r.add_argument("--json", action="store_true", help="print one JSON object")
    r.add_argument("--trace", action="store_true",
                   help="time the first SM's resident CTAs: stall breakdown, per-warp table, Perfetto timeline")
    r.add_argument("--window", type=int, help="loop trips of the --trace timeline (default: the prediction's "
                   f"first window, {W1} trips)")
    r.add_argument("--timeline", metavar="PATH.json", help="where --trace writes the timeline "
                   "(default traces/sim/KERNEL_MxNxK.json)")
    r.add_argument("--save-trace", metavar="PATH.npz", help="save the simulated CTAs' per-warp trace")
    r.add_argument("--no-time", action="store_true", help="counts only: skip the whole-kernel time prediction")
    r.add_argument("--frontend", default="auto", choices=("auto", "sass", "python"),
                   help="instruction stream: the twin's SASS (committed, cached or compiled now; auto falls back "
                        "to the Python kernel's own, and says so) or the Python kernel's own")
    r.set_defaults(func=cmd_run)

    ck = sub.add_parser("check", help="sanitize a Python kernel: out-of-bounds and misaligned accesses, "
                        "shared-memory races, divergent barriers, uninitialised shared reads, wrong results "
                        "(exit 1 when anything is found)")
    ck.add_argument("kernel", help="a kernel of `gpusim list`, or a Python file that defines SPEC")
    ck.add_argument("--size", type=int, help="M = N = K (default: the first of 256, 512, 128, 1024, 64 "
                    "the kernel takes)")
    ck.add_argument("--M", type=int)
    ck.add_argument("--N", type=int)
    ck.add_argument("--K", type=int)
    ck.add_argument("--arch", default="h200", help="GPU preset (its shared-memory limit applies)")
    ck.add_argument("--param", action="append", metavar="NAME=VALUE", help="tile parameter, repeatable")
    ck.add_argument("--tol", type=float, help="largest ||C - ref|| / ||ref|| taken as right (default 1e-4)")
    ck.add_argument("--json", action="store_true", help="print one JSON object with the findings")
    ck.set_defaults(func=cmd_check)

    ls = sub.add_parser("list", help="list the kernels and their parameters")
    ls.set_defaults(func=cmd_list)

    c = sub.add_parser("compare", help="simulated counters against the committed H200 records")
    c.add_argument("kernels", nargs="*")
    c.add_argument("--size", type=int)
    c.add_argument("--json", action="store_true")
    c.add_argument("--no-time", action="store_true", help="counts only (no time and stall rows)")
    c.add_argument("--variants", action="store_true", help="the held-out set: the kernels with other tile "
                   "parameters (traces/hw/h200/variants/), none of which the model's parameters saw")
    c.set_defaults(func=cmd_compare)

    hw = sub.add_parser("hw", help="hardware side (needs a GPU, cupy and nvcc)")
    hsub = hw.add_subparsers(dest="hwcmd", required=True)
    rec = hsub.add_parser("record", help="build, check, time and profile the CUDA twins")
    rec.add_argument("kernels", nargs="*")
    rec.add_argument("--sizes", nargs="+")
    rec.add_argument("--ncu", action="store_true", help="also collect Nsight Compute counters")
    rec.add_argument("--param", action="append", metavar="NAME=VALUE")
    rec.add_argument("--out", help="where records go (default traces/hw/<device>)")
    rec.set_defaults(func=cmd_hw_record)
    return ap


def main(argv=None) -> int:
    a = build_parser().parse_args(argv)
    try:
        return a.func(a)
    except GpusimError as e:
        print(f"gpusim: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("gpusim: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
