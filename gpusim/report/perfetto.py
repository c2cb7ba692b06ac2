"""Perfetto-compatible timeline (Chrome trace-event JSON): one track per warp, grouped by SMSP.

Each warp's track is tiled, cycle by cycle, by what the engine says the warp did: an issued
instruction is a slice one cycle long named by its SASS opcode (category "issue"), and the cycles
between are slices named by the ncu warp state the warp was in (category "stall": long_scoreboard,
not_selected, barrier, ...), with the opcode it waited at (args.at, where ncu's PC samples put it). A long
window is cut at a cycle so that the file stays below max_events slices; the file's otherData says where.

Time: `ts` and `dur` are whole SM cycles, not microseconds as the trace-event format reads them, so that a
one-cycle issue stays one unit long (at the H200's 1.98 GHz a cycle is 0.505 ns, under Perfetto's 1-ns
resolution). A viewer's "1 us" is therefore one cycle; otherData says so (time_unit "cycles") and gives the
preset's SM clock (clock_mhz, ns_per_cycle) to turn cycles into time. displayTimeUnit is the format's
default, "ms", which claims no finer resolution than the file has (it was "ns", which read each cycle as
1000 ns in viewers that honour it).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from gpusim.paths import write_atomic
from gpusim.timing.states import STATES


def timeline_cut(issue_cycle: np.ndarray, log: np.ndarray, log_complete: bool, max_events: int,
                 cycles: int) -> int:
    """The first cycle the timeline leaves out (`cycles`, the window's end, when nothing is left out):
    every slice that starts before it is kept (at most max_events of them); where the stall intervals
    were not all kept, no later than the last kept one's end (they are kept in the order they end)."""
    starts = np.sort(np.concatenate([issue_cycle[issue_cycle >= 0], log[:, 2]]))
    cut = int(starts[max_events]) if len(starts) > max_events else cycles
    if not log_complete and len(log):
        cut = min(cut, int(log[:, 3].max()))
    return cut


def write_timeline(window, path: str | Path, max_events: int = 400_000, clock_mhz: float | None = None) -> dict:
    """Writes the --trace window's timeline (module doc); clock_mhz: the preset's SM clock, for otherData.
    Returns what it kept (the CLI prints it)."""
    t = window.timing
    rows = window.trace.rows
    log = t.state_log
    cut = timeline_cut(t.issue_cycle, log, window.log_complete, max_events, int(t.cycles))
    events = []
    for w, (cta, warp) in enumerate(t.warps):
        smsp = int(w % 4)
        events.append({"ph": "M", "name": "process_name", "pid": smsp, "args": {"name": f"SMSP {smsp}"}})
        events.append({"ph": "M", "name": "thread_name", "pid": smsp, "tid": int(w),
                       "args": {"name": f"CTA {window.ctas[int(cta)]} warp {int(warp)}"}})
    ops = window.trace.opcodes
    issued = np.flatnonzero((t.issue_cycle >= 0) & (t.issue_cycle < cut))
    for i in issued[np.argsort(t.issue_cycle[issued], kind="stable")]:
        w = int(t.row_warp[i])
        events.append({"ph": "X", "cat": "issue", "name": ops[int(rows["op"][t.trace_row[i]])],
                       "ts": int(t.issue_cycle[i]), "dur": 1, "pid": int(w % 4), "tid": w})
    n_issue = len(issued)
    kept = log[log[:, 2] < cut]
    for w, s, t0, t1, at in kept[np.argsort(kept[:, 2], kind="stable")]:
        events.append({"ph": "X", "cat": "stall", "name": STATES[int(s)], "ts": int(t0),
                       "dur": int(min(t1, cut) - t0), "pid": int(w % 4), "tid": int(w),
                       "args": {"at": ops[int(rows["op"][t.trace_row[at]])]}})
    shown = {"events": n_issue, "of": int((t.issue_cycle >= 0).sum()), "stall_intervals": len(kept),
             "last_cycle": cut - 1, "cycles": int(t.cycles)}
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    unit = {"time_unit": "cycles", "ts_unit": "ts and dur are SM cycles: 1 us on a viewer's time axis is 1 cycle"}
    if clock_mhz:
        unit.update(clock_mhz=float(clock_mhz), ns_per_cycle=1e3 / clock_mhz)
    doc = json.dumps({"traceEvents": events, "displayTimeUnit": "ms",
                      "otherData": {"window": window.describe(), **unit, **shown}})
    write_atomic(path, lambda f: f.write(doc.encode()))
    return shown
