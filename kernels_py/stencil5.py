"""stencil5: a 5-point stencil, B = c0*A + c1*(the 4 neighbours) on the interior.

Twin: kernels_cuda/stencil5.cu, statement for statement. Block (BX, BY) = (32, 8), grid
(N/BX, M/BY), one thread per point; c0 = 0.5, c1 = 0.125; the boundary of B is not written. The
claim it exists to test: a warp's centre, upper and lower loads are aligned row segments, 4 sectors
per request, but the left and right ones are shifted by one float and straddle a fifth sector; the
5 loads per point touch each element of A about 5 times, and the neighbours' sectors hit in L1
(each row is read by 3 warps, each sector by up to 3 loads of one warp).
"""
import numpy as np

from gpusim.kernel import Arg, KernelSpec, align_period, require
from kernels_py._common import mn, require_grid_y, require_multiple

NAME = "stencil5"


def stencil5(k, M, N, A, B, BX=32, BY=8):
    c0 = 0.5
    c1 = 0.125
    j = k.blockIdx.x * BX + k.threadIdx.x
    i = k.blockIdx.y * BY + k.threadIdx.y
    with k.where((i > 0) & (i < M - 1) & (j > 0) & (j < N - 1)):
        if not k.any_active():
            return
        centre = A.ld(i * N + j)
        t = k.fadd(A.ld((i - 1) * N + j), A.ld((i + 1) * N + j))
        t = k.fadd(t, A.ld(i * N + j - 1))
        t = k.fadd(t, A.ld(i * N + j + 1))
        B.st(i * N + j, k.ffma(c0, centre, k.fmul(c1, t)))


def _check(M, N, K, BX, BY):
    require(BX * BY <= 1024, NAME, f"block (BX, BY) = {BX * BY} threads exceeds 1024")
    require(M >= 3 and N >= 3, NAME, f"{M}x{N} has no interior point")
    require_multiple(NAME, N, "N", BX, "BX")
    require_multiple(NAME, M, "M", BY, "BY")
    require_grid_y(NAME, M // BY)


def _reference(inputs, M, N, K, alpha, beta):
    A = inputs["A"].astype(np.float64).reshape(M, N)
    B = inputs["B"].astype(np.float64).reshape(M, N).copy()        # the boundary keeps its values
    B[1:-1, 1:-1] = 0.5 * A[1:-1, 1:-1] + 0.125 * (A[:-2, 1:-1] + A[2:, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:])
    return {"B": B.reshape(-1)}


SPEC = KernelSpec(
    name=NAME, fn=stencil5, params={"BX": 32, "BY": 8},
    launch=lambda M, N, K, BX, BY: ((N // BX, M // BY, 1), (BX, BY, 1)),
    check=_check,
    # x: A and B move BX columns; y: BY rows (BY*N floats)
    grid_period=lambda M, N, K, BX, BY: (align_period(BX), align_period(BY * N)),
    computes="B = 5-point stencil of A",
    summary="5-point stencil: aligned loads 4 sectors per request, shifted ones 5; neighbours hit in L1",
    source="kernels_cuda/stencil5.cu",
    args=(Arg("M", "i32"), Arg("N", "i32"), Arg("A", "ptr", mn, "in"), Arg("B", "ptr", mn, "inout")),
    reference=_reference,
    # 3 adds, the multiply by c1 and the fused c0*centre + (2 flops) per interior point
    flops=lambda M, N, K: 6 * (M - 2) * (N - 2),
    notes=("N a multiple of BX, M of BY; the interior is checked per thread",),
)
