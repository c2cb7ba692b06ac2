"""naive: one thread per C element; threadIdx.x walks the ROW of C (uncoalesced A).

Twin: kernels_cuda/naive.cu (`naive_body<BLOCK>`), block (BLOCK, BLOCK), grid
(ceil(M/BLOCK), ceil(N/BLOCK)). SASS: traces/static/naive.sass (BLOCK=32) and
naive__BLOCK16.sass.

What the hardware executes, and where it departs from the textbook source
(`for i < K: tmp += A[x*K+i] * B[i*N+y]`, one load pair and one FFMA per i):

* The bounds check `if (x < M && y < N)` is `@P0 EXIT` at the end of an
  11-instruction entry block. Every warp executes that block (the EXIT
  included, taken or not); a warp with no lane inside C executes nothing else.
* ptxas unrolls the runtime K loop by 4 (K%4 scalar remainder iterations at the
  end) and expands the x4 loop into a x16 loop while more than 12 of the K-K%4
  iterations remain, one x8 step when 8 or 12 remain and a x4 loop for the last
  4. Trips per thread: x16 body K//16, x8 step int((K//4)%4 >= 2), x4 body
  (K//4)%2, x1 remainder K%4. The Python loop below follows exactly that
  schedule, with each basic block's integer/control instructions issued by
  `k.ops` as counted in the SASS: the bodies cost n+1 IMAD.WIDE for n steps
  (one per B row step, one for the A pointer), two MOV and three UIADD3 for the
  uniform A offset, a counter IADD3, and ISETP+BRA (x16 and x4 loops).
* The loads are still 4-byte LDG.E, two per k step (A's column through 32
  different rows: one sector per lane; B's row segment: coalesced), as in the
  source: nothing is vectorised or merged.
* The epilogue is `FMUL t = C*beta; FFMA r = tmp*alpha + t` (the source's
  `alpha*tmp + beta*C` with beta*C computed first), then STG.E.

Other BLOCK values (1..32, BLOCK*BLOCK <= 1024): the loop blocks do not change;
only the index arithmetic does, and the kernel follows it: for a power of two
the two `blockIdx*BLOCK + threadIdx` products are LEA (shift-add), for other
values IMAD, and for BLOCK=1 ptxas reads blockIdx with S2UR and adds with
IADD3; the remainder-loop setup has one LEA, one IMAD more, or neither
accordingly. Checked against nvcc 13.0 for every BLOCK in 1..32: the
per-opcode executed counts are exact for all of them.
"""
from functools import lru_cache

from gpusim.kernel import KernelSpec, align_period, require
from kernels_py._common import store_alpha_beta

_CONTROL = ("ISETP", "PLOP3", "BRA", "EXIT")
INT32_LIMIT = 2 ** 31


def _is_pow2(n: int) -> bool:
    return n & (n - 1) == 0


def block_op(k, ops: dict, body=None):
    """One SASS basic block: its address/integer instructions, then the body
    (loads and FP math, issued by the caller), then its compare and branch."""
    k.ops({n: c for n, c in ops.items() if n.split(".")[0] not in _CONTROL})
    out = body() if body is not None else None
    k.ops({n: c for n, c in ops.items() if n.split(".")[0] in _CONTROL})
    return out


def unrolled_ops(n: int, loop: bool, counter_in_ur: bool = True) -> dict:
    """Integer/control instructions of a K-loop body of n steps.

    n+1 IMAD.WIDE (B walks down n rows, one to rebase the A pointer), MOV x2
    (A's uniform base into a register pair), UIADD3 + UIADD3.X (64-bit uniform
    A offset += 4n bytes), the step counter (`UIADD3 UR4 += n`, or an IADD3
    when ptxas keeps i in a vector register) and the trip counter IADD3. A loop
    ends in ISETP + BRA; the single x8 step instead clears the `no x16/x8 step
    taken` predicate with a PLOP3.
    """
    ops = {"MOV": 2, "IMAD.WIDE": n + 1, "IADD3": 1 if counter_in_ur else 2,
           "UIADD3": 2 if counter_in_ur else 1, "UIADD3.X": 1}
    if loop:
        ops.update({"ISETP.GT.AND" if n == 16 else "ISETP.NE.AND": 1, "BRA": 1})
    else:
        ops["PLOP3.LUT"] = 1
    return ops


