"""The L2 of a kernel that is not an SGEMM: compulsory misses, and re-reads past the L2's reach.

The SGEMM ladder's L2 model (gpusim.memory.cache.l2_simulate) replays a tile stream built from the
A and B tiles a CTA reads chunk by chunk along K. The second ladder's kernels (copies, transposes,
reductions, a softmax, a stencil, SGEMV) have no K loop: each reads its arrays once, or again within
a few CTAs' reach (a stencil's neighbouring rows, SGEMV's x). For them the L2 misses are the compulsory
ones: each sector of an array is fetched from DRAM once per launch, and a later read of it is an L2 hit,
unless the CTA re-reads it after the chip has touched more than the L2 holds in between (a softmax at
4096 reads its 16-KB row three times, but all 512 CTAs are resident and touch 64 MB before the second
pass: every pass comes from DRAM, as ncu's 201 MB of DRAM reads show). Where the whole working set stays
in the L2 between launches (gpusim.estimate.kernel_time._l2_warm, micro/l2_resident.json), the recorded
launches, which run again and again on the same buffers, find it there and read nothing from DRAM.

The sectors a launch touches are estimated from the sampled trace: per CTA, the sectors its global
loads touch for the first time in that CTA, each weighted as its row, capped at the array's size
(CTAs of a class stand for others touching their own sectors; arrays every CTA reads, such as SGEMV's
x, are capped at their size); a CTA's own re-reads past the reach are added uncapped.
"""
from __future__ import annotations

import numpy as np

from gpusim.memory.rows import first_active

SECTOR = 32


