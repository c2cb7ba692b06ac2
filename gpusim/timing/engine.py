"""The cycle loop: one SM, its resident warps, four sub-partitions (SMSPs). numba over flat arrays; all times
integer SM cycles.

Each cycle (`_cycle_loop`): queue entries whose data returned leave the LSU's counts (lsu.py); each SMSP's
scheduler names every warp's state whose state can change and picks the warp it would issue (scheduler.py,
with the checks of barrier.py, scoreboard.py, lsu.py's queues and pools and math_pipes.py); the SM-wide pool
arbiter answers the picks that need a pool entry (lsu.py); each SMSP issues at most one instruction
(`_issue`: its register banks and math pipe, its dependency barriers, its LSU queue, its CTA's barrier
unit); then the pipes take queued memory instructions (l1tex.py: the data pipe's fill charges, the shared
pipe, L1TEX with the SM's L2 / DRAM servers of memory_path.py), and the queue waiters' groups follow their
heads (waiter_groups.py). Cycles in which no warp can issue are skipped to the next event (a result, a pipe or
a queue freeing, a barrier release); every skipped cycle is still counted in each warp's state (accounting.
py: cycles by warp, state and opcode waited at; on request the not-issued cycles and the stall-interval
log). Elapsed cycles: the last warp's retirement, or later while the SM's share of DRAM is still busy with
its stores' write-backs.

Each unit keeps its state in a namedtuple of arrays (its mutable scalars in a small `reg` array) made by its
new_* function; rows.py holds the rows matrix, the params vector and the constants the units share. `run`
makes the state and runs the cycle loop over views of it without numba's reference counts (intrinsics.
borrow), calling the units' functions; numba inlines all of them (inline="always"), the new_* functions too,
so the compiled loop is one function. Measured while splitting it (in-process A/B against the single-function
loop it replaced, on bench_engine's traces and two hand traces, an FFMA-only and an LDS-bound one): the loop
as a function of its own, given the arrays as arguments, not inlined, took 1.1-1.2x the time, and new_*
functions not inlined 1.2x more (LLVM no longer sees that the per-warp arrays share one length, and keeps a
length per array on the stack); the units' scalars as values the loop carries, not in `reg` arrays, 1.1x
(more live values across the loop); an @overload inlined at numba's typed level (accounting._log_interval)
lets numba's dead-code pass drop stores to arrays reached through the namedtuples (wrong results). The loop
is written out in `run`, not inlined from a function of its own: numba's inliner copies a callee's IR block
by block, each block with the callee's whole scope, and copying the loop (with the units in it) took half of
the compile (85 s -> 42 s cold, the same code and results).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from gpusim.jit import guard_cache
from gpusim.timing import accounting, barrier, l1tex, lsu, math_pipes, scheduler, scoreboard, waiter_groups
from gpusim.timing.accounting import new_books
from gpusim.timing.barrier import new_barriers
from gpusim.timing.intrinsics import borrow, prefetch, unit_sources
from gpusim.timing.l1tex import new_l1tex
from gpusim.timing.lsu import Q_LG_NR, Q_MIO_NR, new_lsu
from gpusim.timing.math_pipes import new_pipes
from gpusim.timing.memory_path import drain_cycles, new_memory_path
from gpusim.timing.rows import (C_BAR, C_FIXED, C_LDS, C_STG, INF, K_DEADLOCK, N_COUNTERS, PREFETCH_ROWS, R_CLS,
                                R_GAP, R_LAT, R_UNIT, UNIT_BITS, config)
from gpusim.timing.rows import *  # noqa: F401,F403  (rows.py's names as engine's: gpusim.timing, lower's callers, tests)
from gpusim.timing.scheduler import new_smsps, new_warps
from gpusim.timing.scoreboard import new_scoreboard
from gpusim.timing.states import S_SELECTED
from gpusim.timing.waiter_groups import new_groups


@njit(cache=True, error_model="numpy", nogil=True)   # nogil: runs in the helper thread (kernel_time._start)
def run(warp_start, warp_smsp, warp_cta, cta_warp_start, smsp_warps, smsp_start,
        rows, line_id, params, rb_wait, provider, n_ops, log, groups, cta_next):
    """Simulate; returns (cycles, state_cycles[warp, state], issue_cycle[row], finish[warp], counters,
    op_state_cycles[opcode id, state], latency_state_cycles[warp, state]: the state cycles in which the
    warp's SMSP issued nothing and held no warp at dispatch, the number of stall intervals kept in log,
    ready[row]: when each row's result is available, for a load when its data returned, launch[warp]: the
    cycle the warp's CTA started).
    cta_next: per CTA, the CTA that takes its slot when it ends (-1 none): that one starts, not at cycle 0,
    but slot_gap cycles after the last of its predecessor's warps retired, and no sooner than cta_dispatch
    cycles after the SM's previous start (the block scheduler's refill, micro/cta_turnaround.json); until
    then its warps are in no state.
    rows: (n, ROW_STRIDE) int32, the R_* fields of each row (pack_rows). rb_wait: per row, the memory
    row whose pipe-take (register read, ptxas's read barrier) it waits for, -1 none. provider: per L1-hit
    global load, the cache model's miss that brings its line in (lower.fill_providers), -1 none. n_ops: the
    number of opcode ids in rows[:, R_OP] (a scan of the rows here took 2 % of regtile2d's run). log: (cap, 5)
    int64 to keep up to cap stall intervals in (accounting._log_interval; the last value returned is how
    many), or a 1-D array for none. groups: GROUPS_ON or GROUPS_OFF, whether queue waiters are kept in
    groups (waiter_groups.py; with no log only); arrays because numba compiles the loop for each number of
    dimensions, so a kernel that gains nothing from the groups (a few warps per SMSP) runs a loop without
    their code."""
    cfg = config(params)
    n_warps = warp_start.shape[0] - 1
    n_rows = rows.shape[0]
    n_smsp = smsp_start.shape[0] - 1
    wp = new_warps(warp_start)
    sm = new_smsps(n_smsp, n_warps)
    b = new_books(rows, warp_start, n_smsp, n_ops, log)
    g = new_groups(n_smsp, n_warps)
    sb_ = new_scoreboard(n_rows, n_warps, cfg.sb_on)
    pp = new_pipes(n_smsp)
    q = new_lsu(n_smsp, n_warps, n_rows, cfg.mio_depth, cfg.lg_depth)
    x = new_l1tex(n_smsp, n_warps, cfg.lg_sm_depth, cfg.miss_cap)
    mp = new_memory_path(line_id.shape[0])
    bar = new_barriers(cta_warp_start, n_warps)
    issue_cycle = np.full(n_rows, -1, np.int64)
    counters = np.zeros(N_COUNTERS, np.int64)
    # CTAs that follow another in its slot wait, unlaunched (recheck INF, no state), for its end
    n_ctas = cta_warp_start.shape[0] - 1
    launch = np.zeros(n_warps, np.int64)
    handed = np.zeros(n_ctas, np.bool_)      # the CTA's successor has been given its start
    chained = False
    for c in range(n_ctas):
        nx = cta_next[c]
        if nx >= 0:
            chained = True
            for w in range(cta_warp_start[nx], cta_warp_start[nx + 1]):
                wp.recheck[w] = INF
    last_start = np.int64(0)
    # each SMSP's scan bounds (scheduler.Smsps lo / hi): from its first warp to its last started one
    scan_pos = np.zeros(n_warps, np.int64)
    for s in range(n_smsp):
        sm.lo[s] = smsp_start[s]
        sm.hi[s] = smsp_start[s]
        for k in range(smsp_start[s], smsp_start[s + 1]):
            scan_pos[smsp_warps[k]] = k
            if wp.recheck[smsp_warps[k]] < INF:
                sm.hi[s] = k + 1
    owners = (issue_cycle, counters, cfg, wp, sm, b, g, sb_, pp, q, x, mp, bar)
    (warp_start, warp_cta, cta_warp_start, smsp_warps, smsp_start, rows, line_id, rb_wait, provider, issue_cycle,
     counters) = borrow((warp_start, warp_cta, cta_warp_start, smsp_warps, smsp_start, rows, line_id, rb_wait,
                         provider, issue_cycle, counters))
    cfg, wp, sm, b, g, sb_, pp, q, x, mp, bar = borrow((cfg, wp, sm, b, g, sb_, pp, q, x, mp, bar))
    # waiter groups: a compile-time constant (LLVM drops the code it guards when False)
    grp = groups.ndim == 2 and b.log.ndim == 1
    n_smsp = smsp_start.shape[0] - 1
    n_left = wp.pc.shape[0]
    n_log = 0       # stall intervals kept in the log
    t = np.int64(0)
    while n_left > 0:
        wake = INF
        issued = False
        lsu.release_returned(q, t, b.state, wp.recheck)
        # ---- schedulers: states of every resident warp, then at most one issue per SMSP. A memory instruction
        # that passes its SMSP's depth check while the SM-wide pool has free entries is eligible pending the
        # pool arbiter; each SMSP picks the warp it would issue with pending warps eligible (sel1) and without
        # them (sel0).
        mio_left, lg_left = lsu.pool_room(q, cfg.mio_sm_depth, cfg.lg_sm_depth, cfg.lg_untaken_cap)
        n_pend = 0
        n_left0 = n_left
        for s in range(n_smsp):
            wake, n_pend, n_left, n_log = scheduler.scan(
                s, t, wake, n_pend, n_left, n_log, mio_left, lg_left, grp, warp_start, smsp_start, smsp_warps, rows,
                rb_wait, wp, sm, b, g, sb_, pp, q, bar, cfg)
        if chained and n_left < n_left0:
            # warps retired: a CTA whose warps have all retired hands its slot to its successor
            for c in range(n_ctas):
                nx = cta_next[c]
                if nx < 0 or handed[c]:
                    continue
                done = True
                for w in range(cta_warp_start[c], cta_warp_start[c + 1]):
                    if not wp.finished[w]:
                        done = False
                        break
                if done:
                    handed[c] = True
                    last_start = max(t + cfg.slot_gap, last_start + cfg.cta_dispatch)
                    for w in range(cta_warp_start[nx], cta_warp_start[nx + 1]):
                        wp.recheck[w] = last_start
                        wp.next_ok[w] = last_start
                        launch[w] = last_start
                        sw = warp_smsp[w]
                        sm.hi[sw] = max(sm.hi[sw], scan_pos[w] + 1)
                    if last_start < wake:
                        wake = last_start
        mio_left, lg_left = lsu.arbitrate(q, sm.sel1, wp.pend, smsp_warps, n_pend, mio_left, lg_left,
                                          cfg.grant_untaken, cfg.lg_untaken_cap, cfg.lg_sm_depth)
        for s in range(n_smsp):
            gr = q.grant[s]
            q.grant[s] = 0
            kk = sm.sel1[s] if gr >= 0 else sm.sel0[s]
            n_log = scheduler.settle_pending(s, gr, kk, t, n_log, mio_left, lg_left, warp_start, smsp_warps, wp, sm,
                                             b, cfg.lat_on)
            if kk == -1:
                continue
            wake, n_log = _issue(s, kk, t, wake, n_log, warp_start, warp_cta, cta_warp_start, smsp_warps, rows,
                                 rb_wait, issue_cycle, counters, cfg, wp, sm, b, sb_, pp, q, bar)
            issued = True
        # ---- the pipes: fills that landed take the data pipe; the shared pipe and L1TEX take queue heads
        l1tex.land_fills(x, t)
        gl, lv, fetch, miss_wait = l1tex.next_global(x, q, t, rows, provider, issue_cycle, cfg)
        wake = l1tex.shared_pipe(x, q, sb_, t, wake, gl, lv, rows, issue_cycle, wp.recheck, counters, cfg)
        wake = l1tex.l1tex_stage(x, q, sb_, mp, t, wake, gl, lv, fetch, miss_wait, rows, line_id, provider,
                                 issue_cycle, b.state, wp.recheck, counters, cfg)
        if grp:
            waiter_groups.follow(g, b, t, wp.thr_since, wp.recheck, cfg.lat_on)
        # ---- advance: to the next cycle, or past cycles in which nothing can change
        if n_left == 0:
            break
        # a throttled warp waits for the next queue entry to free (its recheck is INF until then)
        nxt = t + 1 if issued else max(min(wake, q.reg[Q_MIO_NR], q.reg[Q_LG_NR]), t + 1)
        if nxt >= INF:
            counters[K_DEADLOCK] = 1
            break
        t_next = t + 1 if cfg.no_skip else nxt    # (no_skip: tests, skipping must not change a result)
        if cfg.lat_on:
            accounting.count_not_issued(b, t, t_next)
        t = t_next
    issue_cycle, counters, cfg, wp, sm, b, g, sb_, pp, q, x, mp, bar = owners   # the owners again, not views
  # (the loop's views are of these)
    cycles = np.int64(0)
    for w in range(n_warps):
        if wp.finish[w] > cycles:
            cycles = wp.finish[w]
    # the SM's share of DRAM is still busy with the write-backs of its stores: the CTAs that follow on this
    # SM (the next round) find it so, and their loads wait behind them; a round ends when both are done
    drain = drain_cycles(mp, cfg.level_lat[2])
    if drain > cycles:
        cycles = drain
    return cycles, b.counts, issue_cycle, wp.finish, counters, b.op_counts, b.lat_counts, n_log, sb_.ready, launch


@njit(cache=True, inline="always", error_model="numpy")
def _issue(s, kk, t, wake, n_log, warp_start, warp_cta, cta_warp_start, smsp_warps, rows, rb_wait, issue_cycle,
           counters, cfg, wp, sm, b, sb_, pp, q, bar):
    """SMSP s issues the warp at its scan position kk at cycle t (the row's fields read once, before the
    stores); returns (wake, n_log)."""
    w = smsp_warps[kk]
    r = wp.pc[w]
    c = rows[r, R_CLS]
    gap = rows[r, R_GAP]
    lat = rows[r, R_LAT]
    ru = rows[r, R_UNIT]
    bk = ru >> UNIT_BITS
    end = warp_start[w + 1]
    if bk != 0:
        math_pipes.take_banks(pp, s, bk, t, sm.last_w[s] == w)
    wp.thr_since[w] = -1
    sm.last_k[s] = kk
    sm.rf_stalled[s] = -1
    n_log = accounting.book(b, w, s, S_SELECTED, t, cfg.lat_on, wp.pc, warp_start, n_log)
    b.smsp_active[s] = True
    issue_cycle[r] = t
    wp.last_issue[w] = t
    wp.next_ok[w] = t + gap
    sm.last_t[s] = t
    sm.last_w[s] = w
    if cfg.sb_on:
        scoreboard.on_issue(sb_, w, r, c, rows, cfg.sb_k)
    if c == C_FIXED:
        sb_.ready[r] = t + lat
        math_pipes.issue(pp, s, ru & ((1 << UNIT_BITS) - 1), t, cfg.fma_iv, cfg.alu_iv, cfg.xu_iv, counters)
    elif c >= C_LDS and c <= C_STG:
        wp.last_mem[w] = t
        lsu.enqueue(q, s, w, r, c, cfg.mio_depth, cfg.lg_depth, cfg.read_ahead)
    else:
        sb_.ready[r] = t + 1
    cta = warp_cta[w]
    if c == C_BAR:
        barrier.arrive(bar, w, cta, t, cfg.bar_arrive)
    wp.pc[w] = r + 1
    accounting.issued_ops(b, w, r, rows, end)
    if r + PREFETCH_ROWS < rows.shape[0]:
        # the warp's rows ahead (its next row is read next cycle, and a load takes longer)
        prefetch(rows, r + PREFETCH_ROWS)
        prefetch(rb_wait, r + 4 * PREFETCH_ROWS)
        prefetch(sb_.ready, r + 4 * PREFETCH_ROWS)
        prefetch(issue_cycle, r + 4 * PREFETCH_ROWS)
    if r + 1 >= end:
        bar.live[cta] -= 1
    wake = barrier.release(bar, cta, t, wake, cta_warp_start, wp.finished, wp.recheck, cfg.bar_release)
    return wake, n_log


guard_cache(globals(), unit_sources())     # stamped by every unit's source, guarded, seeded (gpusim.jit)
