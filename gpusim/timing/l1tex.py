"""The pipes that take the LSU queues' heads: the shared pipe, the L1TEX stage, the data pipe they share, and
the SM's L1 miss entries.

Shared memory: the SM's shared pipe takes the oldest head of the four MIO queues (ties: lowest SMSP) when
free, in the same cycle it was issued at the earliest, and is busy for max(wavefronts, ceil(V / shared_wb))
cycles (V: registers a load writes per lane, R_LAT of an LDS row; shared_wb = 2 written back per cycle).
The warp's own return path then delivers it in n = shared_cpw * wavefronts cycles after its previous
load's, whatever its width (shared_cpw = 2; micro/lds_wide_return.json): ready at start' + n - shared_cpw +
lds_latency (an uncontended LDS.32 costs lds_latency; one warp's conflict-free LDS.128 8 cycles, a 2-way
conflicted one 16).
Global memory: L1TEX takes the oldest LG queue head (lsu.oldest_lg) when free, busy for max(ceil(sectors /
l1_sectors_per_cycle), ceil(lines / l1_lines_per_cycle), 1) cycles (the tag stage takes 16 sectors a cycle,
the data stage one 128-B line a cycle); each SMSP feeds it at most one line per smsp_l1_cpl cycles, so a
global load is ready at start + smsp_l1_cpl * (lines - 1) + its level's latency, and for a miss no earlier
than the L2/DRAM servers deliver it (memory_path.py). A load's level is the cache model's (0 L1, 1 L2, 2
DRAM, 3 an L2 hit on a line another SM's miss is still fetching); when a hit reaches L1TEX before the miss
the cache model put ahead of it (provider), the hit fetches the line at the miss's level and the miss, when
it comes, is a hit on that fill. A hit on a line still on its way gets its data when the fill lands; its
queue entry counts until its own return from L1TEX (P_HIT_HOLDS_TO_FILL = 0, micro/l1_pending.json), or
until the fill (1). An L1 miss leaves its LG queue entry when L1TEX takes it and holds one of the SM's
lg_sm_miss_depth miss entries and one of its lg_sm_miss_sectors sector entries per sector until its fill
lands; with too few free it waits at L1TEX's head, and nothing behind it moves (P_LG_SM_MISSES = 0: no miss
entries, the miss's queue entry counts until its return like any load's). A store holds L1TEX and its queue
entry until the SM's path to the L2 has room for its sectors, and an L1 miss reaches the L2 behind the stores
sent before it (l2_in_order, write_buf: memory_path.py).
One data pipe (shared_and_global_share_data_pipe): the shared wavefronts and a global request's lines share
it; a hit or store holds it from when L1TEX takes it (when both sides want it they take turns,
data_pipe_clients_take_turns; else the older goes first), a miss for its lines' cycles when its fill lands
(a FIFO of charges)."""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from gpusim.jit import guard_cache
from gpusim.timing.intrinsics import unit_sources
from gpusim.timing import lsu, memory_path, scoreboard
from gpusim.timing.lsu import Q_LG_Q, Q_MIO_Q
from gpusim.timing.rows import (C_LDG, C_LDS, FP, K_L1_BUSY, K_LDG_LAT, K_LDG_N, K_LDS_LAT, K_LDS_N, K_SHARED_BUSY,
                                M_FETCHED, M_TAKEN, R_CLS, R_FLAGS, R_LAT, R_LEVEL, R_LINES, R_SECTORS, R_WARP, R_WF,
                                WRITE_SHIFT)

# L1tex.reg: when the data pipe (shared_free) and L1TEX are next free; whether the global side used the data
# pipe last (0/1); the miss entries in use and their sectors; the head and count of the data pipe's charges
X_SHARED_FREE, X_L1_FREE, X_LAST_DP_GLOBAL, X_MISS_N, X_MISS_SEC, X_CHG_HEAD, X_CHG_CNT, N_X_REG = range(8)

