"""The LSU's instruction queues: each SMSP's MIO (shared) and LG (global) queue, the SM-wide MIO and LG pools
and their arbiter, and each warp's memory instructions in flight.

A shared (global) instruction issues only with a free slot in its SMSP's MIO (LG) queue and an entry of the
SM-wide MIO (LG) pool, else mio_throttle (lg_throttle; kept in the engine-only states S_MIO_POOL / S_LG_POOL
when only the pool is short, which run_lowered folds back in). The LG pool has room only while the SM also
holds fewer than P_LG_SM_UNTAKEN global instructions L1TEX has not taken. When more SMSPs' picks want an
entry than the pool has free, the SMSPs with the fewest entries in flight (LG with that cap: the fewest
untaken) get them (ties: lowest SMSP), and a refused SMSP issues its best other warp. A queue entry counts
against the depths from its issue until its data returns (ready), or until its pipe takes it when
queue_entry_until_return is off; an L1 miss with miss entries (l1tex.py) leaves it at the take.
An SMSP's MIO and LG queues are one LSU queue (lsu_queue_in_order): a head leaves only when no older
instruction of its SMSP waits in the other queue. The queue reads the registers of its read_ahead oldest
entries (lsu_queue_read_ahead = 6): a read barrier on a memory instruction clears then (M_READ), not when
its pipe takes it. The pipes that take the heads are l1tex.py's."""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from gpusim.jit import guard_cache
from gpusim.timing.intrinsics import unit_sources
from gpusim.timing.rows import C_LDS, C_STS, INF, M_READ, M_TAKEN, R_WARP, S_LG_POOL, S_MIO_POOL
from gpusim.timing.states import S_LG_THROTTLE, S_MIO_THROTTLE

# the SM-wide scalars (Lsu.reg): entries in flight per pool, global instructions L1TEX has not taken,
# instructions waiting in the MIO / LG queues, and the earliest release of a taken entry per pool
Q_MIO_TOTAL, Q_LG_TOTAL, Q_LG_UNTAKEN, Q_MIO_Q, Q_LG_Q, Q_MIO_NR, Q_LG_NR, N_Q_REG = range(8)

# per SMSP: mio_fl, lg_fl, the entries in flight as the issue stage sees them; mio_ret, lg_ret (mio_rn,
# lg_rn of them) the release times of entries the pipe took, mio_nr_s, lg_nr_s the earliest; mio_buf, lg_buf
# (from *_head, *_cnt of them) the instructions not yet taken, in issue order; ring (ring_head, ring_cnt)
# the in-order queue's untaken instructions of both kinds (read-ahead only); grant: the arbiter's answer
# this cycle (q granted, -q refused, 0 not asked). Per warp: pending_mem, its memory instructions not yet
# taken, mem_done, when the last taken one's data returns. Per row: row_mem, M_READ | M_TAKEN | M_FETCHED
# (one byte a row, not three int64 arrays: their allocation alone was 5 % of a run).
Lsu = namedtuple("Lsu", ["mio_fl", "lg_fl", "mio_ret", "lg_ret", "mio_rn", "lg_rn", "mio_nr_s", "lg_nr_s",
                         "mio_buf", "mio_head", "mio_cnt", "lg_buf", "lg_head", "lg_cnt", "ring", "ring_head",
                         "ring_cnt", "grant", "pending_mem", "mem_done", "row_mem", "reg"])


