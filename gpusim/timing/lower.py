"""Lower a trace to what the cycle engine needs: flat per-row costs, grouped by warp.

Rows are taken as given, once each: a row's `weight` (loop iterations or CTAs a
sampled trace stands for) is ignored, so give the engine a full-mode trace
(`gpusim.simulate(..., mode="full", keep_trace=True).trace`) or accept that only
the sampled iterations are timed. Rows of the chosen CTAs are sorted into warps
in program order (by `seq`); each source sequence number is remapped to the row
of the same warp that produced it (-1 where that warp did not execute it).
"""
from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numba import njit

from gpusim.arch import GPU
from gpusim.errors import GpusimError
from gpusim.kernel.opcodes import TABLE, SPACE_GLOBAL, SPACE_LOCAL, SPACE_SHARED
from gpusim.timing import rows as R
from gpusim.timing.control_codes import row_gaps
from gpusim.timing.register_banks import row_banks
from gpusim.memory.counters import cost_trace
from gpusim.trace.trace import Trace
from gpusim.jit import guard_cache

LEVEL_L1, LEVEL_L2, LEVEL_DRAM, LEVEL_L2_PENDING = 0, 1, 2, 3


@dataclass
class Lowered:
    ctas: np.ndarray            # trace CTA id of each slot, in slot (launch) order
    warp_start: np.ndarray      # rows of warp i: warp_start[i]:warp_start[i+1]
    warp_cta: np.ndarray        # CTA slot of each warp
    warp_in_cta: np.ndarray     # warp index inside its CTA
    warp_sm: np.ndarray         # SM warp slot (CTA slot * warps per CTA + warp in CTA)
    warp_smsp: np.ndarray       # sub-partition: warp_sm % smsp_per_sm
    cta_warp_start: np.ndarray  # warps of CTA slot c: cta_warp_start[c]:cta_warp_start[c+1]
    smsp_warps: np.ndarray      # warps of SMSP s, oldest first: smsp_warps[smsp_start[s]:smsp_start[s+1]]
    smsp_start: np.ndarray
    cls: np.ndarray             # rows.C_* row class
    unit: np.ndarray            # rows.U_* math pipe
    lat: np.ndarray             # fixed result latency, cycles
    wf: np.ndarray              # shared wavefronts
    sectors: np.ndarray         # global sectors
    lines: np.ndarray           # distinct 128-B lines of a global access
    level: np.ndarray           # where a global load's data comes from (LEVEL_*): the cache-model hook
    gap: np.ndarray             # cycles before the warp may issue its next row (ptxas's stall count; 1: none)
    line_ptr: np.ndarray        # global loads' 128-B lines: row r's are line_id[line_ptr[r]:line_ptr[r+1]]
    line_id: np.ndarray         # (dense ids, shared by rows that touch the same line)
    dep: np.ndarray             # (rows, 3) producer rows, -1 none
    op: np.ndarray              # opcode id of each row (into opcodes)
    opcodes: list               # the trace's opcode names
    row_warp: np.ndarray        # warp of each row
    trace_row: np.ndarray       # index of each row in the input trace
    params: np.ndarray          # rows.P_* vector
    sampled_rows: int           # rows with weight > 1 (timed once each)
    bar_hold: np.ndarray        # 1: the row waits for a pending barrier's release (memory, control, ADU)
    rb_wait: np.ndarray         # memory row whose register read (ptxas's read barrier) the row waits for, -1
    provider: np.ndarray        # per L1-hit global load: the miss that brings its line into L1, -1 none
    banks: np.ndarray           # per FP32 row: its register reads (register_banks.pack), 0 none
    writeback: np.ndarray = None   # per row: a global store whose sectors the L2 writes back to DRAM
    write_kind: np.ndarray = None  # per row: how a global store fills its sectors (rows.W_FULL/W_SECTOR/W_LINE)
    short_result: np.ndarray = None  # per row: its result comes back on a scoreboard (SHFL, XU): short_scoreboard
    cta_next: np.ndarray = None    # per CTA slot: the slot of the CTA that starts when it ends, -1 none

    @cached_property
    def rows(self) -> np.ndarray:
        """The engine's packed (n, ROW_STRIDE) int32 row matrix (rows.pack_rows), built once."""
        return R.pack_rows(self.cls, self.unit | self.banks << R.UNIT_BITS, self.lat, self.wf, self.sectors,
                           self.lines, self.level, self.gap, self.line_ptr, self.dep, self.row_warp, self.op,
                           self.bar_hold, self.writeback, self.write_kind, self.short_result)