# chg_t, chg_n: the data-pipe cycles of fills still on their way (a FIFO: fills land about in the order
# sent); miss_heap, miss_sec: a min-heap of the miss entries' release times, with their sectors;
# warp_shared_free: each warp's own return path from the shared pipe; smsp_l1_free: each SMSP's path into
# the L1TEX data stage
L1tex = namedtuple("L1tex", ["chg_t", "chg_n", "miss_heap", "miss_sec", "warp_shared_free", "smsp_l1_free",
                             "reg"])


@njit(cache=True, inline="always", error_model="numpy")
def new_l1tex(n_smsp, n_warps, lg_sm_depth, miss_cap):
    reg = np.zeros(N_X_REG, np.int64)
    reg[X_LAST_DP_GLOBAL] = 1
    n_chg = max(4 * lg_sm_depth + 64, 256)
    return L1tex(chg_t=np.zeros(n_chg, np.int64), chg_n=np.zeros(n_chg, np.int64),
                 miss_heap=np.zeros(max(miss_cap, 1), np.int64), miss_sec=np.zeros(max(miss_cap, 1), np.int64),
                 warp_shared_free=np.zeros(n_warps, np.int64), smsp_l1_free=np.zeros(n_smsp, np.int64), reg=reg)


@njit(cache=True, error_model="numpy")
def _heap_push(h, v, n, x, y):
    """Push time x with payload y on the min-heap (h, v)[:n]; returns the new size."""
    k = n
    h[k], v[k] = x, y
    while k > 0:
        up = (k - 1) // 2
        if h[up] <= h[k]:
            break
        h[up], h[k] = h[k], h[up]
        v[up], v[k] = v[k], v[up]
        k = up
    return n + 1


@njit(cache=True, error_model="numpy")
def _heap_pop_until(h, v, n, t):
    """Drop the entries with time <= t from the min-heap (h, v)[:n]; returns (new size, their payloads' sum)."""
    gone = np.int64(0)
    while n > 0 and h[0] <= t:
        gone += v[0]
        n -= 1
        h[0], v[0] = h[n], v[n]
        k = 0
        while True:
            c = 2 * k + 1
            if c >= n:
                break
            if c + 1 < n and h[c + 1] < h[c]:
                c += 1
            if h[k] <= h[c]:
                break
            h[k], h[c] = h[c], h[k]
            v[k], v[c] = v[c], v[k]
            k = c
    return n, gone


@njit(cache=True, inline="always", error_model="numpy")
def land_fills(x, t):
    """Fills that landed by t take their cycles of the data pipe, from when they landed."""
    n = x.chg_t.shape[0]
    while x.reg[X_CHG_CNT] > 0 and x.chg_t[x.reg[X_CHG_HEAD]] <= t:
        h = x.reg[X_CHG_HEAD]
        x.reg[X_SHARED_FREE] = max(x.reg[X_SHARED_FREE], x.chg_t[h]) + x.chg_n[h]
        x.reg[X_CHG_HEAD] = (h + 1) % n
        x.reg[X_CHG_CNT] -= 1


