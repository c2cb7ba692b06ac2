"""The other commands' tables: list, compare, sweep, the --trace window, check, --by-array / --source."""
from __future__ import annotations

from rich.table import Table

from gpusim.report import render as R
from gpusim.report.render import _fmt, _name, _names_note, _table, _wide


def print_sweep(rows, how: str, wall_s: float | None = None):
    """`gpusim sweep`: the ranked table (fastest first within each size), the refused points with their
    reasons, and how the points ran."""
    ok = [r for r in rows if r["status"] == "ok"]
    refused = [r for r in rows if r["status"] != "ok"]
    timed = any(r["time_ms"] is not None for r in ok)
    params = list(dict.fromkeys(k for r in rows for k in r["params"]))
    fields = list(dict.fromkeys(k for r in rows for k in r["sets"]))
    kernel = rows[0]["kernel"] if rows else "?"
    t = Table(title=f"{kernel}: {len(rows)} points" + (", fastest first" if timed else "") +
                    (f", {len(refused)} refused (below)" if refused else ""))
    t.add_column("rank", justify="right")
    for k in params:
        t.add_column(k, justify="right")
    t.add_column("size", justify="right")
    t.add_column("arch")
    for k in fields:
        t.add_column(k, justify="right")
    if timed:
        t.add_column("time (ms)", justify="right")
        # a kernel without FLOPs (a copy, a transpose) is rated by the bandwidth moving each array once gives
        bandwidth = all(not r["gflops"] for r in ok)
        t.add_column("GB/s" if bandwidth else "GFLOP/s", justify="right")
        t.add_column("limit (busiest unit, % of peak)")
        t.add_column("top stall (cycles/issue)")
    t.add_column("occupancy", justify="right")
    t.add_column("stream")

    def size(r):
        return str(r["M"]) if r["M"] == r["N"] == r["K"] else f"{r['M']}x{r['N']}x{r['K']}"
    for r in ok:
        cells = [str(r["rank"]) if r["rank"] is not None else "-", *(str(r["params"][k]) for k in params), size(r),
                 r["arch"], *(_fmt(r["sets"][k]) for k in fields)]
        if timed:
            cells += [f"{r['time_ms']:.4f}", f"{r['gbps'] if bandwidth else r['gflops']:,.0f}",
                      f"{r['limit']} {r['limit_pct']:.0f} %" if r["limit"] else "-",
                      f"{r['top_stall']} {r['top_stall_ratio']:.2f}" if r["top_stall"] else "-"]
        cells += [f"{r['occupancy_pct']:.0f} % ({r['blocks_per_sm']} CTA/SM)", "SASS" if r["frontend"] == "sass"
                  else "Python"]
        t.add_row(*cells)
    R.console.print(t)
    if any(r["frontend"] == "python" for r in ok):
        R.console.print("[dim]stream Python: no SASS for these parameters (none committed, no compiler to make it): "
                      "the Python kernel's own instruction stream ran, a rougher estimate (no register count, so no "
                      "register limit on occupancy, and no ptxas stall counts; `gpusim run` notes say why)[/dim]")
    for r in refused:
        what = " ".join(f"{k}={v}" for k, v in r["params"].items())
        R.console.print(f"[red]refused[/red] {what} {size(r)} {r['arch']}"
                      + "".join(f" {k}={v}" for k, v in r["sets"].items()) + f": {r['reason']}", highlight=False)
    changed = dict.fromkeys(f"{r['arch']} {k} {_fmt(v['old'])} -> {_fmt(v['new'])}"
                            for r in rows for k, v in r["arch_overrides"].items())
    if changed:
        R.console.print(f"preset fields changed (--set): {', '.join(changed)}", highlight=False)
    for r in ok:
        for w in r["warnings"]:
            R.console.print(f"[bold yellow]warning:[/] point {r['point']}: {w}", highlight=False)
    took = f" in {wall_s:.1f} s" if wall_s is not None else ""
    R.console.print(f"[dim]{len(rows)} points ({len(refused)} refused){took}, {how}[/dim]")


