"""The bodies of `gpusim`'s commands (run, list, compare, sweep, check, hw record, hw import); the parser
that dispatches to them is gpusim.report.cli."""
from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from gpusim.errors import GpusimError, KernelConfigError
from gpusim.paths import write_atomic

DEFAULT_SIZE = 1024


def _params(pairs, kernel: str | None = None):
    out = {}
    for item in pairs or []:
        k, eq, v = item.partition("=")
        if not eq or not k.strip():
            raise KernelConfigError(f"{kernel + ': ' if kernel else ''}--param takes NAME=VALUE, got {item!r}")
        out[k.strip()] = v.strip()
    return out


def _axes(pairs, flag: str, what: str, form: str = "NAME=V1,V2,...") -> dict:
    """NAME=V1,V2,... (repeatable) as {NAME: [text values]}: a sweep's axes, or --set's fields."""
    out = {}
    for item in pairs or []:
        k, eq, v = item.partition("=")
        k = k.strip()
        values = [x.strip() for x in v.split(",")]
        if not eq or not k or not all(values):
            raise KernelConfigError(f"{what}: {flag} takes {form}, got {item!r}")
        if k in out:
            raise KernelConfigError(f"{what}: {flag} {k} given twice; list its values once: {k}=V1,V2")
        out[k] = values
    return out


def _arch(a):
    """--arch with the --set changes of `gpusim run` (one value per field), checked before anything runs."""
    from gpusim.arch import override
    sets = _axes(a.set, "--set", a.kernel, "FIELD=VALUE")
    for k, values in sets.items():
        if len(values) > 1:
            raise KernelConfigError(f"{a.kernel}: gpusim run takes one value per --set field, got {k}="
                                    f"{','.join(values)} (gpusim sweep takes lists)")
    return override(a.arch, {k: v[0] for k, v in sets.items()})


def _sizes(a):
    """M, N, K: --size for all three, or --M/--N/--K (a missing N or K is M), never both ways at once."""
    given = {nm: v for nm, v in (("M", a.M), ("N", a.N), ("K", a.K)) if v is not None}
    if a.size is not None and given:
        raise KernelConfigError(f"{a.kernel}: --size sets M = N = K; give it or --M/--N/--K, not both")
    for nm, v in [("size", a.size), *given.items()]:
        if v is not None and v <= 0:
            raise KernelConfigError(f"{a.kernel}: --{nm} must be a positive integer, got {v}")
    def pick(*vals):
        return next(v for v in vals if v is not None)
    M = pick(a.M, a.size, DEFAULT_SIZE)
    return M, pick(a.N, a.size, M), pick(a.K, a.size, M)


def _writable(path: str, flag: str, kernel: str):
    """Refuse, before anything is simulated, an output whose folder is missing or cannot be written."""
    p = Path(path)
    if p.is_dir():
        raise GpusimError(f"{kernel}: {flag} {path} is a directory")
    if not p.parent.is_dir():
        why = "is not a directory" if p.parent.exists() else "does not exist"
        raise GpusimError(f"{kernel}: {flag} {path}: {p.parent} {why}")
    try:    # a real write, not os.access: root passes that, a read-only file system does not
        tempfile.TemporaryFile(dir=p.parent).close()
    except OSError as e:
        raise GpusimError(f"{kernel}: {flag} {path}: cannot write in {p.parent} ({e.strerror})") from None


def _write(path, write, kernel: str):
    """Run write(); a failing disk (full, removed) is a one-line error like any other."""
    try:
        return write()
    except OSError as e:
        raise GpusimError(f"{kernel}: cannot write {path}: {e.strerror or e}") from None


def _engine_step(what: str) -> str:
    """A progress bar's text for a step that runs the cycle engine: on a machine whose numba cache does
    not hold it yet, and where gpusim's shipped copy cannot serve, the step first compiles it (the bar would
    otherwise seem stuck for that long), and says why the shipped copy did not serve."""
    from gpusim.jit import shipped_miss
    from gpusim.timing import engine_compiled
    if engine_compiled() is False:
        return f"{what}: compiling the engine (once, 30-50 s; {shipped_miss() or 'the shipped copy is stale'})"
    return what