@njit(cache=True, inline="always", error_model="numpy")
def next_global(x, q, t, rows, provider, issue_cycle, cfg):
    """The LG queue head L1TEX takes this cycle if it is free, found once for both pipes: (its SMSP or -1,
    where it is served from now, whether it fetches its provider's line, and while a miss waits for a miss
    entry when the first frees, else 0). A hit whose provider miss has not reached L1TEX fetches the line in
    its stead (the first such hit only), a miss whose line such a hit already fetched is a hit on that fill,
    a store's level is 0."""
    g, lv, fetch, miss_wait = -1, np.int64(0), False, np.int64(0)
    if x.reg[X_L1_FREE] <= t and q.reg[Q_LG_Q] > 0:
        g = lsu.oldest_lg(q, t, x.smsp_l1_free, issue_cycle, cfg.in_order)
        if g >= 0:
            rg = q.lg_buf[g, q.lg_head[g]]
            if rows[rg, R_CLS] == C_LDG:
                lv = np.int64(rows[rg, R_LEVEL])
                pg = provider[rg]
                if lv == 0 and pg >= 0 and (q.row_mem[pg] & (M_TAKEN | M_FETCHED)) == 0:
                    lv, fetch = np.int64(rows[pg, R_LEVEL]), True
                elif lv > 0 and (q.row_mem[rg] & M_FETCHED) != 0:
                    lv = np.int64(0)
                if cfg.miss_cap > 0 and lv > 0:
                    n, gone = _heap_pop_until(x.miss_heap, x.miss_sec, x.reg[X_MISS_N], t)
                    x.reg[X_MISS_N] = n
                    x.reg[X_MISS_SEC] -= gone
                    if n > 0 and (n >= cfg.miss_cap or x.reg[X_MISS_SEC] + rows[rg, R_SECTORS] > cfg.miss_sec_cap):
                        miss_wait = x.miss_heap[0]
                        g = -1       # too few miss entries free: L1TEX waits with this head
    return g, lv, fetch, miss_wait


