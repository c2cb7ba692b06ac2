"""Memory opcodes on lane vectors: loads, stores, atomics and reductions (they return every lane's byte
address; see gpusim.sass.semantics)."""
from __future__ import annotations

import numpy as np

from gpusim.sass.listing import Instr, Operand
from gpusim.sass.operands import Handler, RZ, U32, URZ, _MEM_BYTES, _ftz, _refuse, _regs, _vec, reader, reader64


# memory

def _address(op: Operand, ins: Instr):
    """st -> int64 byte address lanes of a [Rn(.64) + URm + off] operand."""
    if op.kind != "mem":
        _refuse(ins, "memory operand")
    off = op.offset
    parts = []
    if op.n != RZ:
        parts.append(reader64(Operand("R", op.n), ins) if op.wide else
                     (lambda st, n=op.n: st.R[n].astype(np.uint64)))
    if op.ureg >= 0 and op.ureg != URZ:
        u = op.ureg
        parts.append(reader64(Operand("UR", u), ins) if op.wide else
                     (lambda st, u=u: st.UR[u].astype(np.uint64)))

    def addr(st):
        a = np.full(st.lanes, np.uint64(off & 0xFFFFFFFFFFFFFFFF))
        for p in parts:
            a = a + p(st)
        if not op.wide:
            a = a & np.uint64(0xFFFFFFFF)
        return a.astype(np.int64)
    return addr


def _width(mods) -> int:
    for m in mods:
        if m in _MEM_BYTES:
            return _MEM_BYTES[m]
    return 4


_SPACE = {"G": "global", "S": "shared", "L": "local"}


def _ld(ins, b, mods, o):
    space = _SPACE[b[2]]
    if any(m in mods for m in ("U8", "S8", "U16", "S16")):
        _refuse(ins, "sub-word loads")
    nb = _width(mods)
    addr = _address(o[1], ins)
    dst = o[0]
    words = nb // 4
    n0 = dst.n

    def run(st, on):
        a = addr(st)
        vals = st.load(space, a, nb, on, ins)       # (words, lanes) uint32
        if n0 != RZ:
            for k in range(words):
                np.copyto(st.R[n0 + k], vals[k], where=on)
        return a
    return Handler(run, _regs(o[1]), _regs(dst, words), data=True, kind="load", space=space,
                   nbytes=nb, addr_regs=_regs(o[1]))


def _st(ins, b, mods, o):
    space = _SPACE[b[2]]
    if any(m in mods for m in ("U8", "S8", "U16", "S16")):
        _refuse(ins, "sub-word stores")
    nb = _width(mods)
    addr = _address(o[0], ins)
    src = o[1]
    words = nb // 4

    def run(st, on):
        a = addr(st)
        if src.n == RZ:
            vals = np.zeros((words, st.lanes), U32)
        else:
            vals = st.R[src.n:src.n + words]
        st.store(space, a, nb, vals, on, ins)
        return a
    return Handler(run, _regs(o[0]) + _regs(src, words), [], kind="store", space=space, nbytes=nb,
                   addr_regs=_regs(o[0]))


# atomics and reductions

_ATOM_OPS = ("ADD", "MIN", "MAX", "EXCH", "CAS", "AND", "OR", "XOR", "INC", "DEC", "POPC", "CAST")
_NP = {"F32": np.float32, "S32": np.int32, "U32": np.uint32, "F64": np.float64, "S64": np.int64, "U64": np.uint64}


def _typed(x, typ: str):
    """(words, lanes) uint32 -> the lanes' values as numpy `typ` (64-bit: low word first)."""
    u = x[0].copy() if x.shape[0] == 1 else x[0].astype(np.uint64) | (x[1].astype(np.uint64) << np.uint64(32))
    return u.view(_NP[typ])


def _words(v, words: int):
    u = np.ascontiguousarray(v).view(np.uint64 if words == 2 else U32)
    if words == 1:
        return u[None].astype(U32)
    return np.stack([(u & np.uint64(0xFFFFFFFF)).astype(U32), (u >> np.uint64(32)).astype(U32)])


