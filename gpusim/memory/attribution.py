"""Memory counters by array and by instruction, from a costed trace.

The whole-kernel counters (counters.count_metrics) sum every memory row; a CUDA engineer's claims are
about one array ("B's loads are 4 sectors per request, A's one") or one instruction (Nsight Compute's
Source page). Each memory row is attributed here to the array its first active lane's address falls in:
  * global arrays by the names the kernel's signature gives them (their base addresses and sizes);
  * shared arrays by the names the Python kernel declares; the SASS names none (ptxas keeps no symbol
    per __shared__ array), so a SASS run's shared accesses all go under "shared";
  * local memory (spills) under "local".
Counts are the same as count_metrics' and weighted the same way, so the arrays' sums are the totals.
"""
from __future__ import annotations

import numpy as np

from gpusim.kernel.opcodes import SPACE_GLOBAL, SPACE_LOCAL, SPACE_SHARED, TABLE
from gpusim.memory.rows import first_active

KINDS = {0: "loads", 1: "stores", 2: "reductions", 3: "atomics"}
SPACE_NAMES = {SPACE_GLOBAL: "global", SPACE_SHARED: "shared", SPACE_LOCAL: "local"}


def _region(first: np.ndarray, regions: dict, fallback: str) -> np.ndarray:
    """Per address, the name of the region [start, start + bytes) it falls in, else `fallback`."""
    out = np.full(first.shape, fallback, dtype=object)
    for name, (start, nbytes) in regions.items():
        out[(first >= start) & (first < start + nbytes)] = name
    return out


def _memory_rows(trace, global_regions: dict, shared_regions: dict | None):
    """(row indices, array name, space name, kind name) of the trace's memory rows with an active lane."""
    from gpusim.memory.counters import cost_trace
    rows = cost_trace(trace).rows
    space, is_store, _, _, _ = TABLE.arrays()
    op = rows["op"].astype(np.int64)
    sel = np.flatnonzero((rows["mem"] >= 0) & (rows["mask"] != 0))
    sp = space[op[sel]]
    first = first_active(trace.addr, rows["mem"][sel])
    names = np.full(len(sel), "local", dtype=object)
    g = sp == SPACE_GLOBAL
    names[g] = _region(first[g], global_regions, "global (outside the arguments)")
    s = sp == SPACE_SHARED
    names[s] = _region(first[s], shared_regions, "shared") if shared_regions else "shared"
    at = TABLE.atomics()[op[sel]]            # 1 reduction, 2 atomic
    kind = np.where(at > 0, at + 1, is_store[op[sel]].astype(np.int64))
    return sel, names, np.array([SPACE_NAMES[int(x)] for x in sp], dtype=object), kind


def _counters(rows, idx, space: str) -> dict:
    w = rows["weight"][idx]
    n = int(w.sum())
    lanes = np.bitwise_count(rows["mask"][idx]).astype(np.int64)
    _, _, nbytes, _, _ = TABLE.arrays()
    words = lanes * (nbytes[rows["op"][idx].astype(np.int64)].astype(np.int64) // 4)
    out = {"instructions": n, "values": int((w * words).sum())}
    if space == "shared":
        wf = int((w * rows["wavefronts"][idx]).sum())
        ideal = int((w * rows["ideal_wavefronts"][idx]).sum())
        out.update(wavefronts=wf, ideal_wavefronts=ideal, bank_conflicts=wf - ideal,
                   wavefronts_per_request=wf / n if n else 0.0)
    else:
        sectors = int((w * rows["sectors"][idx]).sum())
        out.update(sectors=sectors, sectors_per_request=sectors / n if n else 0.0)
    return out


def by_array(trace, global_regions: dict, shared_regions: dict | None = None) -> dict:
    """{array: {"space": ..., "loads" / "stores" / "reductions" / "atomics": counters}}.

    Counters: instructions (warp-level, with an active lane: ncu's requests), values (32-bit values
    the threads move), and sectors and sectors_per_request (global, local) or wavefronts,
    ideal_wavefronts, bank_conflicts and wavefronts_per_request (shared). Global arrays in argument
    order, then shared ones in declaration order; kinds an array never does are absent.
    """
    sel, names, spaces, kind = _memory_rows(trace, global_regions, shared_regions)
    out: dict = {}
    seen = set(names)
    order = [n for n in list(global_regions) + list(shared_regions or {}) if n in seen]
    for name in order + sorted(seen - set(order)):      # argument order, then declaration order
        mine = names == name
        entry = out[name] = {"space": spaces[mine][0]}
        for k, label in KINDS.items():
            pick = sel[mine & (kind == k)]
            if len(pick):
                entry[label] = _counters(trace.rows, pick, entry["space"])
    return out


def by_instruction(trace, global_regions: dict, shared_regions: dict | None = None,
                   sass_text: dict | None = None) -> list[dict]:
    """One entry per memory instruction of the program, in program order: where it is ('0x01f0' and
    its SASS text, or the Python kernel's 'file.py:line'), its opcode, array and kind, and its counters
    as by_array's (instructions = executions with an active lane; *_per_request per execution)."""
    sel, names, spaces, kind = _memory_rows(trace, global_regions, shared_regions)
    rows = trace.rows
    if trace.site is not None:
        key = trace.site[sel]
        label = {i: n for i, n in enumerate(trace.site_names)}
    else:
        key = rows["pc"][sel].astype(np.int64)
        label = {int(pc): f"0x{int(pc):04x}" for pc in np.unique(key)}
    op = rows["op"][sel]
    out = []
    groups = {}
    for i in range(len(sel)):
        groups.setdefault((int(key[i]), int(op[i]), names[i]), []).append(i)
    for (site, o, name), members in sorted(groups.items(), key=lambda kv: _order(label.get(kv[0][0]), kv[0])):
        m = np.array(members)
        entry = {"where": label.get(site, "?"), "opcode": TABLE[o].name, "array": name,
                 "space": spaces[m[0]], "kind": KINDS[int(kind[m[0]])]}
        if sass_text is not None and trace.site is None:
            entry["sass"] = sass_text.get(site, "")
        entry.update(_counters(rows, sel[m], entry["space"]))
        out.append(entry)
    return out


def _order(where, key):
    """Program order: by pc for SASS, by file then line for Python source."""
    if where and ":" in where:
        f, _, line = where.rpartition(":")
        return (f, int(line) if line.isdigit() else 0, key[1])
    return ("", key[0], key[1])
