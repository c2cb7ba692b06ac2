"""coalesced's GEMM at 16x16 with the beta * C term left out: C = alpha * A @ B only."""
from _tiles import BS, spec


def wrong(k, M, N, K, alpha, A, B, beta, C):
    ty, tx = k.threadIdx.x // BS, k.threadIdx.x % BS
    row, col = k.blockIdx.x * BS + ty, k.blockIdx.y * BS + tx
    acc = 0.0
    for i in k.loop(0, K, 1):
        acc = k.ffma(A.ld(row * K + i), B.ld(i * N + col), acc)
    C.st(row * N + col, k.fmul(alpha, acc))


SPEC = spec("wrong", wrong, "leaves out beta * C")
