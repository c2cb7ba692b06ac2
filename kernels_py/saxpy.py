"""saxpy: y = alpha*x + y, one float per thread.

Twin: kernels_cuda/saxpy.cu, statement for statement. Block (BLOCK), grid (ceil(M*N / BLOCK)).
The claim it exists to test: each warp instruction reads or writes 32 consecutive floats, 4 sectors
per request; per element the kernel reads x and y and writes y (12 bytes for 2 flops), so it is
DRAM-bound: 2 reads and 1 write per element, nothing reused.
"""
import numpy as np

from gpusim.kernel import Arg, KernelSpec, align_period
from kernels_py._common import mn, require_block

NAME = "saxpy"


def saxpy(k, M, N, alpha, x, y, BLOCK=256):
    n = M * N
    i = k.blockIdx.x * BLOCK + k.threadIdx.x
    with k.where(i < n):
        y.st(i, k.ffma(alpha, x.ld(i), y.ld(i)))


def _check(M, N, K, BLOCK):
    require_block(NAME, BLOCK, "BLOCK")


def _reference(inputs, M, N, K, alpha, beta):
    return {"y": np.float64(np.float32(alpha)) * inputs["x"].astype(np.float64) + inputs["y"]}


SPEC = KernelSpec(
    name=NAME, fn=saxpy, params={"BLOCK": 256},
    launch=lambda M, N, K, BLOCK: ((-(-(M * N) // BLOCK), 1, 1), (BLOCK, 1, 1)),
    check=_check,
    # one CTA step moves x and y by BLOCK floats
    grid_period=lambda M, N, K, BLOCK: (align_period(BLOCK), 1),
    computes="y = alpha*x + y",
    summary="y = alpha*x + y: 4 sectors per request, 2 reads and 1 write per element, DRAM-bound",
    source="kernels_cuda/saxpy.cu",
    args=(Arg("M", "i32"), Arg("N", "i32"), Arg("alpha", "f32"), Arg("x", "ptr", mn, "in"),
          Arg("y", "ptr", mn, "inout")),
    reference=_reference,
    flops=lambda M, N, K: 2 * M * N,
    notes=("any M, N: threads past the end are bounds-checked",),
)