def _op_tables(opcodes: list[str], arch: GPU):
    """Per opcode id: engine class, math pipe, fixed latency, whether it waits for a pending barrier, and
    whether its result comes back on a scoreboard (SHFL through the MIO, MUFU and the other XU ops, S2R, S2UR
    and LDC: a warp waiting on it shows short_scoreboard, as ncu counts it, not wait). The pending barrier
    (BAR.SYNC.DEFER_BLOCKING) lets a warp past the barrier until a memory, control (CBU) or ADU
    instruction: ncu's PC samples put barrier stalls at the LDS / BRA after it, with integer and uniform
    ops issued in between (micro/lds_bursts_order.json, the clock read after the barrier)."""
    n = len(opcodes)
    hold = np.zeros(n, np.int8)
    cls = np.full(n, R.C_FIXED, np.int8)
    unit = np.full(n, R.U_NONE, np.int8)
    lat = np.full(n, arch.other_latency_cycles, np.int32)
    short = np.zeros(n, bool)
    pipe = np.full(n, -1, np.int64)      # an MIO op's cycles of the shared pipe; -1: its row's wavefronts
    fma_lat = int(round(arch.ffma_dependent_latency_cycles))
    for i, name in enumerate(opcodes):
        op = TABLE[TABLE.id(name, atomic_ok=True)]     # a trace's atomics came with their addresses
        hold[i] = op.space != 0 or op.pipe in ("cbu", "adu") or op.is_barrier
        if op.space == SPACE_SHARED:
            cls[i] = R.C_STS if op.is_store else R.C_LDS
            # a shared load's "latency" column holds the registers it writes per lane (rows.R_LAT)
            lat[i] = 0 if op.is_store else max(1, op.bytes_per_lane // 4)
        elif op.space in (SPACE_GLOBAL, SPACE_LOCAL):    # local memory (spills) takes the LG path as global
            cls[i] = R.C_STG if op.is_store else R.C_LDG
        elif op.is_barrier:
            cls[i] = R.C_BAR
        elif op.base == "EXIT":
            cls[i] = R.C_EXIT
        elif op.base in ("S2R", "SHFL") and arch.special_ops_through_mio:
            # through the SMSP's MIO queue (micro/mio_special.json): the shared-load class with minus its
            # latency in the latency column and its cycles of the shared pipe in the wavefront one (pipe)
            cls[i], short[i] = R.C_LDS, True
            lat[i] = -(arch.shfl_latency_cycles if op.base == "SHFL" else arch.s2r_latency_cycles)
            pipe[i] = arch.shfl_shared_pipe_cycles if op.base == "SHFL" else 0
        elif op.base in ("S2R", "S2UR"):       # special registers: a variable-latency result, waited on a scoreboard
            lat[i], short[i] = arch.s2r_latency_cycles, True
        elif op.base == "LDC":                  # a constant-cache load, likewise
            lat[i], short[i] = arch.ldc_latency_cycles, True
        elif op.pipe == "fma":
            unit[i], lat[i] = R.U_FMA, fma_lat
        elif op.pipe == "fmaheavy":
            unit[i], lat[i] = R.U_HEAVY, arch.imad_latency_cycles
        elif op.pipe == "alu":
            unit[i], lat[i] = R.U_ALU, arch.alu_latency_cycles
        elif op.pipe == "xu":
            unit[i], lat[i], short[i] = R.U_XU, arch.xu_latency_cycles, True
        elif op.base == "SHFL":
            lat[i], short[i] = arch.shfl_latency_cycles, True
    return cls, unit, lat, hold, short, pipe


def l2_pending_latency_cycles(arch: GPU) -> float:
    """Latency of an L2 hit on a line whose fill from DRAM (another SM's miss) is still on its way
    (LEVEL_L2_PENDING): it gets its data with that fill, so it waits what is left of the DRAM
    latency D, and no less than an L2 hit (L). The cache model counts such hits when they come
    within D - L of the miss (memory.cache.l2_simulate); taking their arrivals as spread evenly over
    that window, the mean wait is (D + L) / 2. Both latencies are measured (the preset's), nothing
    is fitted; the even spread is an assumption (the model's schedule does not resolve phases finer
    than a CTA's round)."""
    dram = arch.dram_latency_ns * arch.sm_clock_max_mhz / 1000.0
    return max(arch.l2_hit_latency_cycles, (dram + arch.l2_hit_latency_cycles) / 2)


def l2_pending_window_ns(arch: GPU) -> float:
    """How long after another CTA's miss began an L2 hit on its line still waits for that fill: D - L,
    the DRAM latency less an L2 hit's (later, the L2 hit is as quick), in ns."""
    return max(0.0, arch.dram_latency_ns - arch.l2_hit_latency_cycles * 1000.0 / arch.sm_clock_max_mhz)


def engine_params(arch: GPU, active_sms: int | None = None,
                  stall_counts: bool = False, scoreboards: dict | None = None) -> np.ndarray:
    """The engine's parameter vector. active_sms: SMs sharing the chip's L2 and DRAM bandwidth
    (default all of them). stall_counts: the rows carry ptxas's stall counts, which hold the
    gap between back-to-back memory instructions themselves: mem_issue_interval is then off.
    scoreboards: {"global": k, "shared": k}, how many of a warp's 6 dependency barriers ptxas gives
    global / shared loads (control_codes.scoreboard_table); none: each load its own."""
    if arch.shared_wavefronts_per_sm_cycle != 1.0:
        raise GpusimError("the timing engine assumes one shared wavefront per cycle per SM")
    if min(arch.mio_queue_depth, arch.lg_queue_depth) < 1:
        raise GpusimError("MIO and LG queue depths must be at least 1")
    if arch.lg_sm_miss_depth < 0 or (arch.lg_sm_miss_depth > 0 and arch.lg_sm_miss_sectors < 1):
        raise GpusimError("lg_sm_miss_depth must be 0 (no miss entries) or more, with lg_sm_miss_sectors 1 or "
                          f"more; got {arch.lg_sm_miss_depth} and {arch.lg_sm_miss_sectors}")
    if arch.lg_sm_untaken_depth < 0:
        raise GpusimError(f"lg_sm_untaken_depth must be 0 (no cap) or more, got {arch.lg_sm_untaken_depth}")
    # the engine divides by these (numba's numpy error model: a zero would not raise there)
    for name in ("l1_sectors_per_sm_cycle", "l1_data_lines_per_cycle", "shared_writeback_regs_per_sm_cycle",
                 "warp_shared_cycles_per_wavefront", "smsp_l1_cycles_per_line"):
        if getattr(arch, name) < 1:
            raise GpusimError(f"{name} must be at least 1, got {getattr(arch, name)}")
    p = np.zeros(R.N_PARAMS, np.int64)
    p[R.P_FMA_INTERVAL] = arch.fma_subpipe_issue_interval_cycles
    p[R.P_ALU_INTERVAL] = arch.alu_issue_interval_cycles
    p[R.P_XU_INTERVAL] = arch.xu_issue_interval_cycles
    p[R.P_MIO_DEPTH] = arch.mio_queue_depth
    p[R.P_LG_DEPTH] = arch.lg_queue_depth
    p[R.P_LDS_LAT] = round(arch.lds_latency_cycles)
    p[R.P_L1_LAT] = round(arch.l1_hit_latency_cycles)
    p[R.P_L2_LAT] = round(arch.l2_hit_latency_cycles)
    p[R.P_DRAM_LAT] = round(arch.dram_latency_ns * arch.sm_clock_max_mhz / 1000.0)
    p[R.P_PEND_LAT] = round(l2_pending_latency_cycles(arch))
    p[R.P_L1_SECTORS] = round(arch.l1_sectors_per_sm_cycle)
    p[R.P_FILL_BYTES] = arch.l2_to_l1_bytes_per_sm_cycle
    p[R.P_SECTOR_BYTES] = arch.sector_bytes
    p[R.P_BAR_RELEASE] = arch.bar_sync_release_cycles
    p[R.P_SWITCH_FMA] = int(arch.fma_warp_switch_bubble)
    p[R.P_RF_LEAD] = arch.register_read_lead_cycles
    p[R.P_MEM_ISSUE_IV] = 1 if stall_counts else arch.mem_issue_interval_cycles
    p[R.P_WARP_SHARED_CPW] = arch.warp_shared_cycles_per_wavefront
    p[R.P_SHARED_WB] = arch.shared_writeback_regs_per_sm_cycle
    sb = scoreboards or {}
    p[R.P_SB_GLOBAL] = int(sb.get("global", 0))
    p[R.P_SB_SHARED] = int(sb.get("shared", 0))
    p[R.P_SMSP_L1_CPL] = arch.smsp_l1_cycles_per_line
    p[R.P_DATA_PIPE_UNIFIED] = int(arch.shared_and_global_share_data_pipe)
    p[R.P_LSU_IN_ORDER] = int(arch.lsu_queue_in_order)
    p[R.P_DATA_PIPE_TURNS] = int(arch.data_pipe_clients_take_turns)
    p[R.P_LSU_READ_AHEAD] = arch.lsu_queue_read_ahead
    p[R.P_QUEUE_AT_RETURN] = int(arch.queue_entry_until_return)
    p[R.P_HIT_HOLDS_TO_FILL] = int(arch.pending_hit_entry_until_fill)
    p[R.P_MIO_SM_DEPTH] = arch.mio_sm_queue_depth
    p[R.P_LG_SM_DEPTH] = arch.lg_sm_queue_depth
    p[R.P_LG_SM_UNTAKEN] = arch.lg_sm_untaken_depth
    p[R.P_LG_SM_MISSES] = arch.lg_sm_miss_depth
    p[R.P_LG_SM_MISS_SECTORS] = arch.lg_sm_miss_sectors
    p[R.P_L1_LINES] = arch.l1_data_lines_per_cycle
    p[R.P_BAR_ARRIVE] = arch.bar_sync_arrive_cycles
    # a CTA that follows another in its slot (lower's slots): the block scheduler's refill
    cyc_per_ns = arch.sm_clock_max_mhz / 1000.0
    p[R.P_SLOT_GAP] = round(arch.cta_slot_gap_ns * cyc_per_ns)
    p[R.P_CTA_DISPATCH] = round(arch.cta_dispatch_ns * cyc_per_ns)
    n_sm = max(1, min(active_sms or arch.sm_count, arch.sm_count))
    hz = arch.sm_clock_max_mhz * 1e6
    l2_bpc = min(arch.l2_bandwidth_gbps * 1e9 / n_sm / hz, float(arch.l2_to_l1_bytes_per_sm_cycle))
    dram_bpc = min(arch.dram_achieved_bandwidth_gbps * 1e9 / n_sm / hz, l2_bpc)
    p[R.P_L2_SHARE_FP] = max(1, round(l2_bpc * R.FP))
    p[R.P_DRAM_SHARE_FP] = max(1, round(dram_bpc * R.FP))
    p[R.P_WRITE_SHARES_L2] = int(arch.l2_writes_share_read_bandwidth)
    p[R.P_L2_IN_ORDER] = int(arch.l2_requests_in_order)
    p[R.P_WRITE_BUFFER] = arch.l2_write_buffer_sectors
    # DRAM writes (write-backs of stored lines): a written byte costs what the copy bandwidth leaves of
    # two bytes' time after the read (micro/bandwidth_dram.json: read 4328.9, copy 4101.1 GB/s read+write)
    # (a copy at twice the read rate or faster leaves writes nothing: 0, they take no bandwidth)
    per_write = 2.0 / arch.dram_copy_bandwidth_gbps - 1.0 / arch.dram_achieved_bandwidth_gbps
    p[R.P_DRAM_WRITE_SHARE_FP] = (max(1, round(min(1e9 / per_write / n_sm / hz, l2_bpc) * R.FP))
                                  if per_write > 0 else 0)
    # global stores into the L2, per sector, at the SM's share of the chip's write rates (micro/l2_write.json:
    # whole sectors, 4 B in each of a line's sectors, 4 B in one sector per line); 0 leaves them free
    for k, rate in ((R.P_WRITE_FULL_FP, arch.l2_write_gsectors_per_s),
                    (R.P_WRITE_SECTOR_FP, arch.l2_partial_sector_write_gsectors_per_s),
                    (R.P_WRITE_LINE_FP, arch.l2_partial_line_write_gsectors_per_s),
                    (R.P_WRITE_FILL_FP, arch.l2_filled_line_write_gsectors_per_s)):
        p[k] = round(n_sm * hz / (rate * 1e9) * R.FP) if rate > 0 else 0
    return p


def _load_lines(trace: Trace, take: np.ndarray, line_bytes: int, op=None, mem=None, dense: bool = True):
    """CSR of the distinct lines each lowered row's global load touches (none for other rows),
    with dense line ids (each line's rank among the trace's lines): the engine's record of which lines
    are in flight from L2 / DRAM. op, mem: the taken rows' opcode ids and address rows, where the caller
    has them (lower's _gather); else read from the trace. dense=False: the line numbers themselves."""
    # the two columns it reads, not the taken rows whole (a copy of every field: most of its time)
    if op is None:
        op = trace.rows["op"][take].astype(np.int64)
        mem = trace.rows["mem"][take]
    space, is_store, _, _, _ = TABLE.arrays()
    sel = np.flatnonzero(np.isin(space[op], (SPACE_GLOBAL, SPACE_LOCAL)) & ~is_store[op] & (mem >= 0))
    counts = np.zeros(len(take), np.int64)
    if sel.size == 0:
        return np.zeros(len(take) + 1, np.int64), np.zeros(0, np.int64)
    lines = np.empty(sel.size * trace.addr.shape[1], np.int64)
    n = _row_lines(trace.addr, mem[sel].astype(np.int64), np.int64(line_bytes), sel.astype(np.int64), counts, lines)
    lines = lines[:n]
    return np.r_[0, np.cumsum(counts)].astype(np.int64), _dense_ids(lines) if dense else lines


@njit(cache=True, nogil=True)
def _row_lines(addr, mem, line_bytes, sel, counts, out):
    """For each selected row (its address row mem[i]): its distinct lines, ascending, appended to out;
    counts[sel[i]] their number. Returns how many were written. (numpy sorted every row's 32 lanes and
    took the unique lines of the whole trace at once: 1.3-2 s of naive's 6.6 M at 4096.)"""
    buf = np.empty(addr.shape[1], np.int64)
    n = 0
    for i in range(mem.shape[0]):
        k = 0
        for lane in range(addr.shape[1]):
            a = addr[mem[i], lane]
            if a < 0:
                continue
            ln = a // line_bytes
            j = k                         # insertion into the sorted distinct lines so far
            while j > 0 and buf[j - 1] > ln:
                j -= 1
            if j > 0 and buf[j - 1] == ln:
                continue
            for q in range(k, j, -1):
                buf[q] = buf[q - 1]
            buf[j] = ln
            k += 1
        for q in range(k):
            out[n + q] = buf[q]
        n += k
        counts[sel[i]] = k
    return n


DENSE_TABLE_MAX = 1 << 26      # line ranges up to this many lines are ranked through a table (1 B a line)


def _dense_ids(lines: np.ndarray) -> np.ndarray:
    """Each line's rank among the distinct lines (np.unique's inverse): through a table of the range's
    lines where the lines are many for their range (linear time), else by np.unique (a sort of the few)."""
    if lines.size == 0:
        return lines.astype(np.int64)
    lo, hi = int(lines.min()), int(lines.max())
    if hi - lo >= DENSE_TABLE_MAX or lines.size * 16 < hi - lo:
        return np.unique(lines, return_inverse=True)[1].astype(np.int64)
    out = np.empty(lines.size, np.int64)
    _rank_in_range(np.ascontiguousarray(lines, np.int64), np.int64(lo), np.int64(hi - lo + 1), out)
    return out


@njit(cache=True, nogil=True)
def _rank_in_range(lines, lo, span, out):
    """_dense_ids' table: which of the span lines from lo are present, their ranks, each line's rank. (In
    numpy: two int64 tables of the span and two copies of the lines, 0.46 s of naive's 6.6 M at 8192.)"""
    present = np.zeros(span, np.uint8)
    for i in range(lines.shape[0]):
        present[lines[i] - lo] = 1
    rank = np.empty(span, np.int32)
    r = -1
    for j in range(span):
        r += present[j]
        rank[j] = r
    for i in range(lines.shape[0]):
        out[i] = rank[lines[i] - lo]


def read_waits(op: np.ndarray, cls: np.ndarray, row_warp: np.ndarray, opcodes: list, table) -> np.ndarray:
    """Per lowered row: the memory row whose pipe-take it waits for (ptxas's read barriers), -1 none.

    table: control_codes.read_barrier_table, each block's memory instructions and (i, d) pairs. A
    warp's memory rows are matched against the blocks' sequences, longest first, left to right
    without overlap; in each match the row d memory rows after the block's i-th waits for it (the
    latest producer when several point at one row). Rows no block matches wait for nothing."""
    out = np.full(len(op), -1, np.int64)
    mem = np.flatnonzero((cls >= R.C_LDS) & (cls <= R.C_STG))
    if not table or mem.size == 0:
        return out
    ids = {name: i for i, name in enumerate(opcodes)}
    kind, wid = op[mem].astype(np.int64), row_warp[mem]
    claimed = np.zeros(mem.size, bool)
    for names, pairs in table:
        pat = np.array([ids.get(x, -1) for x in names], np.int64)
        m = len(pat)
        if (pat < 0).any() or m > mem.size:
            continue
        win = np.lib.stride_tricks.sliding_window_view(kind, m)
        hit = np.flatnonzero((win == pat).all(axis=1) & (wid[:len(win)] == wid[m - 1:]))
        _claim_matches(hit, m, np.asarray(pairs, np.int64).reshape(-1, 2), claimed, wid, mem, out)
    return out


@njit(cache=True, nogil=True)
def _claim_matches(hit, m, pairs, claimed, wid, mem, out):
    """read_waits' left-to-right claim of one block's matches (a loop over every match: in Python it took
    0.06 s of a 16-trip window of coalesced at 2048, here 0.004 s)."""
    end = -1
    for s in hit:
        if s < end or claimed[s:s + m].any():
            continue
        claimed[s:s + m] = True
        end = s + m
        for q in range(pairs.shape[0]):
            i, d = pairs[q, 0], pairs[q, 1]
            j = s + i + d
            if j < mem.size and wid[j] == wid[s]:
                out[mem[j]] = max(out[mem[j]], mem[s + i])


def fill_providers(level: np.ndarray, line_ptr: np.ndarray, line_id: np.ndarray, order_key: np.ndarray) -> np.ndarray:
    """Per lowered row: for a global load the cache model calls an L1 hit, the latest earlier load (in
    the cache model's order, order_key) that missed on one of its lines, -1 if none: the fill it waits
    for. The engine's timeline need not follow that order (another warp's hit can reach L1TEX before
    the miss does); it then lets the hit fetch the line instead (l1tex.next_global)."""
    out = np.full(len(level), -1, np.int64)
    if line_id.size == 0:
        return out
    order = np.argsort(order_key, kind="stable")
    _providers(order, np.asarray(level, np.int8), line_ptr, line_id, np.asarray(order_key, np.int64),
               int(line_id.max()) + 1, out)
    return out


@njit(cache=True, nogil=True)
def _providers(order, level, line_ptr, line_id, order_key, n_lines, out):
    """fill_providers' walk in the cache model's order: each line's latest miss so far; a hit takes, of
    its lines' latest misses, the latest (numpy sorted every (row, line) pair by line and order: 0.6-2.8 s
    of naive at 4096)."""
    last = np.full(n_lines, -1, np.int64)
    for r in order:
        a, b = line_ptr[r], line_ptr[r + 1]
        if a == b:
            continue
        if level[r] > 0:
            for q in range(a, b):
                last[line_id[q]] = r
            continue
        best = -1
        for q in range(a, b):
            m = last[line_id[q]]
            if m >= 0 and (best < 0 or order_key[m] > order_key[best]):
                best = m
        out[r] = best


def _write_kinds(trace: Trace, take: np.ndarray, cls: np.ndarray) -> np.ndarray:
    """Per taken row: how a global store fills the sectors it writes. W_FULL: its bytes cover them all;
    W_LINE: one sector per line, partly (a strided store: a naive transpose's); W_FILL: such a store whose
    sectors the CTA's stores in the trace fill whole (the naive transpose's warps, each a float of the
    same sectors; micro/l2_write_fill.json); W_SECTOR: parts of several sectors of its lines."""
    kind = np.full(len(take), R.W_FULL, np.int8)
    st = np.flatnonzero(cls == R.C_STG)
    if st.size == 0:
        return kind
    # the stores' rows alone (taking every row copied them all: most of its time); positions in st
    rows = trace.rows[take[st]]
    _, _, nbytes, _, _ = TABLE.arrays()
    # the lanes on, from the row's mask (a hand-made trace may carry no addresses)
    lanes = np.unpackbits(rows["mask"].astype(">u4").view(np.uint8).reshape(-1, 4), axis=1).sum(axis=1)
    written = lanes * nbytes[rows["op"].astype(np.int64)]
    sec, lines = rows["sectors"].astype(np.int64), rows["lines"].astype(np.int64)
    partial = written < 32 * sec
    kind[st[partial & (lines >= sec)]] = R.W_LINE
    kind[st[partial & (lines < sec)]] = R.W_SECTOR
    line_rows = np.flatnonzero(partial & (lines >= sec))
    if line_rows.size:
        kind[st[line_rows[_filled(rows, line_rows, nbytes, trace.addr)]]] = R.W_FILL
    return kind


def _filled(rows, which: np.ndarray, nbytes: np.ndarray, addr: np.ndarray) -> np.ndarray:
    """For the store rows `which` (indices into `rows`, the stores): are all the sectors they write filled
    whole by the stores of the same CTA? (Bytes written per (CTA, 32-B sector), OR-ed over every store.)"""
    def lanes(idx):
        a = np.where(rows["mem"][idx, None] >= 0, addr[np.maximum(rows["mem"][idx], 0)], -1)
        ok = a >= 0
        r, _ = np.nonzero(ok)
        nb = nbytes[rows["op"][idx].astype(np.int64)][r].astype(np.int64)
        av = a[ok]
        key = rows["cta"][idx][r].astype(np.int64) * (1 << 44) + av // 32
        bits = ((np.int64(1) << nb) - 1) << (av % 32)
        return r, key, bits
    _, key, bits = lanes(np.arange(len(rows)))
    if key.size == 0:
        return np.zeros(len(which), bool)
    order = np.argsort(key, kind="stable")
    key, bits = key[order], bits[order]
    first = np.r_[True, key[1:] != key[:-1]]
    ukey = key[first]
    cover = np.bitwise_or.reduceat(bits, np.flatnonzero(first))
    full = cover == (np.int64(1) << 32) - 1
    r, k, _ = lanes(which)
    good = full[np.searchsorted(ukey, k)]
    out = np.ones(len(which), bool)
    np.logical_and.at(out, r, good)
    has = np.zeros(len(which), bool)
    has[r] = True
    return out & has


@njit(cache=True, nogil=True)
def _take_by_warp(cta, warp, seq, slot_of, wpc):
    """(take, wkey, span, in_order): the rows of the CTAs with a slot (slot_of >= 0), grouped by SM warp
    slot wkey = slot * wpc + warp (a counting sort: each group keeps the trace's order), span = the
    largest seq + 1; in_order: every group's seq never falls, so the groups are in program order as
    numpy's stable sort by (wkey, seq) would put them (else the caller sorts)."""
    n_slots = 0          # (a loop, not slot_of.max(): its empty-array error would carry numba's own path)
    for c in range(slot_of.shape[0]):
        n_slots = max(n_slots, slot_of[c] + 1)
    n_keys = n_slots * wpc
    start = np.zeros(n_keys + 1, np.int64)
    n, span = 0, 0
    for i in range(cta.shape[0]):
        s = slot_of[cta[i]]
        if s >= 0:
            start[s * wpc + warp[i] + 1] += 1
            n += 1
            span = max(span, np.int64(seq[i]) + 1)
    for k in range(n_keys):
        start[k + 1] += start[k]
    take = np.empty(n, np.int64)
    wkey = np.empty(n, np.int64)
    for i in range(cta.shape[0]):
        s = slot_of[cta[i]]
        if s >= 0:
            k = s * wpc + warp[i]
            take[start[k]] = i
            wkey[start[k]] = k
            start[k] += 1
    in_order = True
    for j in range(1, n):
        if wkey[j] == wkey[j - 1] and seq[take[j]] < seq[take[j - 1]]:
            in_order = False
            break
    return take, wkey, span, in_order


@njit(cache=True, nogil=True)
def _gather(take, row_warp, span, wpc, cta, warp, op, seq, src0, src1, src2, wavefronts, sectors, lines, mem,
            weight, op_pipe):
    """lower's per-row columns of the taken rows (take, grouped by warp in program order): opcode ids,
    producers (each source sequence number -> the row of the same warp that has it, -1 none; the last
    such row where a warp repeats one), the shared pipe's cycles (op_pipe, else the row's wavefronts),
    sectors, lines, address rows, the cache model's order key (seq, CTA, warp) and how many rows stand
    for more than one (weight > 1); past: some source lies past every row of its warp (the caller refuses)."""
    n = take.shape[0]
    n_warps = row_warp[n - 1] + 1 if n else 0
    row_of = np.full(n_warps * span, -1, np.int64)
    cta_max = 0
    for i in range(n):
        row_of[row_warp[i] * span + seq[take[i]]] = i
        cta_max = max(cta_max, np.int64(cta[take[i]]))
    ops = np.empty(n, np.int64)
    dep = np.full((n, 3), -1, np.int64)
    wf = np.empty(n, np.int64)
    sec = np.empty(n, np.int64)
    lin = np.empty(n, np.int64)
    mem_t = np.empty(n, np.int64)
    order_key = np.empty(n, np.int64)
    sampled = 0
    past = False         # a source past the trace's last row (the caller raises: a raise here would carry this
    for i in range(n):   # file's path into the shipped compiled copy)
        t = take[i]
        o = np.int64(op[t])
        ops[i] = o
        base = row_warp[i] * span
        for j, src in enumerate((src0[t], src1[t], src2[t])):
            if src >= 0:
                if base + src >= row_of.shape[0]:
                    past = True
                else:
                    dep[i, j] = row_of[base + src]
        wf[i] = op_pipe[o] if op_pipe[o] >= 0 else wavefronts[t]
        sec[i] = sectors[t]
        lin[i] = lines[t]
        mem_t[i] = mem[t]
        order_key[i] = (np.int64(seq[t]) * (cta_max + 1) + cta[t]) * wpc + warp[t]
        if weight[t] > 1:
            sampled += 1
    return ops, dep, wf, sec, lin, mem_t, order_key, sampled, past


@dataclass
class RowColumns:
    """lower's per-row work that depends on the trace's rows, its opcodes' tables and ptxas's facts alone,
    not on the memory levels, the slots or the SMs sharing bandwidth. Rows in lowered order (by CTA slot,
    warp, program order), so the first k CTAs' rows are the first rows of every column: a trace's columns
    serve every trace of its first k CTAs (cut), as a view."""
    wpc: int                    # warps per CTA
    take: np.ndarray            # the trace row of each lowered row
    wkey: np.ndarray            # its SM warp slot (CTA slot * wpc + warp in the CTA)
    ops: np.ndarray
    dep: np.ndarray
    wf: np.ndarray
    sectors: np.ndarray
    lines: np.ndarray
    mem: np.ndarray
    order_key: np.ndarray       # the cache model's order (seq, CTA, warp); only compared, so a cut keeps it
    line_ptr: np.ndarray        # CSR of each row's lines: line numbers (line_raw), not yet dense ids
    line_raw: np.ndarray
    write_kind: np.ndarray
    gap: np.ndarray
    rb_wait: np.ndarray
    banks: np.ndarray
    cta_end: np.ndarray         # the rows of CTA slots 0..c end at cta_end[c]

    def cut(self, k: int) -> "RowColumns":
        """The columns of the first k CTA slots (views)."""
        n = int(self.cta_end[k - 1])
        a = int(self.line_ptr[n])
        return RowColumns(self.wpc, self.take[:n], self.wkey[:n], self.ops[:n], self.dep[:n], self.wf[:n],
                          self.sectors[:n], self.lines[:n], self.mem[:n], self.order_key[:n],
                          self.line_ptr[:n + 1], self.line_raw[:a], self.write_kind[:n], self.gap[:n],
                          self.rb_wait[:n], self.banks[:n], self.cta_end[:k])


def _row_columns(trace: Trace, slot_of: np.ndarray, n_slots: int, wpc: int, op_cls, op_pipe, line_bytes: int,
                 stall_counts, read_barriers, register_banks) -> RowColumns:
    """RowColumns of the CTAs with a slot (slot_of >= 0; n_slots of them)."""
    rows = trace.rows
    # the chosen CTAs' rows by SM warp slot (CTA slot * warps per CTA + warp), then program order (seq)
    take, wkey, span, in_order = _take_by_warp(rows["cta"], rows["warp"], rows["seq"], slot_of, np.int64(wpc))
    if take.size == 0:
        raise GpusimError("no rows to simulate")
    if not in_order:         # a trace whose rows are not in program order within each warp: sort them
        order = np.argsort(wkey * span + rows["seq"][take], kind="stable")
        take, wkey = take[order], wkey[order]
    n = len(take)
    first = np.flatnonzero(np.r_[True, wkey[1:] != wkey[:-1]])
    warp_start = np.append(first, n).astype(np.int64)
    row_warp = np.repeat(np.arange(len(first), dtype=np.int64), np.diff(warp_start))
    # every per-row column in one pass (sources -> rows of the same warp, the shared pipe's cycles, the
    # cache model's order key); numpy's gathers from the structured rows took about half of lower's time
    ops, dep, wf, sectors, lines, mem, order_key, _sampled, past = _gather(
        take, row_warp, np.int64(span), np.int64(wpc), rows["cta"], rows["warp"], rows["op"], rows["seq"],
        rows["src0"], rows["src1"], rows["src2"], rows["wavefronts"], rows["sectors"], rows["lines"],
        rows["mem"], rows["weight"], op_pipe)
    if past:
        raise IndexError("a row's source sequence number is past every row of its warp's")
    opcodes = list(trace.opcodes)
    cls = op_cls[ops]
    line_ptr, line_raw = _load_lines(trace, take, line_bytes, ops, mem, dense=False)
    gap = row_gaps(ops, warp_start, opcodes, stall_counts) if stall_counts else np.ones(n, np.int64)
    cta_end = np.searchsorted(wkey, (np.arange(n_slots, dtype=np.int64) + 1) * wpc).astype(np.int64)
    return RowColumns(wpc, take, wkey, ops, dep, wf, sectors, lines, mem, order_key, line_ptr, line_raw,
                      _write_kinds(trace, take, cls), gap, read_waits(ops, cls, row_warp, opcodes, read_barriers),
                      row_banks(ops, warp_start, opcodes, register_banks), cta_end)


class _Shared:
    """One trace's RowColumns, made once for it and the traces of its first CTAs (lower's share)."""

    def __init__(self, whole: Trace, key: tuple):
        self.whole, self.key = weakref.ref(whole), key
        self.lock = threading.Lock()
        self.columns: RowColumns | None = None


_SHARED: dict = {}              # id(trace) -> _Shared
_SHARED_LOCK = threading.Lock()


def _same_start(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether array a begins where b does, with b's strides (a view of b's first elements)."""
    return (a.__array_interface__["data"][0] == b.__array_interface__["data"][0] and a.strides == b.strides
            and a.dtype == b.dtype and len(a) <= len(b))


def _shared_columns(trace: Trace, k: int, wpc: int, op_cls, op_pipe, line_bytes: int, facts: tuple):
    """The RowColumns of trace's k CTAs (ids 0..k-1), cut from those of the trace it begins (Trace.prefix_of;
    made on first use, by whichever thread asks first), or None where that cannot serve."""
    whole = trace.prefix_of if trace.prefix_of is not None else trace
    if not whole.costed:
        return None
    if whole is not trace and not (_same_start(trace.rows, whole.rows) and _same_start(trace.addr, whole.addr)):
        return None
    key = (tuple(whole.opcodes), op_cls.tobytes(), op_pipe.tobytes(), line_bytes, wpc)
    with _SHARED_LOCK:
        for i in [i for i, sh in _SHARED.items() if sh.whole() is None]:
            del _SHARED[i]
        sh = _SHARED.get(id(whole))
        if sh is None or sh.whole() is not whole:
            sh = _SHARED[id(whole)] = _Shared(whole, key)
    if sh.key != key:
        return None
    with sh.lock:
        got = sh.columns
        if got is None or any(a is not b for a, b in zip(got[0], facts)):
            cta = whole.rows["cta"]
            n_ctas = int(cta.max()) + 1
            if int(whole.rows["warp"].max()) + 1 != wpc or np.bincount(cta, minlength=n_ctas).min() == 0:
                return None         # CTA ids with a gap, or another CTA size: lower it on its own
            cols = _row_columns(whole, np.arange(n_ctas, dtype=np.int64), n_ctas, wpc, op_cls, op_pipe,
                                line_bytes, *facts)
            sh.columns = got = (facts, cols)
    cols = got[1]
    if k > len(cols.cta_end) or int(cols.cta_end[k - 1]) != len(trace.rows):
        return None
    return cols.cut(k) if k < len(cols.cta_end) else cols


def release_shared(trace: Trace) -> None:
    """Drop the RowColumns lower(share=True) keeps for a trace (and the traces it begins)."""
    with _SHARED_LOCK:
        sh = _SHARED.get(id(trace))
        if sh is not None and sh.whole() is trace:
            del _SHARED[id(trace)]


def lower(trace: Trace, arch: GPU, ctas=None, global_level=None,
          active_sms: int | None = None, stall_counts: dict | None = None,
          scoreboards: dict | None = None, read_barriers=None, register_banks=None,
          slots: int | None = None, share: bool = False) -> Lowered:
    """Flat engine arrays for the rows of `ctas` (trace CTA ids, default all), resident together.

    slots: how many CTA slots the SM has for them (default: one per CTA, all resident from cycle 0);
    with fewer, the CTAs after the first `slots` follow in order, ctas[k] in the slot of
    ctas[k - slots], starting when it ends (engine.run's cta_next), its warps on that one's SMSPs.

    global_level: optional int array, one per trace row, saying where each global load
    hits (LEVEL_L1 / LEVEL_L2 / LEVEL_DRAM); default: every global load is an L2 hit.
    stall_counts: the kernel's ptxas stall counts, {opcode: mean} (control_codes.stall_table);
    default none: a warp may issue every cycle, memory instructions every mem_issue_interval.
    scoreboards: ptxas's dependency-barrier counts (engine_params); default none.
    read_barriers: ptxas's read barriers on memory instructions (control_codes.read_barrier_table,
    read_waits); default none: a memory instruction's registers are free once it issues.
    register_banks: the packed register reads of the kernel's FP32 instructions (register_banks.
    bank_profile); default none: FP32 rows carry no reads and the switch bubble alone applies.
    share (all CTAs only): the per-row work that depends on the rows alone (RowColumns) is made once
    for the trace this one begins (Trace.prefix_of: a prediction lowers a round's CTAs and its chains'
    longer lists in each window) and kept with it until release_shared; the same arrays either way.
    """
    costed = cost_trace(trace)
    rows = costed.rows
    all_ctas = np.flatnonzero(np.bincount(rows["cta"]))
    every = ctas is None
    ctas = all_ctas if ctas is None else np.asarray(list(ctas), np.int64)
    missing = np.setdiff1d(ctas, all_ctas)
    if missing.size:
        raise GpusimError(f"CTAs {missing.tolist()} are not in the trace")
    if len(np.unique(ctas)) != len(ctas):
        raise GpusimError("a CTA is listed twice")
    slot_of = np.full(int(all_ctas.max()) + 1, -1, np.int64)
    slot_of[ctas] = np.arange(len(ctas))
    wpc = int(rows["warp"].max()) + 1                      # warps per CTA
    op_cls, op_unit, op_lat, op_hold, op_short, op_pipe = _op_tables(list(trace.opcodes), arch)
    facts = (stall_counts, read_barriers, register_banks)
    cols = None
    if share and every and trace.costed and int(all_ctas[-1]) == len(all_ctas) - 1:
        cols = _shared_columns(trace, len(all_ctas), wpc, op_cls, op_pipe, arch.line_bytes, facts)
    if cols is None:
        cols = _row_columns(costed, slot_of, len(ctas), wpc, op_cls, op_pipe, arch.line_bytes, *facts)
    take, wkey, ops = cols.take, cols.wkey, cols.ops
    n = len(take)

    first = np.flatnonzero(np.r_[True, wkey[1:] != wkey[:-1]])
    warp_sm = wkey[first].astype(np.int64)
    warp_start = np.append(first, n).astype(np.int64)
    n_warps = len(warp_sm)
    row_warp = np.repeat(np.arange(n_warps, dtype=np.int64), np.diff(warp_start))
    n_slots = len(ctas) if slots is None else int(slots)
    if not 1 <= n_slots <= len(ctas):
        raise GpusimError(f"slots must be 1 to the {len(ctas)} CTAs, got {slots}")
    warp_cta = (warp_sm // wpc).astype(np.int64)
    resident = warp_cta < n_slots
    if resident.sum() > arch.max_warps_per_sm or n_slots > arch.max_blocks_per_sm:
        raise GpusimError(f"{n_slots} CTAs / {int(resident.sum())} warps do not fit on one {arch.name} SM "
                          f"({arch.max_blocks_per_sm} CTAs, {arch.max_warps_per_sm} warps)")
    cta_warp_start = np.searchsorted(warp_cta, np.arange(len(ctas) + 1)).astype(np.int64)
    cta_next = np.arange(len(ctas), dtype=np.int64) + n_slots
    cta_next[cta_next >= len(ctas)] = -1
    # a CTA that follows another takes its slot's warp slots, and so their SMSPs
    warp_smsp = (((warp_cta % n_slots) * wpc + warp_sm % wpc) % arch.smsp_per_sm).astype(np.int64)
    smsp_warps = np.argsort(warp_smsp, kind="stable").astype(np.int64)
    smsp_start = np.searchsorted(warp_smsp[smsp_warps], np.arange(arch.smsp_per_sm + 1)).astype(np.int64)

    level = np.full(n, LEVEL_L2, np.int8)
    if global_level is not None:
        level = np.asarray(global_level, np.int8)[take]
    op_cls_rows = op_cls[ops]
    # a store at LEVEL_DRAM (the cache model's write-back mark) is written back to DRAM; at the L1 it
    # is a store like any other
    writeback = (op_cls_rows == R.C_STG) & (level == LEVEL_DRAM)
    level = np.where(writeback, LEVEL_L1, level).astype(np.int8)
    line_ptr, line_id = cols.line_ptr, _dense_ids(cols.line_raw)
    return Lowered(
        ctas=np.asarray(ctas, np.int64), warp_start=warp_start, warp_cta=warp_cta,
        warp_in_cta=(warp_sm % wpc).astype(np.int64), warp_sm=warp_sm.astype(np.int64),
        warp_smsp=warp_smsp, cta_warp_start=cta_warp_start, smsp_warps=smsp_warps, smsp_start=smsp_start,
        cls=op_cls_rows, unit=op_unit[ops], lat=op_lat[ops].astype(np.int64),
        wf=cols.wf, sectors=cols.sectors, lines=cols.lines, level=level, gap=cols.gap,
        line_ptr=line_ptr, line_id=line_id,
        dep=cols.dep, op=ops, opcodes=list(trace.opcodes), row_warp=row_warp, trace_row=take.astype(np.int64),
        params=engine_params(arch, active_sms, bool(stall_counts), scoreboards),
        sampled_rows=int(np.count_nonzero((rows["weight"] if every else rows["weight"][take]) > 1)),
        bar_hold=op_hold[ops],
        rb_wait=cols.rb_wait,
        provider=fill_providers(level, line_ptr, line_id, cols.order_key),
        banks=cols.banks, writeback=writeback,
        write_kind=cols.write_kind, short_result=op_short[ops], cta_next=cta_next)


guard_cache(globals())     # stamped by its source, guarded, seeded from the shipped copy (gpusim.jit)
