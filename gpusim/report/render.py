"""The one module that imports rich: summaries, tables and progress bars."""
from __future__ import annotations

import contextlib
import difflib
import os
import sys
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from gpusim.errors import GpusimError
from gpusim.memory.counters import per_base_opcode

# piped output (logs, CI) gets a wide page instead of rich's 80 columns, so metric names stay whole;
# $COLUMNS, where given, sets the width (rich reads it), as a terminal's own width does
console = (Console() if sys.stdout.isatty() or os.environ.get("COLUMNS", "").strip().isdigit()
           else Console(width=160))
err_console = Console(stderr=True)

# from this width on, tables name each metric by its ncu name; narrower, by a short label (LABELS)
WIDE = 120

# `gpusim run --section NAME`: Nsight Compute's section names, in report order, and what each prints
SECTIONS = {
    "SpeedOfLight": "the predicted time, each unit's throughput against its peak, the binding limit",
    "Occupancy": "launch figures, occupancy and its limits, achieved occupancy",
    "MemoryWorkloadAnalysis": "global and shared requests, sectors, wavefronts, bank conflicts; L1/L2/DRAM "
                              "(cache model); loads in the LSU pipe",
    "InstructionStats": "instructions executed per SASS opcode",
    "WarpStateStats": "stall reasons: cycles per issued instruction",
    "SourceCounters": "where the warps wait, by opcode",
    "warps": "the per-warp stalls of the --trace window",
}
# one screen each (~50 lines at 80 columns): the prediction's time and stalls; counts only (--no-time),
# the launch and memory counts
DEFAULT_SECTIONS = ("SpeedOfLight", "WarpStateStats")
COUNT_SECTIONS = ("Occupancy", "MemoryWorkloadAnalysis")


def pick_sections(names, timed: bool = True, trace: bool = False) -> tuple:
    """--section's values (repeatable, or comma-separated; any case; `all`) as section names in report
    order; none given: the default set (and `warps` with --trace, as before sections existed)."""
    if not names:
        return (DEFAULT_SECTIONS if timed else COUNT_SECTIONS) + (("warps",) if trace else ())
    known = {k.lower(): k for k in SECTIONS}
    out = set()
    for item in names:
        for n in filter(None, (x.strip() for x in item.split(","))):
            if n.lower() == "all":      # everything this run has: the per-warp view only with --trace
                out |= {s for s in SECTIONS if s != "warps" or trace}
            elif n.lower() in known:
                out.add(known[n.lower()])
            else:
                close = difflib.get_close_matches(n.lower(), [*known, "all"], n=1, cutoff=0.5)
                hint = f"; did you mean {known.get(close[0], close[0])}?" if close else ""
                raise GpusimError(f"--section: unknown section {n!r}{hint} (sections: {', '.join(SECTIONS)}, all)")
    if "warps" in out and not trace:
        raise GpusimError("--section warps is the per-warp view of the --trace window: add --trace")
    return tuple(s for s in SECTIONS if s in out)


def _wide() -> bool:
    return console.width >= WIDE


