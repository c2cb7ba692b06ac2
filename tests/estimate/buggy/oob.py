"""A dot product whose A index runs one past the row: the last thread row of the last CTA reads
A[M*K], one element past the end."""
from _tiles import BS, spec


def oob(k, M, N, K, alpha, A, B, beta, C):
    ty, tx = k.threadIdx.x // BS, k.threadIdx.x % BS
    row, col = k.blockIdx.x * BS + ty, k.blockIdx.y * BS + tx
    acc = 0.0
    for i in k.loop(0, K, 1):
        acc = k.ffma(A.ld(row * K + i + 1), B.ld(i * N + col), acc)
    C.st(row * N + col, k.ffma(alpha, acc, k.fmul(beta, C.ld(row * N + col))))


SPEC = spec("oob", oob, "reads one element past each row of A")