def print_kernel_list(specs):
    t = Table(title="kernels")
    t.add_column("name")
    t.add_column("ladder")
    t.add_column("parameters (defaults)")
    t.add_column("computes")
    t.add_column("what")
    for s in specs:
        t.add_row(s.name, s.ladder() or "-", ", ".join(f"{k}={v}" for k, v in s.params.items()),
                  s.computes or ("alpha*A*B+beta*C" if s.uses_alpha_beta else "A*B"), s.summary)
    R.console.print(t)


def _compare_name(metric: str) -> str:
    from gpusim.report.compare import stall_name
    name = stall_name(metric)
    return f"stall: {name}" if name and not _wide() else _name(metric)


def print_compare(rows, title, gpu: str = "H200"):
    """`gpusim compare --detail`: every metric of every point. A wide page has a column for the kernel and
    the size; a narrow one a heading row per point instead, and short metric names."""
    from gpusim.report.compare import EXPLAINED
    wide = _wide()
    t = _table(title, *(("kernel", ">size") if wide else ()), "metric", ">simulated", f">{gpu} (ncu)",
               *((">diff",) if wide else ()), ">rel")
    point = None
    for r in rows:
        sim, hw = r["simulated"], r["recorded"]
        diff = None if sim is None or hw is None else sim - hw
        rel = "" if diff is None or diff == 0 and not hw else "n/a" if not hw else f"{100 * diff / hw:+.2f} %"
        if r["metric"] == "launch__occupancy_limit_shared_mem" and diff:
            rel = "carveout"    # not an error: see the note under the table
        style = "" if diff in (0, None) else "yellow"
        if not wide and point != (r["kernel"], r["size"]):
            point = (r["kernel"], r["size"])
            t.add_section()
            t.add_row(f"[bold]{r['kernel']} at {r['size']}[/bold]", "", "", "")
        t.add_row(*((r["kernel"], str(r["size"]), r["metric"]) if wide else (_compare_name(r["metric"]),)),
                  _fmt(sim), _fmt(hw), *((_fmt(diff),) if wide else ()), rel, style=style)
    R.console.print(t)
    if any(r["metric"] == "launch__occupancy_limit_shared_mem" and r["simulated"] != r["recorded"] for r in rows):
        R.console.print("[dim]carveout: ncu's launch__occupancy_limit_shared_mem is for the shared-memory carveout "
                      "the driver picked for the launch (launch__shared_mem_config_size), the simulator's for the "
                      "largest carveout: sm__maximum_warps_per_active_cycle_pct compares the occupancy itself.[/dim]")
    if any(r["metric"] in EXPLAINED and r["simulated"] != r["recorded"] for r in rows):
        R.console.print(f"[dim]shared wavefronts and bank conflicts: {EXPLAINED[next(iter(EXPLAINED))]} "
                      f"(tests/test_hw_agreement.py)[/dim]")
    if any(not r["recorded"] and r["simulated"] for r in rows):
        R.console.print(f"[dim]rel n/a: the {gpu} counted 0, so there is no relative difference[/dim]")
    _names_note()


