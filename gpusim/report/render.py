"""The one module that imports rich: summaries, tables and progress bars."""
from __future__ import annotations

import contextlib
import sys
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from gpusim.memory.counters import per_base_opcode

# piped output (logs, CI) gets a wide page instead of rich's 80 columns, so metric names stay whole
console = Console() if sys.stdout.isatty() else Console(width=160)
err_console = Console(stderr=True)


@contextlib.contextmanager
def progress_bar(description: str, enabled: bool = True):
    """Yields a callback(done, total); draws a transient bar on stderr when it is a terminal."""
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    with Progress(TextColumn("[progress.description]{task.description}"), BarColumn(),
                  # "3/9" once the total is known; nothing before (not "0/None")
                  TextColumn("{task.fields[count]}"), TimeElapsedColumn(),
                  console=err_console, transient=True) as prog:
        task = prog.add_task(description, total=None, count="")

        def update(done, total):
            prog.update(task, completed=done, total=total, count=f"{done}/{total}" if total else "")
        yield update


def _fmt(v):
    if v is None:
        return "n/a"
    if isinstance(v, float):
        return f"{v:,.3f}" if abs(v) < 1000 else f"{v:,.0f}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def _ratio(a, b):
    return f"{a / b:.3f}" if b else "-"


def _hw_col(table, ncu, title="H200 (ncu)"):
    """Adds the H200's column to a table when this launch has a record; returns whether it did."""
    if ncu:
        table.add_column(title, justify="right")
    return bool(ncu)