def first_touch_sectors(trace, rows: np.ndarray, weight: np.ndarray, reach: float = np.inf,
                        split: bool = False):
    """Per row (in `rows`): the weighted count of its sectors that must come from DRAM: those no earlier row
    of its CTA touched, and those it touched longer ago than the L2's reach. `reach`: how many sector
    touches a CTA may make between two reads of a sector before the L2 has lost it (the L2's sectors over
    the CTAs resident on the chip at once, which all touch theirs in the meantime; inf: never).
    split: (first touches, re-reads past the reach) apart."""
    out = np.zeros(len(rows), np.float64)
    again = np.zeros(len(rows), np.float64)
    cta = trace.rows["cta"][rows]
    # each CTA's class weight: the least weight of any of its rows (one pass over the trace, not one per CTA)
    ids, inv = np.unique(trace.rows["cta"], return_inverse=True)
    class_w = np.full(len(ids), np.iinfo(np.int64).max, np.int64)
    np.minimum.at(class_w, inv, trace.rows["weight"].astype(np.int64))
    class_of = dict(zip(ids.tolist(), np.maximum(class_w, 1).tolist()))
    all_w = trace.rows["weight"]
    for c in np.unique(cta):
        sel = np.flatnonzero(cta == c)
        # a row of a sampled loop stands for `mult` trips' rows (its weight over its CTA class's): the sectors
        # those trips touch count in the distance too
        mult = all_w[rows[sel]] / class_of[int(c)]
        last: dict = {}          # sector -> the CTA's count of sector touches when it was last touched
        prev: dict = {}          # (warp, pc) -> the addresses of that load's last row
        clock = 0.0
        for jj in np.argsort(trace.rows["seq"][rows[sel]], kind="stable"):
            j = sel[jj]
            a = trace.addr[trace.rows["mem"][rows[j]]]
            key = (int(trace.rows["warp"][rows[j]]), int(trace.rows["pc"][rows[j]]))
            skipped = _skipped_trips(a, prev.get(key), int(round(mult[jj])))
            prev[key] = a
            new = far = 0
            for sec in set((a[a >= 0] // SECTOR).tolist()):
                seen = last.get(sec)
                # touches since its last one: at least the distinct sectors touched since (LRU's distance)
                if seen is None:
                    new += 1
                elif clock - seen > reach:
                    far += 1
                clock += mult[jj]
                last[sec] = clock
            for sec in skipped:         # touched by the trips the row stands for, after its own
                last[sec] = clock
            out[j] = weight[j] * (new if split else new + far)
            again[j] = weight[j] * far
    return (out, again) if split else out


def _skipped_trips(a: np.ndarray, before, m: int) -> set:
    """The sectors of the m - 1 loop trips a sampled row (addresses a) stands for besides its own. The loop
    sampler records a load's first trips, then one row weighted for the trips it jumps (the next trips,
    which run as that one with the registers moved on), then the last; a lane's address moves by the same
    step a trip, the step from the load's row before (addresses `before`) to this one. Empty when m is 1,
    when there is no row before, or when the two rows' active lanes differ."""
    if m <= 1 or before is None or before.shape != a.shape or not np.array_equal(a >= 0, before >= 0):
        return set()
    on = a >= 0
    step = a[on] - before[on]
    secs = set()
    for k in range(1, m):
        secs.update(((a[on] + k * step) // SECTOR).tolist())
    return secs


def reach_sectors(l2_bytes: int, resident_ctas: int) -> float:
    """first_touch_sectors' reach: the L2's sectors shared by the CTAs resident on the chip at once."""
    return l2_bytes / SECTOR / max(1, resident_ctas)


def compulsory_l2(trace, gidx: np.ndarray, w: np.ndarray, l2_reads: np.ndarray, bases: dict,
                  sizes: dict, reach: float = np.inf) -> dict:
    """Per array (by name): L2 sector reads, DRAM sectors (its compulsory misses, and re-reads past the L2's
    reach) and their ratio. gidx: the global-load rows, w their weights, l2_reads: each row's sectors that
    missed in L1; reach: first_touch_sectors'."""
    from gpusim.memory.cache import _array_of
    key = _array_of(first_active(trace.addr, trace.rows["mem"][gidx]), bases, sizes)
    new, far = first_touch_sectors(trace, gidx, w, reach, split=True)
    out = {}
    for i, nm in enumerate(bases):
        sel = key == i
        reads = float((w[sel] * l2_reads[sel]).sum())
        if reads <= 0:
            continue
        # first touches (capped at the array's size: other CTAs' re-reads of a sector find it in the L2) and a
        # CTA's own re-reads past the L2's reach
        dram = min(min(float(new[sel].sum()), sizes[nm] / SECTOR) + float(far[sel].sum()), reads)
        out[nm] = {"l2_sector_reads": reads, "dram_sectors": dram, "miss_fraction": dram / reads}
    return out


def _store_rows(trace):
    from gpusim.kernel.opcodes import SPACE_GLOBAL, TABLE
    space, is_store, _, _, _ = TABLE.arrays()
    op = trace.rows["op"].astype(np.int64)
    sel = (space[op] == SPACE_GLOBAL) & is_store[op].astype(bool) & (trace.rows["mask"] != 0) \
        & (trace.rows["mem"] >= 0)
    return np.flatnonzero(sel)


def written_back_sectors(trace, bases: dict, sizes: dict) -> dict:
    """Per array (by name) the kernel stores to: (sectors the L2 writes back to DRAM, sectors stored),
    each written sector once per launch (its later stores merge in the L2), capped at the array's size.
    With the working set larger than the L2 every stored line leaves it dirty; a stored sector that is
    stored again (a reduction's partial sums) is written back once."""
    from gpusim.memory.cache import _array_of
    from gpusim.memory.counters import cost_trace
    sidx = _store_rows(cost_trace(trace))
    if sidx.size == 0:
        return {}
    w = trace.rows["weight"][sidx].astype(np.float64)
    sect = trace.rows["sectors"][sidx].astype(np.float64)
    key = _array_of(first_active(trace.addr, trace.rows["mem"][sidx]), bases, sizes)
    new = first_touch_sectors(trace, sidx, w)
    out = {}
    for i, nm in enumerate(bases):
        sel = key == i
        stored = float((w[sel] * sect[sel]).sum())
        if stored > 0:
            out[nm] = (min(float(new[sel].sum()), sizes[nm] / SECTOR, stored), stored)
    return out


def writeback_fractions(trace, bases: dict, sizes: dict) -> dict:
    """Per array the kernel stores to: the share of its stored sectors that the L2 writes back to DRAM
    (written_back_sectors)."""
    return {nm: back / stored for nm, (back, stored) in written_back_sectors(trace, bases, sizes).items()}
