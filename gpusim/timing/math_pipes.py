"""Each SMSP's math pipes, the FP32 warp-switch bubble and the register banks, as the dispatch stage sees
them.

FFMA/FMUL/FADD need FMA-lite or FMA-heavy free, IMAD needs FMA-heavy, ALU ops the ALU pipe, XU ops the XU
pipe; each pipe takes one warp-instruction per interval cycles, else math_pipe_throttle; FP32 ops take lite
when both are free (leaving heavy for IMAD). Switch bubble: an FP32 op reading two registers of one bank
cannot issue the cycle after another warp's issue on its SMSP (micro/fma_issue_rate.json,
fma_operands.json): dispatch_stall when the scheduler must switch warps, not_selected while the warp that
issued last cycle issues again (ncu's PC samples, micro/fma_pipes_ncu.json). Register banks: an FP32 row
with the SASS's register reads (register_banks.py) needs its reads on the SMSP's two banks, one register a
cycle each from the cycle before issue, to end no later than rf_lead cycles after issue (reuse-cache hits
free while the same warp issued the SMSP's previous instruction), else dispatch_stall
(micro/ffma_dispatch.json); what the SMSP does then is the scheduler's (scheduler.py)."""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from gpusim.jit import guard_cache
from gpusim.timing.intrinsics import unit_sources
from gpusim.timing.rows import K_ALU, K_HEAVY, K_LITE, K_XU, R_UNIT, U_ALU, U_FMA, U_HEAVY, U_XU, UNIT_BITS
from gpusim.timing.states import S_DISPATCH, S_MATH_THROTTLE

# per SMSP: the next cycle each pipe takes an instruction, and each register bank's next free read cycle
Pipes = namedtuple("Pipes", ["heavy", "lite", "alu", "xu", "bank_free"])


@njit(cache=True, inline="always", error_model="numpy")
def new_pipes(n_smsp):
    return Pipes(heavy=np.zeros(n_smsp, np.int64), lite=np.zeros(n_smsp, np.int64), alu=np.zeros(n_smsp, np.int64),
                 xu=np.zeros(n_smsp, np.int64), bank_free=np.zeros((n_smsp, 2), np.int64))


@njit(cache=True, inline="always", error_model="numpy")
def dispatch_state(pp, s, w, r, t, rows, switch_fma, rf_lead, last_t, last_w, st, wk, fixed):
    """Warp w of SMSP s at fixed-latency row r, having passed every other check: (state, cycle it can
    end, whether it holds until then, whether its register reads stalled it while it is the warp the SMSP
    issued last); st, wk, fixed as they stand when the pipes let it go. last_t, last_w: per SMSP, the cycle
    and warp of its last issue."""
    u = rows[r, R_UNIT] & ((1 << UNIT_BITS) - 1)
    if u == U_FMA:
        f = min(pp.heavy[s], pp.lite[s])
    elif u == U_HEAVY:
        f = pp.heavy[s]
    elif u == U_ALU:
        f = pp.alu[s]
    elif u == U_XU:
        f = pp.xu[s]
    else:
        f = t
    bk = rows[r, R_UNIT] >> UNIT_BITS if u == U_FMA else 0
    hot_stall = False
    if f > t:
        st, wk = S_MATH_THROTTLE, f         # only this warp's SMSP issues to it
    elif (u == U_FMA and switch_fma and last_t[s] == t - 1 and last_w[s] != w
          and (bk == 0 or max((bk >> 4) & 3, (bk >> 6) & 3) >= 2)):
        # no FP32 dispatch right after another warp's issue when it reads two registers of one bank
        # (micro/fma_operands.json: with an immediate operand there is no bubble): dispatch_stall if the
        # scheduler must switch, not_selected if that warp issues again
        st, wk, fixed = S_DISPATCH, t + 1, False
    elif bk != 0:
        # register-bank reads (register_banks): each bank reads one register a cycle, from the cycle before
        # issue; the warp waits while its reads would end more than rf_lead cycles after its issue
        hot = last_w[s] == w
        sh = 0 if hot else 4
        for b in range(2):
            nb = (bk >> (sh + 2 * b)) & 3
            fb = pp.bank_free[s, b]
            if nb > 0 and fb > t - 1 and fb + nb - 1 > t + rf_lead:
                st, wk, fixed = S_DISPATCH, t + 1, False
                if hot:
                    hot_stall = True
    return st, wk, fixed, hot_stall


@njit(cache=True, inline="always", error_model="numpy")
def take_banks(pp, s, bk, t, hot):
    """An issued row's register reads take their banks' next cycles, from the cycle before issue (hot: the
    SMSP's previous issue was the same warp's, whose reuse-cache hits are free)."""
    sh = 0 if hot else 4
    for b in range(2):
        nb = (bk >> (sh + 2 * b)) & 3
        if nb > 0:
            pp.bank_free[s, b] = max(pp.bank_free[s, b], t - 1) + nb


@njit(cache=True, inline="always", error_model="numpy")
def issue(pp, s, u, t, fma_iv, alu_iv, xu_iv, counters):
    """A fixed-latency row of pipe u issued on SMSP s at t."""
    if u == U_FMA:
        if pp.lite[s] <= t:
            pp.lite[s] = t + fma_iv
            counters[K_LITE] += 1
        else:
            pp.heavy[s] = t + fma_iv
            counters[K_HEAVY] += 1
    elif u == U_HEAVY:
        pp.heavy[s] = t + fma_iv
        counters[K_HEAVY] += 1
    elif u == U_ALU:
        pp.alu[s] = t + alu_iv
        counters[K_ALU] += 1
    elif u == U_XU:
        pp.xu[s] = t + xu_iv
        counters[K_XU] += 1


guard_cache(globals(), unit_sources())     # stamped by every unit's source, guarded, seeded (gpusim.jit)
