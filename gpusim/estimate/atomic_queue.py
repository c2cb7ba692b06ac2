"""Atomics that every CTA makes to one address (a reduction's last step, reduce_atomic's atomicAdd): the
L2 applies them one after another, one per `atomic_same_address_ns` (micro/atomic_contention.json: 1.755
ns each, 0.57 G/s, where atomics to addresses of their own cost nothing past the CTA dispatch). The
engine times one SM's CTAs and does not see the other SMs' atomics on the same address; this queue does.
"""
from __future__ import annotations

import numpy as np

from gpusim.kernel.opcodes import SPACE_GLOBAL, TABLE


def shared_address_atomics(trace) -> int:
    """Global atomic and reduction requests (warp rows with a lane on) to an address that every sampled
    CTA of the trace updates, weighted to the whole grid: one per request (the microbenchmark's CTAs
    made one each; how the L2 takes several lanes of one request on one address is not measured). 0 where
    fewer than two CTAs were sampled (nothing shows that the address is shared)."""
    if trace is None or not len(trace.rows):
        return 0
    rows = trace.rows
    op = rows["op"].astype(np.int64)
    space = TABLE.arrays()[0]
    atomic = TABLE.atomics()
    sel = np.flatnonzero((atomic[op] > 0) & (space[op] == SPACE_GLOBAL) & (rows["mem"] >= 0) & (rows["mask"] != 0))
    if sel.size == 0:
        return 0
    ctas = np.unique(rows["cta"])
    if len(ctas) < 2:
        return 0
    addr = trace.addr[rows["mem"][sel]]
    per_cta = {}
    for c in ctas:
        a = addr[rows["cta"][sel] == c]
        per_cta[c] = set(np.unique(a[a >= 0]).tolist())
    common = set.intersection(*per_cta.values())
    if not common:
        return 0
    hit = np.array([bool(common & set(x[x >= 0].tolist())) for x in addr])
    return int(rows["weight"][sel][hit].sum())


def queue_end_cycles(arrivals: list, n: int, per_atomic_cycles: float) -> float:
    """When the last of n same-address atomics is applied: arrivals [(cycle, fraction of the n)] in time
    order, each batch queued behind the earlier ones at one atomic per per_atomic_cycles."""
    end, left = 0.0, float(n)
    for t, f in arrivals:
        end = max(end, t + left * per_atomic_cycles)
        left -= f * n
    return end
