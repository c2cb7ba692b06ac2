"""The scoreboard: when each row's result is ready, ptxas's dependency barriers and its read barriers.

A warp's next row waits until every producer it reads has its result (ready[producer] <= t): a missing
global-load result is long_scoreboard, a shared-load one short_scoreboard, any other wait; with several,
that order wins. With ptxas's dependency barriers on (P_SB_GLOBAL, P_SB_SHARED: how many of a warp's six
barriers SB0-SB5 the kernel's SASS gives global / shared loads), a load beyond its class's count shares the
class's last claimed barrier (its counter counts both), and a consumer waits for every load on its
producer's barrier; it clears the barrier when it issues. A memory row with a read wait (rb_wait, ptxas's
read barriers: lower.read_waits) waits until the LSU queue has read the registers of that earlier memory
row of its warp (M_READ: at its pipe's take, or earlier by the queue's read-ahead; long_scoreboard, or
short_scoreboard behind a shared one)."""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from gpusim.jit import guard_cache
from gpusim.timing.intrinsics import unit_sources
from gpusim.timing.rows import (C_LDG, C_LDS, C_STG, DEP_LDG, DEP_LDS, INF, M_READ, R_CLS, R_DEP, R_FLAGS,
                                R_LAT)
from gpusim.timing.states import S_LONG_SB, S_SHORT_SB, S_WAIT

N_SB = 6          # dependency barriers per warp (sm_90 control codes: SB0-SB5)

# ready: per row, when its result is available (a load's: its data returned); per warp and barrier: claim
# (the class holding it, 0 free), untaken (its loads the pipe has not taken yet), sb_ready (the latest data
# return among the taken ones), gen (bumped each time a consumer clears it); last: per warp and class, its
# latest claimed barrier; row_sb, row_gen: the barrier each load went on, and its generation then
Scoreboard = namedtuple("Scoreboard", ["ready", "claim", "untaken", "sb_ready", "gen", "last", "row_sb",
                                       "row_gen"])


@njit(cache=True, inline="always", error_model="numpy")
def new_scoreboard(n_rows, n_warps, sb_on):
    return Scoreboard(ready=np.full(n_rows, INF, np.int64), claim=np.zeros((n_warps, N_SB), np.int64),
                      untaken=np.zeros((n_warps, N_SB), np.int64), sb_ready=np.zeros((n_warps, N_SB), np.int64),
                      gen=np.zeros((n_warps, N_SB), np.int32), last=np.full((n_warps, 3), -1, np.int64),
                      row_sb=np.full(n_rows if sb_on else 1, -1, np.int8),
                      row_gen=np.zeros(n_rows if sb_on else 1, np.int32))


@njit(cache=True, inline="always", error_model="numpy")
def _worse(sb, why):
    """The state a warp waiting on several things shows: long_scoreboard, then short_scoreboard, then wait."""
    return sb == -1 or why == S_LONG_SB or (why == S_SHORT_SB and sb == S_WAIT)


@njit(cache=True, inline="always", error_model="numpy")
def wait_state(sb_, w, r, t, rows, rb_wait, row_mem, sb_on):
    """(state, cycle it can end) of warp w at row r on its producers and its read barrier; state -1: none
    to wait for. The cycle is INF while a producer load is still queued (the pipe's take wakes the warp)."""
    sb = -1
    dep_wk = INF
    dep_cls = rows[r, R_FLAGS] >> 1
    for j in range(3):
        d = rows[r, R_DEP + j]
        if d < 0:
            continue
        rdy = sb_.ready[d]
        dc = (dep_cls >> (2 * j)) & 3         # DEP_LDG, DEP_LDS or 0
        if sb_on and dc != 0 and sb_.row_sb[d] >= 0 and sb_.row_gen[d] == sb_.gen[w, sb_.row_sb[d]]:
            # the barrier counts every load put on it so far: wait for all of them
            b = sb_.row_sb[d]
            rdy = INF if sb_.untaken[w, b] > 0 else max(rdy, sb_.sb_ready[w, b])
        if rdy > t:
            why = S_LONG_SB if dc == DEP_LDG else (S_SHORT_SB if dc == DEP_LDS else S_WAIT)
            if _worse(sb, why):
                sb = why
            dep_wk = min(dep_wk, rdy)   # INF: still queued; the pipes wake us
    p = rb_wait[r]
    if p >= 0 and (row_mem[p] & M_READ) == 0:
        # ptxas's read barrier: an earlier memory row of this warp still waits in its queue, its registers
        # unread (their read, by the LSU queue's read-ahead or the pipe taking it, clears recheck: dep_wk INF)
        cp = rows[p, R_CLS]
        why = S_LONG_SB if cp == C_LDG or cp == C_STG else S_SHORT_SB
        if _worse(sb, why):
            sb = why
    return sb, dep_wk


@njit(cache=True, inline="always", error_model="numpy")
def on_issue(sb_, w, r, c, rows, sb_k):
    """Warp w issued row r (class c): the barriers its producers sit on are cleared (it waited for them),
    and a global / shared load claims a free barrier of its class while the class has fewer than sb_k, else
    joins the class's latest one (ptxas's allocation: its counters are shared)."""
    dep_cls = rows[r, R_FLAGS] >> 1
    for jd in range(3):
        dd = rows[r, R_DEP + jd]
        if (dd >= 0 and (dep_cls >> (2 * jd)) & 3 != 0 and sb_.row_sb[dd] >= 0
                and sb_.row_gen[dd] == sb_.gen[w, sb_.row_sb[dd]]):
            bb = sb_.row_sb[dd]
            cls_b = sb_.claim[w, bb]
            sb_.claim[w, bb] = 0
            sb_.untaken[w, bb] = 0
            sb_.sb_ready[w, bb] = 0
            sb_.gen[w, bb] += 1
            if cls_b > 0 and sb_.last[w, cls_b] == bb:
                sb_.last[w, cls_b] = -1
    # a shuffle or S2R in the MIO queue (R_LAT < 0) is on a barrier of its own in ptxas's code, not on the
    # shared loads'
    kc = 1 if c == C_LDG else (2 if c == C_LDS and rows[r, R_LAT] >= 0 else 0)
    if kc > 0 and sb_k[kc] > 0:
        held = 0
        free_b = -1
        for bb in range(N_SB):
            if sb_.claim[w, bb] == kc:
                held += 1
            elif sb_.claim[w, bb] == 0 and free_b < 0:
                free_b = bb
        bb = -1
        if held < sb_k[kc] and free_b >= 0:
            bb = free_b
            sb_.claim[w, bb] = kc
            sb_.last[w, kc] = bb
        elif sb_.last[w, kc] >= 0:
            bb = sb_.last[w, kc]
        if bb >= 0:         # (else every barrier is held by the other class: it waits on its own data)
            sb_.row_sb[r] = bb
            sb_.row_gen[r] = sb_.gen[w, bb]
            sb_.untaken[w, bb] += 1


@njit(cache=True, inline="always", error_model="numpy")
def on_take(sb_, w, r, done):
    """The pipe took warp w's load r, its data back at done: the barrier it sits on counts one fewer
    untaken load, and its data return."""
    if sb_.row_sb[r] >= 0 and sb_.row_gen[r] == sb_.gen[w, sb_.row_sb[r]]:
        bb = sb_.row_sb[r]
        sb_.untaken[w, bb] -= 1
        if done > sb_.sb_ready[w, bb]:
            sb_.sb_ready[w, bb] = done


guard_cache(globals(), unit_sources())     # stamped by every unit's source, guarded, seeded (gpusim.jit)
