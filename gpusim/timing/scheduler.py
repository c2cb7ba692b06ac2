"""The four warp schedulers: each cycle each SMSP looks at its warps' next instruction (in program order),
names each warp's state, and picks at most one eligible warp to issue.

Warp w of the SM (CTA slot * warps per CTA + warp in CTA) belongs to SMSP w % 4. The pick (greedy-then-
youngest with the queue rule: micro/sched_fairness.json, checked against micro/barrier_wait.json): a warp
whose memory instruction was held back by a full MIO / LG queue or pool and is now eligible goes first, the
one that began waiting earliest, the youngest of those that began in the same cycle (queue-bound warps
finish together); else the warp the SMSP issued last if still eligible; else the youngest (highest SM warp
index: the record's warps finish in reverse order of age in every mode).
A warp's next instruction is eligible when (checked in this order, the first failing check names the warp's
state): it is not waiting at BAR.SYNC (barrier.py); its stall count from its last issue has run out (wait:
ptxas's stall count, 1 without a SASS record; the hardware counts it down before it looks at
dependencies); its producers' results and read barriers are ready (scoreboard.py); it issued no memory
instruction in the last mem_iv cycles (wait; micro: 4, the rule ptxas writes into the stall count of
back-to-back memory instructions); a memory instruction has its queue and pool entries (lsu.py); a fixed-
latency one its math pipe, no switch bubble and its register reads (math_pipes.py). When the warp the SMSP
issued last is held at dispatch by its register reads, the SMSP issues nothing that cycle and its other
eligible warps wait as dispatch_stall (ncu's PC samples of micro/dot_pair_ncu.json: the waiting warp of a
pair takes the runner's dispatch stalls, and no not_selected falls inside its FFMA runs).
Speed without changing a result: a warp's state is re-derived only when it can change (at recheck[w]: the
end of its stall count, its result's ready cycle, its pipe freeing; or when an event clears recheck[w]: the
pipe taking its load, its barrier releasing, a queue purge for a throttled warp). Eligible warps are looked
at every cycle, but once a warp has passed the checks only its own issue can undo (barrier hold, stall
count, producers, read barrier, memory interval) at a row, it skips them while it stays there (static_ok);
a warp whose state this cycle waits on the SMSP's pick (the switch bubble) or the pool arbiter (eligible
pending an entry) has it set once, after them, so a warp the pool refuses cycle after cycle does not leave
and re-enter its state each cycle (in-process A/B: 7-29 % faster on the 64-warp ladder kernels). The scan
of an SMSP runs over the positions from its oldest warp not retired to its youngest started (Smsps lo /
hi): a chained run's (kernel_time.steady_round) later CTAs wait unstarted and its earlier ones have
retired, three warps in four with four CTAs a slot (naive's 4096 chain 1.20 -> 0.75 s, the same result)."""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from gpusim.jit import guard_cache
from gpusim.timing.intrinsics import unit_sources
from gpusim.timing import accounting, barrier, lsu, math_pipes, scoreboard, waiter_groups
from gpusim.timing.rows import C_FIXED, C_LDS, C_STG, C_STS, INF, R_CLS, R_FLAGS, S_LG_POOL, S_MIO_POOL
from gpusim.timing.states import (S_BARRIER, S_DISPATCH, S_DRAIN, S_LG_THROTTLE, S_MIO_THROTTLE,
                                  S_NOT_SELECTED, S_WAIT)

# per warp: pc, its next row; next_ok, its stall count runs until then; last_issue, last_mem: its last issue
# and last memory-instruction issue; recheck: its state cannot change before this cycle; static_ok: the row
# at which it last passed every check that only its own issue can undo (results only arrive and a warp's
# barriers gain loads only when it issues, so while it stays at that row only the shared resources are
# looked at again); finished, finish: retired, and when; thr_since: the cycle its instruction first met a
# full queue, times n_warps, plus its rank among warps that began in the same cycle (the youngest first):
# the queue's FIFO order (-1: not waiting); pend: 1 / 2 eligible pending an MIO / LG pool entry (this cycle)
Warps = namedtuple("Warps", ["pc", "next_ok", "last_issue", "last_mem", "recheck", "static_ok", "finished",
                             "finish", "thr_since", "pend"])
