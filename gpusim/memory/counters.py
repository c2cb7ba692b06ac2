"""Whole-trace counters, keyed by the Nsight Compute metric names they stand for.

Atomics and reductions (ATOMG / ATOMS: op_atom, REDG: op_red) are counted apart from loads and
stores, as ncu counts them; their metrics appear only for a trace that holds some. Their costs follow
rules measured on the H200 with ncu (tests/sass/snippets/pipes_micro.cu, one warp, 4- and 8-byte
atomics under seven lane patterns), which differ from the load and store rules where lanes share an
address, since each lane's update is applied on its own:
  * global: one request per warp-level instruction with an active lane; sectors = for each 32-byte
    sector touched, the largest number of active lanes that address one same location in it, summed
    (32 lanes on one float: 32 sectors; 32 consecutive floats: 4; lanes in pairs on 16 floats: 4);
  * shared: wavefronts = the largest number of active lanes whose words fall in one bank, lanes on
    one same word counted apart (no broadcast); ideal = one (ncu's bank conflicts: wavefronts - 1).
"""
from __future__ import annotations

import numpy as np

from gpusim.kernel.opcodes import TABLE, SPACE_GLOBAL, SPACE_LOCAL, SPACE_SHARED, base_opcode
from gpusim.memory.coalescer import global_sectors_and_lines
from gpusim.memory.rows import line_patterns
from gpusim.memory.shared_banks import shared_wavefronts



def atomic_sectors(addr: np.ndarray, sector_bytes: int = 32) -> np.ndarray:
    """addr: (rows, 32) byte addresses of atomics, -1 inactive. Per row: over the sectors touched, the
    largest number of lanes on one address in the sector, summed (see the module docstring)."""
    addr = np.asarray(addr, np.int64)
    out = np.zeros(addr.shape[0], np.int64)
    r, _ = np.nonzero(addr >= 0)
    a = addr[addr >= 0]
    if a.size == 0:
        return out
    o = np.lexsort((a, r))
    r, a = r[o], a[o]
    first = np.flatnonzero(np.r_[True, (r[1:] != r[:-1]) | (a[1:] != a[:-1])])     # each (row, address)
    mult = np.diff(np.r_[first, len(a)])
    ra, sec = r[first], a[first] // sector_bytes
    grp = np.flatnonzero(np.r_[True, (ra[1:] != ra[:-1]) | (sec[1:] != sec[:-1])])  # each (row, sector)
    np.add.at(out, ra[grp], np.maximum.reduceat(mult, grp))
    return out


