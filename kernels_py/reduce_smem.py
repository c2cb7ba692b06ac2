"""reduce_smem: per-block sums by a tree in shared memory (the classic reduction, "first add during load").

Twin: kernels_cuda/reduce_smem.cu, statement for statement. Block (BLOCK) = 256, grid
(M*N / (2*BLOCK)); each thread adds A[i] and A[i+BLOCK] as it stores them to sdata, then for
s = BLOCK/2 .. 1 the threads tid < s add sdata[tid+s] into sdata[tid], with a barrier after every
level; thread 0 writes out[blockIdx.x]. The claim it exists to test: a divergent tail, where
barriers dominate. From s < 32 on only warp 0 has a lane at work: the other warps make no shared
request (ptxas predicates the short body, so they still issue it, with every lane off), yet every
warp takes part in all log2(BLOCK) + 1 barriers, more barrier instructions than shared accesses.
"""
import numpy as np

from gpusim.kernel import Arg, KernelSpec, align_period, require
from kernels_py._common import require_block, require_multiple, require_pow2

NAME = "reduce_smem"
BLOCK0 = 256        # the default BLOCK: out's length, M*N / (2*BLOCK0), is fixed by Arg elems


def reduce_smem(k, M, N, A, out, BLOCK=256):
    sdata = k.shared("sdata", BLOCK)
    tid = k.threadIdx.x
    i = k.blockIdx.x * (2 * BLOCK) + tid
    sdata.st(tid, k.fadd(A.ld(i), A.ld(i + BLOCK)))
    k.syncthreads()
    s = BLOCK // 2
    while s > 0:
        # if (tid < s): compiled as predication, so a warp with no lane below s still issues the body
        with k.where(tid < s, predicate=True):
            sdata.st(tid, k.fadd(sdata.ld(tid), sdata.ld(tid + s)))
        k.syncthreads()
        s >>= 1
    with k.where(tid == 0):
        out.st(k.blockIdx.x, sdata.ld(0))


def _check(M, N, K, BLOCK):
    require_block(NAME, BLOCK, "BLOCK")
    require_pow2(NAME, BLOCK, "BLOCK")
    require(BLOCK == BLOCK0, NAME, f"out holds M*N/{2 * BLOCK0} block sums (its length is fixed by the "
            f"argument list, which sees no parameters): BLOCK must be {BLOCK0}, got {BLOCK}")
    require_multiple(NAME, M * N, "M*N", 2 * BLOCK, "2*BLOCK")


def _reference(inputs, M, N, K, alpha, beta):
    return {"out": inputs["A"].astype(np.float64).reshape(-1, 2 * BLOCK0).sum(axis=1)}


SPEC = KernelSpec(
    name=NAME, fn=reduce_smem, params={"BLOCK": BLOCK0},
    launch=lambda M, N, K, BLOCK: ((M * N // (2 * BLOCK), 1, 1), (BLOCK, 1, 1)),
    check=_check,
    # one CTA step moves A by 2*BLOCK floats and out by one
    grid_period=lambda M, N, K, BLOCK: (align_period(2 * BLOCK, 1), 1),
    computes="per-block sums of A",
    summary="per-block sums, tree in shared memory: a divergent tail where barriers dominate",
    source="kernels_cuda/reduce_smem.cu",
    args=(Arg("M", "i32"), Arg("N", "i32"), Arg("A", "ptr", lambda M, N, K: M * N, "in"),
          Arg("out", "ptr", lambda M, N, K: M * N // (2 * BLOCK0), "out")),
    reference=_reference,
    flops=lambda M, N, K: M * N - M * N // (2 * BLOCK0),
    notes=("no bounds checks: M*N a multiple of 2*BLOCK",),
)
