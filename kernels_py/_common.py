"""Refusals and pieces several kernels share (not a kernel: the leading underscore keeps it out
of the kernel list)."""
import numpy as np

from gpusim.kernel import align_period, require


def require_tile_multiples(name, M, N, K, BM, BN, BK):
    """No bounds checks in the twin: M, N, K multiples of BM, BN, BK (one error per dimension)."""
    for nm, v, t, tn in (("M", M, BM, "BM"), ("N", N, BN, "BN"), ("K", K, BK, "BK")):
        require(v % t == 0, name, f"no bounds checks: {nm}={v} must be a multiple of {tn}={t}")


def require_scalar_staging(name, BM, BN, BK, TM, TN):
    """regtile2d's tile shape, shared by the kernels that stage A and B one float per thread per pass:
    TM x TN outputs a thread, at most 1024 threads, A's BM x BK and B's BK x BN tiles in whole passes."""
    require(BM % TM == 0, name, f"BM={BM} must be a multiple of TM={TM}")
    require(BN % TN == 0, name, f"BN={BN} must be a multiple of TN={TN}")
    T = (BM * BN) // (TM * TN)
    require(T <= 1024, name, f"(BM*BN)/(TM*TN) = {T} threads per block exceeds 1024")
    require(T % BK == 0 and BM % (T // BK) == 0, name,
            f"the A staging loop must cover BM={BM} rows in whole passes of threads/BK = {T}/{BK} rows")
    require(T % BN == 0 and BK % (T // BN) == 0, name,
            f"the B staging loop must cover BK={BK} rows in whole passes of threads/BN = {T}/{BN} rows")


def require_grid_y(name: str, blocks_y: int):
    require(blocks_y <= 65535, name, f"gridDim.y = {blocks_y} exceeds the launch limit 65535")


# ---- the second ladder (M x N problems, K unused) ----

def mn(M, N, K):
    """Elements of an M x N array (Arg elems): the second ladder's A, B, x, y of M*N floats."""
    return M * N


def require_multiple(name: str, value: int, what: str, of: int, of_what: str):
    """No bounds checks in the twin (or every lane the same trips): value a multiple of `of`."""
    require(value % of == 0, name, f"{what}={value} must be a multiple of {of_what}={of}")


def require_pow2(name: str, value: int, what: str):
    require(value > 0 and value & (value - 1) == 0, name, f"{what}={value} must be a power of two")


def require_block(name: str, threads: int, what: str):
    """A block of whole warps, at most 1024 threads."""
    require(0 < threads <= 1024 and threads % 32 == 0, name,
            f"{what} = {threads} threads must be whole warps, at most 1024")


def require_transpose_tiles(name: str, M: int, N: int, TILE: int, ROWS: int):
    """The transposes' shape: TILE x ROWS threads, TILE/ROWS rows each; M, N whole tiles."""
    require(TILE % ROWS == 0, name, f"TILE={TILE} must be a multiple of ROWS={ROWS}")
    require(TILE * ROWS <= 1024, name, f"block (TILE, ROWS) = {TILE * ROWS} threads exceeds 1024")
    require_multiple(name, M, "M", TILE, "TILE")
    require_multiple(name, N, "N", TILE, "TILE")
    require_grid_y(name, M // TILE)


def transpose_reference(inputs, M, N, K, alpha, beta):
    """B (N x M) = A (M x N) transposed."""
    return {"B": inputs["A"].reshape(M, N).T.astype(np.float64)}


def transpose_grid_period(M, N, K, TILE, ROWS):
    """x: A moves TILE columns, B TILE rows (TILE*M floats); y: A moves TILE rows (TILE*N floats),
    B TILE columns."""
    return align_period(TILE, TILE * M), align_period(TILE * N, TILE)


def stride_grid(M, N, BLOCK, GRID):
    """A grid-stride reduction's blocks: G = min(GRID, M*N/BLOCK), enough to fill the GPU, none idle."""
    return min(GRID, M * N // BLOCK)


def require_grid_stride(name: str, M, N, BLOCK, GRID):
    """A grid-stride reduction's refusals: warps of BLOCK threads folded by shuffles, and every thread the
    same number of trips (the CTAs must repeat for the sampler)."""
    require_block(name, BLOCK, "BLOCK")
    require_pow2(name, BLOCK // 32, "BLOCK/32")
    require(GRID > 0 and GRID <= 2**31 - 1, name, f"GRID={GRID} blocks is outside 1..2^31-1")
    require_multiple(name, M * N, "M*N", BLOCK, "BLOCK")
    G = stride_grid(M, N, BLOCK, GRID)
    require_multiple(name, M * N, "M*N", G * BLOCK, "G*BLOCK (G = min(GRID, M*N/BLOCK) blocks; every "
                     "thread the same trips)")