def atomic_wavefronts(addr: np.ndarray, nbytes: int, banks: int = 32):
    """addr: (rows, 32) byte addresses of shared atomics, -1 inactive. Per row: (wavefronts, ideal):
    the most lane words in one bank, lanes on one same word counted apart; ideal one per 32 lane
    words (8-byte atomics: both words of a lane, unverified)."""
    addr = np.asarray(addr, np.int64)
    rows = addr.shape[0]
    valid = addr >= 0
    per_bank = np.zeros((rows, banks), np.int64)
    r, _ = np.nonzero(valid)
    for j in range(nbytes // 4):
        np.add.at(per_bank, (r, (addr[valid] // 4 + j) % banks), 1)
    n = valid.sum(axis=1) * (nbytes // 4)
    return per_bank.max(axis=1), -(-n // banks)


def _first_lanes(addr):
    """addr with every lane after the first on the same address of its row set to -1."""
    out = np.asarray(addr, np.int64).copy()
    o = np.argsort(out, axis=1, kind="stable")
    srt = np.take_along_axis(out, o, axis=1)
    dup = np.zeros_like(srt, bool)
    dup[:, 1:] = (srt[:, 1:] == srt[:, :-1]) & (srt[:, 1:] >= 0)
    np.put_along_axis(out, o, np.where(dup, -1, srt), axis=1)
    return out


def cost_atomic_rows(rows: np.ndarray, addr: np.ndarray) -> bool:
    """Set the sectors (global) or wavefronts (shared) of a trace's atomic rows by the atomic rules, in
    place (the rows' generic costing took them for stores). False when the rows hold no atomic."""
    space, _, nbytes, _, _ = TABLE.arrays()
    atomic = TABLE.atomics()
    sel = np.flatnonzero((rows["mem"] >= 0) & (atomic[rows["op"].astype(np.int64)] != 0))
    for op in np.unique(rows["op"][sel]):
        s = sel[rows["op"][sel] == op]
        a = addr[rows["mem"][s]]
        if "POPC" in TABLE[op].name.split("."):     # POPC.INC: one update per address (measured: one
            a = _first_lanes(a)                      # wavefront for 16 lanes on each of two words)
        if space[op] == SPACE_SHARED:
            rows["wavefronts"][s], rows["ideal_wavefronts"][s] = atomic_wavefronts(a, int(nbytes[op]))
        else:
            rows["sectors"][s] = atomic_sectors(a)
    return sel.size > 0


def count_metrics(trace) -> tuple[dict, dict]:
    """(metrics, executed instructions per SASS opcode) of a weighted trace."""
    rows = cost_trace(trace).rows
    if (TABLE.atomics()[rows["op"].astype(np.int64)] != 0).any():     # whichever front-end made them
        rows = rows.copy()
        cost_atomic_rows(rows, trace.addr)
    w = rows["weight"]
    space, is_store, nbytes, _, _ = TABLE.arrays()
    op = rows["op"].astype(np.int64)
    sp, st = space[op], is_store[op]
    at = TABLE.atomics()[op]                # 0, or 1 / 2 for a reduction / an atomic
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
            sel = (sp == space_id) & (st == store) & (at == 0)
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
    # atomics and reductions: sectors / wavefronts by the atomic rules (cost_atomic_rows above)
    for code, oname in ((1, "red"), (2, "atom")):
        sel = (sp == SPACE_GLOBAL) & (at == code)
        if sel.any():
            m[f"smsp__sass_inst_executed_op_global_{oname}.sum"] = total(sel)
            if oname == "red":
                m["smsp__inst_executed_op_global_red.sum"] = total(sel)
            m[f"l1tex__t_requests_pipe_lsu_mem_global_op_{oname}.sum"] = total(sel)
            m[f"l1tex__t_sectors_pipe_lsu_mem_global_op_{oname}.sum"] = total(sel, "sectors")
    sel = (sp == SPACE_SHARED) & (at != 0)
    if sel.any():
        m["smsp__sass_inst_executed_op_shared_atom.sum"] = m["smsp__inst_executed_op_shared_atom.sum"] = total(sel)
        wf = total(sel, "wavefronts")
        m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum"] = wf
        m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_atom.sum"] = wf - total(sel, "ideal_wavefronts")
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


def cost_rows(rows: np.ndarray, addr: np.ndarray):
    """Fill sectors/lines (global) and wavefronts/ideal (shared) of memory rows."""
    space, _, nbytes, _, _ = TABLE.arrays()
    m = rows["mem"] >= 0
    idx = np.flatnonzero(m)
    ops = rows["op"][idx]
    for op in np.unique(ops):
        sel = idx[ops == op]
        if space[op] not in (SPACE_GLOBAL, SPACE_LOCAL, SPACE_SHARED):
            continue
        a = addr[rows["mem"][sel]]
        # each kind of row counted once: rows alike up to whole lines have the same counts (line_patterns)
        first, kind = line_patterns(a)
        nb = int(nbytes[op])
        if space[op] in (SPACE_GLOBAL, SPACE_LOCAL):      # local memory goes through L1TEX as global does
            s, l = global_sectors_and_lines(a[first], nb)
            rows["sectors"][sel], rows["lines"][sel] = s[kind], l[kind]
        else:
            wf, ideal = shared_wavefronts(a[first], nb)
            rows["wavefronts"][sel], rows["ideal_wavefronts"][sel] = wf[kind], ideal[kind]
    # atomics and reductions follow their own rules (a lane per update, not per distinct address)
    cost_atomic_rows(rows, addr)


def cost_trace(trace):
    """Fill the memory rows' costs of a front-end's trace (in place, once); returns the trace."""
    if not trace.costed:
        if trace.addr.shape[0]:
            cost_rows(trace.rows, trace.addr)
        trace.costed = True
    return trace
