"""Refusals several kernels of the ladder share (not a kernel: the leading underscore keeps it out
of the kernel list)."""
from gpusim.kernel import require


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
