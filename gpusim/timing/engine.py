"""The cycle loop: one SM, its resident warps, four sub-partitions. numba over flat arrays.

Model (all times integer SM cycles; `t` is the current cycle):
  * Warp w of the SM (CTA slot * warps per CTA + warp in CTA) belongs to SMSP w % 4.
  * Each cycle, each SMSP scheduler looks at its warps' next instruction (in program
    order) and issues at most one of the eligible ones. Policy GTY (default): a warp whose
    memory instruction was held back by a full MIO / LG queue and is now eligible goes first,
    the one that began waiting earliest, the youngest of those that began in the same cycle
    (micro/sched_fairness.json: queue-bound warps finish together); else the warp it issued
    last if still eligible, else the youngest (highest SM warp index: the record's warps finish
    in reverse order of age in every mode). GTO: the same with the oldest in place of the
    youngest (the policy until 2026-11-30); GTO_OLDEST: GTO without the queue rule. GTL (a
    diagnosis): GTY with the eligible warp that issued least recently in place of the youngest,
    but the youngest after the warp issued last ends a run of P_PAIR_RUN issues (no waiter
    groups). LRR: the first eligible warp after the one issued last, in circular order.
  * A warp's next instruction is eligible when (checked in this order, the first
    failing check names the warp's state):
      barrier      - it is not waiting at BAR.SYNC (BAR.SYNC.DEFER_BLOCKING: only a memory,
                     control or ADU instruction waits for the release; others issue past it);
      scoreboard   - every producer it reads has its result (ready[producer] <= t); a
                     missing global-load result is long_scoreboard, a shared-load one
                     short_scoreboard, any other wait; with several, that order wins; with
                     ptxas's dependency barriers on (P_SB_GLOBAL, P_SB_SHARED), a global or
                     shared load beyond its class's barrier count in the kernel's SASS shares the
                     last one, and a consumer waits for every
                     load on its producer's barrier (at issue, in run); a memory row with a read wait
                     (rb_wait, ptxas's read barriers: lower.read_waits) waits until the pipe has
                     taken that earlier memory row of its warp (long_scoreboard; short_scoreboard
                     behind a shared one);
      mio/lg queue - a shared (global) instruction needs a free slot in its SMSP's MIO
                     (LG) queue and an entry of the SM-wide MIO (LG) pool, else mio_throttle
                     (lg_throttle; kept in the engine-only states S_MIO_POOL / S_LG_POOL when
                     only the pool is short, which run_lowered folds back in); the LG pool has
                     room only while the SM also holds fewer than P_LG_SM_UNTAKEN global
                     instructions L1TEX has not taken; when more SMSPs' picks want an entry than
                     the pool has free, the SMSPs with the fewest entries in flight (LG with that
                     cap: the fewest untaken) get them (ties: lowest SMSP),
                     and a refused SMSP issues its best other warp;
      math pipe    - FFMA/FMUL/FADD need FMA-lite or FMA-heavy free, IMAD needs
                     FMA-heavy, ALU ops the ALU pipe, XU ops the XU pipe; each pipe takes
                     one warp-instruction per interval cycles, else math_pipe_throttle.
                     FP32 ops take lite when both are free (leaving heavy for IMAD).
      switch bubble - an FP32 op reading two registers of one bank cannot issue the cycle after
                     another warp's issue on its SMSP (micro/fma_issue_rate.json, fma_operands.json):
                     dispatch_stall when the scheduler must switch warps, not_selected while the warp
                     that issued last cycle issues again (ncu's PC samples, micro/fma_pipes_ncu.json);
      register banks - an FP32 row with the SASS's register reads (register_banks.py) needs its
                     reads on the SMSP's two banks, one register a cycle each from the cycle before
                     issue, to end no later than rf_lead cycles after issue (reuse-cache hits free
                     while the same warp issued the SMSP's previous instruction), else
                     dispatch_stall (micro/ffma_dispatch.json). When the warp the SMSP issued
                     last stalls so, P_RF_STALL says what the SMSP does: RF_HOLD (default) issues
                     nothing that cycle, its other eligible warps dispatch_stall (ncu's PC samples
                     of micro/dot_pair_ncu.json: the waiting warp of a pair takes the runner's
                     dispatch stalls, and no not_selected falls inside its FFMA runs); RF_YIELD
                     picks another warp first; RF_PASS lets another eligible warp issue.
  * After issuing row r a warp waits gap[r] cycles before its next issue (ptxas's stall count
    from the SASS control codes, control_codes.py; 1 when the kernel has no SASS record); the
    cycles between are wait, checked before the scoreboard as the hardware counts the stall
    down before it looks at dependencies.
  * A warp issues at most one memory instruction (LDS/STS/LDG/STG) per mem_iv cycles; the
    cycles between count as wait (micro: 4 cycles, ncu shows them as wait; the same rule ptxas
    writes into the stall count of back-to-back memory instructions).
  * A queue entry counts against the MIO/LG depths from its issue until its data returns
    (ready), or until the pipe takes it when queue_entry_until_return is off.
  * Each SMSP feeds the L1TEX data stage at most one line per smsp_l1_cpl cycles (micro: 2);
    the SM's stage takes one per cycle; a global load is ready at
    start + smsp_l1_cpl * (lines - 1) + its level's latency.
  * Fixed-latency results: ready = issue + latency.
  * An SMSP's MIO and LG queues are one LSU queue (lsu_queue_in_order): a head leaves only when no
    older instruction of its SMSP waits in the other queue. The queue reads the registers of its
    read_ahead oldest entries (lsu_queue_read_ahead = 6): a read barrier on a memory instruction clears
    then (M_READ), not when its pipe takes it.
  * Shared memory: the SM's shared pipe takes the oldest head of the four MIO queues
    (ties: lowest SMSP) when free, in the same cycle it was issued at the earliest, and
    is busy for max(wavefronts, ceil(V / shared_wb)) cycles (V: registers a load writes per
    lane, R_LAT of an LDS row; shared_wb = 2 written back per cycle). The warp's own return
    path then delivers it in n = shared_cpw * wavefronts cycles after its previous load's, whatever
    its width (shared_cpw = 2; micro/lds_wide_return.json): ready at start' + n - shared_cpw +
    lds_latency (so an uncontended LDS.32 costs lds_latency; one warp's conflict-free LDS.128 8
    cycles, a 2-way conflicted one 16).
  * One data pipe (shared_and_global_share_data_pipe): the shared wavefronts above and a global
    request's lines share it; a hit or store holds it from when L1TEX takes it (when both sides want it
    they take turns, data_pipe_clients_take_turns; else the older goes first), a miss for its lines'
    cycles when its fill lands (a FIFO of charges).
  * Global memory: the L1TEX stage takes the oldest LG queue head when free, busy for
    max(ceil(sectors / l1_sectors_per_cycle), ceil(lines / l1_lines_per_cycle), 1) cycles:
    the tag stage takes 16 sectors a cycle, the data stage one 128-B line a cycle.
    A load's data comes from level[row] (0 L1, 1 L2, 2 DRAM, 3 an L2 hit on a line another SM's miss
    is still fetching: the L2 path at P_PEND_LAT; from the cache model or all L2) after that level's
    latency; an L1 hit on a line that an earlier miss is still fetching gets
    its data when that fill lands, not before; its queue entry counts until its own return from
    L1TEX (P_HIT_HOLDS_TO_FILL = 0, micro/l1_pending.json), or until the fill (1) (the cache
    model decides hit or miss in program order; the engine keeps, per 128-B line, when its last
    fill from L2/DRAM completes). When a hit reaches L1TEX before the miss the cache model put
    ahead of it (provider), the hit fetches the line at the miss's level and the miss, when it
    comes, is a hit on that fill. An L1 miss leaves its LG queue entry when L1TEX takes it and holds
    one of the SM's lg_sm_miss_depth miss entries and one of its lg_sm_miss_sectors sector entries per
    sector until its fill lands; with too few free it waits at L1TEX's head, and nothing behind it moves
    (P_LG_SM_MISSES = 0: no miss entries, the miss's queue entry counts until its return like any
    load's). An L1 miss also takes its bytes through the SM's
    share of the chip's L2 bandwidth (no more than the L2->L1 port, fill_bytes a cycle) and a DRAM
    miss through its share of the DRAM bandwidth: in-order servers in 1/256-cycle units;
    the data is ready at the later of the latency and the servers' completion.
  * BAR.SYNC: the CTA's barrier unit processes arrivals one per bar_arrive cycles (each
    at max(its issue, the previous processed) + bar_arrive); when every warp of the CTA
    that has not finished issuing arrived, they resume bar_release cycles after the last
    processed arrival (barrier_cost micro: 12 + 2 x warps cycles per barrier).
  * EXIT issues like any CBU instruction (kernels emit a basic block's integer and control
    ops as counts, so it need not be a warp's last row); a warp ends with its last row.
    A warp that issued its last row stays resident in drain while its
    memory instructions are queued or in flight; then it retires. Elapsed cycles = the
    last retirement.
Cycles in which no warp can issue are skipped to the next event (a result, a pipe or a
queue freeing, a barrier release); every skipped cycle is still counted in each warp's state.
On request (P_NOT_ISSUED) each state's cycles are also counted where the warp's SMSP issued nothing and
held no warp at the switch bubble (ncu's not-issued PC samples, in which a dispatch stall is a selected
warp): each SMSP keeps a running count of such cycles, read when a warp enters and leaves a state.
On request (a 2-D `log` array) the first stall intervals to end are kept, (warp, state, first cycle,
end cycle, row waited at), for the --trace timeline; the selected cycles are the issue log. Asked or
not, the results are the same; not asked, numba compiles the loop without it (_log_interval).
Speed without changing a result: a warp's state is re-derived only when it can change (at
recheck[w]: the end of its stall count, its result's ready cycle, its pipe freeing; or when an
event clears recheck[w]: the pipe taking its load, its barrier releasing, a queue purge for a
throttled warp), and each warp's cycles are added to its state when it leaves the state, not
every cycle. Eligible warps (not_selected, dispatch_stall) are looked at every cycle, but once a warp
has passed the checks only its own issue can undo (barrier hold, stall count, producers, read barrier,
memory interval) at a row, it skips them while it stays there (static_ok); and a warp whose state
this cycle waits on the SMSP's pick (the switch bubble) or the pool arbiter (eligible pending an
entry) has it set once, after them, so a warp the pool refuses cycle after cycle does not leave and
re-enter its state each cycle (in-process A/B: 7-29 % faster on the 64-warp ladder kernels, results
identical).
With many warps per SMSP (run_lowered: 12 or more), the warps waiting on one queue class of one SMSP
are kept in a group whose earliest waiter alone is evaluated, the others following its state (the
`groups` code below; results identical, tests/timing/test_engine.py): each entry the pool frees used to
wake all of them.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic, overload

from gpusim.jit import guard_cache
from gpusim.timing.states import (N_STATES, S_SELECTED, S_NOT_SELECTED, S_WAIT, S_SHORT_SB, S_LONG_SB,
                                  S_MIO_THROTTLE, S_LG_THROTTLE, S_MATH_THROTTLE, S_BARRIER, S_DRAIN,
                                  S_DISPATCH)

# row classes
C_FIXED, C_LDS, C_STS, C_LDG, C_STG, C_BAR, C_EXIT = range(7)
# math pipes a fixed-latency row needs (U_NONE: no pipe limit modelled: uniform, ADU, CBU)
U_NONE, U_FMA, U_HEAVY, U_ALU, U_XU = range(5)
UNIT_BITS = 3        # R_UNIT holds the pipe in its low bits, an FP32 row's register reads above them
                     # (register_banks.pack: 0 when the trace has none, then the switch bubble alone)
# params vector
(P_FMA_INTERVAL, P_ALU_INTERVAL, P_XU_INTERVAL, P_MIO_DEPTH, P_LG_DEPTH, P_LDS_LAT,
 P_L1_LAT, P_L2_LAT, P_DRAM_LAT, P_L1_SECTORS, P_FILL_BYTES, P_SECTOR_BYTES, P_BAR_RELEASE,
 P_POLICY, P_MIO_SM_DEPTH, P_LG_SM_DEPTH, P_L1_LINES, P_BAR_ARRIVE, P_L2_SHARE_FP, P_DRAM_SHARE_FP,
 P_SWITCH_FMA, P_MEM_ISSUE_IV, P_WARP_SHARED_CPW, P_SMSP_L1_CPL, P_QUEUE_AT_RETURN, P_SHARED_WB,
 P_SB_GLOBAL, P_SB_SHARED, P_DATA_PIPE_UNIFIED, P_NO_SKIP, P_NOT_ISSUED, P_LSU_IN_ORDER, P_DATA_PIPE_TURNS,
 P_LSU_READ_AHEAD, P_LG_SM_UNTAKEN, P_HIT_HOLDS_TO_FILL, P_LG_SM_MISSES, P_LG_SM_MISS_SECTORS,
 P_RF_LEAD, P_RF_STALL, P_PAIR_RUN, P_PEND_LAT, P_DRAM_WRITE_SHARE_FP, P_WRITE_FULL_FP, P_WRITE_SECTOR_FP,
 P_WRITE_LINE_FP, N_PARAMS) = range(47)
FP = 256              # sub-cycle units of the L2 / DRAM bandwidth servers
POLICY_GTO, POLICY_LRR, POLICY_GTO_OLDEST, POLICY_GTY, POLICY_GTL = 0, 1, 2, 3, 4
RF_PASS, RF_YIELD, RF_HOLD = 0, 1, 2    # P_RF_STALL: after a register-bank stall of the warp issued last
# counters vector
(K_HEAVY, K_LITE, K_ALU, K_XU, K_SHARED_BUSY, K_L1_BUSY, K_FILL_BUSY, K_DEADLOCK,
 K_LDS_LAT, K_LDS_N, K_LDG_LAT, K_LDG_N, N_COUNTERS) = range(13)   # (the last four: shared / global loads'
# summed cycles from issue to data return, and their count)

INF = np.int64(1) << 62
GROUPS_ON, GROUPS_OFF = np.zeros((1, 1), np.int8), np.zeros(1, np.int8)   # run's `groups`
# two engine-only states, folded into mio_throttle / lg_throttle in the reports (run_lowered): the
# warp's own SMSP queue has room but the SM-wide pool has none
S_MIO_POOL, S_LG_POOL = N_STATES, N_STATES + 1
N_ENGINE_STATES = N_STATES + 2
# columns of the rows matrix (int32, one 64-B line per row: a row's fields are read together, and
# one stream per warp instead of one per field keeps the CPU's prefetchers ahead; ~1.2x faster)
(R_CLS, R_UNIT, R_LAT, R_WF, R_SECTORS, R_LINES, R_LEVEL, R_GAP, R_DEP, R_DEP1, R_DEP2, R_WARP,
 R_LINE_LO, R_LINE_HI, R_OP, R_FLAGS, N_ROW_FIELDS) = range(17)
ROW_STRIDE = 16
DEP_LDG, DEP_LDS = 1, 2    # a producer's class in R_FLAGS
F_WRITEBACK = 1 << 7       # R_FLAGS: a store whose sectors the L2 writes back to DRAM (lower's writeback)
# R_FLAGS bits 8-9: how a global store fills its sectors (lower's write_kind): whole sectors, part of
# several sectors of a line, or one partial sector per line; each is written to the L2 at its own rate
WRITE_SHIFT = 8
W_FULL, W_SECTOR, W_LINE = 0, 1, 2


def _aligned_rows(n):
    """An empty (n, ROW_STRIDE) int32 matrix whose rows start on 64-B cache lines. numpy aligns large
    arrays to 16 B only, so each row would straddle two lines (in-process A/B on bench_engine's trace:
    about 2 % faster aligned)."""
    line = 64
    buf = np.empty(n * ROW_STRIDE * 4 + line, np.uint8)
    skip = (-buf.ctypes.data) % line
    return buf[skip:skip + n * ROW_STRIDE * 4].view(np.int32).reshape(n, ROW_STRIDE)


def pack_rows(cls, unit, lat, wf, sectors, lines, level, gap, line_ptr, dep, row_warp, op, bar_hold,
              writeback=None, write_kind=None):
    """The per-row arrays of a Lowered trace as the engine's rows matrix."""
    if max(cls.shape[0], int(line_ptr[-1])) >= 2 ** 31:
        raise ValueError("more than 2^31 rows or lines: the int32 rows matrix cannot index them")
    rows = _aligned_rows(cls.shape[0])
    rows[:, N_ROW_FIELDS:] = 0
    # R_FLAGS: bit 0 the barrier hold; bits 1 + 2j, 2 + 2j the class of producer j (DEP_LDG, DEP_LDS, else 0),
    # so the loop learns whether a producer is a load without reading the producer's own row
    flags = np.asarray(bar_hold, np.int32) & 1
    for j in range(3):
        d = dep[:, j]
        pc = np.where(d >= 0, np.asarray(cls)[np.maximum(d, 0)], -1)
        code = np.where(pc == C_LDG, DEP_LDG, np.where(pc == C_LDS, DEP_LDS, 0)).astype(np.int32)
        flags |= code << (1 + 2 * j)
    if writeback is not None:
        flags |= np.where(np.asarray(writeback, bool), F_WRITEBACK, 0).astype(np.int32)
    if write_kind is not None:
        flags |= (np.asarray(write_kind, np.int32) & 3) << WRITE_SHIFT
    for col, x in ((R_CLS, cls), (R_UNIT, unit), (R_LAT, lat), (R_WF, wf), (R_SECTORS, sectors),
                   (R_LINES, lines), (R_LEVEL, level), (R_GAP, gap), (R_WARP, row_warp),
                   (R_LINE_LO, line_ptr[:-1]), (R_LINE_HI, line_ptr[1:]), (R_OP, op), (R_FLAGS, flags)):
        rows[:, col] = x
    rows[:, R_DEP:R_DEP + 3] = dep
    return rows


