"""Timing: a warp-level cycle engine for one SM and its resident CTAs (issue 4, first stage).

`simulate_sm(trace, arch, ctas)` lowers the trace (lower.py), runs the numba cycle loop
(engine.py) and returns a `TimingResult` with elapsed cycles, per-warp cycles in each ncu
warp state (states.py) and the ncu-style ratios derived from them. Each trace row is
simulated once whatever its weight: time a full-mode trace. Every global load is an L2
hit until a cache model fills `global_level` (the hook in lower()).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gpusim.arch import get_arch, GPU
from gpusim.errors import GpusimError
from gpusim.timing import engine as E
from gpusim.timing.lower import lower, Lowered, LEVEL_L1, LEVEL_L2, LEVEL_DRAM
from gpusim.timing.states import STATES, N_STATES, stall_metric, warp_ratios
from gpusim.trace.trace import Trace


@dataclass
class TimingResult:
    cycles: int                      # sm__cycles_elapsed: last warp retired
    inst_issued: int                 # warp-instructions issued (= rows simulated)
    state_cycles: dict               # ncu state name -> cycles summed over warps
    warp_state_cycles: np.ndarray    # (warps, N_STATES)
    warps: np.ndarray                # (warps, 2): trace CTA id, warp in CTA
    warp_issued: np.ndarray          # instructions issued per warp
    warp_retire: np.ndarray          # cycle each warp retired (its active cycles less warp_launch)
    issue_cycle: np.ndarray          # issue cycle of each lowered row (event log)
    trace_row: np.ndarray            # input trace row of each lowered row
    row_warp: np.ndarray             # warp (index into `warps`) of each lowered row
    metrics: dict                    # ncu metric name -> value
    op_state_cycles: dict = field(default_factory=dict)   # opcode -> {state: cycles}, the opcode waited at
    notes: list = field(default_factory=list)
    # state -> its cycles in which the warp's SMSP issued nothing and held no warp at dispatch (ncu's
    # "not issued" PC samples, smsp__pcsamp_warps_issue_stalled_<reason>_not_issued); only when asked for
    not_issued_cycles: dict = field(default_factory=dict)
    # (n, 5) stall intervals when asked for (simulate_sm's log_states): warp index, ncu state index (STATES),
    # first cycle, end cycle (exclusive), the lowered row it waited at (trace_row maps it to the trace), in
    # the order they end; the selected cycles are the issue events
    state_log: np.ndarray = field(default_factory=lambda: np.zeros((0, 5), np.int64))
    # the cycle each lowered row's result is available (a load's: its data returned to the registers)
    ready_cycle: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    # the cycle each warp's CTA started (0 but for a CTA that followed another in its slot)
    warp_launch: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

    def warp_metrics(self, i: int) -> dict:
        """The ncu ratios for warp i alone (its cycles per its issued instructions)."""
        start = self.warp_launch[i] if len(self.warp_launch) else 0
        return warp_ratios(self.warp_retire[i] - start, self.warp_issued[i], self.warp_state_cycles[i])


# ncu's names for the loads in the LSU pipe (format with "shared" or "lg"): loads pending per SM cycle from
# issue to retirement, and their average latency; the engine reports both for its windows (run_lowered)
LSU_PENDING = "sm__inst_pending_pipe_lsu_mem_{}_cmd_read.avg.per_cycle_active"
LSU_LATENCY = "sm__average_inst_latency_pipe_lsu_mem_{}_cmd_read.ratio"
LSU_METRIC_NAMES = tuple(f.format(c) for c in ("shared", "lg") for f in (LSU_PENDING, LSU_LATENCY))
LSU_SUMS = {c: (f"gpusim__lsu_{c}_latency_cycles.sum", f"gpusim__lsu_{c}_loads.sum") for c in ("shared", "lg")}


def not_issued_metric(state: str) -> str:
    """The share of a state's warp-cycles in which the warp's SMSP issued nothing, in percent: what ncu's
    PC sampling calls its not-issued samples of that reason over all its samples."""
    return f"gpusim__{state}_not_issued.pct"


def not_issued_metrics(not_issued: dict, state_cycles: dict) -> dict:
    return {not_issued_metric(s): 100.0 * not_issued[s] / state_cycles[s] for s in STATES if state_cycles[s] > 0}


def _fold_pool_states(c: np.ndarray) -> np.ndarray:
    """(rows, N_ENGINE_STATES) state cycles -> (rows, N_STATES), each pool state added to its throttle."""
    out = c[:, :N_STATES].copy()
    out[:, STATES.index("mio_throttle")] += c[:, E.S_MIO_POOL]
    out[:, STATES.index("lg_throttle")] += c[:, E.S_LG_POOL]
    return out


# warps per SMSP from which the engine keeps queue waiters in groups (engine.run's `groups`: the same
# results; in-process A/B, 2026-11-30: 1.1-1.5x faster with 16 per SMSP, 0.97-1.0 with 8, 0.93-0.95 with
# 2-4, where the loop's larger code costs more than the evaluations it saves)
GROUPS_FROM_WARPS_PER_SMSP = 12


def run_lowered(lw: Lowered, arch: GPU, log_states: int = 0, groups: bool | None = None) -> TimingResult:
    """Run the cycle engine on a lowered trace; log_states: stall intervals to keep (simulate_sm).
    groups: keep queue waiters in groups (the same results, one of the loop's two compiled variants);
    None: when an SMSP of this trace has GROUPS_FROM_WARPS_PER_SMSP warps or more."""
    log = np.zeros((log_states, 5), np.int64) if log_states > 0 else np.zeros(1, np.int64)
    if groups is None:
        groups = np.diff(lw.smsp_start).max(initial=0) >= GROUPS_FROM_WARPS_PER_SMSP
    groups = bool(groups and log_states == 0)
    cta_next = lw.cta_next if lw.cta_next is not None else np.full(len(lw.ctas), -1, np.int64)
    cycles, counts, issue_cycle, finish, ctr, op_counts, lat_counts, n_log, ready, launch = E.run(
        lw.warp_start, lw.warp_smsp, lw.warp_cta, lw.cta_warp_start, lw.smsp_warps, lw.smsp_start,
        lw.rows, lw.line_id, lw.params, lw.rb_wait, lw.provider, len(lw.opcodes), log,
        E.GROUPS_ON if groups else E.GROUPS_OFF, cta_next)
    log = log[:n_log].copy() if log.ndim == 2 else np.zeros((0, 5), np.int64)
    if ctr[E.K_DEADLOCK]:
        raise GpusimError("timing engine deadlock: some warp waits at a barrier the rest of its CTA never reaches")
    cycles = int(cycles)
    n = len(lw.cls)
    # the engine's SM-pool throttles are mio_throttle / lg_throttle to ncu: folded in, and kept apart
    pool = {"mio": int(counts[:, E.S_MIO_POOL].sum()), "lg": int(counts[:, E.S_LG_POOL].sum())}
    counts, op_counts, lat_counts = (_fold_pool_states(counts), _fold_pool_states(op_counts),
                                     _fold_pool_states(lat_counts))
    active = int((finish - launch).sum())
    state_cycles = {name: int(counts[:, k].sum()) for k, name in enumerate(STATES)}
    not_issued = ({name: int(lat_counts[:, k].sum()) for k, name in enumerate(STATES)}
                  if lw.params[E.P_NOT_ISSUED] else {})
    smsp = arch.smsp_per_sm
    m = {
        "sm__cycles_elapsed.avg": cycles,
        "smsp__inst_issued.sum": n,
        "smsp__warps_active.sum": active,
        "smsp__average_warp_latency_per_inst_issued.ratio": active / n,
        "smsp__issue_active.avg.pct_of_peak_sustained_active": 100.0 * n / (smsp * cycles),
        "sm__warps_active.avg.per_cycle_active": active / cycles,
        "smsp__inst_executed_pipe_fmaheavy.sum": int(ctr[E.K_HEAVY]),
        "smsp__inst_executed_pipe_fmalite.sum": int(ctr[E.K_LITE]),
        "smsp__inst_executed_pipe_alu.sum": int(ctr[E.K_ALU]),
        "smsp__inst_executed_pipe_xu.sum": int(ctr[E.K_XU]),
        "smsp__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active":
            100.0 * (ctr[E.K_HEAVY] + ctr[E.K_LITE]) / (smsp * cycles),
        "l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed":
            100.0 * ctr[E.K_SHARED_BUSY] / cycles,
        "gpusim__l1tex_tag_busy.pct": 100.0 * ctr[E.K_L1_BUSY] / cycles,
        "gpusim__l2_to_l1_fill_busy.pct": 100.0 * ctr[E.K_FILL_BUSY] / cycles,
        # the part of mio_throttle / lg_throttle in which the warp's own SMSP queue had room and the
        # SM-wide pool had none (warp-cycles, and per issued instruction as ncu's stall ratios)
        "gpusim__mio_throttle_sm_pool_cycles": pool["mio"],
        "gpusim__lg_throttle_sm_pool_cycles": pool["lg"],
        "gpusim__mio_throttle_sm_pool.ratio": pool["mio"] / n,
        "gpusim__lg_throttle_sm_pool.ratio": pool["lg"] / n,
    }
    for k, name in enumerate(STATES):
        m[stall_metric(name)] = state_cycles[name] / n
    # shared / global loads from issue to retirement (their data in the registers), as ncu counts the LSU
    # pipe's: average latency, and loads pending per cycle (its sm__inst_pending_* over the active cycles)
    for name, k_lat, k_n in (("shared", E.K_LDS_LAT, E.K_LDS_N), ("lg", E.K_LDG_LAT, E.K_LDG_N)):
        lat, count = float(ctr[k_lat]), int(ctr[k_n])
        m[LSU_LATENCY.format(name)] = lat / count if count else 0.0
        m[LSU_PENDING.format(name)] = lat / max(cycles, 1)
        # the raw sums, for the whole-kernel figures the prediction extrapolates from its two windows
        m[LSU_SUMS[name][0]], m[LSU_SUMS[name][1]] = lat, count
    if not_issued:
        m.update(not_issued_metrics(not_issued, state_cycles))
    notes = []
    if lw.sampled_rows:
        notes.append(f"{lw.sampled_rows} rows have weight > 1 (a sampled trace): each is timed once, so the "
                     "cycles cover only the iterations the sampler kept; use a full-mode trace")
    warps = np.stack([lw.ctas[lw.warp_cta], lw.warp_in_cta], axis=1)
    by_op = {lw.opcodes[i]: {name: int(op_counts[i, k]) for k, name in enumerate(STATES) if op_counts[i, k]}
             for i in range(op_counts.shape[0]) if op_counts[i].any()}
    log[log[:, 1] == E.S_MIO_POOL, 1] = STATES.index("mio_throttle")
    log[log[:, 1] == E.S_LG_POOL, 1] = STATES.index("lg_throttle")
    return TimingResult(cycles, n, state_cycles, counts, warps, np.diff(lw.warp_start), finish, issue_cycle,
                        lw.trace_row, lw.row_warp, m, by_op, notes, not_issued, log, ready, launch)


def engine_compiled() -> bool | None:
    """Whether the cycle loop is compiled for this process: in numba's cache on disk, or in the compiled
    copy shipped with gpusim (gpusim.jit) (None: cannot tell). Where it is not, a first run compiles it,
    30-50 s a variant, and says so on its progress bar."""
    from gpusim import jit
    try:
        return (bool(E.run.signatures) or bool(E.run._cache._cache_file._load_index())   # (numba internals)
                or jit.shipped_has(E.run))
    except Exception:   # noqa: BLE001 - another numba may lay its cache out otherwise: then we do not know
        return None


def simulate_sm(trace: Trace, arch: str | GPU = "h200", ctas=None, *,
                global_level=None, active_sms: int | None = None,
                stall_counts: dict | None = None, scoreboards: dict | None = None,
                read_barriers=None, register_banks=None, not_issued: bool = False,
                log_states: int = 0, groups: bool | None = None, slots: int | None = None) -> TimingResult:
    """Time the rows of `ctas` (trace CTA ids, default all) as CTAs resident together on one SM.

    The caller chooses how many CTAs are resident (occupancy); all launch at cycle 0. slots: fewer
    CTA slots than CTAs, the later CTAs following the first ones in their slots (lower's slots).
    global_level: per trace row, where a global load hits (LEVEL_L1/L2/DRAM); default L2.
    active_sms: SMs sharing the chip's L2/DRAM bandwidth (default: all the preset's SMs).
    stall_counts: ptxas's stall counts of the kernel (control_codes.stall_table); default none.
    scoreboards: ptxas's dependency barriers per load class (control_codes.scoreboard_table).
    read_barriers: ptxas's read barriers on memory instructions (control_codes.read_barrier_table).
    register_banks: the register reads of the kernel's FP32 instructions (register_banks.bank_profile).
    not_issued: also count each state's cycles in which the warp's SMSP issued nothing (TimingResult.
    not_issued_cycles; a diagnosis beside ncu's not-issued PC samples, about 5 % slower).
    log_states: keep up to this many stall intervals, (warp, state, first cycle, end cycle, row waited
    at), in TimingResult.state_log (for a timeline; 0, the default, keeps none).
    groups: the engine's waiter groups on or off (run_lowered; None: by this trace's warps per SMSP).
    """
    gpu = get_arch(arch)
    lw = lower(trace, gpu, ctas, global_level, active_sms, stall_counts, scoreboards, read_barriers,
               register_banks, slots)
    lw.params[E.P_NOT_ISSUED] = int(not_issued)
    return run_lowered(lw, gpu, log_states, groups)


__all__ = ["simulate_sm", "engine_compiled", "TimingResult", "lower", "Lowered", "run_lowered", "STATES",
           "N_STATES", "LSU_PENDING", "LSU_LATENCY", "LSU_METRIC_NAMES", "LSU_SUMS",
           "not_issued_metric", "not_issued_metrics", "stall_metric", "LEVEL_L1", "LEVEL_L2", "LEVEL_DRAM"]
