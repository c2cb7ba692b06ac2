"""Whole-kernel time: occupancy, rounds of resident CTAs per SM, steady-state loop trips.

`predict(result, arch)` turns a counting run (`gpusim.simulate(...)`, a SimResult) into a
predicted kernel time with ncu-named warp-state ratios:

1. CTAs per SM. The grid's G CTAs are spread over the preset's S SMs; the busiest SM gets
   n = ceil(G / S) of them, B = occupancy.blocks_per_sm at a time. It runs them as
   floor(n / B) rounds of B resident CTAs and, if n % B, one round of n % B CTAs (the
   partial last wave; at small sizes where G < S this is the only round, one CTA per SM).
   All SMs run concurrently, so the kernel ends with the busiest SM.
2. A round's cycles. The resident CTAs (those the first SM receives: blockIdx linear ids
   0, S, 2S, ...) are built with every periodic K loop cut to its first W1 and then W2 trips
   (Sampler(window=W)) and timed by the cycle engine (simulate_sm), all launched at cycle 0.
   Steady-state cycles per trip = (C(W2) - C(W1)) / (W2 - W1); the rest of C(W1) is the
   prologue, the first W1 trips and the epilogue. A round of T trips takes
   C(W1) + (T - W1) * per_trip. The same linear extrapolation is applied to every warp-state
   counter and to the issued instructions, so the stall ratios are those of the whole round.
   When T <= W2 the full trace is timed and nothing is extrapolated.
3. Kernel cycles = sum over the busiest SM's rounds. The first round's CTAs start as the block
   scheduler fills it (schedule_cycles: within cta_first_round_ns a CTA of the chip, or its reach
   of the SMs); in the later ones each CTA starts when the one before it in its slot ends
   (steady_round: the engine times CHAIN_GENS CTAs a slot, so the slots drift apart as their CTAs'
   times differ, as the recorded schedules, traces/hw/h200/ctasched/, show after the first wave).
   A launch whose CTAs are all resident at once ends with its slowest: its L2 hits are timed at the
   slowest SM's latency (slowest_l2_latency).
   time_ms = cycles / SM clock + launch overhead + the launch's end.
   time_ms adds the launch's fixed overhead as the records' CUDA events see it (the preset's
   launch_overhead_us: an empty launch queued behind other work, micro/launch_overhead.json) and
   launch_end_ns for the share of the SMs the launch reaches (the next kernel starts that much
   later after a launch over every SM, micro/launch_end.json); the cycles are the kernel's
   execution alone.

Sampling error (stated and tested in tests/estimate/test_kernel_time.py against a full engine
run of every trip): the extrapolation is exact when every steady trip costs the same; the
error comes from trips W1..W2 not yet being in steady state. Measured at sizes where a full
run is feasible, it is within SAMPLING_TOLERANCE of the full run's cycles.

Memory levels: if gpusim.memory.cache provides `global_levels(trace, arch, ...)` (the cache
model), each global load's level (L1/L2/DRAM, or an L2 hit on a fill another CTA's miss has in
flight) comes from it; otherwise every global load is an L2 hit (the engine's default) and the
prediction says so in its notes. The chip-wide L2
model needs the order in which CTAs run: schedule="phased" (default) takes it from the
engine's first round (first_round_probe), see gpusim/memory/cache.py.
"""
from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass, field

import numpy as np

from gpusim.arch import get_arch, GPU
from gpusim.errors import GpusimError
from gpusim.estimate.round_inputs import (_Levels, _groups, _l2_warm, _resident, build_window, in_background,  # noqa: F401
                                          ptxas_facts, release_lowering, window_trace)
from gpusim.kernel.spec import get_kernel
from gpusim.estimate.atomic_queue import queue_end_cycles, shared_address_atomics
import gpusim.timing as timing
from gpusim.timing import (simulate_sm, TimingResult, not_issued_metrics, LSU_METRIC_NAMES, LSU_SUMS,
                           LSU_PENDING, LSU_LATENCY, lower)
from gpusim.timing import engine as E
from gpusim.timing.control_codes import stall_table
from gpusim.timing.lower import l2_pending_window_ns
from gpusim.timing.states import STATES, stall_metric
from gpusim.trace.trace import Trace

# loop trips of the two timing windows. Chosen against full engine runs (not against the H200): over the
# ladder at 1024 and 2048 and the 32 held-out shapes (48 points), windows of 8 and 16 trips missed the full
# run by 1.15 % on average and 5.9 % at worst (a CTA pair's phase still settling: regtile1d 8192x8192x512,
# regtile2d and vectorized 2048x2048x8192), 8/32 by 0.58 / 5.1 %, 16/32 by 0.66 / 4.8 %, 32/64 by 0.48 / 4.6 %,
# 16/48 by 0.50 / 3.0 %; at 4096, 16/48 is within 1.1 % of the full run for all 8 (8/16: up to 2.9 %)
W1, W2 = 16, 48
SAMPLING_TOLERANCE = 0.05     # |windowed - full| / full cycles, tested against full runs (tests/estimate/test_kernel_time.py)


@dataclass
class Round:
    ctas: int                  # resident CTAs on the SM in this round
    count: int                 # how many such rounds the busiest SM runs
    trips: int                 # real trips of the longest periodic loop
    cycles: float              # predicted cycles of one such round
    per_trip: float | None     # steady-state cycles per trip (None: timed in full)
    timing: TimingResult       # the W1 (or full) window's engine result
    block_idx: list            # blockIdx of the resident CTAs that were timed
    op_states: dict = field(default_factory=dict)   # {opcode: {state: cycles}} of the whole round
    timing2: TimingResult | None = None  # the W2 window's engine result (None: timed in full)
    later_cycles: float | None = None    # each later round's cycles, its CTAs following in their slots
                                         # (steady_round; None: count 1, or timed as the first)


