"""Queue waiters in groups: a speed-up of the scheduler's scan with many warps per SMSP (run_lowered: 12 or
more, GROUPS_ON; not when stall intervals are logged). The results are those of evaluating every warp every
cycle (tests/timing/test_engine.py).

The warps of one SMSP waiting on one queue class (MIO or LG: its SMSP queue or the SM's pool) at rows where
only the queue and the pool decide all see the same queue, pool and grant each cycle, so they are in the same
state, but for the one the FIFO rule would pick: the earliest waiter, the group's head. Only the head is
evaluated; the others (members, FIFO order) follow its state (not_selected the cycle it issues), kept per
group as cumulative cycles by state, and each member's share is booked from those when it becomes the head.
The same counts as evaluating every waiter every cycle, without the herd of evaluations each freed entry set
off (most of the 64-warp kernels' work). Slots of the cumulative cycles: 0 not_selected, 1 pool, 2 queue
full. Group 2 s is SMSP s's MIO waiters, 2 s + 1 its LG waiters."""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from gpusim.jit import guard_cache
from gpusim.timing.intrinsics import unit_sources
from gpusim.timing.rows import INF, S_LG_POOL, S_MIO_POOL
from gpusim.timing.states import S_LG_THROTTLE, S_MIO_THROTTLE, S_NOT_SELECTED, S_SELECTED

# head: each group's head (-1 none); mem, n: its members (any order) and their count; state, since,
# lat_since: the head's state, since when, and the not-issued count then; cum, cum_lat: the group's
# cumulative cycles by slot; mem_cum, mem_cum_lat: the group's cumulative cycles when the member joined
Groups = namedtuple("Groups", ["head", "mem", "n", "state", "since", "lat_since", "cum", "cum_lat",
                               "mem_cum", "mem_cum_lat"])


@njit(cache=True, inline="always", error_model="numpy")
def new_groups(n_smsp, n_warps):
    n_grp = 2 * n_smsp
    return Groups(head=np.full(n_grp, -1, np.int64), mem=np.zeros((n_grp, max(n_warps, 1)), np.int64),
                  n=np.zeros(n_grp, np.int64), state=np.zeros(n_grp, np.int64), since=np.zeros(n_grp, np.int64),
                  lat_since=np.zeros(n_grp, np.int64), cum=np.zeros((n_grp, 3), np.int64),
                  cum_lat=np.zeros((n_grp, 3), np.int64), mem_cum=np.zeros((n_warps, 3), np.int64),
                  mem_cum_lat=np.zeros((n_warps, 3), np.int64))


@njit(cache=True, inline="always", error_model="numpy")
def _slot(gs):
    return 0 if gs == S_NOT_SELECTED else (1 if gs >= S_MIO_POOL else 2)


@njit(cache=True, inline="always", error_model="numpy")
def join(g, b, w, s, st, t, thr_since, recheck, lat_on):
    """Warp w of SMSP s began waiting (state st, its FIFO key thr_since[w] just set): the head of its group
    if the group has none or w comes before the head in the FIFO (a younger warp that began waiting in the
    same cycle), else a member (every waiter is one or the other until it issues)."""
    gi = 2 * s + (0 if (st == S_MIO_THROTTLE or st == S_MIO_POOL) else 1)
    h = g.head[gi]
    x = w                           # the warp that becomes a member, if any
    if h < 0:
        g.head[gi] = w              # the earliest waiter: evaluated as any warp
        g.state[gi] = st
        g.since[gi] = t
        g.lat_since[gi] = b.lat_cum[s]
        x = -1
    elif thr_since[w] < thr_since[h]:
        g.head[gi] = w              # (h became the head in this cycle, in the same state)
        x = h
    if x >= 0:
        # its own interval ends here; the group's cycles from now on are its own
        sx = b.state[x]
        n0 = t - b.since[x]
        b.counts[x, sx] += n0
        if lat_on:
            b.lat_counts[x, sx] += b.lat_cum[s] - b.lat_since[x]
        b.op_counts[b.op_at[x], sx] += n0
        cur = _slot(g.state[gi])
        for j in range(3):
            g.mem_cum[x, j] = g.cum[gi, j] + (t - g.since[gi] if j == cur else 0)
            g.mem_cum_lat[x, j] = g.cum_lat[gi, j] + (b.lat_cum[s] - g.lat_since[gi] if j == cur else 0)
        b.state[x] = -1
        recheck[x] = INF
        g.mem[gi, g.n[gi]] = x
        g.n[gi] += 1


@njit(cache=True, inline="always", error_model="numpy")
def follow(g, b, t, thr_since, recheck, lat_on):
    """End of cycle t: the members' state this cycle is their head's (not_selected if it issued); when the
    head has issued, the earliest member takes its place with its share of the group's cycles."""
    for gi in range(g.head.shape[0]):
        h = g.head[gi]
        if h < 0:
            continue
        s = gi // 2
        ns = b.state[h]
        gone_h = ns == S_SELECTED
        if gone_h:
            ns = S_NOT_SELECTED
        if ns != g.state[gi]:
            cur = _slot(g.state[gi])
            g.cum[gi, cur] += t - g.since[gi]
            g.cum_lat[gi, cur] += b.lat_cum[s] - g.lat_since[gi]
            g.state[gi] = ns
            g.since[gi] = t
            g.lat_since[gi] = b.lat_cum[s]
        if not gone_h:
            continue
        if g.n[gi] == 0:
            g.head[gi] = -1
            continue
        jm = 0                                  # the member first in the FIFO
        for j in range(1, g.n[gi]):
            if thr_since[g.mem[gi, j]] < thr_since[g.mem[gi, jm]]:
                jm = j
        w = g.mem[gi, jm]
        g.n[gi] -= 1
        g.mem[gi, jm] = g.mem[gi, g.n[gi]]
        # its cycles as a member, through this one (the head issued: something issued, so the next
        # cycle is t + 1; this cycle's not-issued count is added to lat_cum at the advance)
        lat_next = b.lat_cum[s] + (0 if b.smsp_active[s] else 1)
        op = b.op_at[w]
        for j in range(3):
            stj = S_NOT_SELECTED if j == 0 else ((S_MIO_POOL if j == 1 else S_MIO_THROTTLE) if gi % 2 == 0
                                                 else (S_LG_POOL if j == 1 else S_LG_THROTTLE))
            n0 = g.cum[gi, j] + (t + 1 - g.since[gi] if j == 0 else 0) - g.mem_cum[w, j]
            b.counts[w, stj] += n0
            b.op_counts[op, stj] += n0
            if lat_on:
                b.lat_counts[w, stj] += (g.cum_lat[gi, j] + (lat_next - g.lat_since[gi] if j == 0 else 0)
                                         - g.mem_cum_lat[w, j])
        b.state[w] = S_NOT_SELECTED
        b.since[w] = t + 1
        b.lat_since[w] = lat_next
        recheck[w] = 0
        g.head[gi] = w


guard_cache(globals(), unit_sources())     # stamped by every unit's source, guarded, seeded (gpusim.jit)
