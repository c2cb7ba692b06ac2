"""transpose_pad: B = A^T through a TILE x (TILE+1) shared tile.

Twin: kernels_cuda/transpose_pad.cu, statement for statement: transpose_smem with one padding column.
Rows of the tile are now TILE+1 = 33 floats apart, so the 32 floats of a column fall in 32 different
banks. The claim it exists to test: the padding removes the conflicts, one wavefront per shared
access (loads and stores), with the global accesses unchanged (4 sectors per request).
"""
from gpusim.kernel import Arg, KernelSpec
from kernels_py._common import mn, require_transpose_tiles, transpose_grid_period, transpose_reference

NAME = "transpose_pad"
PAD = 1


def transpose_pad(k, M, N, A, B, TILE=32, ROWS=8):
    tile = k.shared("tile", TILE * (TILE + PAD))     # __shared__ float tile[TILE][TILE + 1]
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
    name=NAME, fn=transpose_pad, params={"TILE": 32, "ROWS": 8},
    launch=lambda M, N, K, TILE, ROWS: ((N // TILE, M // TILE, 1), (TILE, ROWS, 1)),
    check=_check,
    grid_period=transpose_grid_period,
    computes="B = A^T",
    summary="B = A^T through a padded shared tile: one wavefront per shared access",
    source="kernels_cuda/transpose_pad.cu",
    args=(Arg("M", "i32"), Arg("N", "i32"), Arg("A", "ptr", mn, "in"), Arg("B", "ptr", mn, "out")),
    reference=transpose_reference,
    flops=lambda M, N, K: 0,
    notes=("no bounds checks: M and N multiples of TILE",),
)