# per SMSP: last_k, the scan position it issued last; last_t, last_w, the cycle and warp of its last issue;
# sel0, sel1, its pick without / with the warps pending the pool; rf_stalled, the scan position of a warp its
# banks held at dispatch, rf_held, this cycle it waits for that warp; npend, pend_k: its warps eligible
# pending the pool, their state not yet set, and their scan positions; elig_k, switch_k: scratch, scan
# positions of one SMSP's eligible warps and of those held by the switch bubble; lo, hi: the scan positions
# [lo, hi) that can hold a resident warp (below lo every warp has retired, from hi on none has started: a
# chained run's later CTAs, engine.run)
Smsps = namedtuple("Smsps", ["last_k", "last_t", "last_w", "sel0", "sel1", "rf_stalled", "rf_held", "npend",
                             "pend_k", "elig_k", "switch_k", "lo", "hi"])


@njit(cache=True, inline="always", error_model="numpy")
def new_warps(warp_start):
    n_warps = warp_start.shape[0] - 1
    return Warps(pc=warp_start[:-1].copy(), next_ok=np.zeros(n_warps, np.int64),
                 last_issue=np.full(n_warps, -1, np.int64), last_mem=np.full(n_warps, -(INF // 2), np.int64),
                 recheck=np.zeros(n_warps, np.int64), static_ok=np.full(n_warps, -1, np.int64),
                 finished=np.zeros(n_warps, np.bool_), finish=np.zeros(n_warps, np.int64),
                 thr_since=np.full(n_warps, -1, np.int64), pend=np.zeros(n_warps, np.int64))


@njit(cache=True, inline="always", error_model="numpy")
def new_smsps(n_smsp, n_warps):
    return Smsps(last_k=np.full(n_smsp, -1, np.int64), last_t=np.full(n_smsp, -2, np.int64),
                 last_w=np.full(n_smsp, -1, np.int64), sel0=np.full(n_smsp, -1, np.int64),
                 sel1=np.full(n_smsp, -1, np.int64), rf_stalled=np.full(n_smsp, -1, np.int64),
                 rf_held=np.zeros(n_smsp, np.bool_), npend=np.zeros(n_smsp, np.int64),
                 pend_k=np.zeros((n_smsp, max(n_warps, 1)), np.int64), elig_k=np.zeros(n_warps, np.int64),
                 switch_k=np.zeros(n_warps, np.int64), lo=np.zeros(n_smsp, np.int64),
                 hi=np.zeros(n_smsp, np.int64))


@njit(cache=True, inline="always", error_model="numpy")
def scan(s, t, wake, n_pend, n_left, n_log, mio_left, lg_left, grp, warp_start, smsp_start, smsp_warps, rows,
         rb_wait, wp, sm, b, g, sb_, pp, q, bar, cfg):
    """SMSP s at cycle t: every warp whose state can change gets it (a warp eligible pending the pool, or
    held by the switch bubble, after the SMSP's pick or the arbiter), and the SMSP's picks sel1 / sel0 (with
    / without the warps pending the pool). A warp that issued its last row stays in drain while its memory
    instructions are queued or in flight, then retires. grp: the waiter groups are on (waiter_groups.py).
    Returns (wake, n_pend, n_left, n_log)."""
    n_warps = wp.pc.shape[0]
    greedy_el, fifo_el, greedy0 = -1, -1, -1
    n_switch = 0
    last_el, last0 = -1, -1      # the youngest eligible
    n_elig = 0
    lk = sm.last_k[s]
    fifo_ts = INF
    # (retired and not yet started warps wait on nothing, recheck INF: the scan need not pass them, which in a
    # chain of 4 CTAs a slot are three in four)
    lo, hi = sm.lo[s], sm.hi[s]
    while lo < hi and wp.finished[smsp_warps[lo]]:
        lo += 1
    sm.lo[s] = lo
    for k in range(lo, hi):
        w = smsp_warps[k]
        rk = wp.recheck[w]
        if rk > t:
            # waiting on a known cycle (its stall count, a result, a barrier release, a pipe), or finished (INF)
            if rk < wake:
                wake = rk
            continue
        st = S_NOT_SELECTED
        fixed = True        # the state holds until wk, or until an event clears recheck[w]
        wk = t + 1
        # (per-warp values read once into locals: numba cannot tell its arrays apart, so it reloads an
        # element after every store to any array of the same type)
        r = wp.pc[w]
        static = wp.static_ok[w] == r
        pw = 0
        sw0 = b.state[w]
        if grp and static and sw0 < 0:
            # a member of a waiter group (no state of its own: it follows its head), woken by an event for
            # its earlier loads
            wp.recheck[w] = INF
            continue
        if static and sw0 >= S_MIO_POOL:
            # held back by the SM-wide pool at a row where it passed every check its own issue can undo: only
            # its queue and the pool decide, as at the end of the checks below (the pool's waiters are most of
            # the evaluations of the 64-warp kernels)
            st, wk, pw = lsu.queue_state(q, s, sw0 == S_MIO_POOL, mio_left, lg_left, cfg.mio_depth, cfg.lg_depth,
                                         st, wk)
            if pw > 0:
                n_pend += 1
        elif r >= warp_start[w + 1]:
            if q.pending_mem[w] > 0:
                st, wk = S_DRAIN, INF           # the memory pipes wake us
            elif q.mem_done[w] > t:
                st, wk = S_DRAIN, q.mem_done[w]
            else:
                wp.finished[w] = True
                wp.recheck[w] = INF        # (no event wakes a finished warp: the scan passes it by)
                wp.finish[w] = max(wp.last_issue[w] + 1, q.mem_done[w])
                n_log = accounting.retire(b, w, s, t, cfg.lat_on, wp.pc, warp_start, n_log)
                n_left -= 1
                continue
        elif not static and barrier.holds(bar, w, t) and (rows[r, R_FLAGS] & 1) != 0:
            st, wk = S_BARRIER, bar.release[w]   # INF: the last arrival sets it
        elif not static and wp.next_ok[w] > t:
            st, wk = S_WAIT, wp.next_ok[w]         # ptxas's stall count of its last instruction
        else:
            sb, dep_wk = -1, INF
            if not static:
                barrier.passed(bar, w, t)
                sb, dep_wk = scoreboard.wait_state(sb_, w, r, t, rows, rb_wait, q.row_mem, cfg.sb_on)
            c = rows[r, R_CLS]
            if sb != -1:
                st, wk = sb, dep_wk                # INF: the pipe taking the load sets it
            elif not static and c >= C_LDS and c <= C_STG and wp.last_mem[w] + cfg.mem_iv > t:
                st, wk = S_WAIT, wp.last_mem[w] + cfg.mem_iv   # one memory instruction per mem_iv cycles
            else:
                wp.static_ok[w] = r
                if c >= C_LDS and c <= C_STG:
                    st, wk, pw = lsu.queue_state(q, s, c == C_LDS or c == C_STS, mio_left, lg_left,
                                                 cfg.mio_depth, cfg.lg_depth, st, wk)
                    if pw > 0:
                        n_pend += 1
                elif c == C_FIXED:
                    st, wk, fixed, hot_stall = math_pipes.dispatch_state(
                        pp, s, w, r, t, rows, cfg.switch_fma, cfg.rf_lead, sm.last_t, sm.last_w, st, wk, fixed)
                    if hot_stall:
                        sm.rf_stalled[s] = k
        if st == S_DISPATCH:
            # held back by the switch bubble: its state (dispatch_stall or not_selected) is set once this
            # SMSP's pick is known, below
            sm.switch_k[n_switch] = k
            b.smsp_active[s] = True
            n_switch += 1
        elif pw > 0:
            wp.pend[w] = pw
            # eligible pending the pool: its state (not_selected, or the pool's when the arbiter refuses it)
            # is set after the arbiter (settle_pending)
            sm.pend_k[s, sm.npend[s]] = k
            sm.npend[s] += 1
        elif st != b.state[w]:
            n_log = accounting.book(b, w, s, st, t, cfg.lat_on, wp.pc, warp_start, n_log)
        if st != S_NOT_SELECTED and fixed:
            wp.recheck[w] = wk
        ts = wp.thr_since[w]
        if (st == S_MIO_THROTTLE or st == S_LG_THROTTLE or st >= S_MIO_POOL) and ts < 0:
            wp.thr_since[w] = t * n_warps + (n_warps - 1 - w)
            if grp:
                waiter_groups.join(g, b, w, s, st, t, wp.thr_since, wp.recheck, cfg.lat_on)
        if wk < wake:
            wake = wk
        if st == S_NOT_SELECTED:
            last_el = k
            if pw == 0:
                sm.elig_k[n_elig] = k
                n_elig += 1
                last0 = k
                if k == lk:
                    greedy0 = k
            if k == lk:
                greedy_el = k
            if ts >= 0 and (fifo_el == -1 or ts < fifo_ts):
                fifo_el = k
                fifo_ts = ts
    held = sm.rf_stalled[s] >= 0 and sm.rf_stalled[s] == lk
    sm.rf_held[s] = held
    if held:
        # the warp issued last is held by its register reads and keeps the SMSP: nothing issues, the
        # eligible warps wait as dispatch_stall (with the switch bubble's, below)
        sm.rf_stalled[s] = -1
        for j in range(n_elig):
            sm.switch_k[n_switch] = sm.elig_k[j]
            n_switch += 1
    if n_switch > 0:
        # FP32 warps held back by the switch bubble: dispatch_stall while the scheduler must switch;
        # not_selected when the warp issued last cycle issues again (ncu's PC samples put them there)
        st = S_NOT_SELECTED if greedy_el != -1 and smsp_warps[greedy_el] == sm.last_w[s] else S_DISPATCH
        for j in range(n_switch):
            w = smsp_warps[sm.switch_k[j]]
            if b.state[w] != st:
                n_log = accounting.book(b, w, s, st, t, cfg.lat_on, wp.pc, warp_start, n_log)
    if held:
        sm.sel1[s] = -1
        sm.sel0[s] = -1
    else:
        # greedy, then the youngest; a queue waiter (the one that began waiting first) before both
        sm.sel1[s] = fifo_el if fifo_el != -1 else (greedy_el if greedy_el != -1 else last_el)
        sm.sel0[s] = greedy0 if greedy0 != -1 else last0
    return wake, n_pend, n_left, n_log


@njit(cache=True, inline="always", error_model="numpy")
def settle_pending(s, gr, kk, t, n_log, mio_left, lg_left, warp_start, smsp_warps, wp, sm, b, lat_on):
    """After the arbiter (SMSP s's answer gr, its pick kk): its warps pending the pool that do not issue are
    not_selected while the pool has an entry left for them, else in the pool's state (refused by the pool: a
    waiter from now, in the FIFO order of the waiters that met it full at the scan; else, with an entry
    freeing each cycle, no warp ever counts as waiting and the greedy warp of each SMSP takes every entry).
    Returns n_log."""
    n_warps = wp.pc.shape[0]
    if sm.npend[s] > 0:
        for j in range(sm.npend[s]):
            k = sm.pend_k[s, j]
            w = smsp_warps[k]
            qq = wp.pend[w]
            wp.pend[w] = 0         # (pend is set this cycle only: all zero again for the next)
            if k == kk:
                continue
            st = S_DISPATCH if sm.rf_held[s] else S_NOT_SELECTED
            if gr == -qq or (gr != qq and (mio_left if qq == 1 else lg_left) <= 0):
                st = S_MIO_POOL if qq == 1 else S_LG_POOL
                if wp.thr_since[w] < 0:
                    wp.thr_since[w] = t * n_warps + (n_warps - 1 - w)
            if b.state[w] != st:
                n_log = accounting.book(b, w, s, st, t, lat_on, wp.pc, warp_start, n_log)
        sm.npend[s] = 0
    return n_log


guard_cache(globals(), unit_sources())     # stamped by every unit's source, guarded, seeded (gpusim.jit)