def print_summary(r, pred=None, checked=None):
    m = r.metrics
    # what the H200 measured for this very launch, where traces/hw/h200/ has it: beside each figure of
    # the same ncu name (the exact counts must agree; the cache model's rates and the predictions need not)
    rec = h200_record(r)
    ncu = rec.metrics if rec is not None else {}
    p = ", ".join(f"{k}={v}" for k, v in r.params.items())
    from gpusim.kernel.spec import get_kernel
    size = f"M={r.M} N={r.N} K={r.K}" if get_kernel(r.kernel).is_gemm else f"M={r.M} N={r.N}"
    console.print(f"[bold]{r.kernel}[/bold] on {r.arch}  {size}  ({p})")
    print_arch_overrides(r)
    console.print(f"grid {r.grid}  block {r.block}  mode: {r.mode} ({r.ctas_simulated} CTAs simulated"
                  f"{', values checked: rel. error %.1e' % r.max_rel_error if r.max_rel_error is not None else ''})"
                  f"  {r.wall_s:.2f} s")

    launch = Table(title="Launch Statistics / Occupancy", show_header=True)
    launch.add_column("metric")
    launch.add_column("value", justify="right")
    hw = _hw_col(launch, ncu)
    for key in ("launch__grid_size", "launch__block_size", "launch__registers_per_thread",
                "launch__shared_mem_per_block_static", "launch__occupancy_limit_registers",
                "launch__occupancy_limit_shared_mem", "launch__occupancy_limit_warps",
                "launch__occupancy_limit_blocks", "sm__maximum_warps_per_active_cycle_pct",
                "launch__waves_per_multiprocessor"):
        launch.add_row(key, _fmt(m.get(key)), *([_fmt(ncu.get(key))] if hw else []))
    console.print(launch)

    mem = Table(title="Memory Workload Analysis (exact counts)")
    mem.add_column("metric")
    mem.add_column("value", justify="right")
    mem.add_column("per request", justify="right")
    hw = _hw_col(mem, ncu)

    def mem_row(key, v, per=""):
        mem.add_row(key, _fmt(v), per, *([_fmt(ncu.get(key))] if hw else []))
    for op in ("ld", "st"):
        req = m[f"l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum"]
        mem_row(f"l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum", req)
        sec = m[f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum"]
        mem_row(f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum", sec, _ratio(sec, req))
    for op in ("ld", "st"):
        n = m[f"smsp__sass_inst_executed_op_shared_{op}.sum"]
        wf = m[f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum"]
        bc = m[f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum"]
        mem_row(f"smsp__sass_inst_executed_op_shared_{op}.sum", n)
        mem_row(f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum", wf, _ratio(wf, n))
        mem_row(f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum", bc, _ratio(bc, n))
    console.print(mem)
    if hw:
        console.print(f"[dim]H200 (ncu): traces/hw/h200/{rec.path}, the same launch. Instructions, requests and "
                      f"sectors equal ncu's; shared-load wavefronts are within 0.1 % on the SGEMM ladder, and ncu counts "
                      f"up to 3.7 % more on the memory ladder (tests/test_hw_agreement.py); "
                      f"ncu's shared-store wavefronts run 0-20 % above what the addresses need (L1 traffic on the "
                      f"data banks), and its shared-memory occupancy limit is for the carveout the driver picked "
                      f"(launch__shared_mem_config_size), the simulator's for the largest.[/dim]")

    inst = Table(title=f"Instructions executed: smsp__inst_executed.sum = {m['smsp__inst_executed.sum']:,}")
    inst.add_column("SASS opcode")
    inst.add_column("executed", justify="right")
    inst.add_column("share", justify="right")
    by_op = rec.get("ncu", {}).get("inst_executed_per_opcode_with_modifier", {}) if rec is not None else {}
    hw = _hw_col(inst, by_op)
    total = m["smsp__inst_executed.sum"] or 1
    for name, c in sorted(r.inst_executed_per_opcode.items(), key=lambda kv: -kv[1]):
        inst.add_row(name, _fmt(c), f"{100 * c / total:.1f} %", *([_fmt(_by_name(by_op, name))] if hw else []))
    console.print(inst)
    ffma = per_base_opcode(r.inst_executed_per_opcode).get("FFMA", 0)
    if ffma:
        lds = m["smsp__sass_inst_executed_op_shared_ld.sum"]
        ldg = m["smsp__sass_inst_executed_op_global_ld.sum"]
        console.print(f"loads per FFMA: shared {lds / ffma:.4f}, global {ldg / ffma:.4f}")
    for note in r.notes:
        console.print(f"[yellow]note:[/yellow] {note}")
    if pred is None:
        console.print("[dim]predicted time: skipped (--no-time)[/dim]")
    else:
        print_prediction(pred, r)
    if checked is not None:     # --mode full: the sanitizer's findings (gpusim check)
        print_check(checked)
    print_warnings(r)       # last, where they are seen


def _by_name(by_op, name):
    """ncu's count for a SASS name, also where ncu spells out a modifier the simulator's name leaves
    off (BAR.SYNC: BAR.SYNC.DEFER_BLOCKING); None when no unique name matches."""
    if name in by_op:
        return by_op[name]
    longer = [k for k in by_op if k.startswith(name + ".")]
    return by_op[longer[0]] if len(longer) == 1 else None


# the same quantity under another of ncu's names: (name, factor); an SMSP issues at most one
# instruction a cycle, so its issue-active per cycle is the fraction of its peak
_NCU_ALIASES = {"smsp__issue_active.avg.pct_of_peak_sustained_active": ("smsp__issue_active.avg.per_cycle_active", 100.0)}


def _ncu_value(ncu, name):
    if name in ncu:
        return ncu[name]
    alias, factor = _NCU_ALIASES.get(name, (None, 1.0))
    return ncu[alias] * factor if alias in ncu else None


def _metric_table(title, rows, ncu=None):
    """A section of predicted metrics, with the H200's value of the same name beside each where the
    launch has a record (gpusim__* metrics have no ncu counterpart)."""
    t = Table(title=title)
    t.add_column("metric")
    t.add_column("unit")
    t.add_column("predicted", justify="right")
    hw = _hw_col(t, ncu)
    for name, unit, v in rows:
        if v is not None:
            h = _ncu_value(ncu, name.split(" ")[0]) if hw else None
            t.add_row(name, unit, _fmt(float(v)), *([_fmt(h) if h is not None else "-"] if hw else []))
    console.print(t)


def print_prediction(p, r=None):
    """The whole-kernel prediction in Nsight Compute's sections: GPU Speed Of Light, Occupancy,
    Memory Workload Analysis (cache model), Warp State Statistics."""
    from gpusim.report.stall_sites import not_issued_split
    from gpusim.timing import LSU_METRIC_NAMES, not_issued_metric
    from gpusim.timing.states import STATES, stall_metric
    m = p.metrics
    rate = f"{p.gflops:,.0f} GFLOP/s" if p.gflops > 0 else f"{p.gbps:,.0f} GB/s moving each array once"
    console.print(f"[bold]predicted time {p.time_ms:.4f} ms[/bold]  ({p.cycles:,.0f} cycles = sm__cycles_elapsed.avg, "
                  f"{rate})")
    rec = h200_record(r) if r is not None else None
    if rec is not None:
        console.print(f"H200 recorded: {rec['time_ms_median']:.4f} ms (median; traces/hw/h200/{rec.path}): the "
                      f"prediction is {100 * (p.time_ms / rec['time_ms_median'] - 1):+.1f} %")
    ncu = rec.metrics if rec is not None else {}
    rounds = "; ".join(f"{r.count} x {r.ctas} resident CTA(s), {r.trips} trips"
                       + (f" at {r.per_trip:,.1f} cycles/trip" if r.per_trip else " (timed in full)")
                       for r in p.rounds)
    console.print(f"[dim]busiest SM: {p.ctas_per_sm} CTAs = {rounds}; windows of {p.windows[0]} and "
                  f"{p.windows[1]} trips; global loads: {p.memory_levels}[/dim]")
    _metric_table("GPU Speed Of Light Throughput (predicted)", [
        ("gpu__time_duration.sum", "ns", m.get("gpu__time_duration.sum")),
        ("sm__cycles_elapsed.avg", "cycle", m.get("sm__cycles_elapsed.avg")),
        ("smsp__issue_active.avg.pct_of_peak_sustained_active", "%",
         m.get("smsp__issue_active.avg.pct_of_peak_sustained_active")),
        ("gpusim__pipe_fma_issue.pct (FFMA/FMUL/IMAD issue slots of the FMA pipes)", "%",
         m.get("gpusim__pipe_fma_issue.pct")),
        ("gpusim__pipe_alu_issue.pct", "%", m.get("gpusim__pipe_alu_issue.pct")),
        ("gpusim__shared_pipe_busy.pct (wavefronts per SM cycle)", "%", m.get("gpusim__shared_pipe_busy.pct")),
        ("gpusim__l1tex_busy.pct (LSU requests in the L1TEX stage)", "%", m.get("gpusim__l1tex_busy.pct")),
        ("gpusim__dram_read.pct_of_achieved_peak", "%", m.get("gpusim__dram_read.pct_of_achieved_peak")),
    ], ncu)
    if ncu:
        console.print("[dim]ncu's time and cycles are of one launch profiled with its caches flushed; the H200 time "
                      "the prediction is compared with is the CUDA-event median of timed launches (above)[/dim]")
    _metric_table("Occupancy (predicted)", [
        ("sm__warps_active.avg.pct_of_peak_sustained_active", "%",
         m.get("sm__warps_active.avg.pct_of_peak_sustained_active")),
        ("smsp__warps_active.avg.per_cycle_active", "warp", m.get("smsp__warps_active.avg.per_cycle_active")),
    ], ncu)
    if "dram__bytes_read.sum" in m:
        _metric_table("Memory Workload Analysis (cache model)", [
            ("l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct", "%",
             m.get("l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct")),
            ("lts__t_sector_op_read_hit_rate.pct", "%", m.get("lts__t_sector_op_read_hit_rate.pct")),
            ("dram__bytes_read.sum", "byte", m.get("dram__bytes_read.sum")),
            ("gpusim__dram_read_gbps", "GB/s", m.get("gpusim__dram_read_gbps")),
        ], ncu)
    # the loads in the LSU pipe over the whole kernel, as ncu counts them (extrapolated from the two
    # windows like the warp states), beside the H200's where traces/hw/h200/lsu/ has this launch
    lsu_rows = [(k, "cycle" if k.endswith(".ratio") else "inst", m.get(k)) for k in LSU_METRIC_NAMES]
    if any(v for _, _, v in lsu_rows):
        _metric_table("LSU pipe: loads from issue to retirement (predicted)", lsu_rows,
                      lsu_record(r) if r is not None else {})
    total = m["smsp__average_warp_latency_per_inst_issued.ratio"]
    wl = "smsp__average_warp_latency_per_inst_issued.ratio"
    st = Table(title=f"Warp State Statistics: {wl} = {total:.2f}"
                     + (f" (H200, ncu: {ncu[wl]:.2f})" if wl in ncu else ""))
    st.add_column("stall reason (ncu)")
    st.add_column("cycles / issued inst", justify="right")
    st.add_column("share", justify="right")
    if wl in ncu:
        st.add_column("H200 (ncu)", justify="right")
    # how much of each reason's cycles fell while the warp's SMSP issued nothing (ncu: not-issued PC
    # samples), beside the H200's when its PC-sampling record of this launch exists
    idle = any(not_issued_metric(s) in m for s in STATES)
    hw = not_issued_split(p.kernel, p.M) if idle and p.M == p.N == p.K else None
    if idle:
        st.add_column("of it, SMSP issued nothing", justify="right")
    if hw:
        st.add_column("of it on the H200 (PC samples)", justify="right")
    for name in sorted(STATES, key=lambda s: -p.stalls.get(stall_metric(s), 0)):
        v = p.stalls.get(stall_metric(name), 0.0)
        h = ncu.get(stall_metric(name))
        if v or (h or 0) >= 0.005:
            extra = [f"{m.get(not_issued_metric(name), 0.0):.0f} %"] if idle else []
            extra += [f"{hw[name][1]:.0f} %" if name in hw else "-"] if hw else []
            hcol = ([f"{h:.3f}" if h is not None else "-"] if wl in ncu else [])
            st.add_row(name, f"{v:.3f}", f"{100 * v / total:.1f} %", *hcol, *extra)
    console.print(st)
    for q in ("mio", "lg"):
        v, pool = p.stalls.get(stall_metric(f"{q}_throttle"), 0.0), m.get(f"gpusim__{q}_throttle_sm_pool.ratio", 0.0)
        if v and pool:
            console.print(f"[dim]{q}_throttle: {pool:.3f} of its {v:.3f} per issue waited for the SM-wide {q.upper()} "
                          f"pool while the warp's own SMSP queue had room[/dim]")
    _print_stall_sites(p)
    for note in p.notes:
        console.print(f"[dim]note: {note}[/dim]")


def _on_the_h200(r) -> bool:
    """Whether the run's GPU is the H200 preset as measured: one with fields changed by --set is not."""
    from gpusim.arch import arch_overrides
    return r.arch.lower() == "h200" and not (getattr(r, "gpu", None) is not None and arch_overrides(r.gpu))


def lsu_record(r) -> dict:
    """ncu's LSU-pipe figures of this very launch (traces/hw/h200/lsu/, `gpusim.hw.breakdown --family
    lsu`: ladder kernels at their default parameters, square sizes), or {}."""
    import json
    from gpusim.kernel.spec import get_kernel
    from gpusim.report.records import device_dir
    if not _on_the_h200(r) or not (r.M == r.N == r.K) or r.params != dict(get_kernel(r.kernel).params):
        return {}
    path = device_dir("h200") / "lsu" / f"lsu_{r.kernel}_{r.M}.json"
    if not path.exists():
        return {}
    try:
        metrics = json.loads(path.read_text())["metrics"]
        if not isinstance(metrics, dict):
            raise TypeError("'metrics' is not an object")
        return metrics
    except (OSError, ValueError, KeyError, TypeError) as e:
        _warn(r, f"traces/hw/h200/lsu/{path.name} is damaged ({type(e).__name__}: {e}); its H200 column is left out")
        return {}


def _warn(r, text: str):
    """A figure the output cannot give: said once, in the text and under `warnings` in the JSON."""
    if text not in r.warnings:
        r.warnings.append(text)


def print_warnings(r):
    for w in r.warnings:
        console.print(f"[bold yellow]warning:[/] {w}", highlight=False)


def h200_record(r):
    """The committed H200 record of this very launch (kernel, its parameters, M x N x K), or None: the
    simulation and prediction are then printed beside what the H200 measured (the validation set, not
    an input). Non-square launches have records (times only) at the default parameters, under shapes/."""
    from gpusim.report.records import (RecordError, RecordMissing, device_dir, hw_record, load_record,
                                       shape_record_name)
    if not _on_the_h200(r):
        return None
    try:
        if not (r.M == r.N == r.K):
            from gpusim.kernel.spec import get_kernel
            p = device_dir("h200") / "shapes" / shape_record_name(r.kernel, r.M, r.N, r.K)
            if r.params != dict(get_kernel(r.kernel).params) or not p.exists():
                return None
            rec = load_record(p)
            rec.path = f"shapes/{p.name}"
            return rec
        rec = hw_record(r.kernel, r.M, params=r.params)
    except RecordMissing:
        return None         # nobody measured this launch
    except (RecordError, OSError, ValueError) as e:
        _warn(r, f"the H200 record of this launch is damaged and its column left out: {e}")
        return None
    if rec.get("params", {}) != r.params:
        return None
    name = Path(rec.path).name       # (shown under traces/hw/h200/)
    rec.path = f"variants/{name}" if Path(rec.path).parent.name == "variants" else name
    return rec


def _print_stall_sites(p, top: int = 10):
    """ncu's Source Counters view by opcode: where the warps wait, as shares of all warp cycles, beside
    the H200's PC samples when traces/hw/h200/pcsamp/ holds this launch."""
    from gpusim.report.stall_sites import load_pcsamp, regroup, site_rows
    if not p.op_state_cycles:
        return
    hw = load_pcsamp(p.kernel, p.M) if p.M == p.N == p.K else None
    rows = site_rows(regroup(p.op_state_cycles), hw or {}, top)
    t = Table(title="Source Counters by opcode: where warps wait (% of warp cycles)")
    t.add_column("opcode")
    t.add_column("state")
    t.add_column("sim", justify="right")
    if hw:
        t.add_column("H200 (PC samples)", justify="right")
    for g, s, a, b in rows:
        t.add_row(g, s, f"{a:.1f} %", *([f"{b:.1f} %"] if hw else []))
    console.print(t)


def print_timing_summary(s):
    """The compare summary line(s): time MAPE, max error, rank and top-stall agreement."""
    parts = [f"time: MAPE {s['mape_pct']:.1f} %, max |error| {s['max_abs_error_pct']:.1f} % ({s['worst']}) "
             f"over {s['points']} points"]
    for size, v in s["sizes"].items():
        ranks = ("no order to compare (one kernel)" if v["kendall_tau"] is None else
                 f"ranks {'same' if v['rank_same'] else 'differ'} (Kendall tau {v['kendall_tau']:.2f})")
        parts.append(f"{size}: {ranks}, top stall agrees {v['top_stall_agree']}/{v['top_stall_of']}")
    console.print("[bold]summary[/bold] " + "; ".join(parts))
    for lad, v in s.get("ladders", {}).items():
        console.print(f"[bold]summary[/bold] {lad} ladder: time MAPE {v['mape_pct']:.1f} %, max |error| "
                      f"{v['max_abs_error_pct']:.1f} % ({v['worst']}) over {v['points']} points")


def print_arch_overrides(r):
    """The preset's fields this run changed (--set), old and new."""
    from gpusim.arch import arch_overrides
    changed = arch_overrides(r.gpu) if getattr(r, "gpu", None) is not None else {}
    if changed:
        console.print(f"{r.arch} preset with fields changed (--set): " +
                      ", ".join(f"{k} {_fmt(v['old'])} -> {_fmt(v['new'])}" for k, v in changed.items()),
                      style="bold yellow", highlight=False)


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
    console.print(t)
    if any(r["frontend"] == "python" for r in ok):
        console.print("[dim]stream Python: no SASS for these parameters (none committed, no compiler to make it): "
                      "the Python kernel's own instruction stream ran, a rougher estimate (no register count, so no "
                      "register limit on occupancy, and no ptxas stall counts; `gpusim run` notes say why)[/dim]")
    for r in refused:
        what = " ".join(f"{k}={v}" for k, v in r["params"].items())
        console.print(f"[red]refused[/red] {what} {size(r)} {r['arch']}"
                      + "".join(f" {k}={v}" for k, v in r["sets"].items()) + f": {r['reason']}", highlight=False)
    changed = dict.fromkeys(f"{r['arch']} {k} {_fmt(v['old'])} -> {_fmt(v['new'])}"
                            for r in rows for k, v in r["arch_overrides"].items())
    if changed:
        console.print(f"preset fields changed (--set): {', '.join(changed)}", highlight=False)
    for r in ok:
        for w in r["warnings"]:
            console.print(f"[bold yellow]warning:[/] point {r['point']}: {w}", highlight=False)
    took = f" in {wall_s:.1f} s" if wall_s is not None else ""
    console.print(f"[dim]{len(rows)} points ({len(refused)} refused){took}, {how}[/dim]")


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
    console.print(t)


def print_compare(rows, title):
    t = Table(title=title)
    for col in ("kernel", "size", "metric", "simulated", "H200 (ncu)", "diff", "rel"):
        t.add_column(col, justify="left" if col in ("kernel", "metric") else "right",
                     overflow="fold")
    for r in rows:
        sim, hw = r["simulated"], r["recorded"]
        diff = None if sim is None or hw is None else sim - hw
        rel = "" if diff is None or not hw else f"{100 * diff / hw:+.2f} %"
        if r["metric"] == "launch__occupancy_limit_shared_mem" and diff:
            rel = "carveout"    # not an error: see the note under the table
        style = "" if diff in (0, None) else "yellow"
        t.add_row(r["kernel"], str(r["size"]), r["metric"], _fmt(sim), _fmt(hw), _fmt(diff), rel, style=style)
    console.print(t)
    if any(r["metric"] == "launch__occupancy_limit_shared_mem" and r["simulated"] != r["recorded"] for r in rows):
        console.print("[dim]carveout: ncu's launch__occupancy_limit_shared_mem is for the shared-memory carveout "
                      "the driver picked for the launch (launch__shared_mem_config_size), the simulator's for the "
                      "largest carveout: sm__maximum_warps_per_active_cycle_pct compares the occupancy itself.[/dim]")


def print_window(window, timeline_path, shown):
    """The per-warp stall table of the --trace window (gpusim.timing.window) and where its timeline went."""
    from gpusim.timing.states import STATES, stall_metric
    t = window.timing
    span = ("steady state: each warp's cycles between the prediction's two windows, per instruction it issued "
            "between them" if window.steady else "the whole round, timed in full")
    short = {"selected": "sel", "not_selected": "nsel", "wait": "wait", "short_scoreboard": "ssb",
             "long_scoreboard": "lsb", "mio_throttle": "mio", "lg_throttle": "lg",
             "math_pipe_throttle": "math", "barrier": "bar", "drain": "drain",
             "dispatch_stall": "disp", "no_instruction": "noinst"}
    shown_states = [s for k, s in enumerate(STATES) if window.warp_states[:, k].any()]
    wt = Table(title=f"per-warp stalls (cycles per issued instruction; {span})",
               caption=", ".join(f"{short.get(s, s)}={s}" for s in shown_states))
    wt.add_column("CTA")
    wt.add_column("warp", justify="right")
    wt.add_column("SMSP", justify="right")
    wt.add_column("issued", justify="right")
    wt.add_column("total", justify="right")
    for s in shown_states:
        wt.add_column(short.get(s, s), justify="right")
    for i, (cta, warp) in enumerate(t.warps):
        wm = window.warp_metrics(i)
        wt.add_row(",".join(map(str, window.ctas[int(cta)][:2])), str(int(warp)), str(i % 4),
                   f"{int(window.warp_issued[i]):,}", f"{wm['smsp__average_warp_latency_per_inst_issued.ratio']:.2f}",
                   *[f"{wm[stall_metric(s)]:.2f}" for s in shown_states])
    console.print(wt)
    cut = "" if shown["last_cycle"] + 1 >= shown["cycles"] else f", cut at cycle {shown['last_cycle'] + 1:,} of {shown['cycles']:,}"
    console.print(f"timeline: {timeline_path}: {window.describe()}; {shown['events']:,} of {shown['of']:,} issue "
                  f"events and {shown['stall_intervals']:,} stall intervals, cycles 0-{shown['last_cycle']:,}{cut}; "
                  f"open it in ui.perfetto.dev")


def print_check(res):
    """`gpusim check`: one line per finding (merged by kind and source lines), then the verdict."""
    console.print(f"[bold]{res.kernel}[/] checked at M={res.M} N={res.N} K={res.K} "
                  f"({', '.join(f'{k}={v}' for k, v in res.params.items()) or 'no parameters'}): "
                  f"{res.ctas} CTAs, every trip, {res.wall_s:.2f} s")
    for note in res.notes:
        console.print(f"note: {note}", style="dim")
    for f in res.findings:
        console.print(f"[red]{f.kind}[/] {f.describe()}  [dim]({', '.join(f.lines)})[/]", highlight=False)
    if res.dropped:
        console.print(f"[red]... and {res.dropped} more findings not kept[/]")
    err = f"outputs against numpy: ||out - ref|| / ||ref|| = {res.max_rel_error:.1e} (tolerance {res.tol:.0e})"
    if res.ok:
        console.print(f"[green]no findings[/]; {err}")
    else:
        console.print(f"[red]{len(res.findings) + res.dropped} findings[/]; {err}")