def cmd_run(a):
    from gpusim import simulate
    from gpusim.report import render
    M, N, K = _sizes(a)
    params = _params(a.param, a.kernel)
    if a.trace and a.no_time:
        raise GpusimError(f"{a.kernel}: --trace shows the timing engine's run: it cannot go with --no-time")
    if (a.window is not None or a.timeline) and not a.trace:
        raise GpusimError(f"{a.kernel}: --window and --timeline shape the --trace timeline: add --trace")
    if a.window is not None and a.window <= 0:
        raise GpusimError(f"{a.kernel}: --window takes a positive number of loop trips, got {a.window}")
    if a.plot and a.no_time:
        raise GpusimError(f"{a.kernel}: --plot draws the prediction's stalls and roofline: it cannot go with --no-time")
    if a.section and a.json:
        raise GpusimError(f"{a.kernel}: --section picks what the text report shows: --json prints every figure")
    sections = render.pick_sections(a.section, timed=not a.no_time, trace=a.trace)
    gpu = _arch(a)      # the preset, with --set's fields changed
    # the outputs' folders before the simulation, not after minutes of it
    for flag, path in (("--save-trace", a.save_trace), ("--timeline", a.timeline), ("--plot", a.plot)):
        if path:
            _writable(path, flag, a.kernel)
    if a.plot:
        from gpusim.report import plots
        plots.require()
    with render.progress_bar(f"simulating {a.kernel}", enabled=not a.json) as prog:
        # the timing's cache model reads the trace: kept, it need not be simulated a second time
        r = simulate(a.kernel, M, N, K, arch=gpu, params=params, mode=a.mode,
                     keep_trace=bool(a.save_trace) or not a.no_time, progress=prog, frontend=a.frontend,
                     warn=lambda text: print(f"gpusim: warning: {text}", file=sys.stderr))
    if a.save_trace:
        _write(a.save_trace, lambda: r.trace.save(a.save_trace), r.kernel)
    checked, values_wrong = None, False
    if a.mode == "full":        # the sanitizer's checks too (gpusim check), on the Python kernel
        from gpusim.estimate.check import check
        with render.progress_bar(f"checking {a.kernel} (sanitizer)", enabled=not a.json) as prog:
            checked = check(r.kernel, r.M, r.N, r.K, params=r.params, arch=gpu, progress=prog)
        tol = checked.tol          # the kernel's own where it has one (atomics sum in another order)
        values_wrong = r.max_rel_error is not None and r.max_rel_error > tol
        if values_wrong:
            r.warnings.append(f"the simulated output ({r.frontend} front-end) is off numpy's by ||out - ref|| / "
                              f"||ref|| = {r.max_rel_error:.1e}, over the tolerance {tol:.0e}")
    pred = None
    if not a.no_time:
        from gpusim.estimate.kernel_time import predict
        with render.progress_bar(_engine_step("timing"), enabled=not a.json) as prog:
            pred = predict(r, not_issued=True, progress=prog)
    window = None
    if a.trace:
        from gpusim.report.perfetto import write_timeline
        from gpusim.estimate.window import time_window
        with render.progress_bar("timing the --trace window", enabled=not a.json):
            window = time_window(r, pred, trips=a.window)
        path = a.timeline or f"traces/sim/{r.kernel}_{r.M}x{r.N}x{r.K}.json"
        shown = _write(path, lambda: write_timeline(window, path, clock_mhz=gpu.sm_clock_max_mhz), r.kernel)
    if a.plot:
        _write(a.plot, lambda: plots.plot_run(a.plot, r, pred, gpu, render.h200_record(r)), r.kernel)
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
        if checked is not None:
            out["check"] = checked.to_json()
        if a.by_array:
            out["by_array"] = r.by_array
        if a.source:
            out["by_instruction"] = r.by_instruction
        out["warnings"] = list(r.warnings) + _jit_notices()   # those the records' reading above added too
        print(json.dumps(out, indent=1))
    else:
        r.warnings += _jit_notices()
        render.print_summary(r, pred, checked, sections)
        if a.by_array or a.source:
            render.print_memory_views(r, a.by_array, a.source)
        if a.save_trace:
            render.console.print(f"trace written to {a.save_trace}")
        if window is not None:
            render.print_window(window, path, shown, table="warps" in sections)
            render.print_pc_sites(window, r)
        if a.plot:
            render.console.print(f"plot written to {a.plot}")
    # --mode full fails (exit 1) on a sanitizer finding or a wrong C, as gpusim check does
    return 1 if checked is not None and (not checked.ok or values_wrong) else 0


