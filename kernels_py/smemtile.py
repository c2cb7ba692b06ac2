"""smemtile: shared-memory tiling, one output per thread (seed 004; seed 003's third step).

Twin: kernels_cuda/smemtile.cu, statement for statement. Block (BLOCKSIZE*BLOCKSIZE), grid
(M/BLOCKSIZE, N/BLOCKSIZE). Per K tile each thread copies one element of A and one of B into
shared memory, and after a barrier accumulates a BLOCKSIZE-long dot product from them. The claim
it exists to test: global traffic falls by BLOCKSIZE, and the inner loop becomes shared-memory
bound (two shared loads per FMA in the source; ptxas merges the As row into LDS.128).
"""
from gpusim.kernel import KernelSpec, align_period, require


def smemtile(k, M, N, K, alpha, A, B, beta, C, BLOCKSIZE=32):
    BS = BLOCKSIZE
    cRow, cCol = k.blockIdx.x, k.blockIdx.y
    As = k.shared("As", BS * BS)
    Bs = k.shared("Bs", BS * BS)
    threadRow = k.threadIdx.x // BS
    threadCol = k.threadIdx.x % BS
    A = A + cRow * BS * K
    B = B + cCol * BS
    C = C + cRow * BS * N + cCol * BS
    acc = 0.0
    for bkIdx in k.loop(0, K, BS, period=align_period(BS, BS * N)):
        As.st(threadRow * BS + threadCol, A.ld(threadRow * K + threadCol + bkIdx))
        Bs.st(threadRow * BS + threadCol, B.ld(threadRow * N + threadCol + bkIdx * N))
        k.syncthreads()
        for i in range(BS):
            acc = k.ffma(As.ld(threadRow * BS + i), Bs.ld(i * BS + threadCol), acc)
        k.syncthreads()
    C.st(threadRow * N + threadCol, k.ffma(alpha, acc, k.fmul(beta, C.ld(threadRow * N + threadCol))))


def _check(M, N, K, BLOCKSIZE):
    BS = BLOCKSIZE
    require(BS * BS <= 1024, "smemtile",
            f"BLOCKSIZE*BLOCKSIZE = {BS * BS} threads per block exceeds 1024 (BLOCKSIZE <= 32)")
    require(M % BS == 0 and N % BS == 0 and K % BS == 0, "smemtile",
            f"the kernel has no bounds checks: M, N and K must be multiples of BLOCKSIZE={BS} "
            f"(got M={M}, N={N}, K={K})")


SPEC = KernelSpec(
    name="smemtile", fn=smemtile, params={"BLOCKSIZE": 32},
    launch=lambda M, N, K, BLOCKSIZE: ((-(-M // BLOCKSIZE), -(-N // BLOCKSIZE), 1),
                                       (BLOCKSIZE * BLOCKSIZE, 1, 1)),
    check=_check,
    # blockIdx.x moves A by BLOCKSIZE rows (BLOCKSIZE*K floats) and C by BLOCKSIZE*N floats;
    # blockIdx.y moves B and C by BLOCKSIZE floats.
    grid_period=lambda M, N, K, BLOCKSIZE: (align_period(BLOCKSIZE * K, BLOCKSIZE * N),
                                            align_period(BLOCKSIZE)),
    summary="32x32 shared-memory tiles, one output per thread (seed 004)",
    source="kernels_cuda/smemtile.cu",
)
