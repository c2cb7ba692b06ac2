"""What the cycle loop reads: the rows matrix (one 64-B line per lowered row), the params vector and its
config, the counters vector, and the constants every unit shares (row classes, math pipes, the engine-only
pool states, the per-row memory bits)."""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from gpusim.jit import guard_cache
from gpusim.timing.intrinsics import unit_sources
from gpusim.timing.states import N_STATES

__all__ = [
    "C_FIXED", "C_LDS", "C_STS", "C_LDG", "C_STG", "C_BAR", "C_EXIT", "U_NONE", "U_FMA", "U_HEAVY", "U_ALU", "U_XU",
    "UNIT_BITS", "P_FMA_INTERVAL", "P_ALU_INTERVAL", "P_XU_INTERVAL", "P_MIO_DEPTH", "P_LG_DEPTH", "P_LDS_LAT",
    "P_L1_LAT", "P_L2_LAT", "P_DRAM_LAT", "P_L1_SECTORS", "P_FILL_BYTES", "P_SECTOR_BYTES", "P_BAR_RELEASE",
    "P_MIO_SM_DEPTH", "P_LG_SM_DEPTH", "P_L1_LINES", "P_BAR_ARRIVE", "P_L2_SHARE_FP", "P_DRAM_SHARE_FP",
    "P_SWITCH_FMA", "P_MEM_ISSUE_IV", "P_WARP_SHARED_CPW", "P_SMSP_L1_CPL", "P_QUEUE_AT_RETURN", "P_SHARED_WB",
    "P_SB_GLOBAL", "P_SB_SHARED", "P_DATA_PIPE_UNIFIED", "P_NO_SKIP", "P_NOT_ISSUED", "P_LSU_IN_ORDER",
    "P_DATA_PIPE_TURNS", "P_LSU_READ_AHEAD", "P_LG_SM_UNTAKEN", "P_HIT_HOLDS_TO_FILL", "P_LG_SM_MISSES",
    "P_LG_SM_MISS_SECTORS", "P_RF_LEAD", "P_PEND_LAT", "P_DRAM_WRITE_SHARE_FP", "P_WRITE_FULL_FP",
    "P_WRITE_SECTOR_FP", "P_WRITE_LINE_FP", "P_WRITE_FILL_FP", "P_SLOT_GAP", "P_CTA_DISPATCH", "P_WRITE_SHARES_L2",
    "P_L2_IN_ORDER", "P_WRITE_BUFFER",
    "N_PARAMS", "FP", "K_HEAVY", "K_LITE", "K_ALU", "K_XU", "K_SHARED_BUSY",
    "K_L1_BUSY", "K_FILL_BUSY", "K_DEADLOCK", "K_LDS_LAT", "K_LDS_N", "K_LDG_LAT", "K_LDG_N", "N_COUNTERS", "INF",
    "GROUPS_ON", "GROUPS_OFF", "S_MIO_POOL", "S_LG_POOL", "N_ENGINE_STATES", "R_CLS", "R_UNIT", "R_LAT", "R_WF",
    "R_SECTORS", "R_LINES", "R_LEVEL", "R_GAP", "R_DEP", "R_DEP1", "R_DEP2", "R_WARP", "R_LINE_LO", "R_LINE_HI",
    "R_OP", "R_FLAGS", "N_ROW_FIELDS", "ROW_STRIDE", "DEP_LDG", "DEP_LDS", "F_WRITEBACK", "WRITE_SHIFT", "W_FULL",
    "W_SECTOR", "W_LINE", "W_FILL", "M_READ", "M_TAKEN", "M_FETCHED", "PREFETCH_ROWS", "pack_rows", "Config", "config"]

# row classes
C_FIXED, C_LDS, C_STS, C_LDG, C_STG, C_BAR, C_EXIT = range(7)
# math pipes a fixed-latency row needs (U_NONE: no pipe limit modelled: uniform, ADU, CBU)
U_NONE, U_FMA, U_HEAVY, U_ALU, U_XU = range(5)
UNIT_BITS = 3        # R_UNIT holds the pipe in its low bits, an FP32 row's register reads above them
                     # (register_banks.pack: 0 when the trace has none, then the switch bubble alone)
# params vector
(P_FMA_INTERVAL, P_ALU_INTERVAL, P_XU_INTERVAL, P_MIO_DEPTH, P_LG_DEPTH, P_LDS_LAT,
 P_L1_LAT, P_L2_LAT, P_DRAM_LAT, P_L1_SECTORS, P_FILL_BYTES, P_SECTOR_BYTES, P_BAR_RELEASE,
 P_MIO_SM_DEPTH, P_LG_SM_DEPTH, P_L1_LINES, P_BAR_ARRIVE, P_L2_SHARE_FP, P_DRAM_SHARE_FP,
 P_SWITCH_FMA, P_MEM_ISSUE_IV, P_WARP_SHARED_CPW, P_SMSP_L1_CPL, P_QUEUE_AT_RETURN, P_SHARED_WB,
 P_SB_GLOBAL, P_SB_SHARED, P_DATA_PIPE_UNIFIED, P_NO_SKIP, P_NOT_ISSUED, P_LSU_IN_ORDER, P_DATA_PIPE_TURNS,
 P_LSU_READ_AHEAD, P_LG_SM_UNTAKEN, P_HIT_HOLDS_TO_FILL, P_LG_SM_MISSES, P_LG_SM_MISS_SECTORS,
 P_RF_LEAD, P_PEND_LAT, P_DRAM_WRITE_SHARE_FP, P_WRITE_FULL_FP, P_WRITE_SECTOR_FP,
 P_WRITE_LINE_FP, P_WRITE_FILL_FP, P_SLOT_GAP, P_CTA_DISPATCH, P_WRITE_SHARES_L2, P_L2_IN_ORDER, P_WRITE_BUFFER, N_PARAMS) = range(50)
