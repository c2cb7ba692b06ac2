"""coalesced: one thread per C element, 1-D blocks; a warp walks a row of C.

Twin: kernels_cuda/coalesced.cu (`coalesced_body<BLOCKSIZE>`), block
(BLOCKSIZE*BLOCKSIZE), grid (ceil(M/BLOCKSIZE), ceil(N/BLOCKSIZE)),
row = blockIdx.x*BLOCKSIZE + threadIdx.x/BLOCKSIZE,
col = blockIdx.y*BLOCKSIZE + threadIdx.x%BLOCKSIZE. SASS:
traces/static/coalesced.sass (BLOCKSIZE=32) and coalesced__BLOCKSIZE16.sass.

What the hardware executes, and where it departs from the textbook source:

* The K loop is the same SASS as naive's (see kernels_py/naive.py): unrolled
  by 4 with a x16 loop, one x8 step, a x4 loop and K%4 scalar remainder steps;
  each step is two 4-byte LDG.E (A[row*K+i]: one address per warp when
  BLOCKSIZE=32, a broadcast; B[i*N+col]: 32 consecutive floats) and an FFMA.
  Nothing is merged into wider loads.
* The bounds check is `@P0 EXIT` at the end of the entry block (every warp
  executes it); warps with no lane inside C stop there.
* The epilogue is `FMUL t = C*beta; FFMA tmp*alpha + t; STG.E`.
* threadIdx.x / BLOCKSIZE and % BLOCKSIZE cost what ptxas makes of a
  division by a constant, which the kernel derives from BLOCKSIZE:
  - a power of two: SHF (shift) and LOP3 (mask), and the row/col products fold
    into a LEA and a LOP3 (13-instruction entry block; the K<4 guard block
    carries one more SHF);
  - otherwise the unsigned magic-number division (LLVM's
    UnsignedDivisionByConstantInfo, `_udiv_magic` below): IMAD.WIDE.U32 by the
    magic, then SHF by the post-shift (or a MOV when it is 0); divisors whose
    magic needs the 33rd bit add IADD3 + LEA.HI (7, 19, 21, 27, 31) and even
    ones among them are pre-shifted by a SHF instead (14, 28); the remainder
    and the two `blockIdx*BLOCKSIZE + ...` products are three IMAD. The
    remainder-loop setup then recomputes col with IMADs and a MOV, and the x1
    body carries two extra MOVs (a register-pair copy of the A pointer);
  - BLOCKSIZE=1: blockIdx read into uniform registers (S2UR), the K-loop
    counter kept in a vector register (one IADD3 more and one UIADD3 fewer per
    unrolled body) and a different loop setup.
  Checked against nvcc 13.0 for every BLOCKSIZE in 1..32: the per-opcode
  executed counts are exact for all of them.
"""
from functools import lru_cache

from gpusim.kernel import KernelSpec, align_period, require
from kernels_py.naive import block_op, check_sizes, kloop_blocks, sass_epilogue, sass_k_loop


def _udiv_magic(d: int, leading_zeros: int = 0, allow_even: bool = True, bits: int = 32):
    """(needs_add, pre_shift, post_shift, magic) for x // d, x unsigned 32-bit.

    The Hacker's Delight / LLVM UnsignedDivisionByConstantInfo algorithm, which
    is what the twin's SASS shows for every d in 3..32 (magics and shifts)."""
    mask = (1 << bits) - 1
    all_ones = mask >> leading_zeros
    smin, smax = 1 << (bits - 1), (1 << (bits - 1)) - 1
    nc = all_ones - ((all_ones + 1 - d) % d)
    p = bits - 1
    q1, r1 = divmod(smin, nc)
    q2, r2 = divmod(smax, d)
    add = False
    while True:
        p += 1
        if r1 >= nc - r1:
            add |= q1 >= smax
            q1, r1 = (2 * q1 + 1) & mask, (2 * r1 - nc) & mask
        else:
            add |= q1 >= smin
            q1, r1 = (2 * q1) & mask, (2 * r1) & mask
        if r2 + 1 >= d - r2:
            add |= q2 >= smax
            q2, r2 = (2 * q2 + 1) & mask, (2 * r2 + 1 - d) & mask
        else:
            add |= q2 >= smin
            q2, r2 = (2 * q2) & mask, (2 * r2 + 1) & mask
        delta = d - 1 - r2
        if not (p < 2 * bits and (q1 < delta or (q1 == delta and r1 == 0))):
            break
    if add and d % 2 == 0 and allow_even:
        pre = (d & -d).bit_length() - 1
        add, _, post, magic = _udiv_magic(d >> pre, leading_zeros + pre, False, bits)
        return add, pre, post, magic
    post = p - bits - (1 if add else 0)
    return add, 0, post, (q2 + 1) & mask