def kloop_blocks(rem_setup: dict, rem_body_extra: dict | None = None, *,
                 k4_guard: dict | None = None, x4_setup: dict | None = None,
                 counter_in_ur: bool = True) -> dict:
    """The basic blocks of ptxas' K loop `for (i = 0; i < K; ++i) acc += A[..]*B[..]`,
    shared by naive and coalesced (identical SASS apart from the noted blocks)."""
    rem_body = {"IADD3": 2, "ISETP.NE.AND": 1, "IMAD.WIDE": 1, "IADD3.X": 1, "BRA": 1}
    for n, c in (rem_body_extra or {}).items():
        rem_body[n] = rem_body.get(n, 0) + c
    return {
        "k_guard": {"LDC": 1, "ULDC.64": 1, "HFMA2.MMA": 1, "ISETP.GE.AND": 1, "BRA": 1},
        "k4_guard": k4_guard or {"IADD3": 1, "UMOV": 1, "MOV": 1, "ISETP.GE.U32.AND": 1,
                                 "LOP3.LUT": 1, "BRA": 1},
        "x4_setup": x4_setup or {"LDC.64": 1, "IADD3": 1, "UMOV": 1, "ULDC.64": 1, "IMAD": 1,
                                 "ISETP.GT.AND": 1, "MOV": 1, "IMAD.WIDE": 1, "BRA": 1},
        "x16_guard": {"ISETP.GT.AND": 1, "PLOP3.LUT": 1, "BRA": 1},
        "x16_pre": {"PLOP3.LUT": 1},
        "x16": unrolled_ops(16, True, counter_in_ur),
        "x8_guard": {"ISETP.GT.AND": 1, "BRA": 1},
        "x8": unrolled_ops(8, False, counter_in_ur),
        "x4_guard": {"ISETP.NE.OR": 1, "BRA": 1},
        "x4": unrolled_ops(4, True, counter_in_ur),
        "rem_guard": {"ISETP.NE.AND": 1, "BRA": 1},
        "rem_setup": rem_setup,
        "x1": rem_body,
        "epilogue": {"LDC.64": 1, "IMAD": 1, "ULDC": 2, "IMAD.WIDE": 1, "EXIT": 1},
    }