def print_compare_summary(points, title, gpu: str = "H200"):
    """`gpusim compare`'s table: one row per kernel; for each size, the predicted time's error against the
    H200's median (with one size, both times too); how many count metrics equal ncu's; in how many sizes
    the top stall reason is the H200's. Notes below name the counts that differ, and why."""
    from gpusim.report.compare import EXPLAINED
    sizes = list(dict.fromkeys(p["size"] for p in points))
    kernels = list(dict.fromkeys(p["kernel"] for p in points))
    by = {(p["kernel"], p["size"]): p for p in points}
    timed = any(p["time_ms"] is not None for p in points)
    stalls = any(p["top_stall"] is not None for p in points)
    cols = ["kernel"]
    if timed and len(sizes) == 1:
        cols += [">predicted ms", f">{gpu} ms", ">error"]
    elif timed:
        cols += [f">error {s}" if i == 0 else f">{s}" for i, s in enumerate(sizes)]
    cols += [">counts"] + ([">top stall"] if stalls else [])
    t = _table(title, *cols)
    t.columns[0].no_wrap = True     # a kernel's name whole: the numbers are narrow enough beside it
    t.min_width = min(len(title) + 4, R.console.width)      # the title on one line
    for k in kernels:
        ps = [by[(k, s)] for s in sizes if (k, s) in by]
        cells = [k]
        if timed and len(sizes) == 1:
            p = ps[0]
            cells += [f"{p['time_ms']:.4f}", f"{p['h200_ms']:.4f}", f"{p['time_error_pct']:+.1f} %"] \
                if p["time_ms"] is not None else ["-", "-", "-"]
        elif timed:
            cells += [f"{by[(k, s)]['time_error_pct']:+.1f} %" if (k, s) in by and by[(k, s)]["time_ms"] is not None
                      else "-" for s in sizes]
        eq, of = sum(p["counts_equal"] for p in ps), sum(p["counts"] for p in ps)
        cells.append(f"{eq}/{of}")
        if stalls:
            st = [p for p in ps if p["top_stall"] is not None]
            same = sum(p["top_stall"] == p["h200_top_stall"] for p in st)
            cells.append(("yes" if same else "no") if len(sizes) == 1 else f"{same}/{len(st)}")
        t.add_row(*cells, style="" if eq == of else "yellow")
    R.console.print(t)
    # one line at 80 columns: what each column counts
    legend = f"error: predicted / {gpu} time - 1; " if timed else ""
    legend += "counts" + (", top stall" if stalls else "") + f": how many equal the {gpu}'s"
    R.console.print(f"[dim]{legend}[/dim]")
    differ = {}
    for p in points:
        for metric, rel in p["counts_differ"]:
            differ.setdefault(metric, []).append(rel)
    # the counts that differ, grouped by the known reason (one line each where they share one)
    why = {}
    for metric, rels in differ.items():
        spread = sorted(r for r in rels if r is not None)
        # two digits where one decimal would read as no difference at all
        pct = [f"{v:+.1f}" if abs(v) >= 0.05 else f"{v:+.1g}" for v in spread[:1] + spread[-1:]]
        how = (f", {pct[0]} %" if len(set(pct)) == 1 else
               f", {pct[0]} to {pct[1]} %" if spread else ", 0 simulated")
        why.setdefault(EXPLAINED.get(metric), []).append(f"{_name(metric)} {len(rels)}{how}")
    for reason, items in why.items():
        R.console.print(f"[dim]counts that differ{' (' + reason + ')' if reason else ''}, points of {len(points)} and "
                      f"{gpu} vs simulated: {'; '.join(items)}[/dim]")
    if stalls and len(sizes) == 1:      # which stall each side has on top, where they differ
        off = [f"{p['kernel']} {p['top_stall']} / {p['h200_top_stall']}" for p in points
               if p["top_stall"] is not None and p["top_stall"] != p["h200_top_stall"]]
        if off:
            R.console.print(f"[dim]top stall, simulated / {gpu}: {'; '.join(off)}[/dim]")
    if any(p["carveout_differs"] for p in points):
        R.console.print("[dim]not counted: the shared-memory CTA limit (ncu's is for the driver's carveout)[/dim]")