@njit(cache=True, inline="always", error_model="numpy")
def shared_pipe(x, q, sb_, t, wake, g, lv_g, rows, issue_cycle, recheck, counters, cfg):
    """The shared pipe takes the oldest MIO head when the data pipe is free (a global hit or store waiting
    at L1TEX goes first when the two take turns and it is the global side's, or when it is older); a
    shuffle takes its R_WF cycles of the pipe, an S2R none (it leaves as soon as it is its queue's head:
    _pipeless_heads); returns wake."""
    if q.reg[Q_MIO_Q] > 0:
        wake = _pipeless_heads(q, sb_, t, wake, rows, issue_cycle, recheck, cfg)
    if x.reg[X_SHARED_FREE] <= t and q.reg[Q_MIO_Q] > 0:
        s, s_t = lsu.oldest_mio(q, issue_cycle, cfg.in_order)
        if (s >= 0 and cfg.data_unified and g >= 0 and lv_g == 0
                and ((x.reg[X_LAST_DP_GLOBAL] == 0) if cfg.dp_turns else issue_cycle[q.lg_buf[g, q.lg_head[g]]] < s_t)):
            s = -1
        if s >= 0:
            r = lsu.pop_mio(q, s, cfg.mio_depth)
            x.reg[X_LAST_DP_GLOBAL] = 0
            wake = min(wake, t + 1)                  # a queue slot freed: throttled warps may issue
            w = rows[r, R_WARP]
            if rows[r, R_LAT] < 0:      # a shuffle: its cycles of the pipe (R_WF), then its own latency
                x.reg[X_SHARED_FREE] = t + rows[r, R_WF]
                done = t - np.int64(rows[r, R_LAT])
                sb_.ready[r] = done
            else:
                n = max(np.int64(rows[r, R_WF]), np.int64(1))
                t_w = max(t, x.warp_shared_free[w])     # the warp's earlier loads still returning
                n_warp = cfg.shared_cpw * n             # its return path: 2 cycles a wavefront, any width
                if rows[r, R_CLS] == C_LDS:
                    regs = np.int64(rows[r, R_LAT])      # registers written per lane (lower.py)
                    n_sm = max(n, (regs + cfg.shared_wb - 1) // cfg.shared_wb)
                    done = t_w + n_warp - cfg.shared_cpw + cfg.lds_lat
                else:
                    n_sm = n
                    done = t_w + n_warp
                x.reg[X_SHARED_FREE] = t + n_sm
                x.warp_shared_free[w] = t_w + n_warp
                counters[K_SHARED_BUSY] += n          # wavefronts, as ncu counts them
                sb_.ready[r] = done
                if rows[r, R_CLS] == C_LDS:     # the loads' latencies, summed as they are known
                    counters[K_LDS_LAT] += done - issue_cycle[r]
                    counters[K_LDS_N] += 1
            lsu.taken(q, True, s, r, done, done if cfg.at_return else t, recheck, rows, cfg.read_ahead)
            if cfg.sb_on:
                scoreboard.on_take(sb_, w, r, done)
            wake = min(wake, done)
            if q.reg[Q_MIO_Q] > 0:      # an S2R now at the head need not wait for the pipe
                wake = _pipeless_heads(q, sb_, t, wake, rows, issue_cycle, recheck, cfg)
    if q.reg[Q_MIO_Q] > 0:
        wake = min(wake, max(t + 1, x.reg[X_SHARED_FREE]))
    return wake


@njit(cache=True, inline="always", error_model="numpy")
def l1tex_stage(x, q, sb_, mp, t, wake, g, lv, fetch, miss_wait, rows, line_id, provider, issue_cycle, state,
                recheck, counters, cfg):
    """L1TEX takes the head next_global found (g), unless it is a hit or store and the data pipe is busy
    (then nothing at L1TEX moves before the pipe frees); returns wake."""
    blocked = False
    if x.reg[X_L1_FREE] <= t and q.reg[Q_LG_Q] > 0:
        s = g
        if s >= 0 and cfg.data_unified and lv == 0 and x.reg[X_SHARED_FREE] > t:
            s = -1          # a hit (or store) needs the data pipe now; it is busy
            blocked = True
        if s >= 0:
            r = lsu.pop_lg(q, s, cfg.lg_depth, cfg.grant_untaken, cfg.lg_untaken_cap, state, recheck)
            if lv == 0:
                x.reg[X_LAST_DP_GLOBAL] = 1
            wake = min(wake, t + 1)                  # a queue slot freed: throttled warps may issue
            sec = np.int64(rows[r, R_SECTORS])
            lines = np.int64(rows[r, R_LINES])
            n = max((sec + cfg.l1_sectors - 1) // cfg.l1_sectors, (lines + cfg.l1_lines - 1) // cfg.l1_lines,
                    np.int64(1))
            x.reg[X_L1_FREE] = t + n
            n_data = max(lines, np.int64(1))
            if cfg.data_unified and lv == 0:    # its lines pass the data pipe the shared wavefronts use
                x.reg[X_SHARED_FREE] = t + n_data
            x.smsp_l1_free[s] = t + cfg.l1_cpl * n
            counters[K_L1_BUSY] += n
            fill_at = np.int64(0)
            load = rows[r, R_CLS] == C_LDG
            if load:
                if fetch:
                    q.row_mem[provider[r]] |= M_FETCHED
                t_req = memory_path.request_at(mp, t) if cfg.l2_in_order and lv > 0 else t
                done = t_req + cfg.l1_cpl * (n - 1) + cfg.level_lat[lv]
                if lv > 0:
                    done = memory_path.fetch(mp, r, t_req, lv, sec, done, rows, line_id, counters, cfg.sector_bytes,
                                             cfg.fill_bytes, cfg.l2_share, cfg.dram_share)
                    if cfg.data_unified:
                        _charge(x, done - n_data, n_data)    # the fill's lines pass the data pipe when they land
                else:
                    fill_at = memory_path.fill_landing(mp, r, rows, line_id)
            else:
                done = memory_path.store(mp, r, t, sec, t + cfg.l1_cpl * n, rows, cfg.write_fp, cfg.sector_bytes,
                                         cfg.dram_write_share, cfg.write_l2_share, cfg.level_lat[2])
            rdy = max(done, fill_at)
            sb_.ready[r] = rdy
            # the entry counts until the data returns (at_return): for a hit on a line still on its way,
            # until the fill (hit_to_fill) or until the hit's own return from L1TEX
            rel = (rdy if cfg.hit_to_fill else done) if cfg.at_return else t
            if cfg.l2_in_order and not load:
                # a store's entry frees once L1TEX sent it on, when the SM's path to the L2 has room for it
                per = cfg.write_fp[(rows[r, R_FLAGS] >> WRITE_SHIFT) & 3]
                sent = max(t + cfg.l1_cpl * n, done - (cfg.write_buf * per) // FP)
                x.reg[X_L1_FREE] = max(x.reg[X_L1_FREE], sent)
                rel = min(rel, sent)
            if cfg.miss_cap > 0 and lv > 0 and load:
                # its miss entries until the fill; its queue entry until the take
                x.reg[X_MISS_N] = _heap_push(x.miss_heap, x.miss_sec, x.reg[X_MISS_N], done, sec)
                x.reg[X_MISS_SEC] += sec
                rel = t
            wt = lsu.taken(q, False, s, r, rdy, rel, recheck, rows, cfg.read_ahead)
            if fill_at > done:
                wake = min(wake, fill_at)       # its data waits for the fill
            if load:
                counters[K_LDG_LAT] += rdy - issue_cycle[r]
                counters[K_LDG_N] += 1
            if cfg.sb_on:
                scoreboard.on_take(sb_, wt, r, rdy)
            wake = min(wake, done)
    if q.reg[Q_LG_Q] > 0:
        for s in range(q.lg_cnt.shape[0]):
            if q.lg_cnt[s] > 0:
                wk = max(t + 1, x.reg[X_L1_FREE], x.smsp_l1_free[s], miss_wait)
                if blocked and x.smsp_l1_free[s] <= t:
                    wk = max(wk, x.reg[X_SHARED_FREE])   # behind the blocked oldest head until the pipe frees
                wake = min(wake, wk)
    return wake


@njit(cache=True, inline="always", error_model="numpy")
def _pipeless_heads(q, sb_, t, wake, rows, issue_cycle, recheck, cfg):
    """MIO heads that take no cycle of the shared pipe (S2R: R_LAT holds minus its latency, R_WF 0)
    leave their SMSP's queue for their own unit as soon as they are its head (in order: and no older global
    instruction of the SMSP waits), pipe busy or not (micro/mio_special.json); returns wake."""
    for s in range(q.mio_cnt.shape[0]):
        while q.mio_cnt[s] > 0:
            r = q.mio_buf[s, q.mio_head[s]]
            if rows[r, R_LAT] >= 0 or rows[r, R_WF] > 0:
                break
            if cfg.in_order and q.lg_cnt[s] > 0 and issue_cycle[q.lg_buf[s, q.lg_head[s]]] < issue_cycle[r]:
                break
            lsu.pop_mio(q, s, cfg.mio_depth)
            done = t - np.int64(rows[r, R_LAT])
            sb_.ready[r] = done
            lsu.taken(q, True, s, r, done, done if cfg.at_return else t, recheck, rows, cfg.read_ahead)
            if cfg.sb_on:
                scoreboard.on_take(sb_, rows[r, R_WARP], r, done)
            wake = min(wake, t + 1, done)
    return wake


@njit(cache=True, inline="always", error_model="numpy")
def _charge(x, at, n):
    """n cycles of the data pipe for a fill landing at `at` (FIFO; full: the oldest is booked now)."""
    size = x.chg_t.shape[0]
    if x.reg[X_CHG_CNT] == size:
        h = x.reg[X_CHG_HEAD]
        x.reg[X_SHARED_FREE] = max(x.reg[X_SHARED_FREE], x.chg_t[h]) + x.chg_n[h]
        x.reg[X_CHG_HEAD] = (h + 1) % size
        x.reg[X_CHG_CNT] -= 1
    k = (x.reg[X_CHG_HEAD] + x.reg[X_CHG_CNT]) % size
    x.chg_t[k] = at
    x.chg_n[k] = n
    x.reg[X_CHG_CNT] += 1


guard_cache(globals(), unit_sources())     # stamped by every unit's source, guarded, seeded (gpusim.jit)
