"""Perfetto-compatible timeline (Chrome trace-event JSON): one track per warp, grouped by SMSP.

Each issued instruction is a slice one cycle long named by its SASS opcode; the gaps
between slices are the warp's stalls. Timestamps are cycles (shown as microseconds).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np


def write_timeline(window, path: str | Path, max_events: int = 200_000) -> dict:
    t = window.timing
    rows = window.trace.rows
    order = np.argsort(t.issue_cycle, kind="stable")[:max_events]
    events = []
    for w, (cta, warp) in enumerate(t.warps):
        smsp = int(w % 4)
        events.append({"ph": "M", "name": "process_name", "pid": smsp, "args": {"name": f"SMSP {smsp}"}})
        events.append({"ph": "M", "name": "thread_name", "pid": smsp, "tid": int(w),
                       "args": {"name": f"CTA {window.ctas[int(cta)]} warp {int(warp)}"}})
    ops = window.trace.opcodes
    for i in order:
        w = int(t.row_warp[i])
        events.append({"ph": "X", "name": ops[int(rows["op"][t.trace_row[i]])], "ts": int(t.issue_cycle[i]),
                       "dur": 1, "pid": int(w % 4), "tid": w})
    shown = {"events": len(order), "of": len(t.issue_cycle), "last_cycle": int(t.issue_cycle[order].max())
             if len(order) else 0}
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps({"traceEvents": events, "displayTimeUnit": "ns",
                                      "otherData": {"window": window.describe(), **shown}}))
    return shown
