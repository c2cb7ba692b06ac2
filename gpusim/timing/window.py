"""A timing window: the CTAs resident on one SM, over the first iterations of their loops.

The cycle engine times every row it is given once, so it needs a trace without
sampled weights. For `gpusim run KERNEL --trace` we take the CTAs resident together
on SM 0 in its first round (CTA 0, 132, 264, ... up to blocks_per_sm of them) and run
their periodic loops for `iterations` trips only, then time that trace. The result is
a stall breakdown and timeline of that window; the whole-kernel time comes from
gpusim/timing/kernel_time.py.
"""
from __future__ import annotations

from dataclasses import dataclass

from gpusim.arch import get_arch
from gpusim.timing import simulate_sm, TimingResult
from gpusim.trace.trace import Trace


@dataclass
class Window:
    ctas: list            # blockIdx of each CTA in the window
    iterations: int       # trips of each periodic loop that were simulated
    trace: Trace
    timing: TimingResult

    def describe(self) -> str:
        return (f"{len(self.ctas)} CTA(s) resident on one SM ({', '.join(map(str, self.ctas))}), "
                f"first {self.iterations} trips of each K loop, {self.timing.cycles:,} cycles")


def time_window(result, iterations: int = 4, seed: int = 0) -> Window:
    """Time the first SM's resident CTAs of a simulated launch (`result` from gpusim.simulate):
    the CTAs the block scheduler gives SM 0 (0, 132, 264, ...), as the whole-kernel prediction
    times them, with every global load taken as an L2 hit and ptxas's stall counts as the
    prediction takes them (control_codes.py)."""
    from gpusim.timing.kernel_time import build_window, _resident
    from gpusim.timing.control_codes import stall_table
    gpu = get_arch(result.arch)
    gx, gy, gz = result.grid
    per_sm = -(-(gx * gy * gz) // gpu.sm_count)
    ctas = _resident(result, gpu, min(result.occupancy.blocks_per_sm, per_sm))
    trace, _ = build_window(result, ctas, iterations, seed)
    table = stall_table(result.kernel, result.params, result.M, result.N, result.K)
    return Window(ctas, iterations, trace, simulate_sm(trace, gpu, stall_counts=table[0] if table else None))