FP = 256              # sub-cycle units of the L2 / DRAM bandwidth servers
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
# several sectors of a line, one partial sector per line, or one partial sector per line that the CTA's
# other stores fill; each is written to the L2 at its own rate
WRITE_SHIFT = 8
W_FULL, W_SECTOR, W_LINE, W_FILL = 0, 1, 2, 3
M_READ, M_TAKEN, M_FETCHED = 1, 2, 4    # bits of the per-row memory state (row_mem)
PREFETCH_ROWS = 2     # how far ahead of its issue a warp's rows are prefetched (2-4: the same; 8 slower)


def _aligned_rows(n):
    """An empty (n, ROW_STRIDE) int32 matrix whose rows start on 64-B cache lines. numpy aligns large
    arrays to 16 B only, so each row would straddle two lines (in-process A/B on bench_engine's trace:
    about 2 % faster aligned)."""
    line = 64
    buf = np.empty(n * ROW_STRIDE * 4 + line, np.uint8)
    skip = (-buf.ctypes.data) % line
    return buf[skip:skip + n * ROW_STRIDE * 4].view(np.int32).reshape(n, ROW_STRIDE)


def pack_rows(cls, unit, lat, wf, sectors, lines, level, gap, line_ptr, dep, row_warp, op, bar_hold,
              writeback=None, write_kind=None, short_result=None):
    """The per-row arrays of a Lowered trace as the engine's rows matrix. short_result: rows whose result comes
    back on a scoreboard without being a shared load (SHFL, XU): their consumers carry DEP_LDS, so a wait
    on them is short_scoreboard (they claim no barrier: the scoreboard's barrier logic skips them)."""
    n = len(cls)
    if max(n, int(line_ptr[-1])) >= 2 ** 31:
        raise ValueError("more than 2^31 rows or lines: the int32 rows matrix cannot index them")
    rows = _aligned_rows(n)
    no = np.zeros(n, np.bool_)
    # one signature for the compiled fill (the shipped copy holds one variant)
    _fill_rows(rows, *(np.ascontiguousarray(x, np.int64) for x in (
        cls, unit, lat, wf, sectors, lines, level, gap, line_ptr, row_warp, op, bar_hold)),
        np.ascontiguousarray(dep, np.int64).reshape(n, 3),
        *(np.ascontiguousarray(x, np.bool_) for x in (
            no if writeback is None else writeback, no if short_result is None else short_result)),
        np.ascontiguousarray(np.zeros(n, np.int8) if write_kind is None else write_kind, np.int8))
    return rows


@njit(cache=True, nogil=True)
def _fill_rows(rows, cls, unit, lat, wf, sectors, lines, level, gap, line_ptr, row_warp, op, bar_hold, dep,
               writeback, short_result, write_kind):
    """pack_rows' fill, a row at a time (numpy's column by column wrote each 64-B row 16 times: about a
    second of gpusim run regtile2d --size 4096's 12)."""
    for i in range(cls.shape[0]):
        # R_FLAGS: bit 0 the barrier hold; bits 1 + 2j, 2 + 2j the class of producer j (DEP_LDG, DEP_LDS,
        # else 0), so the loop learns whether a producer is a load without reading the producer's own row
        flags = bar_hold[i] & 1
        for j in range(3):
            d = dep[i, j]
            rows[i, R_DEP + j] = d
            if d >= 0:
                if cls[d] == C_LDG:
                    flags |= DEP_LDG << (1 + 2 * j)
                elif cls[d] == C_LDS or short_result[d]:
                    flags |= DEP_LDS << (1 + 2 * j)
        if writeback[i]:
            flags |= F_WRITEBACK
        flags |= (np.int64(write_kind[i]) & 3) << WRITE_SHIFT
        rows[i, R_CLS] = cls[i]
        rows[i, R_UNIT] = unit[i]
        rows[i, R_LAT] = lat[i]
        rows[i, R_WF] = wf[i]
        rows[i, R_SECTORS] = sectors[i]
        rows[i, R_LINES] = lines[i]
        rows[i, R_LEVEL] = level[i]
        rows[i, R_GAP] = gap[i]
        rows[i, R_WARP] = row_warp[i]
        rows[i, R_LINE_LO] = line_ptr[i]
        rows[i, R_LINE_HI] = line_ptr[i + 1]
        rows[i, R_OP] = op[i]
        rows[i, R_FLAGS] = flags
        for k in range(N_ROW_FIELDS, rows.shape[1]):
            rows[i, k] = 0


