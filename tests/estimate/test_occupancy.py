"""Occupancy by cuda_occupancy.h's rules, checked on the seeds' stated figures."""
import pytest

from gpusim.arch import get_arch
from gpusim.errors import LaunchError
from gpusim.estimate.occupancy import occupancy


def test_regtile2d_on_rtx5080_seed003():
    """Seed 003: 93 registers at 256 threads allow 2 blocks per SM, 33.3 % occupancy on a 48-warp SM.
    (The seed says "8 warps out of a possible 48"; 2 blocks of 8 warps are 16 warps, which is 33.3 %.)"""
    o = occupancy(get_arch("rtx5080"), 256, 93, 8192)
    assert o.limit_registers == 2
    assert o.blocks_per_sm == 2
    assert o.theoretical_occupancy_pct == pytest.approx(100 * 16 / 48)


def test_smemtile_block_size_binds_seed004():
    """Seed 004: 1024-thread blocks, 40 registers, 8 KB shared -> one block, 66.7 %; block size binds."""
    o = occupancy(get_arch("rtx5080"), 1024, 40, 8192)
    assert o.blocks_per_sm == 1 == o.limit_warps
    assert o.limit_shared_mem > 1
    assert o.theoretical_occupancy_pct == pytest.approx(66.67, abs=0.01)


def test_shared_memory_reservation_and_granularity():
    """1 KB reserved per CTA and 128-B granularity: 48 KB + 1 KB per block -> 4 blocks in 228 KB."""
    o = occupancy(get_arch("h200"), 128, 32, 48 * 1024)
    assert o.limit_shared_mem == 233472 // (49 * 1024)


def test_register_allocation_per_smsp():
    """255 registers: 8192 per warp -> 2 warps per SMSP, 8 per SM, one 256-thread block."""
    o = occupancy(get_arch("h200"), 256, 255, 0)
    assert o.limit_registers == 1


@pytest.mark.parametrize("threads,regs,smem,what", [
    (2048, 32, 0, "threads per block"), (256, 300, 0, "registers"), (256, 32, 60000, "shared memory")])
def test_launch_over_limits_is_refused(threads, regs, smem, what):
    with pytest.raises(LaunchError, match=what):
        occupancy(get_arch("h200"), threads, regs, smem, "k")
