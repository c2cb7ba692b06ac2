"""transpose_smem: B = A^T through a TILE x TILE shared tile.

Twin: kernels_cuda/transpose_smem.cu, statement for statement. Block (TILE, ROWS) = (32, 8), grid
(N/TILE, M/TILE); each thread stores TILE/ROWS = 4 elements of A's tile into tile[ty+j][tx] (a row
per warp), and after the barrier writes tile[tx][ty+j] (a column per warp) into B's row. The claim
it exists to test: both global accesses are row segments, 4 sectors per request, but a column of
the tile is 32 floats TILE apart, all in one bank: each shared load takes 32 wavefronts.
"""
from gpusim.kernel import Arg, KernelSpec
from kernels_py._common import mn, require_transpose_tiles, transpose_grid_period, transpose_reference

NAME = "transpose_smem"
PAD = 0


def transpose_smem(k, M, N, A, B, TILE=32, ROWS=8):
    tile = k.shared("tile", TILE * (TILE + PAD))     # __shared__ float tile[TILE][TILE + 0]
    tx, ty = k.threadIdx.x, k.threadIdx.y
    x = k.blockIdx.x * TILE + tx
    y = k.blockIdx.y * TILE + ty
    for j in range(0, TILE, ROWS):
        tile.st((ty + j) * (TILE + PAD) + tx, A.ld((y + j) * N + x))
    k.syncthreads()
    x = k.blockIdx.y * TILE + tx        # the tile's place in B: blocks swap x and y
    y = k.blockIdx.x * TILE + ty
    for j in range(0, TILE, ROWS):
        B.st((y + j) * M + x, tile.ld(tx * (TILE + PAD) + ty + j))


def _check(M, N, K, TILE, ROWS):
    require_transpose_tiles(NAME, M, N, TILE, ROWS)


SPEC = KernelSpec(
    name=NAME, fn=transpose_smem, params={"TILE": 32, "ROWS": 8},
    launch=lambda M, N, K, TILE, ROWS: ((N // TILE, M // TILE, 1), (TILE, ROWS, 1)),
    check=_check,
    grid_period=transpose_grid_period,
    computes="B = A^T",
    summary="B = A^T through a shared tile: coalesced global accesses, 32-way bank conflicts",
    source="kernels_cuda/transpose_smem.cu",
    args=(Arg("M", "i32"), Arg("N", "i32"), Arg("A", "ptr", mn, "in"), Arg("B", "ptr", mn, "out")),
    reference=transpose_reference,
    flops=lambda M, N, K: 0,
    notes=("no bounds checks: M and N multiples of TILE",),
)
