"""softmax: row-wise softmax, one warp per row, three passes over the row.

Twin: kernels_cuda/softmax.cu, statement for statement. Block (32*ROWS) = 256, grid (M/ROWS); warp
w of block b owns row b*ROWS + w and each lane walks it with stride 32: pass 1 the max (fmaxf),
folded over the warp by a __shfl_xor_sync butterfly (masks 16..1); pass 2 the sum of
__expf(a - max), folded the same way; pass 3 stores __expf(a - max) * inv, with inv = 1/sum computed
once per row by __fdividef (an inline reciprocal; 1.0f / s would call a slow-path subroutine).
The claim it exists to test: each row is read three times (3 loads of A per element, one store of
B) and the warp reductions travel by shuffles, 2 x 5 per warp, with no shared memory and no
barrier; whether the second and third reads come from L1/L2 or DRAM is the cache model's.
"""
import numpy as np

from gpusim.kernel import Arg, KernelSpec, align_period, require
from kernels_py._common import mn, require_multiple

NAME = "softmax"


def softmax(k, M, N, A, B, ROWS=8):
    row = k.blockIdx.x * ROWS + k.threadIdx.x // 32
    lane = k.threadIdx.x % 32
    m = -np.inf
    for j0 in k.loop(0, N, 32, period=align_period(32)):
        m = k.fmax(m, A.ld(row * N + j0 + lane))
    mask = 16
    while mask > 0:
        m = k.fmax(m, k.shfl_xor(m, mask))
        mask >>= 1
    s = 0.0
    for j0 in k.loop(0, N, 32, period=align_period(32)):
        s = k.fadd(s, k.expf(k.fsub(A.ld(row * N + j0 + lane), m)))
    mask = 16
    while mask > 0:
        s = k.fadd(s, k.shfl_xor(s, mask))
        mask >>= 1
    inv = k.rcp(s)                          # __fdividef(1.0f, s), once per row
    for j0 in k.loop(0, N, 32, period=align_period(32)):
        B.st(row * N + j0 + lane, k.fmul(k.expf(k.fsub(A.ld(row * N + j0 + lane), m)), inv))


def _check(M, N, K, ROWS):
    require(0 < ROWS <= 32, NAME, f"block (32*ROWS) = {32 * ROWS} threads must be 32..1024")
    require_multiple(NAME, N, "N", 32, "the warp width (every lane the same trips)")
    require_multiple(NAME, M, "M", ROWS, "ROWS")


def _reference(inputs, M, N, K, alpha, beta):
    A = inputs["A"].astype(np.float64).reshape(M, N)
    e = np.exp(A - A.max(axis=1, keepdims=True))
    return {"B": (e / e.sum(axis=1, keepdims=True)).reshape(-1)}


SPEC = KernelSpec(
    name=NAME, fn=softmax, params={"ROWS": 8},
    launch=lambda M, N, K, ROWS: ((M // ROWS, 1, 1), (32 * ROWS, 1, 1)),
    check=_check,
    # one CTA step moves A and B by ROWS rows
    grid_period=lambda M, N, K, ROWS: (align_period(ROWS * N), 1),
    computes="B = softmax(A) by row",
    summary="row softmax, one warp per row: three reads of each row, shuffle reductions",
    source="kernels_cuda/softmax.cu",
    args=(Arg("M", "i32"), Arg("N", "i32"), Arg("A", "ptr", mn, "in"), Arg("B", "ptr", mn, "out")),
    reference=_reference,
    # __expf is ex2.approx (about 2 ulp) of a rounded x*log2(e), and the sum rounds N/32 terms a lane in
    # float32: about 1e-6 relative; 1e-4 leaves room
    tolerance=1e-4,
    # per element: the max, the subtraction, the exponential, the sum and the scaling
    flops=lambda M, N, K: 5 * M * N,
    notes=("no bounds checks: N a multiple of 32, M of ROWS",),
)
