"""smemtile at 16x16 whose first barrier only the first warp reaches (inside `if (threadIdx.x < 32)`):
the other warps' reads are ordered by nothing."""
from _tiles import BS, spec


def divergent(k, M, N, K, alpha, A, B, beta, C):
    As, Bs = k.shared("As", BS * BS), k.shared("Bs", BS * BS)
    ty, tx = k.threadIdx.x // BS, k.threadIdx.x % BS
    row, col = k.blockIdx.x * BS + ty, k.blockIdx.y * BS + tx
    acc = 0.0
    for t in k.loop(0, K, BS):
        As.st(ty * BS + tx, A.ld(row * K + t + tx))
        Bs.st(ty * BS + tx, B.ld((t + ty) * N + col))
        with k.where(k.threadIdx.x < 32):
            k.syncthreads()
        for i in range(BS):
            acc = k.ffma(As.ld(ty * BS + i), Bs.ld(i * BS + tx), acc)
        k.syncthreads()
    C.st(row * N + col, k.ffma(alpha, acc, k.fmul(beta, C.ld(row * N + col))))


SPEC = spec("divergent", divergent, "a barrier only the first warp reaches")
