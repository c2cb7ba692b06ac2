"""A timing window: the CTAs resident on one SM, over the first iterations of their loops.

The cycle engine times every row it is given once, so it needs a trace without
sampled weights. For `gpusim run KERNEL --trace` we take the first
`blocks_per_sm` CTAs in launch order (the ones the first SM receives at most) and
run their periodic loops for `iterations` trips only, then time that trace. The
result is a stall breakdown of the window, not a whole-kernel time: the whole-
kernel estimate (waves, tails, cache model) is the next step of the timing issue.
"""
from __future__ import annotations

from dataclasses import dataclass

from gpusim.arch import get_arch
from gpusim.kernel.context import Sampler
from gpusim.kernel.spec import get_kernel
from gpusim.estimate.simulate import allocate, run_cta
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
    """Time the first SM's resident CTAs of a simulated launch (`result` from gpusim.simulate)."""
    spec = get_kernel(result.kernel)
    gpu = get_arch(result.arch)
    M, N, K = result.M, result.N, result.K
    gx, gy, gz = result.grid
    n = min(result.occupancy.blocks_per_sm, gx * gy * gz)
    ctas = [(i % gx, (i // gx) % gy, i // (gx * gy)) for i in range(n)]
    arrays, bases = allocate(M, N, K, seed)
    sampler = Sampler(False, window=iterations)
    traces = [run_cta(spec, result.params, gpu, result.grid, result.block, b, 1, sampler, arrays, bases,
                      (M, N, K, 1.0, 0.5), i)[0] for i, b in enumerate(ctas)]
    trace = Trace.concat(traces)
    return Window(ctas, iterations, trace, simulate_sm(trace, gpu))
