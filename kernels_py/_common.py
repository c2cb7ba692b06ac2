"""Helpers several kernels of the ladder share (not a kernel: the leading underscore keeps it
out of the kernel list). Each is a rule read off the SASS of more than one twin, or a piece of
bookkeeping that was written the same way in more than one kernel file."""
from gpusim.kernel import require


# ---------------------------------------------------------------- SASS block tables

def parse_ops(text: str) -> dict:
    """'IMAD.WIDE:7 MOV:4 EXIT' -> {'IMAD.WIDE': 7, 'MOV': 4, 'EXIT': 1}."""
    out = {}
    for tok in text.split():
        name, _, n = tok.partition(":")
        out[name] = int(n) if n else 1
    return out


def body_ops(ops: dict) -> dict:
    """A block's instructions other than its closing BRA / EXIT."""
    return {n: c for n, c in ops.items() if n.split(".")[0] not in ("BRA", "EXIT")}


def branch_ops(ops: dict) -> dict:
    """A block's closing BRA / EXIT."""
    return {n: c for n, c in ops.items() if n.split(".")[0] in ("BRA", "EXIT")}


# ---------------------------------------------------------------- shared-memory load widths

def vec_width(*ns: int) -> int:
    """Largest of 4, 2, 1 floats dividing every n (16-, 8-, 4-byte alignment): how many
    floats ptxas loads at a time from a contiguous run whose length and start are multiples
    of the ns (LDS.128 / LDS.64 / LDS)."""
    for w in (4, 2):
        if all(n % w == 0 for n in ns):
            return w
    return 1


def lds_runs(n: int):
    """(offset, width) of the shared loads ptxas makes of n contiguous floats starting at a
    multiple of n: w floats at a time, w the largest of 4, 2, 1 dividing n."""
    w = vec_width(n)
    return [(o, w) for o in range(0, n, w)]


def shared_vectors(offsets, align_floats: int):
    """The shared loads ptxas makes of the float offsets one thread reads.

    `offsets` are relative to a thread base that ptxas knows to be a multiple of
    `align_floats` (1, 2 or 4). Maximal contiguous runs are cut into the widest
    naturally aligned pieces: 4 floats -> LDS.128, 2 -> LDS.64, 1 -> LDS.
    Returns [(offset, width)].
    """
    offs = sorted(set(int(o) for o in offsets))
    out, i = [], 0
    while i < len(offs):
        j = i
        while j + 1 < len(offs) and offs[j + 1] == offs[j] + 1:
            j += 1
        p, end = offs[i], offs[j] + 1
        while p < end:
            for w in (4, 2, 1):
                if w <= align_floats and p % w == 0 and p + w <= end:
                    out.append((p, w))
                    p += w
                    break
        i = j + 1
    return out


def ld_vec(arr, idx, w: int) -> tuple:
    """One shared load of w floats at idx (LDS for 1, LDS.64 for 2, LDS.128 for 4), as a tuple."""
    v = arr.ld(idx, vec=w)
    return (v,) if w == 1 else v


def ld_run(arr, start, n: int, w: int) -> list:
    """The n floats from start, loaded w at a time."""
    out = []
    for r in range(0, n, w):
        out.extend(ld_vec(arr, start + r, w))
    return out


def load_vectors(arr, base, vecs):
    """Issue the loads of `shared_vectors` output; {offset: Val}."""
    vals = {}
    for off, w in vecs:
        for j, x in enumerate(ld_vec(arr, base + off, w)):
            vals[off + j] = x
    return vals


def row_dot_col(k, As, a_base, Bs, b_col, b_stride, runs, acc, lead=0, sink=0, before_sink=None):
    """acc += sum_i As[a_base + i] * Bs[i*b_stride + b_col] over the `lds_runs` of the row,
    in the order ptxas schedules it (the issue order matters to the timing engine, not to counts).

    The loads are issued in use order (each As piece, then the Bs floats it multiplies):
    `lead` of them before the first FFMA, then one after each FFMA, and any an FFMA still
    needs just before it. `sink` > 0: the last `sink` FFMAs come after `before_sink()` (ptxas
    moves FFMAs that touch no shared memory below the trailing BAR.SYNC). lead=0 is the plain
    source order: each As piece, then per float its Bs load and the FFMA."""
    loads = []                        # (thunk, FFMA index of first use), in use order
    vals = {}
    i = 0
    for off, w in runs:
        loads.append(("a", off, w, i))
        for j in range(w):
            loads.append(("b", off + j, 1, i + j))
        i += w
    n = i
    nxt = 0

    def issue(upto):                  # issue loads [nxt, upto)
        nonlocal nxt
        while nxt < upto:
            kind, off, w, _ = loads[nxt]
            if kind == "a":
                for j, x in enumerate(ld_vec(As, a_base + off, w)):
                    vals["a", off + j] = x
            else:
                vals["b", off] = Bs.ld(off * b_stride + b_col)
            nxt += 1

    issue(min(lead, len(loads)))
    for i in range(n):
        if sink and i == n - sink and before_sink is not None:
            issue(len(loads))         # every shared load comes before the barrier
            before_sink()
        need = nxt
        while need < len(loads) and loads[need][3] <= i:
            need += 1
        issue(need)
        acc = k.ffma(vals["a", i], vals["b", i], acc)
        if lead:
            issue(min(nxt + 1, len(loads)))
    if sink and before_sink is not None and sink > n:
        issue(len(loads))
        before_sink()
    return acc


def interleave_loads(ffmas, first_use, lead: int) -> list:
    """A ptxas-like issue order for a block of loads and the FFMAs that use them, when no SASS
    order is recorded: the loads in order of first use, `lead` of them before the first FFMA, then
    one after each FFMA, and any an FFMA still needs just before it.

    `ffmas`: the FFMA keys in issue order; `first_use`: {load key: index into ffmas of its first
    use}. Returns [("ld", key) | ("ffma", key)]."""
    loads = sorted(first_use, key=lambda key: first_use[key])
    out, nxt = [], 0
    for _ in range(min(lead, len(loads))):
        out.append(("ld", loads[nxt]))
        nxt += 1
    for n, f in enumerate(ffmas):
        while nxt < len(loads) and first_use[loads[nxt]] <= n:
            out.append(("ld", loads[nxt]))
            nxt += 1
        out.append(("ffma", f))
        if nxt < len(loads):
            out.append(("ld", loads[nxt]))
            nxt += 1
    return out


# ---------------------------------------------------------------- epilogue

def store_alpha_beta(k, C, idx, acc, alpha, beta):
    """C[idx] = alpha*acc + beta*C[idx] as ptxas computes it: LDG, `FMUL t = C*beta`,
    `FFMA acc*alpha + t`, STG."""
    c = C.ld(idx)
    t = k.fmul(c, beta)
    C.st(idx, k.ffma(acc, alpha, t))


# ---------------------------------------------------------------- refusals

def require_tile_multiples(name, M, N, K, BM, BN, BK):
    """No bounds checks in the twin: M, N, K multiples of BM, BN, BK (one error per dimension)."""
    for nm, v, t, tn in (("M", M, BM, "BM"), ("N", N, BN, "BN"), ("K", K, BK, "BK")):
        require(v % t == 0, name, f"no bounds checks: {nm}={v} must be a multiple of {tn}={t}")