@njit(cache=True, inline="always", error_model="numpy")
def new_lsu(n_smsp, n_warps, n_rows, mio_depth, lg_depth):
    reg = np.zeros(N_Q_REG, np.int64)
    reg[Q_MIO_NR], reg[Q_LG_NR] = INF, INF
    return Lsu(mio_fl=np.zeros(n_smsp, np.int64), lg_fl=np.zeros(n_smsp, np.int64),
               mio_ret=np.zeros((n_smsp, max(mio_depth, 1)), np.int64),
               lg_ret=np.zeros((n_smsp, max(lg_depth, 1)), np.int64),
               mio_rn=np.zeros(n_smsp, np.int64), lg_rn=np.zeros(n_smsp, np.int64),
               mio_nr_s=np.full(n_smsp, INF, np.int64), lg_nr_s=np.full(n_smsp, INF, np.int64),
               mio_buf=np.zeros((n_smsp, max(mio_depth, 1)), np.int64), mio_head=np.zeros(n_smsp, np.int64),
               mio_cnt=np.zeros(n_smsp, np.int64), lg_buf=np.zeros((n_smsp, max(lg_depth, 1)), np.int64),
               lg_head=np.zeros(n_smsp, np.int64), lg_cnt=np.zeros(n_smsp, np.int64),
               ring=np.zeros((n_smsp, mio_depth + lg_depth), np.int64), ring_head=np.zeros(n_smsp, np.int64),
               ring_cnt=np.zeros(n_smsp, np.int64), grant=np.zeros(n_smsp, np.int64),
               pending_mem=np.zeros(n_warps, np.int64), mem_done=np.zeros(n_warps, np.int64),
               row_mem=np.zeros(n_rows, np.uint8), reg=reg)


@njit(cache=True, error_model="numpy")
def _purge(ret, rn, fl, nr, t):
    """Drop the in-flight entries whose data returned by t (only SMSPs whose earliest return nr[s]
    is due are scanned); returns (entries dropped, next return)."""
    gone, nxt = np.int64(0), INF
    for s in range(rn.shape[0]):
        if nr[s] <= t:
            k = 0
            m = INF
            while k < rn[s]:
                if ret[s, k] <= t:
                    rn[s] -= 1
                    ret[s, k] = ret[s, rn[s]]
                    fl[s] -= 1
                    gone += 1
                else:
                    if ret[s, k] < m:
                        m = ret[s, k]
                    k += 1
            nr[s] = m
        if nr[s] < nxt:
            nxt = nr[s]
    return gone, nxt


@njit(cache=True, error_model="numpy")
def clear_recheck(state, recheck, st, st_pool):
    """Entries of a queue freed: every warp held back by it (its SMSP's queue or the SM's pool) looks
    again."""
    for w in range(state.shape[0]):
        if state[w] == st or state[w] == st_pool:
            recheck[w] = 0


@njit(cache=True, inline="always", error_model="numpy")
def release_returned(q, t, state, recheck):
    """Start of cycle t: the entries whose data returned leave the queues' and pools' counts."""
    if t >= q.reg[Q_MIO_NR]:
        gone, nxt = _purge(q.mio_ret, q.mio_rn, q.mio_fl, q.mio_nr_s, t)
        q.reg[Q_MIO_NR] = nxt
        q.reg[Q_MIO_TOTAL] -= gone
        if gone > 0:
            clear_recheck(state, recheck, S_MIO_THROTTLE, S_MIO_POOL)
    if t >= q.reg[Q_LG_NR]:
        gone, nxt = _purge(q.lg_ret, q.lg_rn, q.lg_fl, q.lg_nr_s, t)
        q.reg[Q_LG_NR] = nxt
        q.reg[Q_LG_TOTAL] -= gone
        if gone > 0:
            clear_recheck(state, recheck, S_LG_THROTTLE, S_LG_POOL)


@njit(cache=True, inline="always", error_model="numpy")
def pool_room(q, mio_sm_depth, lg_sm_depth, lg_untaken_cap):
    """Free entries of the SM's MIO and LG pools at the start of the cycle."""
    return (mio_sm_depth - q.reg[Q_MIO_TOTAL],
            min(lg_sm_depth - q.reg[Q_LG_TOTAL], lg_untaken_cap - q.reg[Q_LG_UNTAKEN]))


@njit(cache=True, inline="always", error_model="numpy")
def queue_state(q, s, mio, mio_left, lg_left, mio_depth, lg_depth, st, wk):
    """(state, cycle it can end, pool class pending: 1 MIO, 2 LG, 0 none) of a memory instruction of SMSP s
    (mio: a shared one) that passed every other check: its SMSP queue full, the pool full (a purge of
    entries clears recheck: INF), or eligible pending the pool's arbiter (st, wk as they stand)."""
    pw = 0
    if mio:
        if q.mio_fl[s] >= mio_depth:
            st, wk = S_MIO_THROTTLE, INF
        elif mio_left <= 0:
            st, wk = S_MIO_POOL, INF
        else:
            pw = 1
    else:
        if q.lg_fl[s] >= lg_depth:
            st, wk = S_LG_THROTTLE, INF
        elif lg_left <= 0:
            st, wk = S_LG_POOL, INF
        else:
            pw = 2
    return st, wk, pw


