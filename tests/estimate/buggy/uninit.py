"""smemtile at 16x16 whose B tile is staged by the first 8 thread rows only: rows 8..15 of Bs are
read before any thread wrote them (garbage on the hardware, zeros in the Python model)."""
from _tiles import BS, spec


def uninit(k, M, N, K, alpha, A, B, beta, C):
    As, Bs = k.shared("As", BS * BS), k.shared("Bs", BS * BS)
    ty, tx = k.threadIdx.x // BS, k.threadIdx.x % BS
    row, col = k.blockIdx.x * BS + ty, k.blockIdx.y * BS + tx
    acc = 0.0
    for t in k.loop(0, K, BS):
        As.st(ty * BS + tx, A.ld(row * K + t + tx))
        with k.where(ty < BS // 2):
            Bs.st(ty * BS + tx, B.ld((t + ty) * N + col))
        k.syncthreads()
        for i in range(BS):
            acc = k.ffma(As.ld(ty * BS + i), Bs.ld(i * BS + tx), acc)
        k.syncthreads()
    C.st(row * N + col, k.ffma(alpha, acc, k.fmul(beta, C.ld(row * N + col))))


SPEC = spec("uninit", uninit, "half the B tile never staged")