def _atomic(ins, b, mods, o):
    """ATOMG / ATOM / ATOMS [Pd,] Rd, [a], b[, c] and REDG / RED [a], b: a read-modify-write of the
    word (64-bit: pair) at a, for each lane one after another in CTA thread order (the order the
    hardware serves them is not defined; results depend on it only for EXCH / CAS and for the
    rounding of float sums). ATOM returns the old value; RED returns nothing. Operations: ADD (U32,
    S32, 64-bit, F32 with .FTZ.RN, F64), MIN / MAX (S32, U32, S64, U64), EXCH, CAS (compare b, store c),
    AND, OR, XOR, INC / DEC (atomicInc / atomicDec: wrap at b), POPC.INC (atomicAdd of 1). Refused:
    CAST.SPIN, the compare-and-store that a retry loop (atomicAdd on a shared float) spins on."""
    op = next((m for m in mods if m in _ATOM_OPS), None)
    if op is None:
        _refuse(ins, "atomic operation")
    if op == "CAST":
        _refuse(ins, "a compare-and-store retry loop (e.g. atomicAdd on a shared float): how often each "
                     "warp goes round depends on the order the hardware serves the lanes")
    k = next(i for i, x in enumerate(o) if x.kind == "mem")
    mem = o[k]
    if "E" in mods and mem.n != RZ and not mem.wide:       # .E: a 64-bit address, also where printed [R8+0x100]
        mem = Operand("mem", mem.n, wide=True, ureg=mem.ureg, offset=mem.offset)
    dst = next((x for x in o[:k] if x.kind == "R"), None)   # the predicate before it (PT) is unused
    srcs = list(o[k + 1:])
    nb = 8 if any(m in ("64", "F64", "S64", "U64") for m in mods) else 4
    words = nb // 4
    if op in ("INC", "DEC", "POPC") and words != 1:
        _refuse(ins, "64-bit INC / DEC")
    typ = next((t for t in ("F32", "F64", "S32", "S64") if t in mods), "U64" if words == 2 else "U32")
    if op in ("EXCH", "CAS", "AND", "OR", "XOR"):
        typ = "U64" if words == 2 else "U32"       # bitwise: the type does not matter
    ftz = "FTZ" in mods
    space = "shared" if b == "ATOMS" else "global"
    getters = [reader64(x, ins) if words == 2 else reader(x, ins) for x in srcs]
    addr = _address(mem, ins)

    def fn(old, v):
        x = _typed(old, typ)
        a = [_typed(v[i * words:(i + 1) * words], typ) for i in range(len(getters))]
        with np.errstate(all="ignore"):
            if op == "ADD":
                r = _ftz(_ftz(x) + _ftz(a[0])) if (typ == "F32" and ftz) else x + a[0]
            elif op == "MIN":
                r = np.minimum(x, a[0])
            elif op == "MAX":
                r = np.maximum(x, a[0])
            elif op == "EXCH":
                r = a[0]
            elif op == "CAS":
                r = np.where(x == a[0], a[1], x)
            elif op == "AND":
                r = x & a[0]
            elif op == "OR":
                r = x | a[0]
            elif op == "XOR":
                r = x ^ a[0]
            elif op == "INC":
                r = np.where(x >= a[0], U32(0), x + U32(1))
            elif op == "DEC":
                r = np.where((x == 0) | (x > a[0]), a[0], x - U32(1))
            else:                          # POPC.INC: every lane adds one
                r = x + U32(1)
        return _words(np.asarray(r, _NP[typ]), words)

    def run(st, on):
        a = addr(st)
        cols = []
        for g in getters:
            v = _vec(g(st), st.lanes)
            cols += list(_words(v.astype(np.uint64 if words == 2 else U32), words))
        vals = np.stack(cols) if cols else np.zeros((0, st.lanes), U32)
        old = st.atomic(space, a, nb, vals, on, ins, fn)
        if dst is not None and dst.n != RZ:
            for j in range(words):
                np.copyto(st.R[dst.n + j], old[j], where=on)
        return a
    writes = _regs(dst, words) if dst is not None else []
    return Handler(run, _regs(mem) + sum((_regs(x, words) for x in srcs), []), writes, data=bool(writes),
                   kind="atom", space=space, nbytes=nb, addr_regs=_regs(mem))