@njit(cache=True, inline="always", error_model="numpy")
def arbitrate(q, sel1, pend, smsp_warps, n_pend, mio_left, lg_left, grant_untaken, lg_untaken_cap, lg_sm_depth):
    """The SM-wide pools' arbiter: the SMSPs whose pick (sel1) needs an entry of a pool get its free entries
    in order of fewest entries of their own in flight, or for LG with the untaken cap of fewest untaken ones
    (by in-flight entries the cap's room went unevenly: the SMSPs' last warps of 32-line L1-hit streams
    finished up to 3,936 cycles apart) (ties: lowest SMSP); one refused issues its best other warp.
    (Granting in SMSP order lets SMSP 0 take every entry that frees: with the pool full, the other SMSPs'
    queues run dry, their warps fall behind, and the kernel ends with one SMSP alone feeding L1TEX / the
    shared pipe at its own rate.) Returns the pools' entries left."""
    for qq in range(1, 3 if n_pend > 0 else 1):
        left = mio_left if qq == 1 else lg_left
        # (LG: by untaken entries while the untaken cap is what limits the pool, else by entries in flight)
        by_untaken = (qq == 2 and grant_untaken
                      and lg_untaken_cap - q.reg[Q_LG_UNTAKEN] < lg_sm_depth - q.reg[Q_LG_TOTAL])
        while True:
            best, best_f = -1, INF
            for s in range(sel1.shape[0]):
                if q.grant[s] == 0 and sel1[s] >= 0 and pend[smsp_warps[sel1[s]]] == qq:
                    f = q.mio_fl[s] if qq == 1 else (q.lg_cnt[s] if by_untaken else q.lg_fl[s])
                    if f < best_f:
                        best, best_f = s, f
            if best == -1:
                break
            q.grant[best] = qq if left > 0 else -qq
            left -= 1
        if qq == 1:
            mio_left = left
        else:
            lg_left = left
    return mio_left, lg_left


@njit(cache=True, inline="always", error_model="numpy")
def enqueue(q, s, w, r, c, mio_depth, lg_depth, read_ahead):
    """Warp w of SMSP s issued memory row r (class c): into its queue and both counts; the in-order queue
    reads its registers at once when it is among the read_ahead oldest."""
    if read_ahead > 0:
        q.ring[s, (q.ring_head[s] + q.ring_cnt[s]) % q.ring.shape[1]] = r
        q.ring_cnt[s] += 1
        if q.ring_cnt[s] <= read_ahead:
            q.row_mem[r] |= M_READ
    if c == C_LDS or c == C_STS:
        q.mio_buf[s, (q.mio_head[s] + q.mio_cnt[s]) % mio_depth] = r
        q.mio_cnt[s] += 1
        q.reg[Q_MIO_Q] += 1
        q.mio_fl[s] += 1
        q.reg[Q_MIO_TOTAL] += 1
    else:
        q.lg_buf[s, (q.lg_head[s] + q.lg_cnt[s]) % lg_depth] = r
        q.lg_cnt[s] += 1
        q.reg[Q_LG_Q] += 1
        q.lg_fl[s] += 1
        q.reg[Q_LG_TOTAL] += 1
        q.reg[Q_LG_UNTAKEN] += 1
    q.pending_mem[w] += 1


@njit(cache=True, inline="always", error_model="numpy")
def oldest_mio(q, issue_cycle, in_order):
    """(SMSP, issue cycle) of the MIO head issued first (ties: lowest SMSP); in order, a head behind an older
    global instruction of its SMSP waits. SMSP -1: none."""
    s, s_t = -1, INF
    for s2 in range(q.mio_cnt.shape[0]):
        if q.mio_cnt[s2] > 0:
            ti = issue_cycle[q.mio_buf[s2, q.mio_head[s2]]]
            if in_order and q.lg_cnt[s2] > 0 and issue_cycle[q.lg_buf[s2, q.lg_head[s2]]] < ti:
                continue
            if ti < s_t:
                s, s_t = s2, ti
    return s, s_t


