"""Refusals several kernels of the ladder share (not a kernel: the leading underscore keeps it out
of the kernel list)."""
from gpusim.kernel import require

INT32_LIMIT = 2 ** 31


def require_tile_multiples(name, M, N, K, BM, BN, BK):
    """No bounds checks in the twin: M, N, K multiples of BM, BN, BK (one error per dimension)."""
    for nm, v, t, tn in (("M", M, BM, "BM"), ("N", N, BN, "BN"), ("K", K, BK, "BK")):
        require(v % t == 0, name, f"no bounds checks: {nm}={v} must be a multiple of {tn}={t}")


def require_int32_indexing(name: str, M: int, N: int, K: int):
    """The twins index A, B and C with 32-bit int: each must hold fewer than 2^31 elements."""
    for what, v in (("M*K", M * K), ("K*N", K * N), ("M*N", M * N)):
        require(v < INT32_LIMIT, name, f"{what} = {v} must be < 2^31: the CUDA twin indexes with 32-bit int")


def require_grid_y(name: str, blocks_y: int):
    require(blocks_y <= 65535, name, f"gridDim.y = {blocks_y} exceeds the launch limit 65535")
