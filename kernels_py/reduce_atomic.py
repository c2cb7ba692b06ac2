"""reduce_atomic: the sum of A into out[0], one atomicAdd per block.

Twin: kernels_cuda/reduce_atomic.cu, statement for statement: reduce_shfl's grid-stride loop and
shuffles, then thread 0 of each block does atomicAdd(out, its block sum) where reduce_shfl stores
out[blockIdx.x]. Block (BLOCK) = 256, grid G = min(GRID, M*N/BLOCK). The claim it exists to test:
the grid's last step costs G atomics, one request (of one sector) each: the result is unused, so
ptxas emits a reduction (REDG) that no thread waits for. The blocks add in any order, so the sum
is exact only to float32 rounding of G terms (tolerance 1e-3).
"""
import numpy as np

from gpusim.kernel import Arg, KernelSpec, align_period
from kernels_py._common import require_grid_stride, stride_grid

NAME = "reduce_atomic"
BLOCK0, GRID0 = 256, 1024



def reduce_atomic(k, M, N, A, out, BLOCK=256, GRID=1024):
    WARPS = BLOCK // 32
    warpSums = k.shared("warpSums", WARPS)
    n = M * N
    lane = k.threadIdx.x % 32
    warp = k.threadIdx.x // 32
    s = 0.0
    stride = BLOCK * k.gridDim.x
    # for (i = blockIdx.x*BLOCK + threadIdx.x; i < n; i += stride): n is a multiple of stride, so
    # every thread runs n/stride trips and the bound holds for all lanes together
    for i0 in k.loop(0, n, stride, period=align_period(stride)):
        s = k.fadd(s, A.ld(i0 + k.blockIdx.x * BLOCK + k.threadIdx.x))
    offset = 16
    while offset > 0:
        s = k.fadd(s, k.shfl_down(s, offset))
        offset >>= 1
    with k.where(lane == 0):
        warpSums.st(warp, s)
    k.syncthreads()
    with k.where(warp == 0):
        s = 0.0                             # (lane < WARPS) ? warpSums[lane] : 0.0f
        with k.where(lane < WARPS):
            s = warpSums.ld(lane)           # lanes at or past WARPS read nothing: 0
        offset = WARPS // 2
        while offset > 0:
            s = k.fadd(s, k.shfl_down(s, offset))
            offset >>= 1
        with k.where(lane == 0):
            k.atomic_add(out, 0, s)


def _check(M, N, K, BLOCK, GRID):
    require_grid_stride(NAME, M, N, BLOCK, GRID)


def _reference(inputs, M, N, K, alpha, beta):
    return {"out": inputs["out"].astype(np.float64) + inputs["A"].astype(np.float64).sum()}


SPEC = KernelSpec(
    name=NAME, fn=reduce_atomic, params={"BLOCK": BLOCK0, "GRID": GRID0},
    launch=lambda M, N, K, BLOCK, GRID: ((stride_grid(M, N, BLOCK, GRID), 1, 1), (BLOCK, 1, 1)),
    check=_check,
    # one CTA step moves its first element of A by BLOCK floats
    grid_period=lambda M, N, K, BLOCK, GRID: (align_period(BLOCK), 1),
    computes="out[0] += sum(A)",
    summary="the sum of A: grid-stride loop, warp shuffles, one atomicAdd per block",
    source="kernels_cuda/reduce_atomic.cu",
    args=(Arg("M", "i32"), Arg("N", "i32"), Arg("A", "ptr", lambda M, N, K: M * N, "in"),
          Arg("out", "ptr", lambda M, N, K: 1, "inout")),
    reference=_reference,
    tolerance=1e-3,
    flops=lambda M, N, K: M * N,
    notes=("M*N a multiple of G*BLOCK: every thread runs the same number of grid-stride trips",),
)
