"""State accounting of the cycle loop: each warp's cycles in each state, by warp and by the opcode it waited
at; on request the same cycles where the warp's SMSP issued nothing (ncu's not-issued PC samples) and a log
of stall intervals for the timeline.

A warp's cycles are added to its state when it leaves the state, not every cycle (the loop re-derives a
warp's state only when it can change). The not-issued count (P_NOT_ISSUED, a diagnosis: its bookkeeping at
every state change costs the loop about 5 %): each SMSP keeps a running count of the cycles in which it
issued nothing and held no warp at dispatch (a dispatch stall counts as a selected warp there), read when
a warp enters and leaves a state. The log (a 2-D `log` array): the first stall intervals to end, (warp,
state, first cycle, end cycle, row waited at); the selected cycles are the issue log. Asked or not, the
results are the same; not asked, numba compiles the loop without it (_log_interval)."""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit
from numba.extending import overload

from gpusim.jit import guard_cache
from gpusim.timing.intrinsics import unit_sources
from gpusim.timing.rows import N_ENGINE_STATES, R_OP
from gpusim.timing.states import S_SELECTED

# state: each warp's state (-1 none: finished, or a member of a waiter group); since: the cycle it entered
# it; counts, op_counts: the cycles booked by warp and by opcode waited at; lat_counts, lat_cum, lat_since:
# the not-issued count (lat_cum: each SMSP's not-issued cycles before the current one, lat_since: lat_cum
# when the warp entered its state); smsp_active: this cycle the SMSP issued or held a warp at dispatch;
# op_at, op_last: the opcode ids of the row each warp waits at (min(pc, its last row)) and of the row it
# issued last: its state's cycles by opcode are booked to the one or the other (_waited_at) at every
# state change, without a read of the rows matrix there (in-process A/B: coalesced 1.04x, regtile2d the
# same); log: the stall intervals kept (or a 1-D array: none)
Books = namedtuple("Books", ["state", "since", "counts", "op_counts", "lat_counts", "lat_cum", "lat_since",
                             "smsp_active", "op_at", "op_last", "log"])


@njit(cache=True, inline="always", error_model="numpy")
def new_books(rows, warp_start, n_smsp, n_ops, log):
    n_warps = warp_start.shape[0] - 1
    op_at = np.zeros(n_warps, np.int64)
    for w in range(n_warps):
        if warp_start[w + 1] > warp_start[w]:
            op_at[w] = rows[warp_start[w], R_OP]
    return Books(state=np.full(n_warps, -1, np.int64), since=np.zeros(n_warps, np.int64),
                 counts=np.zeros((n_warps, N_ENGINE_STATES), np.int64),
                 op_counts=np.zeros((max(n_ops, 1), N_ENGINE_STATES), np.int64),
                 lat_counts=np.zeros((n_warps, N_ENGINE_STATES), np.int64),
                 lat_cum=np.zeros(n_smsp, np.int64), lat_since=np.zeros(n_warps, np.int64),
                 smsp_active=np.zeros(n_smsp, np.bool_), op_at=op_at, op_last=np.zeros(n_warps, np.int64),
                 log=log)


@njit(cache=True, inline="always", error_model="numpy")
def _waited_at(pc_w, st, end):
    """The row a warp's state belongs to: the one it issued while selected (pc has moved on), else the
    one it is about to issue, where ncu's PC samples put the stall; a finished warp's last row."""
    return min(pc_w - 1 if st == S_SELECTED else pc_w, end - 1)


def _log_interval(log, n_log, w, st, t0, t1, row):
    """Keep warp w's interval [t0, t1) in state st, waiting at row `row` (where ncu's PC samples would
    put it), in log[n_log] (the stall intervals of a timeline); returns the new count. Chosen by the
    type of `log` when numba compiles the caller: for a 1-D array (no log asked for) it is nothing at
    all, so the cycle loop pays nothing for it."""
    return n_log


@overload(_log_interval)
def _log_interval_impl(log, n_log, w, st, t0, t1, row):
    # (not inline="always": numba's typed-level inlining of an overload into the cycle loop lets its dead-code
    # pass drop stores to the units' arrays reached through their namedtuples; compiled as a call, LLVM
    # inlines it, and the 1-D variant is nothing)
    if log.ndim == 1:
        return lambda log, n_log, w, st, t0, t1, row: n_log

    def keep(log, n_log, w, st, t0, t1, row):
        if st == S_SELECTED or t1 <= t0 or n_log >= log.shape[0]:   # issues are the issue log
            return n_log
        log[n_log, 0], log[n_log, 1], log[n_log, 2], log[n_log, 3], log[n_log, 4] = w, st, t0, t1, row
        return n_log + 1
    return keep


@njit(cache=True, inline="always", error_model="numpy")
def _leave(b, w, s, sw, t, lat_on, pc, warp_start, n_log):
    """Warp w (of SMSP s) leaves state sw >= 0 at t: its cycles, by warp and by opcode waited at."""
    n0 = t - b.since[w]
    b.counts[w, sw] += n0
    if lat_on:
        b.lat_counts[w, sw] += b.lat_cum[s] - b.lat_since[w]
    n_log = _log_interval(b.log, n_log, w, sw, b.since[w], t, _waited_at(pc[w], sw, warp_start[w + 1]))
    b.op_counts[b.op_last[w] if sw == S_SELECTED else b.op_at[w], sw] += n0
    return n_log


@njit(cache=True, inline="always", error_model="numpy")
def book(b, w, s, st, t, lat_on, pc, warp_start, n_log):
    """Warp w of SMSP s enters state st at cycle t, leaving the one it was in (pc: the warps' program
    counters, warp_start: their rows); returns the log's new count."""
    sw = b.state[w]
    if sw >= 0:
        n_log = _leave(b, w, s, sw, t, lat_on, pc, warp_start, n_log)
    b.state[w] = st
    b.since[w] = t
    if lat_on:
        b.lat_since[w] = b.lat_cum[s]
    return n_log


@njit(cache=True, inline="always", error_model="numpy")
def retire(b, w, s, t, lat_on, pc, warp_start, n_log):
    """Warp w's last state ends at t: it retires (no state)."""
    sw = b.state[w]
    if sw >= 0:
        n_log = _leave(b, w, s, sw, t, lat_on, pc, warp_start, n_log)
    b.state[w] = -1
    return n_log


@njit(cache=True, inline="always", error_model="numpy")
def issued_ops(b, w, r, rows, end_w):
    """Warp w issued row r: the opcode it issued last and the one it waits at now."""
    b.op_last[w] = rows[r, R_OP]
    b.op_at[w] = rows[min(r + 1, end_w - 1), R_OP]


@njit(cache=True, inline="always", error_model="numpy")
def count_not_issued(b, t, t_next):
    """Cycle t and the skipped ones before t_next (nothing issues in them): each SMSP's not-issued cycles."""
    for s in range(b.lat_cum.shape[0]):
        b.lat_cum[s] += (0 if b.smsp_active[s] else 1) + (t_next - t - 1)
        b.smsp_active[s] = False


guard_cache(globals(), unit_sources())     # stamped by every unit's source, guarded, seeded (gpusim.jit)