PREFETCH_ROWS = 2     # how far ahead of its issue a warp's rows are prefetched (2-4: the same; 8 slower)
N_SB = 6          # dependency barriers per warp (sm_90 control codes: SB0-SB5)
M_READ, M_TAKEN, M_FETCHED = 1, 2, 4    # bits of run's row_mem


@intrinsic
def _prefetch(typingctx, arr, i):
    """Ask the CPU to bring row i of a C-contiguous array into its caches (LLVM's prefetch: read, keep in
    every level). A warp's rows, and the per-row arrays beside them, are first read when the warp comes
    to them; with 16 or more warps each reading its own stretch of a 50-MB matrix the CPU's own
    prefetchers miss most of those reads (perf: the first read of a row took 1/8 of the loop)."""
    if not isinstance(arr, types.Array):
        return None

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        idx = [context.cast(builder, args[1], signature.args[1], types.intp)]
        idx += [context.get_constant(types.intp, 0)] * (aryty.ndim - 1)
        ptr = cgutils.get_item_pointer2(context, builder, ary.data, cgutils.unpack_tuple(builder, ary.shape),
                                        cgutils.unpack_tuple(builder, ary.strides), aryty.layout, idx,
                                        wraparound=False, boundscheck=False)
        i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
                                            "llvm.prefetch.p0i8")
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()
    return types.void(arr, i), codegen


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


@njit(cache=True, inline="always", error_model="numpy")
def _waited_at(pc_w, st, end):
    """The row a warp's state belongs to: the one it issued while selected (pc has moved on), else the
    one it is about to issue, where ncu's PC samples put the stall; a finished warp's last row."""
    return min(pc_w - 1 if st == S_SELECTED else pc_w, end - 1)


@njit(cache=True, error_model="numpy")
def _clear_recheck(state, recheck, st, st_pool):
    """Entries of a queue freed: every warp held back by it (its SMSP's queue or the SM's pool) looks
    again."""
    for w in range(state.shape[0]):
        if state[w] == st or state[w] == st_pool:
            recheck[w] = 0


def _log_interval(log, n_log, w, st, t0, t1, row):
    """Keep warp w's interval [t0, t1) in state st, waiting at row `row` (where ncu's PC samples would
    put it), in log[n_log] (the stall intervals of a timeline); returns the new count. Chosen by the
    type of `log` when numba compiles the caller: for a 1-D array (no log asked for) it is nothing at
    all, so the cycle loop pays nothing for it."""
    return n_log


