"""copy4: B = A as float4, one 16-byte vector per thread.

Twin: kernels_cuda/copy4.cu, statement for statement. Block (BLOCK), grid (ceil(M*N/4 / BLOCK));
thread i copies floats 4i..4i+3 with one LDG.E.128 and one STG.E.128. The claim it exists to test:
a warp's 16-byte accesses are 512 contiguous bytes, 16 sectors per request (4 sectors per 128-byte
line, every byte used), so the copy moves each byte of A and B once and reaches the DRAM roof.
"""
from gpusim.kernel import Arg, KernelSpec, align_period
from kernels_py._common import mn, require_block, require_multiple

NAME = "copy4"


def copy4(k, M, N, A, B, BLOCK=256):
    n4 = (M * N) // 4
    i = k.blockIdx.x * BLOCK + k.threadIdx.x
    with k.where(i < n4):
        B.st(4 * i, A.ld(4 * i, vec=4), vec=4)


def _check(M, N, K, BLOCK):
    require_block(NAME, BLOCK, "BLOCK")
    require_multiple(NAME, M * N, "M*N", 4, "the float4 width")


SPEC = KernelSpec(
    name=NAME, fn=copy4, params={"BLOCK": 256},
    launch=lambda M, N, K, BLOCK: ((-(-(M * N // 4) // BLOCK), 1, 1), (BLOCK, 1, 1)),
    check=_check,
    # one CTA step moves A and B by 4*BLOCK floats
    grid_period=lambda M, N, K, BLOCK: (align_period(4 * BLOCK), 1),
    computes="B = A",
    summary="B = A, one float4 per thread: 16 sectors per warp request, the DRAM roof",
    source="kernels_cuda/copy4.cu",
    args=(Arg("M", "i32"), Arg("N", "i32"), Arg("A", "ptr", mn, "in"), Arg("B", "ptr", mn, "out")),
    reference=lambda inputs, M, N, K, alpha, beta: {"B": inputs["A"].astype("float64")},
    flops=lambda M, N, K: 0,
    notes=("M*N a multiple of 4; threads past the end are bounds-checked",),
)
