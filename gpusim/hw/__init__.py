"""gpusim hw: run the CUDA twins on a real GPU and record what the hardware did.

Only this package touches the GPU, and only through gpusim.hw.gpu, which
imports cupy lazily: importing gpusim (or this package) never needs cupy.
Entry points: runner.record (build, check, time, ncu), batch (one device
call's worth, packed for the trip back), unpack (into traces/hw/<device>/).
"""