# short names for narrow pages (under WIDE columns), where ncu's names would not fit; --json and a wide
# page give ncu's
LABELS = {
    "launch__grid_size": "grid size (CTAs)",
    "launch__block_size": "block size (threads)",
    "launch__registers_per_thread": "registers per thread",
    "launch__shared_mem_per_block_static": "static shared mem per CTA",
    "launch__occupancy_limit_registers": "CTA limit: registers",
    "launch__occupancy_limit_shared_mem": "CTA limit: shared mem",
    "launch__occupancy_limit_warps": "CTA limit: warps",
    "launch__occupancy_limit_blocks": "CTA limit: CTAs per SM",
    "sm__maximum_warps_per_active_cycle_pct": "theoretical occupancy %",
    "launch__waves_per_multiprocessor": "waves per SM",
    "smsp__inst_executed.sum": "instructions executed",
    "smsp__sass_inst_executed_op_global_ld.sum": "global load instructions",
    "smsp__sass_inst_executed_op_global_st.sum": "global store instructions",
    "time_ms": "time (ms)",
    "smsp__average_warp_latency_per_inst_issued.ratio": "cycles per issued inst",
    "smsp__issue_active.avg.per_cycle_active": "issued per SMSP cycle",
    "gpu__time_duration.sum": "duration",
    "sm__cycles_elapsed.avg": "SM cycles elapsed",
    "smsp__issue_active.avg.pct_of_peak_sustained_active": "issue slots busy",
    "gpusim__pipe_fma_issue.pct": "FMA pipe issue",
    "gpusim__pipe_alu_issue.pct": "ALU pipe issue",
    "gpusim__shared_pipe_busy.pct": "shared pipe busy",
    "gpusim__l1tex_busy.pct": "L1TEX busy (LSU requests)",
    "gpusim__dram_read.pct_of_achieved_peak": "DRAM read, of achieved peak",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "achieved occupancy",
    "smsp__warps_active.avg.per_cycle_active": "active warps per SMSP",
    "l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct": "L1 hit rate, global loads",
    "lts__t_sector_op_read_hit_rate.pct": "L2 hit rate, reads",
    "dram__bytes_read.sum": "DRAM bytes read",
    "gpusim__dram_read_gbps": "DRAM read bandwidth",
    "sm__inst_pending_pipe_lsu_mem_shared_cmd_read.avg.per_cycle_active": "shared loads in flight",
    "sm__average_inst_latency_pipe_lsu_mem_shared_cmd_read.ratio": "shared load latency",
    "sm__inst_pending_pipe_lsu_mem_lg_cmd_read.avg.per_cycle_active": "global loads in flight",
    "sm__average_inst_latency_pipe_lsu_mem_lg_cmd_read.ratio": "global load latency",
}
for _op, _w in (("ld", "load"), ("st", "store")):
    LABELS.update({f"l1tex__t_requests_pipe_lsu_mem_global_op_{_op}.sum": f"global {_w} requests",
                   f"l1tex__t_sectors_pipe_lsu_mem_global_op_{_op}.sum": f"global {_w} sectors",
                   f"smsp__sass_inst_executed_op_shared_{_op}.sum": f"shared {_w}s",
                   f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{_op}.sum": f"shared {_w} wavefronts",
                   f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{_op}.sum": f"shared {_w} bank conflicts"})
del _op, _w


def _name(metric: str) -> str:
    """A row's metric as the page has room for: ncu's name (and its gloss) when wide, else a short label."""
    return metric if _wide() else LABELS.get(metric.split(" ")[0], metric)


def _names_note(print_it: bool = True) -> list:
    """On a narrow page, where ncu's metric names are: printed, or returned for a line of hints."""
    note = [] if _wide() else [f"ncu's metric names: --json, or a page of {WIDE}+ columns (COLUMNS={WIDE + 40})"]
    if print_it and note:
        console.print(f"[dim]{note[0]}[/dim]")
    return note


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


def _table(title, *columns, caption=None):
    """A table whose text columns wrap (never "…") and whose number columns (justify right) never wrap."""
    t = Table(title=title, caption=caption)
    for c in columns:
        if c.startswith(">"):       # a number never wraps: a column too narrow shows "…", which tests catch
            t.add_column(c[1:], justify="right", no_wrap=True)
        else:
            t.add_column(c, overflow="fold")
    return t


def _hw_col(table, ncu, title="H200 (ncu)"):
    """Adds the H200's column to a table when this launch has a record; returns whether it did."""
    if ncu:
        table.add_column(title, justify="right", no_wrap=True)
    return bool(ncu)


def print_summary(r, pred=None, checked=None, sections=None):
    """The text report of `gpusim run`: a header, then the chosen sections (SECTIONS; all of them when
    None) in Nsight Compute's order, the notes, the sanitizer's findings, and the warnings last."""
    show = set(SECTIONS if sections is None else sections)
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
    if pred is None:
        console.print("[dim]predicted time: skipped (--no-time)[/dim]")
    elif "SpeedOfLight" in show:
        _speed_of_light(pred, rec)
    if "Occupancy" in show:
        _occupancy(r, pred, ncu)
    if "MemoryWorkloadAnalysis" in show:
        _memory(r, pred, rec)
    if "InstructionStats" in show:
        _instructions(r, rec)
    if pred is not None and "WarpStateStats" in show:
        _warp_states(pred, ncu)
    if pred is not None and "SourceCounters" in show:
        _print_stall_sites(pred)
    for note in r.notes:
        console.print(f"[yellow]note:[/yellow] {note}")
    for note in (pred.notes if pred is not None else []):
        console.print(f"[dim]note: {note}[/dim]")
    # the sections not shown that would show something (the prediction's need it: not with --no-time)
    left = [s for s in SECTIONS if s not in show and s != "warps"
            and (pred is not None or s in ("Occupancy", "MemoryWorkloadAnalysis", "InstructionStats"))]
    hints = [f"more: --section all, or {', '.join(left)}"] if sections is not None and left else []
    if show - {"warps"}:
        hints += _names_note(print_it=False)
    if hints:
        console.print(f"[dim]{'; '.join(hints)}[/dim]")
    if checked is not None:     # --mode full: the sanitizer's findings (gpusim check)
        print_check(checked)
    print_warnings(r)       # last, where they are seen


def _occupancy(r, pred, ncu):
    m = r.metrics
    launch = _table("Launch Statistics / Occupancy", "metric", ">value")
    hw = _hw_col(launch, ncu)
    keys = ("launch__grid_size", "launch__block_size", "launch__registers_per_thread",
            "launch__shared_mem_per_block_static", "launch__occupancy_limit_registers",
            "launch__occupancy_limit_shared_mem", "launch__occupancy_limit_warps",
            "launch__occupancy_limit_blocks", "sm__maximum_warps_per_active_cycle_pct",
            "launch__waves_per_multiprocessor")
    for key in keys:
        launch.add_row(_name(key), _fmt(m.get(key)), *([_fmt(ncu.get(key))] if hw else []))
    console.print(launch)
    if any(m.get(k) is None for k in keys):
        console.print("[dim]n/a: no such figure for this instruction stream (the Python kernel's own has no "
                      "register count, so no register limit)[/dim]")
    shm = "launch__occupancy_limit_shared_mem"
    if hw and shm in ncu and m.get(shm) != ncu[shm]:
        console.print("[dim]CTA limit: shared mem differs by design: ncu's is for the shared-memory carveout the "
                      "driver picked (launch__shared_mem_config_size), the simulator's for the largest; the "
                      "occupancy itself agrees[/dim]")
    if pred is not None:
        _metric_table("Occupancy (predicted)", [
            ("sm__warps_active.avg.pct_of_peak_sustained_active", "%",
             pred.metrics.get("sm__warps_active.avg.pct_of_peak_sustained_active")),
            ("smsp__warps_active.avg.per_cycle_active", "warp",
             pred.metrics.get("smsp__warps_active.avg.per_cycle_active")),
        ], ncu)


def _memory(r, pred, rec):
    from gpusim.timing import LSU_METRIC_NAMES
    m = r.metrics
    ncu = rec.metrics if rec is not None else {}
    mem = _table("Memory Workload Analysis (exact counts)", "metric", ">value", ">per request")
    hw = _hw_col(mem, ncu)

    def mem_row(key, v, per=""):
        mem.add_row(_name(key), _fmt(v), per, *([_fmt(ncu.get(key))] if hw else []))
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
    console.print("[dim]per request: sectors per global request; wavefronts and bank conflicts per shared "
                  "instruction (1.000 wavefront: no conflict; -: no such instruction)[/dim]")
    if hw:
        console.print(f"[dim]H200 (ncu): traces/hw/h200/{rec.path}, the same launch. Instructions, requests and "
                      f"sectors equal ncu's; shared-load wavefronts are within 0.1 % on the SGEMM ladder, and ncu counts "
                      f"up to 3.7 % more on the memory ladder (tests/test_hw_agreement.py); "
                      f"ncu's shared-store wavefronts run 0-20 % above what the addresses need (L1 traffic on the "
                      f"data banks).[/dim]")
    if pred is None:
        return
    pm = pred.metrics
    if "dram__bytes_read.sum" in pm:
        _metric_table("Memory Workload Analysis (cache model)", [
            ("l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct", "%",
             pm.get("l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct")),
            ("lts__t_sector_op_read_hit_rate.pct", "%", pm.get("lts__t_sector_op_read_hit_rate.pct")),
            ("dram__bytes_read.sum", "byte", pm.get("dram__bytes_read.sum")),
            ("gpusim__dram_read_gbps", "GB/s", pm.get("gpusim__dram_read_gbps")),
        ], ncu)
    # the loads in the LSU pipe over the whole kernel, as ncu counts them (extrapolated from the two
    # windows like the warp states), beside the H200's where traces/hw/h200/lsu/ has this launch
    lsu_rows = [(k, "cycle" if k.endswith(".ratio") else "inst", pm.get(k)) for k in LSU_METRIC_NAMES]
    if any(v for _, _, v in lsu_rows):
        _metric_table("LSU pipe: loads in flight (predicted)", lsu_rows, lsu_record(r))


def _instructions(r, rec):
    m = r.metrics
    inst = _table(f"Instructions executed: {'smsp__inst_executed.sum = ' if _wide() else ''}"
                  f"{m['smsp__inst_executed.sum']:,}", "SASS opcode", ">executed", ">share")
    by_op = rec.get("ncu", {}).get("inst_executed_per_opcode_with_modifier", {}) if rec is not None else {}
    hw = _hw_col(inst, by_op)
    total = m["smsp__inst_executed.sum"] or 1
    for name, c in sorted(r.inst_executed_per_opcode.items(), key=lambda kv: -kv[1]):
        inst.add_row(name, _fmt(c), f"{100 * c / total:.1f} %", *([_fmt(_by_name(by_op, name))] if hw else []))
    console.print(inst)
    if hw and any(_by_name(by_op, name) is None for name in r.inst_executed_per_opcode):
        console.print("[dim]n/a: no single opcode of ncu's spelling matches the simulator's name[/dim]")
    ffma = per_base_opcode(r.inst_executed_per_opcode).get("FFMA", 0)
    if ffma:
        lds = m["smsp__sass_inst_executed_op_shared_ld.sum"]
        ldg = m["smsp__sass_inst_executed_op_global_ld.sum"]
        console.print(f"loads per FFMA: shared {lds / ffma:.4f}, global {ldg / ffma:.4f}")


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
    launch has a record (gpusim__* metrics have no ncu counterpart: "-", and a note says so).
    Returns whether some row had no H200 value."""
    t = _table(title, "metric", "unit", ">predicted")
    hw = _hw_col(t, ncu)
    missing = False
    for name, unit, v in rows:
        if v is not None:
            h = _ncu_value(ncu, name.split(" ")[0]) if hw else None
            missing |= hw and h is None
            t.add_row(_name(name), unit, _fmt(float(v)), *([_fmt(h) if h is not None else "-"] if hw else []))
    console.print(t)
    if missing:
        console.print("[dim]H200 -: ncu has no such metric (the simulator's own figure)[/dim]")


def _speed_of_light(p, rec):
    """GPU Speed Of Light: the predicted time, beside the H200's where it has this launch, each unit's
    throughput against its peak, and the unit nearest its peak (the binding limit)."""
    from gpusim.estimate.sweep import SPEED_OF_LIGHT
    m = p.metrics
    rate = f"{p.gflops:,.0f} GFLOP/s" if p.gflops > 0 else f"{p.gbps:,.0f} GB/s moving each array once"
    console.print(f"[bold]predicted time {p.time_ms:.4f} ms[/bold]  ({p.cycles:,.0f} SM cycles, {rate})")
    if rec is not None:
        console.print(f"H200 recorded {rec['time_ms_median']:.4f} ms (traces/hw/h200/{rec.path}): prediction "
                      f"{100 * (p.time_ms / rec['time_ms_median'] - 1):+.1f} %")
    ncu = rec.metrics if rec is not None else {}
    rounds = "; ".join(f"{r.count} x {r.ctas} resident CTA(s), {r.trips} trips"
                       + (f" at {r.per_trip:,.1f} cycles/trip" if r.per_trip else " (timed in full)")
                       for r in p.rounds)
    console.print(f"[dim]busiest SM: {rounds}; windows of {p.windows[0]} and "
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
    sol = [(m[k], label) for k, label in SPEED_OF_LIGHT if m.get(k) is not None]
    if sol:
        pct, unit = max(sol)
        # ncu's Speed Of Light rule: every unit under 60 % of its peak points at latency instead
        console.print(f"binding limit: [bold]{unit}[/bold], {pct:.0f} % of its peak (the unit nearest its peak)"
                      + ("; every unit under 60 %: latency, more than throughput, limits it" if pct < 60 else ""))
    if ncu:
        console.print("[dim]H200 column: one profiled launch, caches flushed; H200 recorded: a timed median[/dim]")


def _warp_states(p, ncu):
    """Warp State Statistics: each stall reason in cycles per issued instruction, beside ncu's."""
    from gpusim.report.stall_sites import not_issued_split
    from gpusim.timing import not_issued_metric
    from gpusim.timing.states import STATES, stall_metric
    m = p.metrics
    wl = "smsp__average_warp_latency_per_inst_issued.ratio"
    total = m[wl]
    h200 = f" (H200, ncu: {ncu[wl]:.2f})" if wl in ncu else ""
    wide = _wide()
    title = (f"Warp State Statistics: {wl} = {total:.2f}{h200}" if wide else
             f"Warp State Statistics: {total:.2f} cycles/issue" + (f" (H200: {ncu[wl]:.2f})" if h200 else ""))
    # how much of each reason's cycles fell while the warp's SMSP issued nothing (ncu: not-issued PC
    # samples), beside the H200's when its PC-sampling record of this launch exists
    idle = any(not_issued_metric(s) in m for s in STATES)
    hw = not_issued_split(p.kernel, p.M) if idle and p.M == p.N == p.K else None
    cols = (["stall reason (ncu)", ">cycles / issued inst", ">share"] if wide else
            ["stall reason", ">cycles/issue", ">share"])
    if wl in ncu:
        cols.append(">H200 (ncu)" if wide else ">H200")
    if idle:
        cols.append(">of it, SMSP issued nothing" if wide else ">idle")
    if hw:
        cols.append(">of it on the H200 (PC samples)" if wide else ">H200 idle")
    caption = None if wide or not idle else "idle: of them, the SMSP issued nothing" + (
        " (H200: PC samples)" if hw else "")
    st = _table(title, *cols, caption=caption)
    for name in sorted(STATES, key=lambda s: -p.stalls.get(stall_metric(s), 0)):
        v = p.stalls.get(stall_metric(name), 0.0)
        h = ncu.get(stall_metric(name))
        if v or (h or 0) >= 0.005:
            extra = [f"{m.get(not_issued_metric(name), 0.0):.0f} %"] if idle else []
            extra += [f"{hw[name][1]:.0f} %" if name in hw else "-"] if hw else []
            hcol = ([f"{h:.3f}" if h is not None else "-"] if wl in ncu else [])
            st.add_row(name, f"{v:.3f}", f"{100 * v / total:.1f} %", *hcol, *extra)
    console.print(st)
    pools = []
    for q in ("mio", "lg"):
        v, pool = p.stalls.get(stall_metric(f"{q}_throttle"), 0.0), m.get(f"gpusim__{q}_throttle_sm_pool.ratio", 0.0)
        if v and pool:
            pools.append(f"{q}_throttle {pool:.3f} of its {v:.3f}")
    if pools:
        console.print(f"[dim]{', '.join(pools)} per issue waited for the SM-wide pool while the warp's own SMSP "
                      f"queue had room[/dim]")


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
    t = _table("Source Counters by opcode", "opcode", "state", ">% of warp cycles",
               *([">H200 (PC samples)"] if hw else []))
    for g, s, a, b in rows:
        t.add_row(g, s, f"{a:.1f} %", *([f"{b:.1f} %"] if hw else []))
    console.print(t)


def print_timing_summary(s):
    """The compare summary lines: time MAPE, max error, rank and top-stall agreement; one line per size
    and per ladder, so that each fits an 80-column page."""
    console.print(f"[bold]summary[/bold] time: MAPE {s['mape_pct']:.1f} %, max |error| {s['max_abs_error_pct']:.1f} % "
                  f"({s['worst']}) over {s['points']} points")
    for size, v in s["sizes"].items():
        ranks = ("no order to compare (one kernel)" if v["kendall_tau"] is None else
                 f"ranks {'same' if v['rank_same'] else 'differ'} (Kendall tau {v['kendall_tau']:.2f})")
        console.print(f"[bold]summary[/bold] {size}: {ranks}, top stall agrees "
                      f"{v['top_stall_agree']}/{v['top_stall_of']}")
    for lad, v in s.get("ladders", {}).items():
        console.print(f"[bold]summary[/bold] {lad} ladder: MAPE {v['mape_pct']:.1f} %, max "
                      f"{v['max_abs_error_pct']:.1f} % ({v['worst']}), {v['points']} points")


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
    console.print(t)
    if any(r["metric"] == "launch__occupancy_limit_shared_mem" and r["simulated"] != r["recorded"] for r in rows):
        console.print("[dim]carveout: ncu's launch__occupancy_limit_shared_mem is for the shared-memory carveout "
                      "the driver picked for the launch (launch__shared_mem_config_size), the simulator's for the "
                      "largest carveout: sm__maximum_warps_per_active_cycle_pct compares the occupancy itself.[/dim]")
    if any(r["metric"] in EXPLAINED and r["simulated"] != r["recorded"] for r in rows):
        console.print(f"[dim]shared wavefronts and bank conflicts: {EXPLAINED[next(iter(EXPLAINED))]} "
                      f"(tests/test_hw_agreement.py)[/dim]")
    if any(not r["recorded"] and r["simulated"] for r in rows):
        console.print(f"[dim]rel n/a: the {gpu} counted 0, so there is no relative difference[/dim]")
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
    t.min_width = min(len(title) + 4, console.width)      # the title on one line
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
    console.print(t)
    # one line at 80 columns: what each column counts
    legend = f"error: predicted / {gpu} time - 1; " if timed else ""
    legend += "counts" + (", top stall" if stalls else "") + f": how many equal the {gpu}'s"
    console.print(f"[dim]{legend}[/dim]")
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
        console.print(f"[dim]counts that differ{' (' + reason + ')' if reason else ''}, points of {len(points)} and "
                      f"{gpu} vs simulated: {'; '.join(items)}[/dim]")
    if stalls and len(sizes) == 1:      # which stall each side has on top, where they differ
        off = [f"{p['kernel']} {p['top_stall']} / {p['h200_top_stall']}" for p in points
               if p["top_stall"] is not None and p["top_stall"] != p["h200_top_stall"]]
        if off:
            console.print(f"[dim]top stall, simulated / {gpu}: {'; '.join(off)}[/dim]")
    if any(p["carveout_differs"] for p in points):
        console.print("[dim]not counted: the shared-memory CTA limit (ncu's is for the driver's carveout)[/dim]")


def print_window(window, timeline_path, shown, table: bool = True):
    """The per-warp stall table of the --trace window (gpusim.timing.window), when `table`, and where its
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
            if console.measure(wt, options=console.options.update_width(10_000)).maximum <= console.width:
                break
        console.print(wt)
    cut = "" if shown["last_cycle"] + 1 >= shown["cycles"] else f", cut at cycle {shown['last_cycle'] + 1:,} of {shown['cycles']:,}"
    console.print(f"timeline: {timeline_path}: {window.describe()}; {shown['events']:,} of {shown['of']:,} issue "
                  f"events and {shown['stall_intervals']:,} stall intervals, cycles 0-{shown['last_cycle']:,}{cut}; "
                  f"open it in ui.perfetto.dev, where 1 us on the time axis is 1 SM cycle")


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
        console.print(t)
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
        console.print(t)
    if by_array or source:
        console.print(_MEMORY_LEGEND)
        if r.frontend == "sass" and any(e["space"] == "shared" for e in r.by_array.values()):
            console.print("shared: the SASS keeps no names for __shared__ arrays; --frontend python names "
                          "them as the Python kernel declares them")