def print_window(window, timeline_path, shown, table: bool = True):
    """The per-warp stall table of the --trace window (gpusim.estimate.window), when `table`, and where its
    timeline went. A narrow page gets the states with the most cycles, the others summed as "other"."""
    from gpusim.timing.states import STATES, stall_metric
    t = window.timing
    span = ("steady state: each warp's cycles between the prediction's two windows, per instruction it issued "
            "between them" if window.steady else "the whole round, timed in full")
    short = {"selected": "sel", "not_selected": "nsel", "wait": "wait", "short_scoreboard": "ssb",
             "long_scoreboard": "lsb", "mio_throttle": "mio", "lg_throttle": "lg",
             "math_pipe_throttle": "math", "barrier": "bar", "drain": "drain",
             "dispatch_stall": "disp", "no_instruction": "noinst"}
    shown_states = [s for k, s in enumerate(STATES) if window.warp_states[:, k].any()]
    metrics = [window.warp_metrics(i) for i in range(len(t.warps))]
    # the most cycles first, where a narrow page cannot take every state
    by_cycles = sorted(shown_states, key=lambda s: -window.warp_states[:, STATES.index(s)].sum())

    def build(keep):
        cols = [s for s in shown_states if s in keep]
        other = [s for s in shown_states if s not in keep]
        legend = ", ".join(f"{short.get(s, s)}={s}" for s in cols) + (
            f", other={'+'.join(short.get(s, s) for s in other)}" if other else "")
        wt = _table(f"per-warp stalls (cycles per issued instruction; {span})", "CTA", ">warp", ">SMSP",
                    ">issued", ">total", *(f">{short.get(s, s)}" for s in cols), *([">other"] if other else []),
                    caption=legend)
        for i, (cta, warp) in enumerate(t.warps):
            wm = metrics[i]
            wt.add_row(",".join(map(str, window.ctas[int(cta)][:2])), str(int(warp)), str(i % 4),
                       f"{int(window.warp_issued[i]):,}", f"{wm['smsp__average_warp_latency_per_inst_issued.ratio']:.2f}",
                       *[f"{wm[stall_metric(s)]:.2f}" for s in cols],
                       *([f"{sum(wm[stall_metric(s)] for s in other):.2f}"] if other else []))
        return wt
    if table:
        for k in range(len(by_cycles), 0, -1):
            wt = build(set(by_cycles[:k]))
            if R.console.measure(wt, options=R.console.options.update_width(10_000)).maximum <= R.console.width:
                break
        R.console.print(wt)
    cut = "" if shown["last_cycle"] + 1 >= shown["cycles"] else f", cut at cycle {shown['last_cycle'] + 1:,} of {shown['cycles']:,}"
    R.console.print(f"timeline: {timeline_path}: {window.describe()}; {shown['events']:,} of {shown['of']:,} issue "
                  f"events and {shown['stall_intervals']:,} stall intervals, cycles 0-{shown['last_cycle']:,}{cut}; "
                  f"open it in ui.perfetto.dev, where 1 us on the time axis is 1 SM cycle")


def print_check(res):
    """`gpusim check`: one line per finding (merged by kind and source lines), then the verdict."""
    R.console.print(f"[bold]{res.kernel}[/] checked at M={res.M} N={res.N} K={res.K} "
                  f"({', '.join(f'{k}={v}' for k, v in res.params.items()) or 'no parameters'}): "
                  f"{res.ctas} CTAs, every trip, {res.wall_s:.2f} s")
    for note in res.notes:
        R.console.print(f"note: {note}", style="dim")
    for f in res.findings:
        R.console.print(f"[red]{f.kind}[/] {f.describe()}  [dim]({', '.join(f.lines)})[/]", highlight=False)
    if res.dropped:
        R.console.print(f"[red]... and {res.dropped} more findings not kept[/]")
    err = f"outputs against numpy: ||out - ref|| / ||ref|| = {res.max_rel_error:.1e} (tolerance {res.tol:.0e})"
    if res.ok:
        R.console.print(f"[green]no findings[/]; {err}")
    else:
        R.console.print(f"[red]{len(res.findings) + res.dropped} findings[/]; {err}")


# ---- gpusim run --by-array / --source: memory counters per array and per instruction (in the spirit of
# Nsight Compute's Memory Workload and Source pages)