def _jit_notices() -> list[str]:
    """numba cache entries found damaged and compiled again in this run (gpusim.jit)."""
    from gpusim.jit import NOTICES
    return list(NOTICES)


def cmd_list(a):
    from gpusim.kernel import get_kernel, list_kernels
    from gpusim.kernel.spec import broken_kernels
    from gpusim.report import render
    render.print_kernel_list([get_kernel(n) for n in list_kernels()])
    for name, err in broken_kernels().items():     # shown, not hidden: the other kernels still run
        render.console.print(f"broken: kernels_py/{name}.py does not import: {err}", style="red",
                             markup=False, highlight=False)
    return 0


def _recorded_sizes(variants: bool) -> list[int]:
    """The M = N = K sizes with H200 records (by file name: <name>_<size>.json)."""
    from gpusim.hw.records import device_dir
    d = device_dir("h200") / "variants" if variants else device_dir("h200")
    tails = (f.stem.rsplit("_", 1)[-1] for f in d.glob("*_*.json"))
    return sorted({int(t) for t in tails if t.isdigit()})


def cmd_compare(a):
    from gpusim.report import render
    from gpusim.report.compare import compare_rows, timed_sim, timing_summary
    from gpusim.kernel import get_kernel
    for k in a.kernels:
        get_kernel(k)       # an unknown name is refused (with the closest names) before any simulation
    if a.size is not None and a.size <= 0:
        raise KernelConfigError(f"compare: --size must be a positive integer, got {a.size}")
    recorded = _recorded_sizes(a.variants)
    if a.size is not None and a.size not in recorded:
        raise KernelConfigError(f"compare: --size {a.size} has no H200 records; recorded sizes: "
                                f"{', '.join(map(str, recorded))}")
    if a.plot:
        if a.no_time:
            raise GpusimError("compare: --plot draws predicted against measured times: it cannot go with --no-time")
        _writable(a.plot, "--plot", "compare")
        from gpusim.report import plots
        plots.require()
    rows = []
    sizes = [a.size] if a.size is not None else [1024, 2048, 4096]
    if a.record:                   # the user's own records (or raw ncu exports) instead of the committed ones
        if a.kernels or a.size is not None or a.variants:
            raise GpusimError("compare: --record brings its own launches; it takes no kernels, --size or --variants")
        from gpusim.report.compare import compare_records
        records = _given_records(a.record, quiet=a.json)
        with render.progress_bar("simulating the recorded launches", enabled=not a.json):
            rows = compare_records(records, sim_fn=None if a.no_time else timed_sim)
        sizes = []
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
        from gpusim.report.compare import point_summary
        title = "simulated vs recorded on the H200 (traces/hw/h200" + (
            "/variants: the held-out set)" if a.variants else ")")
        gpu = "H200"
        if a.record:        # the user's records: their device, their files
            devices = sorted({str(r["device"]).replace("NVIDIA ", "") for r in records})
            gpu = devices[0] if len(devices) == 1 else "recorded"
            title = f"simulated vs recorded on the {', '.join(devices)} ({', '.join(a.record)})"
        if a.detail:        # every metric of every point, then the summary where it is seen
            render.print_compare(rows, title, gpu)
        render.print_compare_summary(point_summary(rows), title, gpu)
        if summary:
            render.print_timing_summary(summary)
    if a.plot:
        _write(a.plot, lambda: plots.plot_compare(a.plot, rows), "compare")
        if not a.json:
            render.console.print(f"plot written to {a.plot}")
    return 0


