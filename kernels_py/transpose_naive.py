"""transpose_naive: B = A^T straight from global memory.

Twin: kernels_cuda/transpose_naive.cu, statement for statement. Block (TILE, ROWS) = (32, 8), grid
(N/TILE, M/TILE); each thread copies TILE/ROWS = 4 elements of its column of the tile,
B[x*M + y+j] = A[(y+j)*N + x]. The claim it exists to test: the loads are row segments of A (4
sectors per request) but a warp's stores go to 32 rows of B, M floats apart: 32 sectors per
request, one per lane, of which only 4 bytes of each 32 are used.
"""
from gpusim.kernel import Arg, KernelSpec
from kernels_py._common import mn, require_transpose_tiles, transpose_grid_period, transpose_reference

NAME = "transpose_naive"


def transpose_naive(k, M, N, A, B, TILE=32, ROWS=8):
    x = k.blockIdx.x * TILE + k.threadIdx.x     # column of A, row of B
    y = k.blockIdx.y * TILE + k.threadIdx.y     # row of A, column of B
    for j in range(0, TILE, ROWS):
        B.st(x * M + (y + j), A.ld((y + j) * N + x))


def _check(M, N, K, TILE, ROWS):
    require_transpose_tiles(NAME, M, N, TILE, ROWS)


SPEC = KernelSpec(
    name=NAME, fn=transpose_naive, params={"TILE": 32, "ROWS": 8},
    launch=lambda M, N, K, TILE, ROWS: ((N // TILE, M // TILE, 1), (TILE, ROWS, 1)),
    check=_check,
    grid_period=transpose_grid_period,
    computes="B = A^T",
    summary="B = A^T from global memory: coalesced loads, stores 32 sectors per request",
    source="kernels_cuda/transpose_naive.cu",
    args=(Arg("M", "i32"), Arg("N", "i32"), Arg("A", "ptr", mn, "in"), Arg("B", "ptr", mn, "out")),
    reference=transpose_reference,
    flops=lambda M, N, K: 0,
    notes=("no bounds checks: M and N multiples of TILE",),
)