@lru_cache(maxsize=None)
def _blocks(BLOCKSIZE: int) -> dict:
    bs = BLOCKSIZE
    entry = {"LDC": 1, "LDC.64": 1, "ISETP.GE.OR": 1, "EXIT": 1}
    if bs == 1:
        entry.update({"S2R": 1, "S2UR": 2, "IADD3": 1, "ISETP.LE.AND": 1})
        ops = kloop_blocks(
            {"LDC.64": 2, "IMAD": 2, "IMAD.WIDE": 2},
            k4_guard={"IADD3": 1, "LOP3.LUT": 1, "ISETP.GE.U32.AND": 1, "MOV": 2, "BRA": 1},
            x4_setup={"IADD3": 1, "ULDC.64": 2, "HFMA2.MMA": 1, "UIMAD.WIDE": 1,
                      "ISETP.GT.AND": 1, "IMAD": 1, "MOV": 3, "BRA": 1},
            counter_in_ur=False)
    elif bs & (bs - 1) == 0:
        # tid & (bs-1), tid >> log2(bs), blockIdx.y << log2(bs), a LOP3 merging
        # them into col, LEA for row
        entry.update({"S2R": 3, "ISETP.GE.AND": 1, "LOP3.LUT": 2, "SHF.R.U32.HI": 1,
                      "SHF.L.U32": 1, "LEA": 1})
        ops = kloop_blocks(
            {"LDC.64": 2, "IMAD": 2, "IADD3": 1, "IMAD.WIDE": 2},
            k4_guard={"IADD3": 1, "UMOV": 1, "MOV": 1, "ISETP.GE.U32.AND": 1,
                      "SHF.L.U32": 1, "LOP3.LUT": 1, "BRA": 1})
    else:
        add, pre, post, _ = _udiv_magic(bs)
        entry.update({"S2R": 3, "ISETP.GE.AND": 1, "IMAD.WIDE.U32": 1, "IMAD": 3})
        div = {}
        if pre:
            div["SHF.R.U32.HI"] = 1
        if add:
            div.update({"IADD3": 1, "LEA.HI": 1})
        if post:
            div["SHF.R.U32.HI"] = div.get("SHF.R.U32.HI", 0) + 1
        else:
            div["MOV"] = 1
        entry.update(div)
        ops = kloop_blocks({"LDC.64": 2, "IMAD": 4, "IMAD.WIDE": 2, "MOV": 1},
                           rem_body_extra={"MOV": 2})
    ops["entry"] = entry
    return ops


def coalesced(k, M, N, K, alpha, A, B, beta, C, BLOCKSIZE=32):
    ops = _blocks(BLOCKSIZE)
    row = k.blockIdx.x * BLOCKSIZE + k.threadIdx.x // BLOCKSIZE
    col = k.blockIdx.y * BLOCKSIZE + k.threadIdx.x % BLOCKSIZE
    block_op(k, ops["entry"])                           # ... @P0 EXIT
    with k.where((row < M) & (col < N)):
        if not k.any_active():
            return
        tmp = sass_k_loop(k, ops, A, row * K, B, col, N, K)
        sass_epilogue(k, ops, tmp, alpha, beta, C, row * N + col)


def _check(M, N, K, BLOCKSIZE):
    require(BLOCKSIZE * BLOCKSIZE <= 1024, "coalesced",
            f"block (BLOCKSIZE*BLOCKSIZE) = {BLOCKSIZE * BLOCKSIZE} threads exceeds "
            "1024 threads per block")
    check_sizes("coalesced", M, N, K, BLOCKSIZE)


SPEC = KernelSpec(
    name="coalesced", fn=coalesced, params={"BLOCKSIZE": 32},
    launch=lambda M, N, K, BLOCKSIZE: ((-(-M // BLOCKSIZE), -(-N // BLOCKSIZE), 1),
                                       (BLOCKSIZE * BLOCKSIZE, 1, 1)),
    check=_check,
    # consecutive CTAs along x: A and C move BLOCKSIZE rows; along y: B and C
    # move BLOCKSIZE columns
    grid_period=lambda M, N, K, BLOCKSIZE: (align_period(BLOCKSIZE * K, BLOCKSIZE * N),
                                            align_period(BLOCKSIZE)),
    summary="one thread per output; a warp reads a row segment of B and C (coalesced)",
    source="kernels_cuda/coalesced.cu",
    notes=("same K loop as naive: x16/x8/x4 unrolled + x1 remainder",
           "any M, N, K: bounds checked per thread"),
)