def _given_records(paths, quiet: bool = False) -> list:
    """Records from files: a record's JSON as `gpusim hw import` writes it, or a raw ncu CSV export
    imported on the spot (kernel and size matched by name and launch shape; how is printed)."""
    from gpusim.hw.records import load_record, validate_record
    from gpusim.hw.ncu_import import import_export
    out = []
    for path in paths:
        if path.endswith(".json"):
            out.append(load_record(path))
            continue
        recs, notes = import_export(path)
        if not quiet:
            for n in notes:
                print(f"gpusim: {n}", file=sys.stderr)
        out += [validate_record(r, path) for r in recs]
    return out


def _sweep_sizes(a) -> list:
    """--size N, --sizes N1,N2,... or --M/--N/--K (one shape), one of them."""
    given = [flag for flag, v in (("--size", a.size), ("--sizes", a.sizes)) if v is not None]
    if a.M is not None or a.N is not None or a.K is not None:
        given.append("--M/--N/--K")
    if len(given) > 1:
        raise KernelConfigError(f"sweep: give one of --size, --sizes, --M/--N/--K, not {' and '.join(given)}")
    if a.sizes is not None:
        sizes = []
        for s in a.sizes.split(","):
            if not s.strip().isdigit() or int(s) <= 0:
                raise KernelConfigError(f"sweep: --sizes takes positive integers N1,N2,..., got {s.strip()!r}")
            sizes.append(int(s))
        return sizes
    return [_sizes(a)]


def cmd_sweep(a):
    import time
    from gpusim.estimate.sweep import rank, run_points, sweep_points, to_csv
    from gpusim.report import render
    if a.plot and a.no_time:
        raise GpusimError(f"{a.kernel}: --plot draws the predicted times: it cannot go with --no-time")
    archs = [x.strip() for x in a.arch.split(",")]
    if not all(archs):
        raise KernelConfigError(f"sweep: --arch takes NAME[,NAME...], got {a.arch!r}")
    # every name and value checked, and the outputs' folders, before any point runs
    points = sweep_points(a.kernel, _axes(a.param, "--param", a.kernel), _sweep_sizes(a), archs,
                          _axes(a.set, "--set", a.kernel, "FIELD=V1,V2,..."))
    for flag, path in (("--csv", a.csv), ("--plot", a.plot)):
        if path:
            _writable(path, flag, a.kernel)
    if a.plot:
        from gpusim.report import plots
        plots.require()
    t0 = time.perf_counter()
    with render.progress_bar(_engine_step(f"sweeping {len(points)} points") if not a.no_time else
                             f"sweeping {len(points)} points", enabled=not a.json) as prog:
        rows, how = run_points(points, workers=a.workers, scheduler=a.scheduler, time=not a.no_time, progress=prog)
    rows = rank(rows)
    wall_s = time.perf_counter() - t0
    if a.csv:
        text = to_csv(rows)
        _write(a.csv, lambda: write_atomic(a.csv, lambda f: f.write(text.encode())), a.kernel)
    if a.plot:
        _write(a.plot, lambda: plots.plot_sweep(a.plot, rows), a.kernel)
    if a.json:     # no wall time: the same sweep prints the same bytes
        print(json.dumps({"kernel": rows[0]["kernel"], "points": len(rows),
                          "refused": sum(r["status"] != "ok" for r in rows), "ran": how, "rows": rows}, indent=1))
    else:
        render.print_sweep(rows, how, wall_s)
        for flag, path in (("csv", a.csv), ("plot", a.plot)):
            if path:
                render.console.print(f"{flag} written to {path}")
    return 0