@overload(_log_interval, inline="always")
def _log_interval_impl(log, n_log, w, st, t0, t1, row):
    if log.ndim == 1:
        return lambda log, n_log, w, st, t0, t1, row: n_log

    def keep(log, n_log, w, st, t0, t1, row):
        if st == S_SELECTED or t1 <= t0 or n_log >= log.shape[0]:   # issues are the issue log
            return n_log
        log[n_log, 0], log[n_log, 1], log[n_log, 2], log[n_log, 3], log[n_log, 4] = w, st, t0, t1, row
        return n_log + 1
    return keep


@njit(cache=True, error_model="numpy")
def run(warp_start, warp_smsp, warp_cta, cta_warp_start, smsp_warps, smsp_start,
        rows, line_id, params, rb_wait, provider, n_ops, log, groups):
    """Simulate; returns (cycles, state_cycles[warp, state], issue_cycle[row], finish[warp], counters,
    op_state_cycles[opcode id, state], latency_state_cycles[warp, state]: the state cycles in which the
    warp's SMSP issued nothing and held no warp at dispatch, the number of stall intervals kept in log,
    ready[row]: when each row's result is available, for a load when its data returned).
    rows: (n, ROW_STRIDE) int32, the R_* fields of each row (pack_rows). rb_wait: per row, the memory
    row whose pipe-take (register read, ptxas's read barrier) it waits for, -1 none. provider: per L1-hit
    global load, the cache model's miss that brings its line in (lower.fill_providers), -1 none. n_ops: the
    number of opcode ids in rows[:, R_OP] (a scan of the rows here took 2 % of regtile2d's run). log: (cap, 5)
    int64 to keep up to cap stall intervals in (_log_interval; the last value returned is how many), or a
    1-D array for none. groups: GROUPS_ON or GROUPS_OFF, whether queue waiters are kept in groups (below;
    with a greedy policy, GTY or GTO, and no log only); arrays because numba compiles the loop for each number of dimensions,
    so a kernel that gains nothing from the groups (a few warps per SMSP) runs a loop without their code."""
    grp = groups.ndim == 2      # (a compile-time constant: LLVM drops the code it guards when False)
    n_warps = warp_start.shape[0] - 1
    n_rows = rows.shape[0]
    n_ctas = cta_warp_start.shape[0] - 1
    n_smsp = smsp_start.shape[0] - 1
    fma_iv, alu_iv, xu_iv = params[P_FMA_INTERVAL], params[P_ALU_INTERVAL], params[P_XU_INTERVAL]
    mio_depth, lg_depth = params[P_MIO_DEPTH], params[P_LG_DEPTH]
    lds_lat, l1_sectors = params[P_LDS_LAT], params[P_L1_SECTORS]
    level_lat = np.array([params[P_L1_LAT], params[P_L2_LAT], params[P_DRAM_LAT], params[P_PEND_LAT]], np.int64)
    fill_bytes, sector_bytes = params[P_FILL_BYTES], params[P_SECTOR_BYTES]
    bar_release_lat, policy = params[P_BAR_RELEASE], params[P_POLICY]
    mio_sm_depth, lg_sm_depth = params[P_MIO_SM_DEPTH], params[P_LG_SM_DEPTH]
    l1_lines, bar_arrive = params[P_L1_LINES], params[P_BAR_ARRIVE]
    l2_share, dram_share = params[P_L2_SHARE_FP], params[P_DRAM_SHARE_FP]
    dram_write_share = params[P_DRAM_WRITE_SHARE_FP]
    write_fp = np.array([params[P_WRITE_FULL_FP], params[P_WRITE_SECTOR_FP], params[P_WRITE_LINE_FP]], np.int64)
    switch_fma = params[P_SWITCH_FMA]
    rf_lead = params[P_RF_LEAD]
    pair_run = params[P_PAIR_RUN]
    run_len = np.zeros(n_smsp, np.int64)           # each SMSP's current run of issues by one warp
    bank_free = np.zeros((n_smsp, 2), np.int64)     # each SMSP's register banks: next cycle free to read
    rf_yield_on = params[P_RF_STALL] == RF_YIELD
    rf_hold_on = params[P_RF_STALL] == RF_HOLD
    rf_yield = np.full(n_smsp, -1, np.int64)          # scan position of a warp its banks held at dispatch
    rf_held = np.zeros(n_smsp, np.bool_)              # this cycle the SMSP waits for that warp (RF_HOLD)
    elig_k = np.zeros(n_warps, np.int64)              # scan positions of one SMSP's eligible warps (RF_HOLD)
    mem_iv = params[P_MEM_ISSUE_IV]
    shared_cpw, l1_cpl, shared_wb = params[P_WARP_SHARED_CPW], params[P_SMSP_L1_CPL], params[P_SHARED_WB]
    warp_shared_free = np.zeros(n_warps, np.int64)  # each warp's own return path from the shared pipe
    smsp_l1_free = np.zeros(n_smsp, np.int64)       # ... and into the L1TEX data stage
    last_mem = np.full(n_warps, -(INF // 2), np.int64)   # each warp's last memory-instruction issue
    at_return = params[P_QUEUE_AT_RETURN]
    hit_to_fill = params[P_HIT_HOLDS_TO_FILL] != 0
    # queue occupancy as the issue stage sees it: an entry counts from its issue until its data
    # returns (at_return) or until the pipe takes it; *_fl per SMSP, *_total per SM, *_ret the
    # release times of entries the pipe took, *_nr the earliest of them
    mio_fl = np.zeros(n_smsp, np.int64)
    lg_fl = np.zeros(n_smsp, np.int64)
    mio_ret = np.zeros((n_smsp, max(mio_depth, 1)), np.int64)
    lg_ret = np.zeros((n_smsp, max(lg_depth, 1)), np.int64)
    mio_rn = np.zeros(n_smsp, np.int64)
    lg_rn = np.zeros(n_smsp, np.int64)
    mio_nr, lg_nr = INF, INF
    mio_nr_s = np.full(n_smsp, INF, np.int64)     # ... per SMSP
    lg_nr_s = np.full(n_smsp, INF, np.int64)
    smsp_last_t = np.full(n_smsp, -2, np.int64)   # cycle and warp of each SMSP's last issue
    smsp_last_w = np.full(n_smsp, -1, np.int64)
    pend = np.zeros(n_warps, np.int64)            # 1 / 2: eligible pending an SM-wide MIO / LG entry (this cycle)
    # the cycle the warp's instruction first met a full queue, times n_warps, plus its rank among warps that
    # began in the same cycle (the youngest first under greedy-then-youngest, else the oldest): the queue's
    # FIFO order
    thr_since = np.full(n_warps, -1, np.int64)
    sel0 = np.full(n_smsp, -1, np.int64)          # each SMSP's pick without / with pending warps
    sel1 = np.full(n_smsp, -1, np.int64)
    grant = np.zeros(n_smsp, np.int64)            # arbiter: q granted, -q refused, 0 not asked

    ready = np.full(n_rows, INF, np.int64)
    # ptxas's dependency barriers (scoreboards): 6 per warp, counters shared by the loads ptxas puts
    # on one; sb_k[class] of them go to global (1) / shared (2) loads, the rest share the last one
    # claimed; 0 = off (every load its own barrier, the consumer waits for its producer only)
    sb_k = np.zeros(3, np.int64)
    sb_k[1], sb_k[2] = params[P_SB_GLOBAL], params[P_SB_SHARED]
    sb_on = sb_k[1] > 0 or sb_k[2] > 0
    sb_claim = np.zeros((n_warps, N_SB), np.int64)      # class holding each barrier (0 free)
    sb_untaken = np.zeros((n_warps, N_SB), np.int64)    # its loads the pipe has not taken yet
    sb_ready = np.zeros((n_warps, N_SB), np.int64)      # the latest data return among the taken ones
    sb_gen = np.zeros((n_warps, N_SB), np.int32)        # bumped each time a consumer clears it
    sb_last = np.full((n_warps, 3), -1, np.int64)       # each class's latest claimed barrier
    row_sb = np.full(n_rows if sb_on else 1, -1, np.int8)
    row_gen = np.zeros(n_rows if sb_on else 1, np.int32)
    issue_cycle = np.full(n_rows, -1, np.int64)
    # per memory row, M_READ: its registers were read (a read barrier on it clears); M_TAKEN: its pipe took it;
    # M_FETCHED: a miss whose line a hit reaching L1TEX first fetched (one byte a row, not three int64
    # arrays: their allocation alone was 5 % of a run)
    row_mem = np.zeros(n_rows, np.uint8)
    pc = warp_start[:-1].copy()
    # the opcode ids of the row each warp waits at (min(pc, its last row)) and of the row it issued last: its
    # state's cycles by opcode are booked to the one or the other (_waited_at) at every state change, without
    # a read of the rows matrix there (in-process A/B: coalesced 1.04x, regtile2d the same)
    op_at = np.zeros(n_warps, np.int64)
    op_last = np.zeros(n_warps, np.int64)
    for w in range(n_warps):
        if warp_start[w + 1] > warp_start[w]:
            op_at[w] = rows[warp_start[w], R_OP]
    counts = np.zeros((n_warps, N_ENGINE_STATES), np.int64)
    op_counts = np.zeros((max(n_ops, 1), N_ENGINE_STATES), np.int64)   # state cycles by the opcode waited at
    # the same cycles counted only where the warp's SMSP issued nothing and held no warp at dispatch (ncu's
    # "not issued" PC samples: a dispatch stall counts as a selected warp), from each SMSP's running count
    # (a diagnosis, P_NOT_ISSUED: its bookkeeping at every state change costs the loop about 5 %)
    lat_on = params[P_NOT_ISSUED] != 0
    n_log = 0       # stall intervals kept in `log` (_log_interval)
    lat_counts = np.zeros((n_warps, N_ENGINE_STATES), np.int64)
    lat_cum = np.zeros(n_smsp, np.int64)          # latency cycles of each SMSP before the current cycle
    lat_since = np.zeros(n_warps, np.int64)       # lat_cum of its SMSP when the warp entered its state
    smsp_active = np.zeros(n_smsp, np.bool_)      # this cycle: the SMSP issued, or held a warp at dispatch
    state = np.full(n_warps, -1, np.int64)
    since = np.zeros(n_warps, np.int64)           # cycle the warp entered its current state
    recheck = np.zeros(n_warps, np.int64)         # its state cannot change before this cycle
    # the row at which the warp last passed every check that only its own issue can undo (barrier hold,
    # stall count, producers and read barrier ready, its memory interval): results only arrive and a
    # warp's barriers gain loads only when it issues, so while it stays at that row only the shared
    # resources (queues, pool, math pipes, the switch bubble) are looked at again
    static_ok = np.full(n_warps, -1, np.int64)
    switch_k = np.zeros(n_warps, np.int64)        # scan positions of one SMSP's warps held by the switch bubble
    smsp_npend = np.zeros(n_smsp, np.int64)       # its warps eligible pending the pool, their state not yet set
    pend_k = np.zeros((n_smsp, max(n_warps, 1)), np.int64)   # ... and their scan positions, in scan order
    finished = np.zeros(n_warps, np.bool_)
    finish = np.zeros(n_warps, np.int64)
    # Queue waiters in groups (greedy policies, GTY and GTO, and not when stall intervals are logged). The warps of one SMSP
    # waiting on one queue class (MIO or LG: its SMSP queue or the SM's pool) at rows where only the queue
    # and the pool decide all see the same queue, pool and grant each cycle, so they are in the same state,
    # but for the one the FIFO rule would pick: the earliest waiter, the group's head. Only the head is
    # evaluated; the others (members, FIFO order) follow its state (not_selected the cycle it issues), kept
    # per group as cumulative cycles by state, and each member's share is booked from those when it becomes
    # the head. The same counts as evaluating every waiter every cycle, without the herd of evaluations each
    # freed entry set off (most of the 64-warp kernels' work). Slots: 0 not_selected, 1 pool, 2 queue full.
    grp_on = grp and log.ndim == 1 and (policy == POLICY_GTO or policy == POLICY_GTY)
    n_grp = 2 * n_smsp
    grp_head = np.full(n_grp, -1, np.int64)
    grp_mem = np.zeros((n_grp, max(n_warps, 1)), np.int64)   # each group's members (any order) and their count
    grp_n = np.zeros(n_grp, np.int64)
    grp_state = np.zeros(n_grp, np.int64)
    grp_since = np.zeros(n_grp, np.int64)
    grp_lat_since = np.zeros(n_grp, np.int64)
    grp_cum = np.zeros((n_grp, 3), np.int64)
    grp_cum_lat = np.zeros((n_grp, 3), np.int64)
    mem_cum = np.zeros((n_warps, 3), np.int64)      # the group's cumulative cycles when the member joined
    mem_cum_lat = np.zeros((n_warps, 3), np.int64)
    last_issue = np.full(n_warps, -1, np.int64)
    next_ok = np.zeros(n_warps, np.int64)         # the warp's stall count runs until this cycle
    bar_wait = np.zeros(n_warps, np.bool_)
    bar_release = np.full(n_warps, INF, np.int64)
    pending_mem = np.zeros(n_warps, np.int64)
    mem_done = np.zeros(n_warps, np.int64)
    cta_arrived = np.zeros(n_ctas, np.int64)
    cta_bar_proc = np.zeros(n_ctas, np.int64)     # barrier unit: when the last arrival was processed
    mio_total = np.int64(0)
    lg_total = np.int64(0)
    # the SM's global instructions L1TEX has not taken yet: a second cap beside lg_sm_depth's entries
    # until their return (0: none); with it the pool's grant goes by each SMSP's untaken entries
    grant_untaken = params[P_LG_SM_UNTAKEN] > 0
    lg_untaken_cap = params[P_LG_SM_UNTAKEN] if grant_untaken else np.int64(1 << 40)
    lg_untaken = np.int64(0)
    # L1 misses sent on to L2: with caps (P_LG_SM_MISSES > 0) a miss leaves the LG queue and pool when
    # L1TEX takes it and holds one of the SM's miss entries and a sector entry per sector until its fill
    # lands (a min-heap of those times, with the sectors); with too few free the miss at L1TEX's head
    # waits there, and nothing behind it moves
    miss_cap, miss_sec_cap = params[P_LG_SM_MISSES], params[P_LG_SM_MISS_SECTORS]
    miss_heap = np.zeros(max(miss_cap, 1), np.int64)
    miss_heap_sec = np.zeros(max(miss_cap, 1), np.int64)
    miss_n, miss_sec = np.int64(0), np.int64(0)
    miss_wait = np.int64(0)     # while the head miss waits for an entry: when the first one frees (else 0)
    mio_q = np.int64(0)                           # instructions waiting in the MIO / LG queues (all SMSPs)
    lg_q = np.int64(0)
    dram_free = np.int64(0)                       # FP units
    write_free = np.int64(0)                      # FP units: the SM's stores into the L2 (write_fp per sector)
    cta_live = np.zeros(n_ctas, np.int64)
    for c in range(n_ctas):
        cta_live[c] = cta_warp_start[c + 1] - cta_warp_start[c]
    heavy_free = np.zeros(n_smsp, np.int64)
    lite_free = np.zeros(n_smsp, np.int64)
    alu_free = np.zeros(n_smsp, np.int64)
    xu_free = np.zeros(n_smsp, np.int64)
    last_k = np.full(n_smsp, -1, np.int64)        # position in smsp_warps issued last
    mio_buf = np.zeros((n_smsp, max(mio_depth, 1)), np.int64)
    mio_head = np.zeros(n_smsp, np.int64)
    mio_cnt = np.zeros(n_smsp, np.int64)
    lg_buf = np.zeros((n_smsp, max(lg_depth, 1)), np.int64)
    lg_head = np.zeros(n_smsp, np.int64)
    lg_cnt = np.zeros(n_smsp, np.int64)
    shared_free = np.int64(0)
    l1_free = np.int64(0)
    data_unified = params[P_DATA_PIPE_UNIFIED] != 0
    # one LSU instruction queue per SMSP: its shared and global instructions leave in issue order
    in_order = params[P_LSU_IN_ORDER] != 0
    # the data pipe's two clients (shared wavefronts, global hit / store lines) take turns when both want
    # it (else the older request goes first); last_dp_global: the global side used it last
    dp_turns = params[P_DATA_PIPE_TURNS] != 0
    last_dp_global = True
    # the LSU queue reads the registers of an SMSP's read_ahead oldest untaken memory instructions (0: each
    # when its pipe takes it); lsu_ring holds an SMSP's untaken ones in issue order (in-order queue only)
    read_ahead = params[P_LSU_READ_AHEAD] if in_order else 0
    lsu_ring = np.zeros((n_smsp, mio_depth + lg_depth), np.int64)
    lsu_head = np.zeros(n_smsp, np.int64)
    lsu_cnt = np.zeros(n_smsp, np.int64)
    no_skip = params[P_NO_SKIP] != 0               # visit every cycle (tests: skipping must not change a result)
    # data-pipe cycles of fills still on their way (a FIFO: fills land about in the order sent)
    chg_t = np.zeros(max(4 * lg_sm_depth + 64, 256), np.int64)
    chg_n = np.zeros(chg_t.shape[0], np.int64)
    chg_head = 0
    chg_cnt = 0
    fill_free = np.int64(0)
    counters = np.zeros(N_COUNTERS, np.int64)
    line_ready = np.zeros(max(line_id.shape[0], 1), np.int64)   # when each line's fill from L2/DRAM lands

    n_left = n_warps
    t = np.int64(0)
    while n_left > 0:
        wake = INF
        issued = False
        if t >= mio_nr:
            gone, mio_nr = _purge(mio_ret, mio_rn, mio_fl, mio_nr_s, t)
            mio_total -= gone
            if gone > 0:
                _clear_recheck(state, recheck, S_MIO_THROTTLE, S_MIO_POOL)
        if t >= lg_nr:
            gone, lg_nr = _purge(lg_ret, lg_rn, lg_fl, lg_nr_s, t)
            lg_total -= gone
            if gone > 0:
                _clear_recheck(state, recheck, S_LG_THROTTLE, S_LG_POOL)
        # ---- schedulers: states of every resident warp, then at most one issue per SMSP.
        # A memory instruction that passes its SMSP's depth check while the SM-wide pool has free
        # entries is eligible pending the pool arbiter (pend: 1 MIO, 2 LG); each SMSP picks the warp
        # it would issue with pending warps eligible (sel1) and without them (sel0).
        mio_left = mio_sm_depth - mio_total
        lg_left = min(lg_sm_depth - lg_total, lg_untaken_cap - lg_untaken)
        n_pend = 0
        for s in range(n_smsp):
            first_el, after_el, greedy_el, fifo_el = -1, -1, -1, -1
            n_switch = 0
            first0, after0, greedy0 = -1, -1, -1
            last_el, last0 = -1, -1      # the youngest eligible (greedy-then-youngest)
            alt_el, alt0 = -1, -1        # ... other than the warp issued last
            n_elig = 0
            lk = last_k[s]
            fifo_ts = INF
            lru_el, lru0, lru_t, lru_t0 = -1, -1, INF, INF   # the eligible warp that issued least recently
            for k in range(smsp_start[s], smsp_start[s + 1]):
                w = smsp_warps[k]
                rk = recheck[w]
                if rk > t:
                    # waiting on a known cycle (its stall count, a result, a barrier release, a pipe), or
                    # finished (INF)
                    if rk < wake:
                        wake = rk
                    continue
                st = S_NOT_SELECTED
                fixed = True        # the state holds until wk, or until an event clears recheck[w]
                wk = t + 1
                # (per-warp values read once into locals: numba cannot tell its arrays apart, so it reloads
                # an element after every store to any array of the same type)
                r = pc[w]
                static = static_ok[w] == r
                pw = 0
                sw0 = state[w]
                if grp and static and sw0 < 0:
                    # a member of a waiter group (no state of its own: it follows its head), woken by an
                    # event for its earlier loads
                    recheck[w] = INF
                    continue
                if static and sw0 >= S_MIO_POOL:
                    # held back by the SM-wide pool at a row where it passed every check its own issue can
                    # undo: only its queue and the pool decide, as at the end of the checks below (the
                    # pool's waiters are most of the evaluations of the 64-warp kernels)
                    mio = sw0 == S_MIO_POOL
                    if (mio_fl[s] >= mio_depth) if mio else (lg_fl[s] >= lg_depth):
                        st, wk = (S_MIO_THROTTLE if mio else S_LG_THROTTLE), INF
                    elif (mio_left if mio else lg_left) <= 0:
                        st, wk = sw0, INF
                    else:
                        pw = 1 if mio else 2
                        n_pend += 1
                elif r >= warp_start[w + 1]:
                    if pending_mem[w] > 0:
                        st, wk = S_DRAIN, INF           # the memory pipes wake us
                    elif mem_done[w] > t:
                        st, wk = S_DRAIN, mem_done[w]
                    else:
                        finished[w] = True
                        recheck[w] = INF        # (no event wakes a finished warp: the scan passes it by)
                        finish[w] = max(last_issue[w] + 1, mem_done[w])
                        sw = state[w]
                        if sw >= 0:       # leaving a state: its cycles, by warp and by opcode waited at
                            n0 = t - since[w]
                            counts[w, sw] += n0
                            if lat_on:
                                lat_counts[w, sw] += lat_cum[s] - lat_since[w]
                            wa = _waited_at(pc[w], sw, warp_start[w + 1])
                            n_log = _log_interval(log, n_log, w, sw, since[w], t, wa)
                            op_counts[op_last[w] if sw == S_SELECTED else op_at[w], sw] += n0
                        state[w] = -1
                        n_left -= 1
                        continue
                elif not static and bar_wait[w] and bar_release[w] > t and (rows[r, R_FLAGS] & 1) != 0:
                    # BAR.SYNC.DEFER_BLOCKING: the warp goes on past the barrier and waits for its
                    # release at the first memory, control or ADU instruction
                    st, wk = S_BARRIER, bar_release[w]   # INF: the last arrival sets it
                elif not static and next_ok[w] > t:
                    st, wk = S_WAIT, next_ok[w]         # ptxas's stall count of its last instruction
                else:
                    sb = -1
                    dep_wk = INF
                    if not static and bar_release[w] <= t:
                        bar_wait[w] = False
                    dep_cls = 0 if static else rows[r, R_FLAGS] >> 1
                    for j in range(0 if static else 3):
                        d = rows[r, R_DEP + j]
                        if d < 0:
                            continue
                        rdy = ready[d]
                        dc = (dep_cls >> (2 * j)) & 3         # DEP_LDG, DEP_LDS or 0
                        if sb_on and dc != 0 and row_sb[d] >= 0 and row_gen[d] == sb_gen[w, row_sb[d]]:
                            # the barrier counts every load put on it so far: wait for all of them
                            b = row_sb[d]
                            rdy = INF if sb_untaken[w, b] > 0 else max(rdy, sb_ready[w, b])
                        if rdy > t:
                            why = S_LONG_SB if dc == DEP_LDG else (S_SHORT_SB if dc == DEP_LDS else S_WAIT)
                            if sb == -1 or why == S_LONG_SB or (why == S_SHORT_SB and sb == S_WAIT):
                                sb = why
                            dep_wk = min(dep_wk, rdy)   # INF: still queued; the pipes wake us
                    p = -1 if static else rb_wait[r]
                    if p >= 0 and (row_mem[p] & M_READ) == 0:
                        # ptxas's read barrier: an earlier memory row of this warp still waits in its
                        # queue, its registers unread (their read, by the LSU queue's read-ahead or the
                        # pipe taking it, clears recheck: dep_wk INF)
                        cp = rows[p, R_CLS]
                        why = S_LONG_SB if cp == C_LDG or cp == C_STG else S_SHORT_SB
                        if sb == -1 or why == S_LONG_SB or (why == S_SHORT_SB and sb == S_WAIT):
                            sb = why
                    c = rows[r, R_CLS]
                    if sb != -1:
                        st, wk = sb, dep_wk                # INF: the pipe taking the load sets it
                    elif not static and c >= C_LDS and c <= C_STG and last_mem[w] + mem_iv > t:
                        st, wk = S_WAIT, last_mem[w] + mem_iv   # one memory instruction per mem_iv cycles per warp
                    else:
                        static_ok[w] = r
                        if c == C_LDS or c == C_STS:
                            if mio_fl[s] >= mio_depth:
                                st, wk = S_MIO_THROTTLE, INF      # a purge of MIO entries clears recheck
                            elif mio_left <= 0:
                                st, wk = S_MIO_POOL, INF
                            else:
                                pw = 1
                                n_pend += 1
                        elif c == C_LDG or c == C_STG:
                            if lg_fl[s] >= lg_depth:
                                st, wk = S_LG_THROTTLE, INF       # ... of LG entries
                            elif lg_left <= 0:
                                st, wk = S_LG_POOL, INF
                            else:
                                pw = 2
                                n_pend += 1
                        elif c == C_FIXED:
                            u = rows[r, R_UNIT] & ((1 << UNIT_BITS) - 1)
                            if u == U_FMA:
                                f = min(heavy_free[s], lite_free[s])
                            elif u == U_HEAVY:
                                f = heavy_free[s]
                            elif u == U_ALU:
                                f = alu_free[s]
                            elif u == U_XU:
                                f = xu_free[s]
                            else:
                                f = t
                            bk = rows[r, R_UNIT] >> UNIT_BITS if u == U_FMA else 0
                            if f > t:
                                st, wk = S_MATH_THROTTLE, f         # only this warp's SMSP issues to it
                            elif (u == U_FMA and switch_fma and smsp_last_t[s] == t - 1 and smsp_last_w[s] != w
                                  and (bk == 0 or max((bk >> 4) & 3, (bk >> 6) & 3) >= 2)):
                                # no FP32 dispatch right after another warp's issue when it reads two
                                # registers of one bank (micro/fma_operands.json: with an immediate operand
                                # there is no bubble): dispatch_stall if the scheduler must switch,
                                # not_selected if that warp issues again
                                st, wk, fixed = S_DISPATCH, t + 1, False
                            elif bk != 0:
                                # register-bank reads (register_banks): each bank reads one register a
                                # cycle, from the cycle before issue; the warp waits while its reads would
                                # end more than rf_lead cycles after its issue
                                hot = smsp_last_w[s] == w
                                sh = 0 if hot else 4
                                for b in range(2):
                                    nb = (bk >> (sh + 2 * b)) & 3
                                    fb = bank_free[s, b]
                                    if nb > 0 and fb > t - 1 and fb + nb - 1 > t + rf_lead:
                                        st, wk, fixed = S_DISPATCH, t + 1, False
                                        if hot:
                                            rf_yield[s] = k
                if st == S_DISPATCH:
                    # held back by the switch bubble: its state (dispatch_stall or not_selected) is set
                    # once this SMSP's pick is known, below
                    switch_k[n_switch] = k
                    smsp_active[s] = True
                    n_switch += 1
                elif pw > 0:
                    pend[w] = pw
                    # eligible pending the pool: its state (not_selected, or the pool's when the arbiter
                    # refuses it) is set after the arbiter, at the issue below (a warp the pool refuses
                    # cycle after cycle keeps its state instead of leaving and re-entering it each cycle)
                    pend_k[s, smsp_npend[s]] = k
                    smsp_npend[s] += 1
                elif st != state[w]:
                    # (this bookkeeping is written out at each of its five places: as a helper function,
                    # even numba-inlined, it made the whole loop 2.2x slower in in-process A/B)
                    sw = state[w]
                    if sw >= 0:       # leaving a state: its cycles, by warp and by opcode waited at
                        n0 = t - since[w]
                        counts[w, sw] += n0
                        if lat_on:
                            lat_counts[w, sw] += lat_cum[s] - lat_since[w]
                        wa = _waited_at(pc[w], sw, warp_start[w + 1])
                        n_log = _log_interval(log, n_log, w, sw, since[w], t, wa)
                        op_counts[op_last[w] if sw == S_SELECTED else op_at[w], sw] += n0
                    state[w] = st
                    since[w] = t
                    if lat_on:
                        lat_since[w] = lat_cum[s]
                if st != S_NOT_SELECTED and fixed:
                    recheck[w] = wk
                ts = thr_since[w]
                if (st == S_MIO_THROTTLE or st == S_LG_THROTTLE or st >= S_MIO_POOL) and ts < 0:
                    thr_since[w] = t * n_warps + (n_warps - 1 - w if policy >= POLICY_GTY else w)
                    # a new waiter: the head of its group if it has none or comes before it in the FIFO (a
                    # younger warp that began waiting in the same cycle, under greedy-then-youngest), else a
                    # member (every waiter is one or the other until it issues)
                    if grp and grp_on:
                        gi = 2 * s + (0 if (st == S_MIO_THROTTLE or st == S_MIO_POOL) else 1)
                        h = grp_head[gi]
                        x = w                           # the warp that becomes a member, if any
                        if h < 0:
                            grp_head[gi] = w            # the earliest waiter: evaluated as any warp
                            grp_state[gi] = st
                            grp_since[gi] = t
                            grp_lat_since[gi] = lat_cum[s]
                            x = -1
                        elif thr_since[w] < thr_since[h]:
                            grp_head[gi] = w            # (h became the head in this cycle, in the same state)
                            x = h
                        if x >= 0:
                            # its own interval ends here; the group's cycles from now on are its own
                            sx = state[x]
                            n0 = t - since[x]
                            counts[x, sx] += n0
                            if lat_on:
                                lat_counts[x, sx] += lat_cum[s] - lat_since[x]
                            op_counts[op_at[x], sx] += n0
                            gs = grp_state[gi]
                            cur = 0 if gs == S_NOT_SELECTED else (1 if gs >= S_MIO_POOL else 2)
                            for j in range(3):
                                mem_cum[x, j] = grp_cum[gi, j] + (t - grp_since[gi] if j == cur else 0)
                                mem_cum_lat[x, j] = grp_cum_lat[gi, j] + (lat_cum[s] - grp_lat_since[gi] if j == cur else 0)
                            state[x] = -1
                            recheck[x] = INF
                            grp_mem[gi, grp_n[gi]] = x
                            grp_n[gi] += 1
                if wk < wake:
                    wake = wk
                if st == S_NOT_SELECTED:
                    if policy == POLICY_GTL:
                        li = last_issue[w]
                        if li <= lru_t:          # (ties: the later in scan order, the younger)
                            lru_el, lru_t = k, li
                        if pw == 0 and li <= lru_t0:
                            lru0, lru_t0 = k, li
                    if rf_hold_on and pw == 0:
                        elig_k[n_elig] = k
                        n_elig += 1
                    last_el = k
                    if pw == 0:
                        last0 = k
                    if rf_yield_on and k != lk:
                        alt_el = k
                        if pw == 0:
                            alt0 = k
                    if first_el == -1:
                        first_el = k
                    if after_el == -1 and k > lk:
                        after_el = k
                    if k == lk:
                        greedy_el = k
                    if ts >= 0 and (fifo_el == -1 or ts < fifo_ts):
                        fifo_el = k
                        fifo_ts = ts
                    if pw == 0:
                        if first0 == -1:
                            first0 = k
                        if after0 == -1 and k > lk:
                            after0 = k
                        if k == lk:
                            greedy0 = k
            rf_held[s] = rf_hold_on and rf_yield[s] >= 0 and rf_yield[s] == lk
            if rf_held[s]:
                # the warp issued last is held by its register reads and keeps the SMSP: nothing issues,
                # the eligible warps wait as dispatch_stall (with the switch bubble's, below)
                rf_yield[s] = -1
                for j in range(n_elig):
                    switch_k[n_switch] = elig_k[j]
                    n_switch += 1
            if n_switch > 0:
                # FP32 warps held back by the switch bubble: dispatch_stall while the scheduler must
                # switch; not_selected when the warp issued last cycle issues again (ncu's PC samples
                # put them there, not in dispatch_stall)
                st = S_NOT_SELECTED if greedy_el != -1 and smsp_warps[greedy_el] == smsp_last_w[s] else S_DISPATCH
                for j in range(n_switch):
                    w = smsp_warps[switch_k[j]]
                    if state[w] != st:
                        sw = state[w]
                        if sw >= 0:
                            n0 = t - since[w]
                            counts[w, sw] += n0
                            if lat_on:
                                lat_counts[w, sw] += lat_cum[s] - lat_since[w]
                            wa = _waited_at(pc[w], sw, warp_start[w + 1])
                            n_log = _log_interval(log, n_log, w, sw, since[w], t, wa)
                            op_counts[op_last[w] if sw == S_SELECTED else op_at[w], sw] += n0
                        state[w] = st
                        since[w] = t
                        if lat_on:
                            lat_since[w] = lat_cum[s]
            if policy == POLICY_GTL:
                young = pair_run > 0 and run_len[s] >= pair_run
                sel1[s] = fifo_el if fifo_el != -1 else (greedy_el if greedy_el != -1 else (last_el if young else lru_el))
                sel0[s] = greedy0 if greedy0 != -1 else (last0 if young else lru0)
            elif policy == POLICY_GTY:
                sel1[s] = fifo_el if fifo_el != -1 else (greedy_el if greedy_el != -1 else last_el)
                sel0[s] = greedy0 if greedy0 != -1 else last0
            elif policy == POLICY_GTO and fifo_el != -1:
                sel1[s] = fifo_el
                sel0[s] = greedy0 if greedy0 != -1 else first0
            elif policy == POLICY_GTO or policy == POLICY_GTO_OLDEST:
                sel1[s] = greedy_el if greedy_el != -1 else first_el
                sel0[s] = greedy0 if greedy0 != -1 else first0
            else:
                sel1[s] = after_el if after_el != -1 else first_el
                sel0[s] = after0 if after0 != -1 else first0
            if rf_held[s]:
                sel1[s] = -1
                sel0[s] = -1
            elif rf_yield_on and rf_yield[s] == lk and lk >= 0:
                # the warp issued last was held by its register reads: another warp goes first (the
                # youngest eligible other one)
                if sel1[s] == lk and alt_el != -1:
                    sel1[s] = alt_el
                if sel0[s] == lk and alt0 != -1:
                    sel0[s] = alt0
        # ---- SM-wide MIO / LG pool arbiter. The SMSPs whose pick needs an entry of a pool get its
        # free entries in order of fewest entries of their own in flight, or for LG with the untaken cap
        # of fewest untaken ones (by in-flight entries the cap's room went unevenly: the SMSPs' last
        # warps of 32-line L1-hit streams finished up to 3,936 cycles apart) (ties: lowest SMSP); one
        # refused issues its best other warp. (Granting in SMSP order lets SMSP 0 take every entry
        # that frees: with the pool full, the other SMSPs' queues run dry, their warps fall behind,
        # and the kernel ends with one SMSP alone feeding L1TEX / the shared pipe at its own rate,
        # 1 line / wavefront per smsp_cpw cycles.)
        for q in range(1, 3 if n_pend > 0 else 1):
            left = mio_left if q == 1 else lg_left
            # (LG: by untaken entries while the untaken cap is what limits the pool, else by entries in flight)
            by_untaken = q == 2 and grant_untaken and lg_untaken_cap - lg_untaken < lg_sm_depth - lg_total
            while True:
                best, best_f = -1, INF
                for s in range(n_smsp):
                    if grant[s] == 0 and sel1[s] >= 0 and pend[smsp_warps[sel1[s]]] == q:
                        f = mio_fl[s] if q == 1 else (lg_cnt[s] if by_untaken else lg_fl[s])
                        if f < best_f:
                            best, best_f = s, f
                if best == -1:
                    break
                grant[best] = q if left > 0 else -q
                left -= 1
            if q == 1:
                mio_left = left
            else:
                lg_left = left
        for s in range(n_smsp):
            g = grant[s]
            grant[s] = 0
            kk = sel1[s] if g >= 0 else sel0[s]
            if smsp_npend[s] > 0:
                # pending warps not issuing: not_selected while the pool has an entry left for them,
                # else the pool's state
                for j in range(smsp_npend[s]):
                    k = pend_k[s, j]
                    w = smsp_warps[k]
                    q = pend[w]
                    pend[w] = 0         # (pend is set this cycle only: all zero again for the next)
                    if k == kk:
                        continue
                    st = S_DISPATCH if rf_held[s] else S_NOT_SELECTED
                    if g == -q or (g != q and (mio_left if q == 1 else lg_left) <= 0):
                        st = S_MIO_POOL if q == 1 else S_LG_POOL
                        if thr_since[w] < 0:
                            # refused by the pool: a waiter from now, in the FIFO order of the waiters that
                            # met it full at the scan (else, with an entry freeing each cycle, no warp ever
                            # counts as waiting and the greedy warp of each SMSP takes every entry)
                            thr_since[w] = t * n_warps + (n_warps - 1 - w if policy >= POLICY_GTY else w)
                    if state[w] != st:
                        sw = state[w]
                        if sw >= 0:
                            n0 = t - since[w]
                            counts[w, sw] += n0
                            if lat_on:
                                lat_counts[w, sw] += lat_cum[s] - lat_since[w]
                            wa = _waited_at(pc[w], sw, warp_start[w + 1])
                            n_log = _log_interval(log, n_log, w, sw, since[w], t, wa)
                            op_counts[op_last[w] if sw == S_SELECTED else op_at[w], sw] += n0
                        state[w] = st
                        since[w] = t
                        if lat_on:
                            lat_since[w] = lat_cum[s]
                smsp_npend[s] = 0
            if kk == -1:
                continue
            # ---- issue (the row's fields read once, before the stores below)
            w = smsp_warps[kk]
            r = pc[w]
            c = rows[r, R_CLS]
            gap = rows[r, R_GAP]
            lat = rows[r, R_LAT]
            ru = rows[r, R_UNIT]
            unit = ru & ((1 << UNIT_BITS) - 1)
            bk = ru >> UNIT_BITS
            if bk != 0:
                # its register reads take their banks' next cycles, from the cycle before issue
                sh = 0 if smsp_last_w[s] == w else 4
                for b in range(2):
                    nb = (bk >> (sh + 2 * b)) & 3
                    if nb > 0:
                        bank_free[s, b] = max(bank_free[s, b], t - 1) + nb
            thr_since[w] = -1
            last_k[s] = kk
            rf_yield[s] = -1
            sw = state[w]
            if sw >= 0:         # the state it leaves: not_selected, or a pending warp's last one
                n0 = t - since[w]
                counts[w, sw] += n0
                if lat_on:
                    lat_counts[w, sw] += lat_cum[s] - lat_since[w]
                wa = _waited_at(r, sw, warp_start[w + 1])
                n_log = _log_interval(log, n_log, w, sw, since[w], t, wa)
                op_counts[op_last[w] if sw == S_SELECTED else op_at[w], sw] += n0
            state[w] = S_SELECTED
            since[w] = t
            if lat_on:
                lat_since[w] = lat_cum[s]
            issued = True
            smsp_active[s] = True
            issue_cycle[r] = t
            last_issue[w] = t
            next_ok[w] = t + gap
            # its run: issues by one warp at most a cycle apart (P_PAIR_RUN)
            run_len[s] = run_len[s] + 1 if (smsp_last_w[s] == w and smsp_last_t[s] >= t - 2) else 1
            smsp_last_t[s] = t
            smsp_last_w[s] = w
            if sb_on:
                # ptxas's dependency barriers: the barriers its producers sit on are cleared (it waited for
                # them), and a global / shared load claims a free barrier of its class while the class has
                # fewer than sb_k, else joins the class's latest one (ptxas's allocation: its counters are
                # shared). Written out here: as a function, inlined or not, it took a third of the loop (its
                # nine array arguments cost reference counting at every call)
                dep_cls = rows[r, R_FLAGS] >> 1
                for jd in range(3):
                    dd = rows[r, R_DEP + jd]
                    if (dd >= 0 and (dep_cls >> (2 * jd)) & 3 != 0 and row_sb[dd] >= 0
                            and row_gen[dd] == sb_gen[w, row_sb[dd]]):
                        bb = row_sb[dd]
                        cls_b = sb_claim[w, bb]
                        sb_claim[w, bb] = 0
                        sb_untaken[w, bb] = 0
                        sb_ready[w, bb] = 0
                        sb_gen[w, bb] += 1
                        if cls_b > 0 and sb_last[w, cls_b] == bb:
                            sb_last[w, cls_b] = -1
                kc = 1 if c == C_LDG else (2 if c == C_LDS else 0)
                if kc > 0 and sb_k[kc] > 0:
                    held = 0
                    free_b = -1
                    for bb in range(N_SB):
                        if sb_claim[w, bb] == kc:
                            held += 1
                        elif sb_claim[w, bb] == 0 and free_b < 0:
                            free_b = bb
                    bb = -1
                    if held < sb_k[kc] and free_b >= 0:
                        bb = free_b
                        sb_claim[w, bb] = kc
                        sb_last[w, kc] = bb
                    elif sb_last[w, kc] >= 0:
                        bb = sb_last[w, kc]
                    if bb >= 0:         # (else every barrier is held by the other class: it waits on its own data)
                        row_sb[r] = bb
                        row_gen[r] = sb_gen[w, bb]
                        sb_untaken[w, bb] += 1
            if c == C_FIXED:
                ready[r] = t + lat
                u = unit
                if u == U_FMA:
                    if lite_free[s] <= t:
                        lite_free[s] = t + fma_iv
                        counters[K_LITE] += 1
                    else:
                        heavy_free[s] = t + fma_iv
                        counters[K_HEAVY] += 1
                elif u == U_HEAVY:
                    heavy_free[s] = t + fma_iv
                    counters[K_HEAVY] += 1
                elif u == U_ALU:
                    alu_free[s] = t + alu_iv
                    counters[K_ALU] += 1
                elif u == U_XU:
                    xu_free[s] = t + xu_iv
                    counters[K_XU] += 1
            if c >= C_LDS and c <= C_STG:
                last_mem[w] = t
            if c >= C_LDS and c <= C_STG and read_ahead > 0:
                lsu_ring[s, (lsu_head[s] + lsu_cnt[s]) % lsu_ring.shape[1]] = r
                lsu_cnt[s] += 1
                if lsu_cnt[s] <= read_ahead:
                    row_mem[r] |= M_READ
            if c == C_FIXED:
                pass
            elif c == C_LDS or c == C_STS:
                mio_buf[s, (mio_head[s] + mio_cnt[s]) % mio_depth] = r
                mio_cnt[s] += 1
                mio_q += 1
                mio_fl[s] += 1
                mio_total += 1
                pending_mem[w] += 1
            elif c == C_LDG or c == C_STG:
                lg_buf[s, (lg_head[s] + lg_cnt[s]) % lg_depth] = r
                lg_cnt[s] += 1
                lg_q += 1
                lg_fl[s] += 1
                lg_total += 1
                lg_untaken += 1
                pending_mem[w] += 1
            else:
                ready[r] = t + 1
            cta = warp_cta[w]
            if c == C_BAR:
                bar_wait[w] = True
                bar_release[w] = INF
                cta_arrived[cta] += 1
                cta_bar_proc[cta] = max(cta_bar_proc[cta], t) + bar_arrive
            pc[w] = r + 1
            op_last[w] = rows[r, R_OP]
            op_at[w] = rows[min(r + 1, warp_start[w + 1] - 1), R_OP]
            if r + PREFETCH_ROWS < n_rows:
                # the warp's rows ahead (its next row is read next cycle, and a load takes longer)
                _prefetch(rows, r + PREFETCH_ROWS)
                _prefetch(rb_wait, r + 4 * PREFETCH_ROWS)
                _prefetch(ready, r + 4 * PREFETCH_ROWS)
                _prefetch(issue_cycle, r + 4 * PREFETCH_ROWS)
            if pc[w] >= warp_start[w + 1]:
                cta_live[cta] -= 1
            if cta_arrived[cta] > 0 and cta_arrived[cta] >= cta_live[cta]:
                rel = max(t, cta_bar_proc[cta]) + bar_release_lat
                for w2 in range(cta_warp_start[cta], cta_warp_start[cta + 1]):
                    if bar_wait[w2] and not finished[w2]:     # (a finished warp's recheck stays INF)
                        bar_release[w2] = rel
                        recheck[w2] = 0
                cta_arrived[cta] = 0
                wake = min(wake, rel)

        # fills that landed take their cycles of the data pipe, from when they landed
        while chg_cnt > 0 and chg_t[chg_head] <= t:
            shared_free = max(shared_free, chg_t[chg_head]) + chg_n[chg_head]
            chg_head = (chg_head + 1) % chg_t.shape[0]
            chg_cnt -= 1
        # ---- shared pipe: one wavefront and shared_wb register writes per cycle per SM; a warp's
        # load returns one wavefront per shared_cpw cycles and one register write per cycle
        # the LG queue head L1TEX takes next, if it is free: the one issued first (ties: lowest SMSP) among the
        # SMSPs whose own path into it is free; and where that load is served from now: a hit whose provider
        # miss has not reached L1TEX fetches the line in its stead (the first such hit only), a miss whose
        # line such a hit already fetched is a hit on that fill, a store 0. Found once for both pipes below.
        g_l1, lv_g, fetch_g = -1, np.int64(0), False
        miss_wait = np.int64(0)
        if l1_free <= t and lg_q > 0:
            g_t = INF
            for s2 in range(n_smsp):
                if lg_cnt[s2] > 0 and smsp_l1_free[s2] <= t:
                    ti = issue_cycle[lg_buf[s2, lg_head[s2]]]
                    if in_order and mio_cnt[s2] > 0 and issue_cycle[mio_buf[s2, mio_head[s2]]] < ti:
                        continue        # behind an older shared instruction of its SMSP
                    if ti < g_t:
                        g_l1, g_t = s2, ti
            if g_l1 >= 0:
                rg = lg_buf[g_l1, lg_head[g_l1]]
                if rows[rg, R_CLS] == C_LDG:
                    lv_g = np.int64(rows[rg, R_LEVEL])
                    pg = provider[rg]
                    if lv_g == 0 and pg >= 0 and (row_mem[pg] & (M_TAKEN | M_FETCHED)) == 0:
                        lv_g, fetch_g = np.int64(rows[pg, R_LEVEL]), True
                    elif lv_g > 0 and (row_mem[rg] & M_FETCHED) != 0:
                        lv_g = np.int64(0)
                    if miss_cap > 0 and lv_g > 0:
                        miss_n, gone = _heap_pop_until(miss_heap, miss_heap_sec, miss_n, t)
                        miss_sec -= gone
                        if miss_n > 0 and (miss_n >= miss_cap or miss_sec + rows[rg, R_SECTORS] > miss_sec_cap):
                            miss_wait = miss_heap[0]
                            g_l1 = -1       # too few miss entries free: L1TEX waits with this head
        if shared_free <= t and mio_q > 0:
            s, s_t = -1, INF        # the MIO head issued first (ties: lowest SMSP)
            for s2 in range(n_smsp):
                if mio_cnt[s2] > 0:
                    ti = issue_cycle[mio_buf[s2, mio_head[s2]]]
                    if in_order and lg_cnt[s2] > 0 and issue_cycle[lg_buf[s2, lg_head[s2]]] < ti:
                        continue        # behind an older global instruction of its SMSP
                    if ti < s_t:
                        s, s_t = s2, ti
            lg_first = (s >= 0 and data_unified and g_l1 >= 0 and lv_g == 0
                        and (not last_dp_global if dp_turns else issue_cycle[lg_buf[g_l1, lg_head[g_l1]]] < s_t))
            if lg_first:
                # one data pipe for both: a global request waiting at L1TEX that needs the pipe now (a
                # hit or a store; a miss uses it when its fill lands) goes first, by turn (or age)
                s = -1
            if s >= 0:
                r = mio_buf[s, mio_head[s]]
                mio_head[s] = (mio_head[s] + 1) % mio_depth
                mio_cnt[s] -= 1
                last_dp_global = False
                mio_q -= 1
                wake = min(wake, t + 1)                  # a queue slot freed: throttled warps may issue
                n = max(np.int64(rows[r, R_WF]), np.int64(1))
                w = rows[r, R_WARP]
                t_w = max(t, warp_shared_free[w])       # the warp's earlier loads still returning
                n_warp = shared_cpw * n                 # its return path: 2 cycles a wavefront, any width
                if rows[r, R_CLS] == C_LDS:
                    regs = np.int64(rows[r, R_LAT])      # registers written per lane (lower.py)
                    n_sm = max(n, (regs + shared_wb - 1) // shared_wb)
                    done = t_w + n_warp - shared_cpw + lds_lat
                else:
                    n_sm = n
                    done = t_w + n_warp
                shared_free = t + n_sm
                warp_shared_free[w] = t_w + n_warp
                counters[K_SHARED_BUSY] += n          # wavefronts, as ncu counts them
                # the take: the row's data return and its queue entry's release (at the return, or at t when
                # entries free as the pipe takes them), the warp's outstanding memory work, and the in-order
                # LSU queue's register reads (the take, and the entry that moves up to the read_ahead-th
                # place). Written out here and at L1TEX: as a function, even inlined, its array arguments
                # cost two atomic reference counts each per call (written out: regtile2d 1.09x faster)
                ready[r] = done
                if rows[r, R_CLS] == C_LDS:     # the loads' latencies, summed as they are known
                    counters[K_LDS_LAT] += done - issue_cycle[r]
                    counters[K_LDS_N] += 1
                rel = ready[r] if at_return else t
                mio_ret[s, mio_rn[s]] = rel
                mio_rn[s] += 1
                wt = np.int64(rows[r, R_WARP])
                pending_mem[wt] -= 1
                mem_done[wt] = max(mem_done[wt], ready[r])
                recheck[wt] = 0          # its scoreboard or drain now has a time
                row_mem[r] |= M_READ | M_TAKEN
                if read_ahead > 0:
                    lsu_head[s] = (lsu_head[s] + 1) % lsu_ring.shape[1]
                    lsu_cnt[s] -= 1
                    if lsu_cnt[s] >= read_ahead:
                        r2 = lsu_ring[s, (lsu_head[s] + read_ahead - 1) % lsu_ring.shape[1]]
                        if (row_mem[r2] & M_READ) == 0:
                            row_mem[r2] |= M_READ
                            recheck[rows[r2, R_WARP]] = 0
                # the barrier it sits on counts one fewer untaken load, and its data return
                if sb_on and row_sb[r] >= 0 and row_gen[r] == sb_gen[w, row_sb[r]]:
                    bb = row_sb[r]
                    sb_untaken[w, bb] -= 1
                    if done > sb_ready[w, bb]:
                        sb_ready[w, bb] = done
                mio_nr = min(mio_nr, rel)
                mio_nr_s[s] = min(mio_nr_s[s], rel)
                wake = min(wake, done)
        if mio_q > 0:
            wake = min(wake, max(t + 1, shared_free))
        # ---- L1TEX: one request and l1_sectors sectors per cycle per SM; L2/DRAM fill path
        l1_blocked = False      # the oldest head waits for the data pipe: nothing at L1TEX moves before it frees
        if l1_free <= t and lg_q > 0:
            s = g_l1
            lv, fetch_for_p = np.int64(0), False
            if s >= 0:
                lv, fetch_for_p = lv_g, fetch_g
                if data_unified and lv == 0 and shared_free > t:
                    s = -1          # a hit (or store) needs the data pipe now; it is busy
                    l1_blocked = True
            if s >= 0:
                r = lg_buf[s, lg_head[s]]
                lg_head[s] = (lg_head[s] + 1) % lg_depth
                lg_cnt[s] -= 1
                if grant_untaken and lg_untaken >= lg_untaken_cap:
                    # the cap was what held the pool: its waiters may now have room (else they wait on
                    # the entries until return, which a take does not free)
                    _clear_recheck(state, recheck, S_LG_POOL, S_LG_POOL)
                lg_untaken -= 1
                if lv == 0:
                    last_dp_global = True
                lg_q -= 1
                wake = min(wake, t + 1)                  # a queue slot freed: throttled warps may issue
                sec = np.int64(rows[r, R_SECTORS])
                n = max((sec + l1_sectors - 1) // l1_sectors, (np.int64(rows[r, R_LINES]) + l1_lines - 1) // l1_lines,
                        np.int64(1))
                l1_free = t + n
                n_data = max(np.int64(rows[r, R_LINES]), np.int64(1))
                if data_unified and lv == 0:    # its lines pass the data pipe the shared wavefronts use
                    shared_free = t + n_data
                smsp_l1_free[s] = t + l1_cpl * n
                counters[K_L1_BUSY] += n
                fill_at = np.int64(0)
                if rows[r, R_CLS] == C_LDG:
                    if fetch_for_p:
                        row_mem[provider[r]] |= M_FETCHED
                    done = t + l1_cpl * (n - 1) + level_lat[lv]
                    if lv > 0:
                        # L2 -> L1 (every miss of L1), and DRAM -> L2 (misses of L2): in-order
                        # servers at the SM's share of the chip's bandwidth, FP sub-cycle units
                        nbytes = sec * sector_bytes
                        fill = max(nbytes * FP * FP // l2_share, (nbytes * FP + fill_bytes - 1) // fill_bytes)
                        fill_free = max(fill_free, t * FP) + fill
                        done_fp = max(done * FP, fill_free)
                        if lv == 2:
                            dram_free = max(dram_free, t * FP) + nbytes * FP * FP // dram_share
                            done_fp = max(done_fp, dram_free)
                        done = (done_fp + FP - 1) // FP
                        counters[K_FILL_BUSY] += fill // FP
                        for j in range(rows[r, R_LINE_LO], rows[r, R_LINE_HI]):
                            line_ready[line_id[j]] = max(line_ready[line_id[j]], done)
                        if data_unified:
                            # the fill's lines pass the data pipe when they land
                            if chg_cnt == chg_t.shape[0]:       # (full: book the oldest now)
                                shared_free = max(shared_free, chg_t[chg_head]) + chg_n[chg_head]
                                chg_head = (chg_head + 1) % chg_t.shape[0]
                                chg_cnt -= 1
                            k_c = (chg_head + chg_cnt) % chg_t.shape[0]
                            chg_t[k_c] = done - n_data
                            chg_n[k_c] = n_data
                            chg_cnt += 1
                    else:
                        # an L1 hit on a line whose fill is still on its way waits for the fill
                        for j in range(rows[r, R_LINE_LO], rows[r, R_LINE_HI]):
                            fill_at = max(fill_at, line_ready[line_id[j]])
                else:
                    done = t + l1_cpl * n
                    if write_fp[0] > 0:
                        # the store's sectors go to the L2 at the SM's share of its write rate (by how they
                        # fill their sectors); the LG entry holds until the L2 takes them
                        kind = (rows[r, R_FLAGS] >> WRITE_SHIFT) & 3
                        write_free = max(write_free, t * FP) + sec * write_fp[kind]
                        done = max(done, (write_free + FP - 1) // FP)
                    if (rows[r, R_FLAGS] & F_WRITEBACK) != 0 and dram_write_share > 0:
                        # a store the L2 will write back to DRAM: the store does not wait for it, but its
                        # bytes take the SM's share of the DRAM bandwidth from the loads behind it
                        dram_free = max(dram_free, t * FP) + sec * sector_bytes * FP * FP // dram_write_share
                # the take's bookkeeping, as at the shared pipe
                ready[r] = max(done, fill_at)
                # the entry counts until the data returns (at_return): for a hit on a line still on its
                # way, until the fill (hit_to_fill) or until the hit's own return from L1TEX
                rel = (ready[r] if hit_to_fill else done) if at_return else t
                if miss_cap > 0 and lv > 0 and rows[r, R_CLS] == C_LDG:
                    miss_n = _heap_push(miss_heap, miss_heap_sec, miss_n, done, sec)   # its entries until the fill
                    miss_sec += sec
                    rel = t                                                         # its queue entry until the take
                lg_ret[s, lg_rn[s]] = rel
                lg_rn[s] += 1
                wt = np.int64(rows[r, R_WARP])
                pending_mem[wt] -= 1
                mem_done[wt] = max(mem_done[wt], ready[r])
                recheck[wt] = 0          # its scoreboard or drain now has a time
                row_mem[r] |= M_READ | M_TAKEN
                if read_ahead > 0:
                    lsu_head[s] = (lsu_head[s] + 1) % lsu_ring.shape[1]
                    lsu_cnt[s] -= 1
                    if lsu_cnt[s] >= read_ahead:
                        r2 = lsu_ring[s, (lsu_head[s] + read_ahead - 1) % lsu_ring.shape[1]]
                        if (row_mem[r2] & M_READ) == 0:
                            row_mem[r2] |= M_READ
                            recheck[rows[r2, R_WARP]] = 0
                if fill_at > done:
                    # its data waits for the fill
                    ready[r] = fill_at
                    mem_done[wt] = max(mem_done[wt], fill_at)
                    wake = min(wake, fill_at)
                if rows[r, R_CLS] == C_LDG:
                    counters[K_LDG_LAT] += ready[r] - issue_cycle[r]
                    counters[K_LDG_N] += 1
                if sb_on and row_sb[r] >= 0 and row_gen[r] == sb_gen[wt, row_sb[r]]:
                    bb = row_sb[r]
                    sb_untaken[wt, bb] -= 1
                    if ready[r] > sb_ready[wt, bb]:
                        sb_ready[wt, bb] = ready[r]
                lg_nr = min(lg_nr, rel)
                lg_nr_s[s] = min(lg_nr_s[s], rel)
                wake = min(wake, done)
        if lg_q > 0:
            for s in range(n_smsp):
                if lg_cnt[s] > 0:
                    wk = max(t + 1, l1_free, smsp_l1_free[s], miss_wait)
                    if l1_blocked and smsp_l1_free[s] <= t:
                        wk = max(wk, shared_free)   # behind the blocked oldest head until the pipe frees
                    wake = min(wake, wk)

        # ---- the waiter groups: the members' state this cycle is their head's (not_selected if it issued);
        # when the head has issued, the earliest member takes its place with its share of the group's cycles
        if grp and grp_on:
            for gi in range(n_grp):
                h = grp_head[gi]
                if h < 0:
                    continue
                s = gi // 2
                ns = state[h]
                gone_h = ns == S_SELECTED
                if gone_h:
                    ns = S_NOT_SELECTED
                if ns != grp_state[gi]:
                    gs = grp_state[gi]
                    cur = 0 if gs == S_NOT_SELECTED else (1 if gs >= S_MIO_POOL else 2)
                    grp_cum[gi, cur] += t - grp_since[gi]
                    grp_cum_lat[gi, cur] += lat_cum[s] - grp_lat_since[gi]
                    grp_state[gi] = ns
                    grp_since[gi] = t
                    grp_lat_since[gi] = lat_cum[s]
                if not gone_h:
                    continue
                if grp_n[gi] == 0:
                    grp_head[gi] = -1
                    continue
                jm = 0                                  # the member first in the FIFO
                for j in range(1, grp_n[gi]):
                    if thr_since[grp_mem[gi, j]] < thr_since[grp_mem[gi, jm]]:
                        jm = j
                w = grp_mem[gi, jm]
                grp_n[gi] -= 1
                grp_mem[gi, jm] = grp_mem[gi, grp_n[gi]]
                # its cycles as a member, through this one (the head issued: something issued, so the next
                # cycle is t + 1; this cycle's latency count is added to lat_cum at the advance below)
                lat_next = lat_cum[s] + (0 if smsp_active[s] else 1)
                op = op_at[w]
                for j in range(3):
                    stj = S_NOT_SELECTED if j == 0 else ((S_MIO_POOL if j == 1 else S_MIO_THROTTLE) if gi % 2 == 0
                                                         else (S_LG_POOL if j == 1 else S_LG_THROTTLE))
                    n0 = grp_cum[gi, j] + (t + 1 - grp_since[gi] if j == 0 else 0) - mem_cum[w, j]
                    counts[w, stj] += n0
                    op_counts[op, stj] += n0
                    if lat_on:
                        lat_counts[w, stj] += (grp_cum_lat[gi, j] + (lat_next - grp_lat_since[gi] if j == 0 else 0)
                                               - mem_cum_lat[w, j])
                state[w] = S_NOT_SELECTED
                since[w] = t + 1
                lat_since[w] = lat_next
                recheck[w] = 0
                grp_head[gi] = w

        # ---- advance: to the next cycle, or past cycles in which nothing can change
        if n_left == 0:
            break
        # a throttled warp waits for the next queue entry to free (its recheck is INF until then)
        nxt = t + 1 if issued else max(min(wake, mio_nr, lg_nr), t + 1)
        if nxt >= INF:
            counters[K_DEADLOCK] = 1
            break
        t_next = t + 1 if no_skip else nxt
        if lat_on:
            for s in range(n_smsp):     # this cycle and the skipped ones (nothing issues in them): latency cycles
                lat_cum[s] += (0 if smsp_active[s] else 1) + (t_next - t - 1)
                smsp_active[s] = False
        t = t_next

    cycles = np.int64(0)
    for w in range(n_warps):
        if finish[w] > cycles:
            cycles = finish[w]
    # the SM's share of DRAM is still busy with the write-backs of its stores: the CTAs that follow on this
    # SM (the next round) find it so, and their loads wait behind them; a round ends when both are done
    drain = (max(dram_free, write_free) + FP - 1) // FP
    if drain > cycles:
        cycles = drain
    return cycles, counts, issue_cycle, finish, counters, op_counts, lat_counts, n_log, ready


guard_cache(globals())     # a damaged numba cache file is compiled again, with a notice (gpusim.jit)
