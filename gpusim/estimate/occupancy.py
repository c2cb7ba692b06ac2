"""Occupancy by the rules of cuda_occupancy.h [OCC] (shared/HARDWARE.md s.5)."""
from __future__ import annotations

from dataclasses import dataclass

from gpusim.arch import GPU
from gpusim.errors import LaunchError


def _roundup(x: int, unit: int) -> int:
    return -(-x // unit) * unit


@dataclass(frozen=True)
class Occupancy:
    threads_per_block: int
    warps_per_block: int
    registers_per_thread: int | None
    shared_bytes_per_block: int
    limit_warps: int
    limit_blocks: int
    limit_registers: int | None
    limit_shared_mem: int
    blocks_per_sm: int
    theoretical_occupancy_pct: float

    def waves(self, ctas: int, sm_count: int) -> float:
        return ctas / (self.blocks_per_sm * sm_count)


def occupancy(arch: GPU, threads: int, regs: int | None, smem_bytes: int, kernel: str = "") -> Occupancy:
    if threads > arch.max_threads_per_block:
        raise LaunchError(f"{kernel}: {threads} threads per block exceeds the {arch.name}'s "
                          f"limit of {arch.max_threads_per_block}")
    if regs is not None and regs > arch.max_regs_per_thread:
        raise LaunchError(f"{kernel}: {regs} registers per thread exceeds the {arch.name}'s "
                          f"limit of {arch.max_regs_per_thread}")
    if smem_bytes > arch.shared_per_block_static_bytes:
        raise LaunchError(f"{kernel}: {smem_bytes} B of static shared memory per block exceeds the "
                          f"{arch.name}'s {arch.shared_per_block_static_bytes} B")
    W = -(-threads // arch.warp_size_threads)
    lim_warps = arch.max_warps_per_sm // W
    lim_blocks = arch.max_blocks_per_sm
    lim_regs = None
    if regs is not None:
        per_warp = _roundup(32 * regs, arch.reg_alloc_unit_per_warp)
        # registers are allocated per SMSP: warps per SMSP that fit, times 4, over warps per block
        warps_fit = (arch.regs_per_sm // arch.smsp_per_sm) // per_warp * arch.smsp_per_sm
        lim_regs = warps_fit // W
    per_block = _roundup(smem_bytes + arch.shared_reserved_per_block_bytes, arch.shared_alloc_unit_bytes)
    lim_smem = arch.shared_per_sm_bytes // per_block
    limits = [lim_warps, lim_blocks, lim_smem] + ([lim_regs] if lim_regs is not None else [])
    blocks = min(limits)
    if blocks == 0:
        raise LaunchError(f"{kernel}: not even one block of {threads} threads fits on an SM of the {arch.name}")
    return Occupancy(threads, W, regs, smem_bytes, lim_warps, lim_blocks, lim_regs, lim_smem, blocks,
                     100.0 * blocks * W / arch.max_warps_per_sm)
