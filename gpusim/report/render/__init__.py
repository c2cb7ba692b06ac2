"""The one package that imports rich: summaries, tables and progress bars.

This module holds the console and the helpers every table uses; `run` prints `gpusim run`'s report,
`views` the other commands' tables. Both print through `render.console`, so a caller (or a test) that
replaces it redirects all of them."""
from __future__ import annotations

import contextlib
import difflib
import os
import sys

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from gpusim.errors import GpusimError

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



# the printers, below the helpers they import
from gpusim.report.render.run import (  # noqa: E402,F401
    h200_record, lsu_record, print_arch_overrides, print_summary, print_timing_summary, print_warnings)
from gpusim.report.render.views import (  # noqa: E402,F401
    print_check, print_compare, print_compare_summary, print_kernel_list, print_memory_views, print_pc_sites, print_sweep, print_window)
