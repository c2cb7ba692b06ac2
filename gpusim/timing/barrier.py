"""Each CTA's barrier unit (BAR.SYNC).

The unit processes arrivals one per bar_arrive cycles (each at max(its issue, the previous processed) +
bar_arrive); when every warp of the CTA that has not finished issuing arrived, they resume bar_release
cycles after the last processed arrival (barrier_cost micro: 12 + 2 x warps cycles per barrier).
BAR.SYNC.DEFER_BLOCKING: a warp goes on past the barrier and waits for its release only at the first
memory, control or ADU instruction (R_FLAGS bit 0, lower's bar_hold); others issue past it."""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from gpusim.jit import guard_cache
from gpusim.timing.intrinsics import unit_sources
from gpusim.timing.rows import INF

# per warp: waiting at a barrier, and its release cycle (INF until the last arrival sets it); per CTA: the
# arrivals so far, when the last one was processed, and its warps that have not issued their last row
Barriers = namedtuple("Barriers", ["wait", "release", "arrived", "processed", "live"])


@njit(cache=True, inline="always", error_model="numpy")
def new_barriers(cta_warp_start, n_warps):
    n_ctas = cta_warp_start.shape[0] - 1
    live = np.zeros(n_ctas, np.int64)
    for c in range(n_ctas):
        live[c] = cta_warp_start[c + 1] - cta_warp_start[c]
    return Barriers(wait=np.zeros(n_warps, np.bool_), release=np.full(n_warps, INF, np.int64),
                    arrived=np.zeros(n_ctas, np.int64), processed=np.zeros(n_ctas, np.int64), live=live)


@njit(cache=True, inline="always", error_model="numpy")
def holds(bar, w, t):
    """Warp w waits for its barrier's release at t (if its row is one that waits: R_FLAGS bit 0)."""
    return bar.wait[w] and bar.release[w] > t


@njit(cache=True, inline="always", error_model="numpy")
def passed(bar, w, t):
    if bar.release[w] <= t:
        bar.wait[w] = False


@njit(cache=True, inline="always", error_model="numpy")
def arrive(bar, w, cta, t, bar_arrive):
    """Warp w of CTA cta issued BAR.SYNC at t."""
    bar.wait[w] = True
    bar.release[w] = INF
    bar.arrived[cta] += 1
    bar.processed[cta] = max(bar.processed[cta], t) + bar_arrive


@njit(cache=True, inline="always", error_model="numpy")
def release(bar, cta, t, wake, cta_warp_start, finished, recheck, bar_release):
    """After an issue of CTA cta's: when every warp that has not finished issuing arrived, the waiting ones
    resume bar_release cycles after the last processed arrival (their recheck cleared); returns wake."""
    if bar.arrived[cta] > 0 and bar.arrived[cta] >= bar.live[cta]:
        rel = max(t, bar.processed[cta]) + bar_release
        for w2 in range(cta_warp_start[cta], cta_warp_start[cta + 1]):
            if bar.wait[w2] and not finished[w2]:     # (a finished warp's recheck stays INF)
                bar.release[w2] = rel
                recheck[w2] = 0
        bar.arrived[cta] = 0
        wake = min(wake, rel)
    return wake


guard_cache(globals(), unit_sources())     # stamped by every unit's source, guarded, seeded (gpusim.jit)
