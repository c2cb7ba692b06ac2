"""The `--trace` window: the busiest SM's first round of CTAs, timed as the prediction times it.

The whole-kernel prediction (kernel_time.predict) times the CTAs that SM 0 runs together first
(blockIdx 0, 132, 264, ... up to blocks_per_sm of them) over the first W1 and W2 trips of their K
loops, and extrapolates the difference. `gpusim run KERNEL --trace` shows that same run warp by warp:

* the per-warp table is each warp's steady state, its state cycles between the two windows over the
  instructions it issued between them (summed over the warps, that is what the prediction
  extrapolates); where the round was timed in full (T <= W2 trips) it is the whole round;
* the timeline is one window (W1 trips unless asked otherwise) timed again with the prediction's
  inputs (memory levels from the cache model, ptxas's stall counts and dependency and read barriers)
  and its stall intervals kept. The engine is deterministic: at W1 trips this is the prediction's own
  first window, cycle for cycle (tests/estimate/test_window.py).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpusim.errors import GpusimError
from gpusim.timing import TimingResult
from gpusim.timing.states import warp_ratios
from gpusim.trace.trace import Trace

LOG_CAP = 1_000_000     # stall intervals kept for a timeline (40 MB); a longer window's timeline stops earlier


@dataclass
class Window:
    ctas: list               # blockIdx of each CTA in the window
    iterations: int          # trips of each periodic loop that were timed
    trace: Trace
    timing: TimingResult     # with its stall intervals (timing.state_log)
    log_complete: bool       # every stall interval of the run was kept (else they stop at the last one kept)
    warp_states: np.ndarray  # (warps, N_STATES) per-warp steady-state cycles (see module doc)
    warp_issued: np.ndarray  # instructions each warp issued in that span
    warp_active: np.ndarray  # cycles each warp was resident in that span
    steady: bool             # the per-warp figures are the difference of two windows (else the whole round)

    def describe(self) -> str:
        return (f"{len(self.ctas)} CTA(s) resident on one SM ({', '.join(map(str, self.ctas))}), "
                f"first {self.iterations} trips of its longest loop (the SASS's: and its last), "
                f"{self.timing.cycles:,} cycles")

    def warp_metrics(self, i: int) -> dict:
        """Warp i's cycles per issued instruction in total and in each state (ncu's ratio names)."""
        return warp_ratios(self.warp_active[i], self.warp_issued[i], self.warp_states[i])


def time_window(result, pred, trips: int | None = None, log_states: int = LOG_CAP) -> Window:
    """The --trace window of a launch (`result` from gpusim.simulate) and its prediction (`pred` from
    kernel_time.predict): see the module doc. trips: loop trips of the timeline (default the
    prediction's first window, or every trip where the round was timed in full)."""
    from gpusim.estimate.kernel_time import build_window, _time
    if not pred.rounds or not pred.inputs:
        raise GpusimError("the --trace window needs the prediction's own run (kernel_time.predict)")
    if trips is not None and trips < 1:
        raise GpusimError(f"--window takes a positive number of loop trips, got {trips}")
    r0 = pred.rounds[0]
    full = r0.per_trip is None
    if trips is None:
        trips = r0.trips if full else pred.windows[0]
    tr, _ = build_window(result, r0.block_idx, None if trips >= r0.trips else trips)
    inp = pred.inputs
    t = _time(tr, inp["gpu"], inp["levels"], inp["active_sms"], inp["ptxas"], log_states=log_states)
    t1, t2 = r0.timing, r0.timing2
    if t2 is None:
        states, issued, active = t1.warp_state_cycles, t1.warp_issued, t1.warp_retire
    else:
        # a state that shrinks between the windows (drain, an end effect) counts 0, as in the prediction
        states = np.maximum(t2.warp_state_cycles - t1.warp_state_cycles, 0)
        issued, active = t2.warp_issued - t1.warp_issued, t2.warp_retire - t1.warp_retire
    return Window(r0.block_idx, min(trips, r0.trips), tr, t, len(t.state_log) < log_states,
                  states, issued, active, t2 is not None)