@dataclass
class Prediction:
    kernel: str
    M: int
    N: int
    K: int
    time_ms: float
    cycles: float                       # sm__cycles_elapsed.avg
    metrics: dict                       # ncu names -> value (cycles, stalls, occupancy, issue)
    stalls: dict                        # smsp__average_warps_issue_stalled_<r>_per_issue_active.ratio
    rounds: list                        # Round per distinct resident-CTA count
    ctas_per_sm: int                    # on the busiest SM
    windows: tuple                      # (W1, W2)
    memory_levels: str                  # "cache model" or "all L2"
    notes: list = field(default_factory=list)
    op_state_cycles: dict = field(default_factory=dict)   # {opcode: {state: cycles}} on the busiest SM
    # what the engine was given (memory levels, ptxas's facts, SMs sharing L2/DRAM), for a timeline window
    # timed as the prediction times its rounds (gpusim.estimate.window); not part of to_json
    inputs: dict = field(default_factory=dict, repr=False)

    @property
    def gflops(self) -> float:
        return get_kernel(self.kernel).flop_count(self.M, self.N, self.K) / (self.time_ms * 1e-3) / 1e9

    @property
    def gbps(self) -> float:
        """The bandwidth the launch reaches if it moves each array once (KernelSpec.min_bytes)."""
        return get_kernel(self.kernel).min_bytes(self.M, self.N, self.K) / (self.time_ms * 1e-3) / 1e9

    def to_json(self) -> dict:
        return {"time_ms": self.time_ms, "cycles": self.cycles, "stalls": self.stalls,
                "stall_sites": self.op_state_cycles,
                "timing_metrics": self.metrics,
                "rounds": [{"resident_ctas": r.ctas, "count": r.count, "trips": r.trips,
                            "cycles": r.cycles, "cycles_per_trip": r.per_trip,
                            "later_round_cycles": r.later_cycles} for r in self.rounds],
                # the loads in the LSU pipe as ncu counts them, over the whole kernel (busiest SM)
                "lsu": {k: self.metrics[k] for k in LSU_METRIC_NAMES if k in self.metrics},
                "windows": list(self.windows), "memory_levels": self.memory_levels, "notes": self.notes}