@njit(cache=True, inline="always", error_model="numpy")
def oldest_lg(q, t, smsp_l1_free, issue_cycle, in_order):
    """The SMSP whose LG head L1TEX takes next: the one issued first (ties: lowest SMSP) among the SMSPs whose
    own path into L1TEX is free at t; in order, a head behind an older shared instruction waits. -1: none."""
    g, g_t = -1, INF
    for s2 in range(q.lg_cnt.shape[0]):
        if q.lg_cnt[s2] > 0 and smsp_l1_free[s2] <= t:
            ti = issue_cycle[q.lg_buf[s2, q.lg_head[s2]]]
            if in_order and q.mio_cnt[s2] > 0 and issue_cycle[q.mio_buf[s2, q.mio_head[s2]]] < ti:
                continue
            if ti < g_t:
                g, g_t = s2, ti
    return g


@njit(cache=True, inline="always", error_model="numpy")
def pop_mio(q, s, mio_depth):
    r = q.mio_buf[s, q.mio_head[s]]
    q.mio_head[s] = (q.mio_head[s] + 1) % mio_depth
    q.mio_cnt[s] -= 1
    q.reg[Q_MIO_Q] -= 1
    return r


@njit(cache=True, inline="always", error_model="numpy")
def pop_lg(q, s, lg_depth, grant_untaken, lg_untaken_cap, state, recheck):
    r = q.lg_buf[s, q.lg_head[s]]
    q.lg_head[s] = (q.lg_head[s] + 1) % lg_depth
    q.lg_cnt[s] -= 1
    if grant_untaken and q.reg[Q_LG_UNTAKEN] >= lg_untaken_cap:
        # the cap was what held the pool: its waiters may now have room (else they wait on the entries
        # until return, which a take does not free)
        clear_recheck(state, recheck, S_LG_POOL, S_LG_POOL)
    q.reg[Q_LG_UNTAKEN] -= 1
    q.reg[Q_LG_Q] -= 1
    return r


@njit(cache=True, inline="always", error_model="numpy")
def taken(q, mio, s, r, ready_r, rel, recheck, rows, read_ahead):
    """A pipe took SMSP s's memory row r (mio: from the MIO queue), its data back at ready_r: its queue
    entry's release at rel (the return, or the take when entries free as the pipe takes them), the warp's
    outstanding memory work, and the in-order LSU queue's register reads (the take, and the entry that moves
    up to the read_ahead-th place). Returns its warp."""
    if mio:
        q.mio_ret[s, q.mio_rn[s]] = rel
        q.mio_rn[s] += 1
    else:
        q.lg_ret[s, q.lg_rn[s]] = rel
        q.lg_rn[s] += 1
    wt = np.int64(rows[r, R_WARP])
    q.pending_mem[wt] -= 1
    q.mem_done[wt] = max(q.mem_done[wt], ready_r)
    recheck[wt] = 0          # its scoreboard or drain now has a time
    q.row_mem[r] |= M_READ | M_TAKEN
    if read_ahead > 0:
        q.ring_head[s] = (q.ring_head[s] + 1) % q.ring.shape[1]
        q.ring_cnt[s] -= 1
        if q.ring_cnt[s] >= read_ahead:
            r2 = q.ring[s, (q.ring_head[s] + read_ahead - 1) % q.ring.shape[1]]
            if (q.row_mem[r2] & M_READ) == 0:
                q.row_mem[r2] |= M_READ
                recheck[rows[r2, R_WARP]] = 0
    if mio:
        q.reg[Q_MIO_NR] = min(q.reg[Q_MIO_NR], rel)
        q.mio_nr_s[s] = min(q.mio_nr_s[s], rel)
    else:
        q.reg[Q_LG_NR] = min(q.reg[Q_LG_NR], rel)
        q.lg_nr_s[s] = min(q.lg_nr_s[s], rel)
    return wt


guard_cache(globals(), unit_sources())     # stamped by every unit's source, guarded, seeded (gpusim.jit)