def sass_k_loop(k, ops: dict, A, a_row, B, b_col, N: int, K: int):
    """acc = sum_i A[a_row + i] * B[i*N + b_col], issued as ptxas scheduled it.

    Returns the accumulator (a Val, or 0.0 when K < 1)."""
    acc = 0.0
    block_op(k, ops["k_guard"])                          # acc = 0; if (K < 1) skip
    if K < 1:
        return acc

    def steps(i0, n, acc):
        def body():
            a_b = [(A.ld(a_row + i0 + j), B.ld((i0 + j) * N + b_col)) for j in range(n)]
            out = acc
            for a, b in a_b:
                out = k.ffma(b, a, out)
            return out
        return body

    block_op(k, ops["k4_guard"])                         # if (K < 4) go to the remainder
    if K >= 4:
        block_op(k, ops["x4_setup"])
        block_op(k, ops["x16_guard"])                    # while (K4 left > 12): 16 steps
        n16 = K // 16
        if n16:
            k.ops(ops["x16_pre"])
        for i0 in k.loop(0, 16 * n16, 16, period=align_period(16, 16 * N)):
            acc = block_op(k, ops["x16"], steps(i0, 16, acc))
        i = 16 * n16
        block_op(k, ops["x8_guard"])                     # if (left > 4): 8 steps
        if (K // 4) % 4 >= 2:
            acc = block_op(k, ops["x8"], steps(i, 8, acc))
            i += 8
        block_op(k, ops["x4_guard"])                     # while (left != 0): 4 steps
        if (K // 4) % 2:
            acc = block_op(k, ops["x4"], steps(i, 4, acc))
    block_op(k, ops["rem_guard"])                        # K % 4 single steps
    if K % 4:
        block_op(k, ops["rem_setup"])
        for i in range(K - K % 4, K):
            acc = block_op(k, ops["x1"], steps(i, 1, acc))
    return acc


def sass_epilogue(k, ops: dict, acc, alpha, beta, C, c_idx):
    """C[c_idx] = alpha*acc + beta*C[c_idx] as `FMUL t = C*beta; FFMA acc*alpha + t`."""
    block_op(k, ops["epilogue"], lambda: store_alpha_beta(k, C, c_idx, acc, alpha, beta))


@lru_cache(maxsize=None)
def _blocks(BLOCK: int) -> dict:
    entry = {"LDC": 1, "LDC.64": 1, "ISETP.GE.AND": 1, "ISETP.GE.OR": 1, "EXIT": 1}
    if BLOCK == 1:      # blockIdx read into uniform registers, added with IADD3
        entry.update({"S2R": 2, "S2UR": 2, "IADD3": 2})
        rem_setup = {"LDC.64": 2, "IMAD": 2, "IMAD.WIDE": 2}
    elif _is_pow2(BLOCK):   # blockIdx*BLOCK + threadIdx as LEA (shift-add)
        entry.update({"S2R": 4, "LEA": 2})
        rem_setup = {"LDC.64": 2, "IMAD": 2, "LEA": 1, "IMAD.WIDE": 2}
    else:
        entry.update({"S2R": 4, "IMAD": 2})
        rem_setup = {"LDC.64": 2, "IMAD": 3, "IMAD.WIDE": 2}
    ops = kloop_blocks(rem_setup)
    ops["entry"] = entry
    return ops


def naive(k, M, N, K, alpha, A, B, beta, C, BLOCK=32):
    ops = _blocks(BLOCK)
    x = k.blockIdx.x * BLOCK + k.threadIdx.x            # row of C
    y = k.blockIdx.y * BLOCK + k.threadIdx.y            # column of C
    block_op(k, ops["entry"])                           # ... @P0 EXIT
    with k.where((x < M) & (y < N)):
        if not k.any_active():
            return
        tmp = sass_k_loop(k, ops, A, x * K, B, y, N, K)
        sass_epilogue(k, ops, tmp, alpha, beta, C, x * N + y)


def check_sizes(name: str, M: int, N: int, K: int, tile: int):
    """Limits every one-thread-per-output kernel shares: the grid's y limit and
    the twin's 32-bit int indexing."""
    require(-(-N // tile) <= 65535, name,
            f"gridDim.y = ceil(N/{tile}) = {-(-N // tile)} exceeds the launch limit 65535")
    for what, v in (("M*K", M * K), ("K*N", K * N), ("M*N", M * N)):
        require(v < INT32_LIMIT, name,
                f"{what} = {v} must be < 2^31: the CUDA twin indexes with 32-bit int")


def _check(M, N, K, BLOCK):
    require(BLOCK * BLOCK <= 1024, "naive",
            f"block (BLOCK, BLOCK) = {BLOCK * BLOCK} threads exceeds 1024 threads per block")
    check_sizes("naive", M, N, K, BLOCK)


SPEC = KernelSpec(
    name="naive", fn=naive, params={"BLOCK": 32},
    launch=lambda M, N, K, BLOCK: ((-(-M // BLOCK), -(-N // BLOCK), 1), (BLOCK, BLOCK, 1)),
    check=_check,
    # consecutive CTAs along x: A moves BLOCK rows (BLOCK*K), C BLOCK rows (BLOCK*N);
    # along y: B and C move BLOCK columns
    grid_period=lambda M, N, K, BLOCK: (align_period(BLOCK * K, BLOCK * N), align_period(BLOCK)),
    summary="one thread per output; a warp walks down a column of A (uncoalesced)",
    source="kernels_cuda/naive.cu",
    notes=("K loop unrolled x16/x8/x4 + x1 remainder as ptxas emits it",
           "any M, N, K: bounds checked per thread"),
)
