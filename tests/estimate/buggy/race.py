"""Each thread stages its result in a shared row of BS floats indexed by its column only, so the 16
threads of a column write one element in the same instruction: a write-after-write race, barriers
or not."""
from _tiles import BS, spec


def race(k, M, N, K, alpha, A, B, beta, C):
    stage = k.shared("stage", BS)
    ty, tx = k.threadIdx.x // BS, k.threadIdx.x % BS
    row, col = k.blockIdx.x * BS + ty, k.blockIdx.y * BS + tx
    acc = 0.0
    for i in k.loop(0, K, 1):
        acc = k.ffma(A.ld(row * K + i), B.ld(i * N + col), acc)
    stage.st(tx, acc)
    k.syncthreads()
    out = stage.ld(tx)
    C.st(row * N + col, k.ffma(alpha, out, k.fmul(beta, C.ld(row * N + col))))


SPEC = spec("race", race, "threads of a column share one staging slot")
