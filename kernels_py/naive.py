"""naive: one thread per C element; threadIdx.x walks the ROW of C (uncoalesced A).

Twin: kernels_cuda/naive.cu. Draft: SASS integer/control instructions pending.
"""
from gpusim.kernel import KernelSpec, align_period, require


def naive(k, M, N, K, alpha, A, B, beta, C, BLOCK=32):
    x = k.blockIdx.x * BLOCK + k.threadIdx.x
    y = k.blockIdx.y * BLOCK + k.threadIdx.y
    with k.where((x < M) & (y < N)):
        if not k.any_active():
            return
        tmp = 0.0
        for i in k.loop(0, K, 1, period=align_period(1, N)):
            a = A.ld(x * K + i)
            b = B.ld(i * N + y)
            tmp = k.ffma(a, b, tmp)
        c = C.ld(x * N + y)
        t = k.fmul(tmp, alpha)
        C.st(x * N + y, k.ffma(c, beta, t))


def _check(M, N, K, BLOCK):
    require(BLOCK * BLOCK <= 1024, "naive", f"BLOCK*BLOCK = {BLOCK * BLOCK} threads exceeds 1024")


SPEC = KernelSpec(
    name="naive", fn=naive, params={"BLOCK": 32},
    launch=lambda M, N, K, BLOCK: ((-(-M // BLOCK), -(-N // BLOCK), 1), (BLOCK, BLOCK, 1)),
    check=_check,
    grid_period=lambda M, N, K, BLOCK: (align_period(BLOCK * K, BLOCK * N), align_period(BLOCK)),
    summary="one thread per output; a warp walks down a column of A (uncoalesced)",
    source="kernels_cuda/naive.cu",
)