# The params as the units read them: scalars (constants for the whole run, so they stay in registers) and
# three small arrays. Built once per run by config().
Config = namedtuple("Config", [
    "fma_iv", "alu_iv", "xu_iv", "switch_fma", "rf_lead",                    # math pipes, register banks
    "mem_iv", "sb_on", "sb_k",                                               # issue, dependency barriers
    "mio_depth", "lg_depth", "mio_sm_depth", "lg_sm_depth", "grant_untaken", "lg_untaken_cap",
    "at_return", "in_order", "read_ahead",                                   # LSU queues and pools
    "lds_lat", "shared_cpw", "shared_wb", "l1_sectors", "l1_lines", "l1_cpl", "data_unified", "dp_turns",
    "hit_to_fill", "miss_cap", "miss_sec_cap", "level_lat",                  # shared pipe, L1TEX
    "fill_bytes", "sector_bytes", "l2_share", "dram_share", "dram_write_share", "write_fp",   # L2 / DRAM
    "write_l2_share", "l2_in_order", "write_buf",
    "bar_release", "bar_arrive",                                             # barrier unit
    "slot_gap", "cta_dispatch",                                              # CTAs that follow in a slot
    "lat_on", "no_skip"])                                                    # accounting, the loop


@njit(cache=True, inline="always", error_model="numpy")
def config(params):
    sb_k = np.zeros(3, np.int64)    # dependency barriers of global (1) / shared (2) loads; 0 = off
    sb_k[1], sb_k[2] = params[P_SB_GLOBAL], params[P_SB_SHARED]
    sb_on = sb_k[1] > 0 or sb_k[2] > 0
    in_order = params[P_LSU_IN_ORDER] != 0
    read_ahead = params[P_LSU_READ_AHEAD] if in_order else np.int64(0)
    grant_untaken = params[P_LG_SM_UNTAKEN] > 0
    lg_untaken_cap = params[P_LG_SM_UNTAKEN] if grant_untaken else np.int64(1 << 40)
    level_lat = np.array([params[P_L1_LAT], params[P_L2_LAT], params[P_DRAM_LAT], params[P_PEND_LAT]], np.int64)
    write_fp = np.array([params[P_WRITE_FULL_FP], params[P_WRITE_SECTOR_FP], params[P_WRITE_LINE_FP],
                         params[P_WRITE_FILL_FP]], np.int64)
    write_l2_share = params[P_L2_SHARE_FP] * (params[P_WRITE_SHARES_L2] != 0)
    return Config(
        fma_iv=params[P_FMA_INTERVAL], alu_iv=params[P_ALU_INTERVAL], xu_iv=params[P_XU_INTERVAL],
        switch_fma=params[P_SWITCH_FMA] != 0, rf_lead=params[P_RF_LEAD],
        mem_iv=params[P_MEM_ISSUE_IV], sb_on=sb_on, sb_k=sb_k,
        mio_depth=params[P_MIO_DEPTH], lg_depth=params[P_LG_DEPTH],
        mio_sm_depth=params[P_MIO_SM_DEPTH], lg_sm_depth=params[P_LG_SM_DEPTH],
        grant_untaken=grant_untaken, lg_untaken_cap=lg_untaken_cap,
        at_return=params[P_QUEUE_AT_RETURN] != 0, in_order=in_order, read_ahead=read_ahead,
        lds_lat=params[P_LDS_LAT], shared_cpw=params[P_WARP_SHARED_CPW], shared_wb=params[P_SHARED_WB],
        l1_sectors=params[P_L1_SECTORS], l1_lines=params[P_L1_LINES], l1_cpl=params[P_SMSP_L1_CPL],
        data_unified=params[P_DATA_PIPE_UNIFIED] != 0, dp_turns=params[P_DATA_PIPE_TURNS] != 0,
        hit_to_fill=params[P_HIT_HOLDS_TO_FILL] != 0,
        miss_cap=params[P_LG_SM_MISSES], miss_sec_cap=params[P_LG_SM_MISS_SECTORS], level_lat=level_lat,
        fill_bytes=params[P_FILL_BYTES], sector_bytes=params[P_SECTOR_BYTES],
        l2_share=params[P_L2_SHARE_FP], dram_share=params[P_DRAM_SHARE_FP],
        dram_write_share=params[P_DRAM_WRITE_SHARE_FP], write_fp=write_fp,
        write_l2_share=write_l2_share, l2_in_order=params[P_L2_IN_ORDER] != 0,
        write_buf=params[P_WRITE_BUFFER],
        bar_release=params[P_BAR_RELEASE], bar_arrive=params[P_BAR_ARRIVE],
        slot_gap=params[P_SLOT_GAP], cta_dispatch=params[P_CTA_DISPATCH],
        lat_on=params[P_NOT_ISSUED] != 0, no_skip=params[P_NO_SKIP] != 0)


guard_cache(globals(), unit_sources())     # stamped by every unit's source, guarded, seeded (gpusim.jit)