def sharing_sms(result, gpu: GPU) -> float:
    """How many SMs' worth of demand the chip's L2, DRAM and L2-write bandwidths are shared among, as the
    busiest SM sees it (the engine gives that SM 1/this of each). Every SM of the launch, as a rule. A
    launch of one round whose CTAs do not spread evenly (1024 CTAs on 132 SMs: 100 SMs hold 8, 32 hold 7)
    is the exception: an SM draws on the chip-wide bandwidths in proportion to its CTAs' requests, so the
    SMs finish together and the busiest SM's share is its CTAs over the grid's, G / (its CTAs) SMs'
    worth (traces/hw/h200/ctasched/: sgemv and softmax at 4096, DRAM-bound, their SMs of 4 and of 3 CTAs
    finish within 1 % of each other; per SM the same, they would finish a third apart)."""
    G = int(np.prod(result.grid))
    per_sm = -(-G // gpu.sm_count)
    if 1 < per_sm <= max(1, result.occupancy.blocks_per_sm):
        return G / per_sm
    return float(min(G, gpu.sm_count))


def _time(trace: Trace, gpu: GPU, levels: _Levels, active_sms: float, ptxas=None, not_issued: bool = False,
          log_states: int = 0, groups: bool | None = None):
    """ptxas: (stall counts, scoreboards, read barriers, FP32 register reads) of the kernel's SASS
    (control_codes, register_banks), None for none. log_states: stall intervals to keep (simulate_sm).
    groups: the engine's waiter groups (_groups: one choice for all of a kernel's windows)."""
    counts, boards, reads, banks = ptxas if ptxas else (None, None, None, None)
    return simulate_sm(trace, gpu, global_level=levels(trace, gpu), active_sms=active_sms,
                       stall_counts=counts, scoreboards=boards, read_barriers=reads, register_banks=banks,
                       not_issued=not_issued, log_states=log_states, groups=groups)


def _start(trace: Trace, gpu: GPU, levels: _Levels, active_sms: float, ptxas=None, not_issued: bool = False,
           groups: bool | None = None, slots: int | None = None, jobs: dict | None = None) -> Future:
    """_time's run split in two: the loads' memory levels found here, the lowering and the engine's run
    (nogil) in the helper thread, beside the next window's front-end; a Future of simulate_sm's
    TimingResult. jobs: the runs one prediction pass started, by trace and slots (its other arguments
    are the pass's own): a run already started is handed back, not started again (_longest_first)."""
    if jobs is not None:
        got = jobs.get((id(trace), slots))
        if got is not None and got[0] is trace:
            return got[1]
    counts, boards, reads, banks = ptxas if ptxas else (None, None, None, None)
    level = levels(trace, gpu)

    def run():
        lw = lower(trace, gpu, None, level, active_sms, counts, boards, reads, banks, slots, share=True)
        lw.params[E.P_NOT_ISSUED] = int(not_issued)
        return timing.run_lowered(lw, gpu, 0, groups)
    job = in_background(run)
    if jobs is not None:
        jobs[(id(trace), slots)] = (trace, job)
    return job


def _got(x):
    """A TimingResult, waiting for it where it is a Future (_start)."""
    return x.result() if isinstance(x, Future) else x


# engine counters carried through the window extrapolation with the warp states (the last four: the
# shared and global loads' summed issue-to-retirement latency and their count, LSU_SUMS)
_BUSY = ("smsp__inst_executed_pipe_fmaheavy.sum", "smsp__inst_executed_pipe_fmalite.sum",
         "smsp__inst_executed_pipe_alu.sum", "smsp__inst_executed_pipe_xu.sum",
         "gpusim__shared_pipe_busy_cycles", "gpusim__l1tex_busy_cycles",
         "gpusim__mio_throttle_sm_pool_cycles", "gpusim__lg_throttle_sm_pool_cycles") + tuple(
         k for c in ("shared", "lg") for k in LSU_SUMS[c])


def _state_vec(t: TimingResult) -> np.ndarray:
    m = t.metrics
    busy = [m[k] for k in _BUSY[:4]] + [
        m["l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed"] * t.cycles / 100.0,
        m["gpusim__l1tex_tag_busy.pct"] * t.cycles / 100.0] + [m[k] for k in _BUSY[6:]]
    return np.array([t.state_cycles[s] for s in STATES] + busy + [t.not_issued_cycles.get(s, 0) for s in STATES]
                    + [t.inst_issued], np.float64)


def _extrapolate_ops(a: dict, b: dict, f: float) -> dict:
    """{op: {state: a + f * (b - a)}} clamped at 0 (the window extrapolation of the states)."""
    out = {}
    # sorted: a set's order changes with PYTHONHASHSEED, and --json must not
    for op in sorted(set(a) | set(b)):
        sa, sb = a.get(op, {}), b.get(op, {})
        d = {s: max(sa.get(s, 0) + f * (sb.get(s, 0) - sa.get(s, 0)), 0.0) for s in sorted(set(sa) | set(sb))}
        d = {s: v for s, v in d.items() if v > 0}
        if d:
            out[op] = d
    return out


def time_round(result, gpu: GPU, r: int, levels: _Levels, windows=(W1, W2), full: bool = False,
               ptxas=None, not_issued: bool = False, ahead: int = 0):
    """(cycles, state-cycles+issued vector, trips, per_trip, timing, block_idx, op_states, timing2) of
    one round of r resident CTAs; full=True times every trip (the reference for the sampling test).
    timing / timing2: the engine's results of the W1 / W2 windows (timing2 None when timed in full).
    ptxas: the SASS's stall counts and scoreboards (control_codes), None for none. op_states: the
    state cycles by opcode waited at, extrapolated like the vector. ahead: how many CTAs steady_round
    will want in the same windows (their traces are made with the round's: window_trace's ahead)."""
    finish, _ = _round_started(result, gpu, r, levels, windows, full, ptxas, not_issued, ahead)
    return finish()


def _round_started(result, gpu: GPU, r: int, levels: _Levels, windows=(W1, W2), full: bool = False,
                   ptxas=None, not_issued: bool = False, ahead: int = 0, jobs: dict | None = None):
    """time_round with its engine runs started (_start): (finish, early), finish() giving time_round's
    result; early: that result's shape before the engine is done (its timings Futures, per_trip 0.0 where
    it will be a number), what steady_round needs to start its own runs."""
    w1, w2 = windows
    bidx = _resident(result, gpu, r)
    more = _resident(result, gpu, ahead) if ahead > r else None
    grp = _groups(result, gpu)
    n_sm = sharing_sms(result, gpu)

    def whole(f, trips):
        def finish():
            t = f.result()
            return float(t.cycles), _state_vec(t), trips, None, t, bidx, t.op_state_cycles, None
        return finish, (None, None, trips, None, f, bidx, None, None)
    if full:
        tr, trips, _ = window_trace(result, bidx, None)
        return whole(_start(tr, gpu, levels, n_sm, ptxas, not_issued, groups=grp, jobs=jobs), trips)
    # both windows' traces before either is timed: the L2 model (levels) runs in the helper thread meanwhile
    tr1, trips, e1 = window_trace(result, bidx, w1, ahead=more)
    tr2 = e2 = None
    if trips > w2 and e1 < trips:
        tr2, _, e2 = window_trace(result, bidx, w2, ahead=more)
    if tr2 is None or e2 <= e1:      # short, or a loop the SASS front-end could not cut (it said why)
        if e1 < trips:
            tr1, _, _ = window_trace(result, bidx, None)
        return whole(_start(tr1, gpu, levels, n_sm, ptxas, not_issued, groups=grp, jobs=jobs), trips)
    f2 = _start(tr2, gpu, levels, n_sm, ptxas, not_issued, groups=grp, jobs=jobs)     # the longer first
    f1 = _start(tr1, gpu, levels, n_sm, ptxas, not_issued, groups=grp, jobs=jobs)

    def finish():
        t1, t2 = f1.result(), f2.result()
        # the windows' recorded trips (e1, e2): the SASS front-end's include the loop's last trip
        per_trip = (t2.cycles - t1.cycles) / (e2 - e1)
        v1, v2 = _state_vec(t1), _state_vec(t2)
        # a state that shrinks between the two windows (a start-up transient, e.g. drain) is
        # extrapolated down to zero, never below: cycles in a state cannot be negative
        vec = np.maximum(v1 + (trips - e1) * (v2 - v1) / (e2 - e1), 0.0)
        cycles = t1.cycles + (trips - e1) * per_trip
        ops = _extrapolate_ops(t1.op_state_cycles, t2.op_state_cycles, (trips - e1) / (e2 - e1))
        return float(cycles), vec, trips, float(per_trip), t1, bidx, ops, t2
    return finish, (None, None, trips, 0.0, f1, bidx, None, f2)


CHAIN_GENS = (2, 4)   # CTAs per slot of the two chained runs of steady_round: the period is their difference
                      # per CTA, past the first CTA that follows (reduce_smem at 4096, 8 slots: the engine's
                      # cycles per CTA between 2 and 4, 3 and 4, 4 and 6 CTAs a slot 2135 / 2077 / 2168;
                      # between 1 and 3 2617, the first round's CTAs starting together)


def _chain_gens(count: int) -> tuple[int, int]:
    """CTAs per slot of steady_round's two chained runs for a round that comes `count` times."""
    return CHAIN_GENS if count >= CHAIN_GENS[1] else (1, count)


def steady_round(result, gpu: GPU, r: int, count: int, levels: _Levels, sync, windows=(W1, W2),
                 full: bool = False, ptxas=None, not_issued: bool = False):
    """(cycles, state-cycles+issued vector, op_states) of each round after the first of `count` rounds
    of r resident CTAs, as the block scheduler refills the slots: each CTA starts when the one before
    it in its slot ends (the slot gap and the dispatch interval of micro/cta_turnaround.json), so the
    slots drift apart as their CTAs' times differ (traces/hw/h200/ctasched/: after the first round the
    H200's CTAs of one SM start spread out, not in waves, for the memory ladder's kernels). The engine
    times CHAIN_GENS CTAs a slot; the period is the difference per CTA. A round timed in trip windows
    has its chains timed in both windows and their period extrapolated to every trip as the round's
    own (the slots' drift changes how the CTAs' trips overlap, not only their starts and ends: with the
    first window's change alone smemtile at 2048 came out 3 % short of the chains timed in full). sync:
    time_round's result for the round. None when count < 2 (no CTA follows another)."""
    finish = _steady_started(result, gpu, r, count, levels, sync, windows, full, ptxas, not_issued)
    return finish() if finish else None


def _steady_started(result, gpu: GPU, r: int, count: int, levels: _Levels, sync, windows=(W1, W2),
                    full: bool = False, ptxas=None, not_issued: bool = False, jobs: dict | None = None):
    """steady_round with its engine runs started (_start); sync may be _round_started's early result (its
    timings Futures). finish() gives steady_round's result; None when count < 2."""
    if count < 2:
        return None
    _cyc_s, _v_s, trips, per_trip, t1, _bidx, _ops_s, t2 = sync
    g1, g2 = _chain_gens(count)
    grp = _groups(result, gpu)
    n_sm = sharing_sms(result, gpu)
    wins = (None,) if (full or per_trip is None) else tuple(windows)
    by_window = {}          # (runs by CTAs a slot, trips recorded) per window
    # the longest run first (the last window, the most CTAs a slot): the helper starts on it while this
    # thread makes the shorter ones, which it may then run itself (round_inputs._Job), instead of the
    # longest running alone at the end
    for k, window in reversed(list(enumerate(wins))):
        runs, rec = {}, {}
        for g in (g2, g1):
            tr, _, rec[g] = window_trace(result, _resident(result, gpu, r * g), window)
            if g == 1:      # the round's own run in this window: no CTA follows
                runs[g] = t1 if k == 0 else t2
                continue
            runs[g] = _start(tr, gpu, levels, n_sm, ptxas, not_issued, groups=grp, slots=r, jobs=jobs)
        by_window[k] = (runs, rec[g1])
    started = [by_window[k] for k in range(len(wins))]
    return lambda: _steady_finish(started, g1, g2, trips)


def _steady_finish(started, g1, g2, trips):
    """steady_round's result from its started runs (_steady_started)."""
    per_window = []         # (period, state vector, op states, trips recorded) per window
    for runs, rec in started:
        a, b = _got(runs[g1]), _got(runs[g2])
        oa, ob = a.op_state_cycles, b.op_state_cycles
        ops_gen = {op: {s: (ob.get(op, {}).get(s, 0) - oa.get(op, {}).get(s, 0)) / (g2 - g1)
                        for s in set(oa.get(op, {})) | set(ob.get(op, {}))} for op in set(oa) | set(ob)}
        per_window.append(((b.cycles - a.cycles) / (g2 - g1), (_state_vec(b) - _state_vec(a)) / (g2 - g1),
                           ops_gen, rec))
    # one window (timed in full, or not extrapolated): its period as it is; two: extrapolated to every trip
    (p1, v1, o1, e1), (p2, v2, o2, e2) = per_window[0], per_window[-1]
    frac = (trips - e1) / (e2 - e1) if e2 > e1 else 0.0
    return (float(p1 + frac * (p2 - p1)), np.maximum(v1 + frac * (v2 - v1), 0.0),
            _extrapolate_ops(o1, o2, frac))


def _longest_first(result, gpu: GPU, r: int, count: int, levels: _Levels, windows, ptxas, not_issued: bool,
                   jobs: dict):
    """Start a round's longest engine run before the front-end makes the round's other windows: the
    chained CTAs' run in the last window (count >= 2), else the round's own run there. The helper thread
    then runs it while this thread makes the rest, where it used to start after them all and run alone
    at the end; _start's `jobs` hands it to the call that would have started it. The order of the work
    only: every run and every figure is the same. For the SASS front-end (its window traces are kept
    for the later calls) and a loop the simulation saw run past the last window (result.loop_trips);
    should the round then time the whole loop instead, the run is left unused."""
    w2 = windows[-1]
    if getattr(result, "frontend", "python") != "sass" or getattr(result, "loop_trips", 0) <= w2:
        return
    n_sm = sharing_sms(result, gpu)
    ctas, slots = (r * _chain_gens(count)[1], r) if count >= 2 else (r, None)
    tr, _, _ = window_trace(result, _resident(result, gpu, ctas), w2)
    _start(tr, gpu, levels, n_sm, ptxas, not_issued, groups=_groups(result, gpu), slots=slots, jobs=jobs)


W0 = 4     # trips of the window that gives the first round's CTA finish order: the fractions settle by
           # 4 trips (coalesced 0.84 / 0.88 / 0.88 at 2 / 4 / 8; the others within 0.02 of 8 trips)


def first_round_probe(result, gpu: GPU, r: int, ptxas=None) -> tuple[list, float]:
    """When each of the r CTAs that start together on an SM finishes, as a fraction of the last
    (oldest first), from a W0-trip window timed with every L1 miss an L2 hit; the L2 model's
    "phased" schedule starts from it. The H200's first waves (traces/hw/h200/ctasched/, 4096) finish
    together for the register-tiled kernels and tiled32 (0.96-1.0; the engine 0.94-0.99, but regtile1d's
    younger CTA at 0.80 of the older's time, 2026-12-01; the H200's 0.999) and
    nearly so for coalesced (0.97; the engine 0.93), but in a staircase for naive (0.51 / 1.0; the engine
    0.99) and smemtile (0.72 / 1.0; the engine 0.95), where the engine's CTAs finish together: an older
    CTA's warps take the issue slots and the freed queue entries first, and the engine's rounds
    (CTAs launched together) could not follow the stagger that leaves. Making the engine's queue
    fairness favour older CTAs gave naive 0.52 and smemtile 0.69 but coalesced 0.67 (H200 0.97) and
    cut naive's warp cycles per instruction by 25 %; it is not used.
    Returns (those fractions, a first estimate of the round's duration in ns: the window's cycles
    scaled to the round's trips, the L2 model's time unit for its pending hits)."""
    bidx = _resident(result, gpu, r)
    tr, trips = build_window(result, bidx, W0)
    t = _time(tr, gpu, _Levels(result, gpu, True, l2_hits_only=True), sharing_sms(result, gpu), ptxas,
              groups=_groups(result, gpu))
    fin = [float(t.warp_retire[t.warps[:, 0] == c].max()) for c in np.unique(t.warps[:, 0])]
    last = max(fin) or 1.0
    round_ns = t.cycles * max(trips, W0) / W0 / (gpu.sm_clock_max_mhz * 1e-3)
    return ([f / last for f in fin] if r > 1 else [1.0] * r), float(round_ns)


def schedule_cycles(rounds: list, gpu: GPU, ends: list | None = None, sms_reached: int = 0,
                    first_round_ctas: int = 0) -> float:
    """The busiest SM's cycles for its rounds [(resident CTAs r, rounds, cycles of one, drain[, later])] in
    order (later: the cycles of each round after the first, its CTAs following in their slots, slot gap
    and dispatch included: steady_round; None or absent: the rule below), as
    the block scheduler hands the CTAs out (micro/cta_turnaround.json): it gives an SM a new CTA at most
    every cta_dispatch_ns, so the first round's r CTAs start (r - 1) of those apart, and a CTA slot stands
    empty cta_slot_gap_ns between one CTA's exit and the next one's start; each later round takes the
    longest of r dispatches, its cycles, and its cycles to the last warp's exit plus that gap. drain: the
    cycles a round runs on after its warps exit (the SM's stores still going to DRAM or the L2), in which
    the gap passes (micro/cta_gap_memory.json: with nothing left to drain, the gap is not hidden by
    other slots' loads). (The engine runs a round's CTAs from cycle 0 together.) ends: if given, gets
    (cycle its first CTA ends, its CTAs) for every round, in order. sms_reached: the SMs the launch's first
    CTAs go to; the block scheduler hands the chip's CTAs out one after another, an SM's every
    cta_dispatch_ns, so the last SM's first CTA starts that interval's share sms_reached / sm_count after
    the first SM's (micro/one_round.json: 64-128 ns between the first and last starts of 128-132 CTAs).
    The busiest SM is taken as that last one. first_round_ctas: the launch's first-round CTAs over the chip
    (G1); given, the first round's last CTA starts after the larger of that reach and G1 x
    cta_first_round_ns (micro/launch_end.json: the block scheduler fills a first round faster than it
    refills slots, 352 ns for 1056 CTAs where cta_dispatch_ns would take 634), not (r - 1) dispatches."""
    per_ns = gpu.sm_clock_max_mhz * 1e-3
    d, g = gpu.cta_dispatch_ns * per_ns, gpu.cta_slot_gap_ns * per_ns
    reach = d * min(sms_reached, gpu.sm_count) / gpu.sm_count
    burst = gpu.cta_first_round_ns * per_ns * first_round_ctas if first_round_ctas and gpu.cta_first_round_ns > 0 \
        else None
    total, first = 0.0, True
    for r, count, cyc, drain, *chained in rounds:
        if count <= 0:
            continue
        later = max(cyc + max(g - drain, 0.0), r * d)
        if chained and chained[0] is not None:
            later = chained[0]
        for k in range(count):
            if first:
                total += (max(reach, burst) if burst is not None else reach + (r - 1) * d) + cyc
                first = False
            else:
                total += later
            if ends is not None:
                ends.append((total - (r - 1) * d, r))
    return total


def _drain(t: TimingResult) -> float:
    """Cycles the engine's round ran on after its last warp exited (stores draining)."""
    return max(float(t.cycles) - float(t.warp_retire.max()), 0.0) if t.warp_retire.size else 0.0


def plan_rounds(n_ctas: int, blocks_per_sm: int, sm_count: int) -> tuple[int, list]:
    """(CTAs on the busiest SM, [(resident CTAs, rounds)])."""
    per_sm = -(-n_ctas // sm_count)
    B = max(1, blocks_per_sm)
    out = []
    if per_sm // B:
        out.append((B, per_sm // B))
    if per_sm % B:
        out.append((per_sm % B, 1))
    return per_sm, out


def lowered_round(result, pred, trips: int | None):
    """The engine's input for the first round of a launch over `trips` loop trips (None: every trip), with
    what the prediction `pred` gave the engine (memory levels, ptxas's facts, SMs sharing L2/DRAM): the
    run a benchmark times as `gpusim run` runs it."""
    from gpusim.timing import lower
    inp, r0 = pred.inputs, pred.rounds[0]
    tr, _ = build_window(result, r0.block_idx, trips)
    counts, boards, reads, banks = inp["ptxas"] or (None, None, None, None)
    gpu = inp["gpu"]
    return lower(tr, gpu, global_level=inp["levels"](tr, gpu), active_sms=inp["active_sms"], stall_counts=counts,
                 scoreboards=boards, read_barriers=reads, register_banks=banks)


def prediction_levels(result, gpu: GPU, ptxas=None, *, enabled: bool = True, schedule: str = "phased",
                      l2_pending: bool = True, dram_rows: str = "spread", step=None):
    """(the memory levels of a window's global loads, the first round's slot finish fractions or None)
    as predict() gives them to the engine (see predict for the switches); step() is called once the
    first-round probe is done (predict's progress)."""
    finish, round_ns = None, None
    if enabled and not _l2_warm(result, gpu) and (schedule == "phased" or (l2_pending and schedule != "measured")):
        f, round_ns = first_round_probe(result, gpu, result.occupancy.blocks_per_sm, ptxas)
        finish = f if schedule == "phased" else None
    if step:
        step()
    return _Levels(result, gpu, enabled, schedule=schedule, slot_finish=finish,
                   pending_ns=l2_pending_window_ns(gpu) if l2_pending else 0.0, dram_rows=dram_rows,
                   unit_ns=round_ns), finish


WRITE_RISE_STEPS = 4         # at most this many re-timings for the DRAM latency under writes
WRITE_RISE_SETTLED = 0.01    # ... stopping once the rise moves by less than this share of the idle latency


def predict(result, arch: str | GPU | None = None, *, dram_writes: bool = True, progress=None,
            **switches) -> Prediction:
    """Predicted whole-kernel time and warp-state ratios of a simulated launch (see module doc and
    _predict_at for the switches). dram_writes: a launch whose stores the L2 writes back to DRAM has
    its DRAM reads timed at the latency those writes raise them to (micro/loaded_latency_writes.json:
    dram_write_latency_cycles_per_tbps and dram_mix_latency_cycles_per_tbps2 of the preset), at the
    read and write rates of the prediction itself: timed at the idle latency first, then again at the
    latency its rates give, until the rise settles; False keeps the idle latency (a diagnosis)."""
    # the GPU the result ran on, with any --set changes, unless another is asked for
    base = get_arch(arch) if arch is not None else getattr(result, "gpu", None) or get_arch(result.arch)
    gpu = slowest_l2_latency(result, base)
    try:
        pred = _predict_at(result, gpu, progress=progress, **switches)
        if dram_writes:
            pred = _under_writes(result, gpu, pred, lambda g: _predict_at(result, g, **switches))
    finally:
        release_lowering(result)
    if gpu is not base:
        pred.notes.append(f"L2 latency at the slowest of {one_round_ctas(result, base)} CTAs: "
                          f"{gpu.l2_hit_latency_cycles:.0f} cycles (micro/one_round.json)")
    return pred


def one_round_ctas(result, gpu: GPU) -> int:
    """The launch's CTAs if every one of them is resident at once (one round on every SM), else 0."""
    gx, gy, gz = result.grid
    G = gx * gy * gz
    return G if G <= max(1, result.occupancy.blocks_per_sm) * gpu.sm_count else 0


def slowest_l2_latency(result, gpu: GPU) -> GPU:
    """gpu, its L2 latency that of the slowest of n SMs where a launch's n CTAs are all resident at once.

    Such a launch ends with its slowest CTA, and alike CTAs differ by their SMs' paths to the L2: CTAs that
    only chase L2 hits spread as normal draws with a standard deviation of sm_l2_latency_spread of their
    time (micro/one_round.json), so the slowest of n takes 1 + spread x E[max of n standard normals]
    (Blom's approximation) times the median's. The engine times the busiest SM at that L2 latency, so
    only the time a CTA waits on the L2 grows. A launch of several rounds (the block scheduler hands the
    next CTA to whichever SM frees first) is left as it is."""
    from dataclasses import replace
    n = one_round_ctas(result, gpu)
    if n < 2 or gpu.sm_l2_latency_spread <= 0:
        return gpu
    return replace(gpu, l2_hit_latency_cycles=gpu.l2_hit_latency_cycles
                   * (1.0 + gpu.sm_l2_latency_spread * expected_max(n)))


def expected_max(n: int) -> float:
    """The expected largest of n standard normal draws, by Blom's approximation (calibrate/one_round.py
    fits sm_l2_latency_spread with it)."""
    from statistics import NormalDist
    return NormalDist().inv_cdf((n - 0.375) / (n + 0.25))


def dram_write_rise(gpu: GPU, read_tbps: float, write_tbps: float) -> float:
    """SM cycles a DRAM read's latency rises by beside read_tbps of DRAM reads and write_tbps of writes
    (the preset's fit to micro/loaded_latency_writes.json: a term in the writes and one in reads x writes,
    the turnarounds between them; reads alone add nothing below the bandwidth the engine's queues model)."""
    return (gpu.dram_write_latency_cycles_per_tbps * write_tbps
            + gpu.dram_mix_latency_cycles_per_tbps2 * read_tbps * write_tbps)


def _under_writes(result, gpu: GPU, pred: Prediction, again) -> Prediction:
    """pred re-timed (again(gpu with a raised DRAM latency)) until the write rise settles; see predict."""
    from dataclasses import replace
    hr = getattr(pred.inputs.get("levels"), "hit_rates", None)
    wbytes = hr.get("dram__bytes_write.sum", 0.0) if hr else 0.0
    if wbytes <= 0:         # no cache model, or a launch the L2 holds: nothing written back
        return pred
    clk = gpu.sm_clock_max_mhz
    idle = gpu.dram_latency_ns * clk / 1000.0
    rise, timed_at = 0.0, 0.0
    for _ in range(WRITE_RISE_STEPS):
        secs = pred.cycles / (clk * 1e6)
        read, write = hr["dram__bytes_read.sum"] / secs / 1e12, wbytes / secs / 1e12
        rise = dram_write_rise(gpu, read, write)
        if abs(rise - timed_at) < WRITE_RISE_SETTLED * idle:
            break
        timed_at = rise
        pred = again(replace(gpu, dram_latency_ns=gpu.dram_latency_ns + rise * 1000.0 / clk))
        hr = pred.inputs["levels"].hit_rates
    secs = pred.cycles / (clk * 1e6)
    pred.metrics["dram__bytes_write.sum"] = wbytes
    pred.metrics["gpusim__dram_write_gbps"] = wbytes / secs / 1e9
    pred.metrics["gpusim__dram_read_latency_cycles"] = idle + timed_at
    if timed_at > 0:
        pred.notes.append(f"DRAM reads timed at {idle + timed_at:.0f} cycles: {idle:.0f} idle plus {timed_at:.0f} for "
                          f"the launch's DRAM writes ({wbytes / 1e6:.1f} MB written back, {read:.2f} TB/s read and "
                          f"{write:.2f} TB/s written at the predicted time; micro/loaded_latency_writes.json)")
    return pred


def _predict_at(result, gpu: GPU, *, levels: bool = True, windows=(W1, W2),
                full: bool = False, control_codes: bool = True, schedule: str = "phased",
                scoreboards: str = "all", read_barriers: bool = True, l2_pending: bool = True,
                not_issued: bool = False, dram_rows: str = "spread", register_banks: bool = True,
                chain: bool = True, progress=None) -> Prediction:
    """Predicted whole-kernel time and warp-state ratios of a simulated launch on `gpu` (see module doc).
    schedule: the L2 model's CTA schedule (gpusim.memory.cache): "phased" (default: slots staggered
    as the engine's first round finishes, slot_finish), "fluid", "waves", or "measured" to replay
    the H200's recorded one (a diagnosis of the L2 model, not a prediction). scoreboards: which
    loads share ptxas's dependency barriers: "all" (default: global and shared loads,
    control_codes.scoreboard_table), "global" (global loads only: global_scoreboards, a diagnosis)
    or "none". read_barriers: memory
    instructions hold ptxas's read barriers until their pipe takes them (control_codes.
    read_barrier_table); False to leave them out (a diagnosis). l2_pending: an L2 hit on a line another
    CTA's miss began fetching less than D - L before (the DRAM and L2 latencies) gets its data with that
    fill and is timed at lower.l2_pending_latency_cycles (LEVEL_L2_PENDING; gpusim.memory.cache.
    l2_simulate, in the schedule's time unit: the engine's first estimate of a round, first_round_probe,
    or the record's for "measured"); False times every L2 hit at the L2 latency (a diagnosis).
    dram_rows (a diagnosis): "grouped" gives the DRAM share of a window's global loads to whole load
    instructions of a CTA (all its warps' rows) rather than row by row (gpusim.memory.cache.global_levels).
    register_banks: FP32 rows carry the register reads of the kernel's SASS (register_banks); False to
    leave them out (a diagnosis: the switch bubble alone).
    chain: the rounds after the first are timed with each CTA following the one before it in its slot
    (steady_round); False times every round as the first, its CTAs starting together (a diagnosis).
    not_issued (a diagnosis): also the share of each state's cycles in which the warp's SMSP issued
    nothing (gpusim__<state>_not_issued.pct), what ncu's PC sampling counts as not-issued samples.
    progress: called as progress(steps done, steps) after the first-round finish order, the L2 model and
    each round's windows (a progress bar)."""
    if scoreboards not in ("all", "global", "none"):
        raise GpusimError(f"scoreboards must be 'all', 'global' or 'none', got {scoreboards!r}")
    gx, gy, gz = result.grid
    G = gx * gy * gz
    per_sm, plan = plan_rounds(G, result.occupancy.blocks_per_sm, gpu.sm_count)
    rounds, vec = [], None
    op_states: dict = {}
    table = stall_table(result.kernel, result.params, result.M, result.N, result.K) if control_codes else None
    ptxas = ptxas_facts(result, scoreboards, read_barriers, register_banks) if table else None
    steps = [0, 2 + len(plan)]

    def step():
        steps[0] += 1
        if progress:
            progress(*steps)
    l2_model = bool(levels and plan and not _l2_warm(result, gpu))
    levels_fn, finish = prediction_levels(result, gpu, ptxas, enabled=levels, schedule=schedule,
                                          l2_pending=l2_pending, dram_rows=dram_rows, step=step)
    step()
    # every round's engine runs started first (the helper thread runs them while the front-end makes the
    # next windows), then each round finished in order
    started = []
    jobs: dict = {}
    for r, count in plan:
        if not full:
            _longest_first(result, gpu, r, count if chain else 1, levels_fn, windows, ptxas, not_issued, jobs)
        round_done, early = _round_started(result, gpu, r, levels_fn, windows, full, ptxas, not_issued,
                                           ahead=r * _chain_gens(count)[1] if chain and count >= 2 else 0,
                                           jobs=jobs)
        started.append((round_done, _steady_started(result, gpu, r, count, levels_fn, early, windows, full,
                                                    ptxas, not_issued, jobs) if chain else None))
        step()
    for (r, count), (round_done, steady_done) in zip(plan, started):
        cyc, v, trips, per_trip, t, bidx, ops, t2 = round_done()
        steady = steady_done() if steady_done else None
        rounds.append(Round(r, count, trips, cyc, per_trip, t, bidx, ops, t2,
                            steady[0] if steady else None))
        parts = [(1 if steady else count, v, ops)] + ([(count - 1, steady[1], steady[2])] if steady else [])
        for n_r, v_r, ops_r in parts:
            for op, st in ops_r.items():
                acc = op_states.setdefault(op, {})
                for k, c in st.items():
                    acc[k] = acc.get(k, 0.0) + n_r * c
            vec = n_r * v_r if vec is None else vec + n_r * v_r
    ends: list = []
    reached = min(G, gpu.sm_count)
    # a launch over many SMs lets the next kernel start later after its last CTA than a lone CTA does
    # (micro/launch_end.json), the more SMs it reaches
    end_us = gpu.launch_end_ns * reached / gpu.sm_count / 1e3
    total_cycles = schedule_cycles([(r.ctas, r.count, r.cycles, _drain(r.timing), r.later_cycles) for r in rounds],
                                   gpu, ends, sms_reached=reached,
                                   first_round_ctas=min(G, max(1, result.occupancy.blocks_per_sm) * gpu.sm_count))
    n_atomic = shared_address_atomics(getattr(result, "trace", None))
    atomic_wait = 0.0
    if n_atomic and gpu.atomic_same_address_ns > 0:
        # the CTAs of each round (of the busiest SM's per_sm) make their atomics as they end
        done = queue_end_cycles([(t, r / per_sm) for t, r in ends], n_atomic,
                                gpu.atomic_same_address_ns * gpu.sm_clock_max_mhz * 1e-3)
        atomic_wait = max(done - total_cycles, 0.0)
        total_cycles += atomic_wait
    states = {s: float(vec[i]) for i, s in enumerate(STATES)}
    issued = float(vec[-1])
    active = sum(states.values())
    stalls = {stall_metric(s): states[s] / issued for s in STATES}
    smsp = gpu.smsp_per_sm
    m = {
        "sm__cycles_elapsed.avg": total_cycles,
        "gpu__time_duration.sum": total_cycles / (gpu.sm_clock_max_mhz * 1e6) * 1e9,
        "smsp__average_warp_latency_per_inst_issued.ratio": active / issued,
        "smsp__issue_active.avg.per_cycle_active": issued / (smsp * total_cycles),
        "smsp__issue_active.avg.pct_of_peak_sustained_active": 100.0 * issued / (smsp * total_cycles),
        "sm__warps_active.avg.pct_of_peak_sustained_active": 100.0 * active / (total_cycles * gpu.max_warps_per_sm),
        "smsp__warps_active.avg.per_cycle_active": active / (smsp * total_cycles),
        "gpusim__inst_issued_per_sm": issued,
        "gpusim__launch_overhead_us": gpu.launch_overhead_us,
        "gpusim__launch_end_us": end_us,
    }
    m.update(stalls)
    busy = dict(zip(_BUSY, vec[len(STATES):len(STATES) + len(_BUSY)]))
    if not_issued:
        lat0 = len(STATES) + len(_BUSY)
        m.update(not_issued_metrics({s: float(vec[lat0 + i]) for i, s in enumerate(STATES)}, states))
    cyc = max(total_cycles, 1.0)
    m.update({
        "gpusim__pipe_fma_issue.pct": 100.0 * (busy[_BUSY[0]] + busy[_BUSY[1]]) / (smsp * cyc),
        "gpusim__pipe_alu_issue.pct": 100.0 * busy[_BUSY[2]] * gpu.alu_issue_interval_cycles / (smsp * cyc),
        "gpusim__shared_pipe_busy.pct": 100.0 * busy[_BUSY[4]] / cyc,
        "gpusim__l1tex_busy.pct": 100.0 * busy[_BUSY[5]] / cyc,
        "gpusim__mio_throttle_sm_pool.ratio": busy[_BUSY[6]] / issued,
        "gpusim__lg_throttle_sm_pool.ratio": busy[_BUSY[7]] / issued,
    })
    # loads in the LSU pipe over the whole kernel, as ncu counts them: pending per cycle and mean latency
    for c in ("shared", "lg"):
        lat, n = busy[LSU_SUMS[c][0]], busy[LSU_SUMS[c][1]]
        m[LSU_PENDING.format(c)] = lat / cyc
        m[LSU_LATENCY.format(c)] = lat / n if n > 0 else 0.0
    hr = getattr(levels_fn, "hit_rates", None)
    if hr:
        secs = total_cycles / (gpu.sm_clock_max_mhz * 1e6)
        for k in ("l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct", "lts__t_sector_op_read_hit_rate.pct",
                  "dram__bytes_read.sum"):
            m[k] = hr[k]
        if secs > 0:
            m["gpusim__dram_read_gbps"] = hr["dram__bytes_read.sum"] / secs / 1e9
            m["gpusim__dram_read.pct_of_achieved_peak"] = (100.0 * m["gpusim__dram_read_gbps"]
                                                          / gpu.dram_achieved_bandwidth_gbps)
    notes = []
    src = levels_fn.source
    if src == "all L2":
        notes.append("every global load is timed as an L2 hit (gpusim.memory.cache not available)")
    notes.append(f"time adds {gpu.launch_overhead_us:.2f} us of launch overhead (micro/launch_overhead.json) and "
                 f"{end_us:.2f} us for its end over {reached} SMs (micro/launch_end.json)")
    if n_atomic:
        notes.append(f"{n_atomic} atomics on one address, one per {gpu.atomic_same_address_ns:.3f} ns at the L2 "
                     f"(micro/atomic_contention.json): {atomic_wait / (gpu.sm_clock_max_mhz * 1e-3) / 1e3:.2f} us "
                     "after the last round")
    if len(rounds) and (rounds[0].ctas > 1 or sum(r.count for r in rounds) > 1):
        notes.append(f"rounds as the block scheduler hands CTAs out: one per {gpu.cta_dispatch_ns:.1f} ns an SM, a "
                     f"slot empty {gpu.cta_slot_gap_ns:.0f} ns between CTAs (micro/cta_turnaround.json)")
    for rd in rounds:
        if rd.later_cycles is not None:
            notes.append(f"rounds after the first of {rd.ctas} CTA(s): each CTA follows the one before it in its slot "
                         f"(the engine timed {CHAIN_GENS[1] if rd.count >= CHAIN_GENS[1] else rd.count} a slot): "
                         f"{rd.later_cycles:,.0f} cycles a round against the first round's {rd.cycles:,.0f}")
        elif rd.count > 1:
            notes.append(f"rounds of {rd.ctas} CTA(s) timed as the first, their CTAs starting together (chain=False)")
    if finish is not None:
        notes.append("L2 model: CTA slots phased as the first round finishes (" +
                     " / ".join(f"{f:.2f}" for f in finish) + ")")
    elif schedule != "phased":
        notes.append(f"L2 model: CTA schedule {schedule!r}" + (" (the H200's recorded one: a replay, not a "
                                                                "prediction)" if schedule == "measured" else ""))
    if l2_model:
        notes.append("L2 hits on lines another CTA's miss is still fetching wait for the fill" if l2_pending else
                     "every L2 hit at the L2 latency, none waits for a fill in flight (a diagnosis)")
    if dram_rows != "spread":
        notes.append(f"DRAM rows {dram_rows} by load instruction and CTA (a diagnosis, not the prediction)")
    if table:
        notes.append(f"issue gaps: ptxas's stall counts from {table[1].split(' (')[0]}")
    elif control_codes:
        notes.append("no SASS record of this kernel: no ptxas stall counts (each warp may issue every cycle)")
    time_ms = total_cycles / (gpu.sm_clock_max_mhz * 1e3) + (gpu.launch_overhead_us + end_us) / 1e3
    return Prediction(result.kernel, result.M, result.N, result.K, time_ms, total_cycles, m, stalls, rounds,
                      per_sm, tuple(windows), src, notes, op_states,
                      {"levels": levels_fn, "ptxas": ptxas, "active_sms": sharing_sms(result, gpu), "gpu": gpu})


__all__ = ["predict", "prediction_levels", "ptxas_facts", "lowered_round", "Prediction", "Round", "plan_rounds", "time_round", "build_window", "W1", "W2",
           "SAMPLING_TOLERANCE"]
