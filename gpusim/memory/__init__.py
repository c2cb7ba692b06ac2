"""Exact memory counting: global coalescing into sectors, shared-memory banks."""
from gpusim.memory.coalescer import global_sectors_and_lines
from gpusim.memory.shared_banks import shared_wavefronts
from gpusim.memory.counters import cost_trace

__all__ = ["cost_trace", "global_sectors_and_lines", "shared_wavefronts"]
