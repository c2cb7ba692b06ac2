"""Whole-trace counters, keyed by the Nsight Compute metric names they stand for."""
from __future__ import annotations

import numpy as np

from gpusim.kernel.opcodes import TABLE, SPACE_GLOBAL, SPACE_LOCAL, SPACE_SHARED, base_opcode



def count_metrics(trace) -> tuple[dict, dict]:
    """(metrics, executed instructions per SASS opcode) of a weighted trace."""
    rows = trace.rows
    w = rows["weight"]
    space, is_store, nbytes, _, _ = TABLE.arrays()
    op = rows["op"].astype(np.int64)
    sp, st = space[op], is_store[op]
    lanes = np.bitwise_count(rows["mask"]).astype(np.int64)
    words = lanes * (nbytes[op].astype(np.int64) // 4)     # 32-bit values moved by the row's threads
    m = {"smsp__inst_executed.sum": int(w.sum())}

    on = rows["mask"] != 0      # predicated-off rows count as executed, never as memory operations

    def total(sel, field=None):
        sel = sel & on
        return int((w[sel] * (rows[field][sel] if field else 1)).sum())

    for space_id, sname in ((SPACE_GLOBAL, "global"), (SPACE_SHARED, "shared"), (SPACE_LOCAL, "local")):
        if space_id == SPACE_LOCAL and not (sp == SPACE_LOCAL).any():
            continue                 # no local memory (no spills): no rows of zeros
        for store, dname in ((False, "ld"), (True, "st")):
            sel = (sp == space_id) & (st == store)
            m[f"smsp__sass_inst_executed_op_{sname}_{dname}.sum"] = total(sel)
            # thread-level 32-bit values: the unit the seeds count "loads" in
            m[f"gpusim__values_mem_{sname}_op_{dname}.sum"] = int((w[sel] * words[sel]).sum())
            if space_id in (SPACE_GLOBAL, SPACE_LOCAL):
                m[f"l1tex__t_requests_pipe_lsu_mem_{sname}_op_{dname}.sum"] = total(sel)
                m[f"l1tex__t_sectors_pipe_lsu_mem_{sname}_op_{dname}.sum"] = total(sel, "sectors")
                m[f"gpusim__lines_mem_{sname}_op_{dname}.sum"] = total(sel, "lines")
            else:
                wf = total(sel, "wavefronts")
                ideal = total(sel, "ideal_wavefronts")
                m[f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{dname}.sum"] = wf
                m[f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{dname}.sum"] = wf - ideal
                m[f"gpusim__ideal_wavefronts_mem_shared_op_{dname}.sum"] = ideal
    counts = np.bincount(op, weights=w, minlength=len(TABLE.ops)).astype(np.int64)
    per_op = {TABLE.ops[i].name: int(c) for i, c in enumerate(counts) if c}
    return m, dict(sorted(per_op.items()))


def per_base_opcode(per_op: dict) -> dict:
    """Fold full opcode names to the base opcodes ncu's per-opcode table uses."""
    out: dict[str, int] = {}
    for name, c in per_op.items():
        b = base_opcode(name)
        out[b] = out.get(b, 0) + c
    return dict(sorted(out.items()))