_KIND = {"loads": "ld", "stores": "st", "reductions": "red", "atomics": "atom"}
_MEMORY_LEGEND = ("ld: loads, st: stores, red: reductions, atom: atomics. instr: warp-level instructions with "
                  "an active lane (ncu's requests); traffic: sectors (global) or wavefronts (shared); per req: "
                  "traffic per instruction; confl.: wavefronts over the ideal (ncu's bank conflicts); values: "
                  "32-bit values the threads move")


def _traffic(c: dict) -> tuple[str, str, str]:
    if "sectors" in c:
        return f"{c['sectors']:,}", f"{c['sectors_per_request']:.2f}", "-"
    return f"{c['wavefronts']:,}", f"{c['wavefronts_per_request']:.2f}", f"{c['bank_conflicts']:,}"


def print_memory_views(r, by_array: bool, source: bool):
    """r.by_array and r.by_instruction as tables that fit 80 columns, and a legend."""
    if by_array:
        t = _table(f"{r.kernel}: memory by array", "array", "space", "kind", ">instr", ">traffic", ">per req",
                   ">confl.", ">values")
        for name, entry in r.by_array.items():
            for kind, c in entry.items():
                if kind != "space":
                    t.add_row(name, entry["space"], _KIND[kind], f"{c['instructions']:,}", *_traffic(c),
                              f"{c['values']:,}")
        R.console.print(t)
    if source:
        sass = r.frontend == "sass"
        t = _table(f"{r.kernel}: memory instructions ({'SASS' if sass else 'Python source'})",
                   "pc" if sass else "line", "instruction" if sass else "opcode", "array", ">instr",
                   ">per req", ">confl.")
        t.columns[0].no_wrap = True         # a pc or file:line whole
        for i in r.by_instruction:
            _, per, conflicts = _traffic(i)
            t.add_row(i["where"], i.get("sass") or i["opcode"], f"{i['array']} {_KIND[i['kind']]}",
                      f"{i['instructions']:,}", per, conflicts)
        R.console.print(t)
    if by_array or source:
        R.console.print(_MEMORY_LEGEND)
        if r.frontend == "sass" and any(e["space"] == "shared" for e in r.by_array.values()):
            R.console.print("shared: the SASS keeps no names for __shared__ arrays; --frontend python names "
                          "them as the Python kernel declares them")


def print_pc_sites(window, r, top: int = 12):
    """ncu's Source view for the --trace window: where the warps wait, instruction by instruction, as
    shares of the window's warp cycles, beside the H200's PC samples of the whole launch when
    traces/hw/h200/pcsamp/ holds one at this size (gpusim.report.stall_sites)."""
    from gpusim.report.stall_sites import load_pcsamp_by_pc, pc_rows, window_pc_cycles
    sim = window_pc_cycles(window)
    if not sim:
        return
    got = load_pcsamp_by_pc(r.kernel, r.M) if r.M == r.N == r.K or r.K == 0 else None
    hw, sass, caches = got if got else (None, {}, None)
    if not sass:
        try:
            from gpusim.sass import frontend as F
            sass = {i.pc: i.text for i in F.program(r.kernel, tuple(sorted(r.params.items())))[0].instrs}
        except Exception:   # noqa: BLE001 - the text is a label; the table stands without it
            sass = {}
    cols = ["PC", "SASS", ">% of warp cycles", "state"]
    if hw:
        cols += [">H200 % of samples", "H200 state"]
    caption = ("H200: ncu's PC samples of one launch, caches " +
               ("as the warm-up left them" if caches == "none" else "flushed") if hw else
               "no H200 PC samples of this launch (traces/hw/h200/pcsamp/)")
    t = _table("Source Counters by instruction (the --trace window)", *cols, caption=caption)
    for pc, a, b, sa, sb in pc_rows(sim, hw, top):
        text = sass.get(pc, "?")
        t.add_row(f"{pc:04x}", text[:40], f"{a:.1f}", sa or "", *([f"{b:.1f}", sb or ""] if hw else []))
    R.console.print(t)