def cmd_hw_record(a):
    from gpusim.hw.runner import record
    from gpusim.report import render
    sizes = []
    for s in a.sizes or ("1024", "2048", "4096"):     # before cupy is looked for: a typo is refused anywhere
        if not s.strip().isdigit() or int(s) <= 0:
            raise KernelConfigError(f"hw record: --sizes takes positive integers, got {s!r}")
        sizes.append(int(s))
    over = _params(a.param, "hw record")
    params = {k: over for k in a.kernels} if over and a.kernels else None
    if over and not a.kernels:
        raise GpusimError("hw record: --param needs the kernel(s) it applies to")
    with render.progress_bar("recording on the GPU") as prog:
        recs = record(a.kernels or None, sizes, ncu=a.ncu, out_dir=a.out,
                      command="gpusim " + " ".join(sys.argv[1:]),
                      progress=(lambda d, t, label=None: prog(d, t)) if prog else None, params=params)
    for r in recs:
        print(f"{r['kernel']:12s} {r['M']:6d}  {r['time_ms_median']:10.4f} ms  check "
              f"{'passed' if r['check']['passed'] else 'FAILED'} (rel. error {r['check']['rel_err']:.1e})")
    return 0


def cmd_hw_import(a):
    """A user's ncu raw-page CSV export made into gpusim records (no GPU needed)."""
    from gpusim.hw.ncu_import import import_export
    from gpusim.hw.records import dump_record, record_name, shape_record_name
    from gpusim.kernel import get_kernel
    if a.kernel:
        get_kernel(a.kernel)
    elif a.param:
        raise GpusimError("hw import: --param needs --kernel")
    given = any(v is not None for v in (a.size, a.M, a.N, a.K))
    mnk = _sizes(a) if given else None
    if a.time_ms is not None and not (a.time_ms > 0):
        raise KernelConfigError(f"hw import: --time-ms must be a positive number, got {a.time_ms}")
    recs, notes = import_export(a.csv, kernel=a.kernel, params=_params(a.param, a.kernel) or None,
                                mnk=mnk, time_ms=a.time_ms, launch=a.launch,
                                command="gpusim " + " ".join(sys.argv[1:]))
    for n in notes:
        print(f"gpusim: {n}", file=sys.stderr)
    out = Path(a.out)
    if out.suffix == ".json" and len(recs) > 1:
        raise GpusimError(f"hw import: {len(recs)} launches imported; -o takes a folder for more than one")
    for r in recs:
        square = r["M"] == r["N"] == r["K"]
        dest = out if out.suffix == ".json" else out / (
            record_name(r["kernel"], r["M"], r["params"], dict(get_kernel(r["kernel"]).params)) if square
            else shape_record_name(r["kernel"], r["M"], r["N"], r["K"]))
        dump_record(r, dest)
        print(f"{r['kernel']:12s} {r['M']}x{r['N']}x{r['K']}  {r['time_ms_median']:10.4f} ms  "
              f"{len(r['ncu']['metrics'])} metrics  -> {dest}")
    return 0


def cmd_check(a):
    from gpusim.estimate.check import check
    from gpusim.report import render
    # run's rule for sizes; none given: check picks the first size the kernel takes
    given = any(v is not None for v in (a.size, a.M, a.N, a.K))
    sizes = _sizes(a) if given else (None, None, None)
    with render.progress_bar(f"checking {a.kernel}", enabled=not a.json) as prog:
        res = check(a.kernel, *sizes, params=_params(a.param, a.kernel), arch=a.arch,
                    tol=a.tol, progress=prog)
    if a.json:
        print(json.dumps(res.to_json(), indent=1))
    else:
        render.print_check(res)
    return 0 if res.ok else 1
