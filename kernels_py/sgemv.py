"""sgemv: y = A x, one warp per row.

Twin: kernels_cuda/sgemv.cu, statement for statement. Block (32*ROWS) = 256, grid (M/ROWS); warp
w of block b owns row b*ROWS + w, each lane sums A[row][j] * x[j] for j = lane, lane+32, ..., the
warp's 32 partial sums meet in lane 0 by __shfl_down_sync (offsets 16..1) and lane 0 writes y[row].
The claim it exists to test: a warp's loads of A and of x are 32 consecutive floats, 4 sectors per
request, one FFMA per 2 loads; A is read once (DRAM-bound), while x is read by every row's warp,
M/ROWS * ROWS times in all, from L1 (or L2): its reuse costs requests, not DRAM bytes.
"""
import numpy as np

from gpusim.kernel import Arg, KernelSpec, align_period, require
from kernels_py._common import mn, require_multiple

NAME = "sgemv"


def sgemv(k, M, N, A, x, y, ROWS=8):
    row = k.blockIdx.x * ROWS + k.threadIdx.x // 32
    lane = k.threadIdx.x % 32
    s = 0.0
    for j0 in k.loop(0, N, 32, period=align_period(32)):
        s = k.ffma(A.ld(row * N + j0 + lane), x.ld(j0 + lane), s)
    offset = 16
    while offset > 0:
        s = k.fadd(s, k.shfl_down(s, offset))
        offset >>= 1
    with k.where(lane == 0):
        y.st(row, s)


def _check(M, N, K, ROWS):
    require(0 < ROWS <= 32, NAME, f"block (32*ROWS) = {32 * ROWS} threads must be 32..1024")
    require_multiple(NAME, N, "N", 32, "the warp width (every lane the same trips)")
    require_multiple(NAME, M, "M", ROWS, "ROWS")


def _reference(inputs, M, N, K, alpha, beta):
    return {"y": inputs["A"].astype(np.float64).reshape(M, N) @ inputs["x"].astype(np.float64)}


SPEC = KernelSpec(
    name=NAME, fn=sgemv, params={"ROWS": 8},
    launch=lambda M, N, K, ROWS: ((M // ROWS, 1, 1), (32 * ROWS, 1, 1)),
    check=_check,
    # one CTA step moves A by ROWS rows and y by ROWS floats (x stays)
    grid_period=lambda M, N, K, ROWS: (align_period(ROWS * N, ROWS), 1),
    computes="y = A x",
    summary="y = A x, one warp per row: 4 sectors per request, x reused from L1",
    source="kernels_cuda/sgemv.cu",
    args=(Arg("M", "i32"), Arg("N", "i32"), Arg("A", "ptr", mn, "in"),
          Arg("x", "ptr", lambda M, N, K: N, "in"), Arg("y", "ptr", lambda M, N, K: M, "out")),
    reference=_reference,
    flops=lambda M, N, K: 2 * M * N,
    notes=("no bounds checks: N a multiple of 32, M of ROWS",),
)
