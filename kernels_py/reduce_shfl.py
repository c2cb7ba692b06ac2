"""reduce_shfl: per-block sums with warp shuffles: a grid-stride loop, then __shfl_down_sync.

Twin: kernels_cuda/reduce_shfl.cu, statement for statement. Block (BLOCK) = 256, grid
G = min(GRID, M*N/BLOCK) = 1024 from 512 x 512 on; each thread sums A[i] for i = its global index,
stepping by BLOCK*G; each warp folds its 32 sums with shuffles (offsets 16..1), lane 0 of each warp
stores the warp sum to shared memory, and after one barrier the first warp folds the BLOCK/32 warp
sums with shuffles (offsets 4..1); thread 0 writes out[blockIdx.x]. The claim it exists to test: the
reductions inside a warp need no shared memory: per block, BLOCK/32 shared stores and one shared
load (the warp sums), one barrier, and 5*BLOCK/32 + log2(BLOCK/32) shuffles.
GRID = 1024 rather than 8 x 132 SMs = 1056: 1056 = 33 x 32 divides no power-of-two size, and with
unequal trips per thread the CTAs would not repeat (the sampler needs them to).
"""
import numpy as np

from gpusim.kernel import Arg, KernelSpec, align_period, require
from kernels_py._common import require_grid_stride, stride_grid

NAME = "reduce_shfl"
BLOCK0, GRID0 = 256, 1024



def reduce_shfl(k, M, N, A, out, BLOCK=256, GRID=1024):
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
            out.st(k.blockIdx.x, s)


def _check(M, N, K, BLOCK, GRID):
    require_grid_stride(NAME, M, N, BLOCK, GRID)
    require(BLOCK == BLOCK0 and GRID == GRID0, NAME,
            f"out holds one sum per block for BLOCK={BLOCK0}, GRID={GRID0} (its length is fixed by the "
            f"argument list, which sees no parameters); got BLOCK={BLOCK}, GRID={GRID}")


def _reference(inputs, M, N, K, alpha, beta):
    G = stride_grid(M, N, BLOCK0, GRID0)
    A = inputs["A"].astype(np.float64).reshape(-1, G, BLOCK0)      # (trips, blocks, threads)
    return {"out": A.sum(axis=(0, 2))}


SPEC = KernelSpec(
    name=NAME, fn=reduce_shfl, params={"BLOCK": BLOCK0, "GRID": GRID0},
    launch=lambda M, N, K, BLOCK, GRID: ((stride_grid(M, N, BLOCK, GRID), 1, 1), (BLOCK, 1, 1)),
    check=_check,
    # one CTA step moves its first element of A by BLOCK floats and out by one
    grid_period=lambda M, N, K, BLOCK, GRID: (align_period(BLOCK, 1), 1),
    computes="per-block sums of A",
    summary="per-block sums: grid-stride loop, warp shuffles, one barrier",
    source="kernels_cuda/reduce_shfl.cu",
    args=(Arg("M", "i32"), Arg("N", "i32"), Arg("A", "ptr", lambda M, N, K: M * N, "in"),
          Arg("out", "ptr", lambda M, N, K: stride_grid(M, N, BLOCK0, GRID0), "out")),
    reference=_reference,
    flops=lambda M, N, K: M * N,
    notes=("M*N a multiple of G*BLOCK: every thread runs the same number of grid-stride trips",),
)
