"""The order of a kernel's global loads and shared stores within a K-loop trip is ptxas's.

The engine times the trace in its own order, so where the Python kernel puts a load matters, not only
how many it issues: vectorized once stored A's tile before loading B's, where its SASS loads both first,
and each trip paid two L2 latencies instead of one (+12.7 % at 1024). For each kernel whose K loop
stages tiles through shared memory in one basic block, the LDG / STS sequence before a warp's first
barrier must equal that block's in the recorded SASS (traces/static/<kernel>.sass, the block with the
most global loads)."""
import re

import numpy as np
import pytest

import gpusim
from gpusim.timing.control_codes import _record, _trips, barriers, trace_name

STAGING = ("smemtile", "regtile1d", "regblock", "regtile2d", "vectorized")


def _staging(names):
    """LDG / STS names up to the first barrier."""
    out = []
    for nm in names:
        if nm.startswith("BAR"):
            break
        if nm.split(".")[0] in ("LDG", "STS"):
            out.append(nm)
    return out


def sass_order(kernel: str, params: dict) -> list:
    rec, text, _ = _record(kernel, tuple(sorted(params.items())))
    ins = barriers(text)
    best = None
    for b in rec["outline"]:
        lo, hi = int(b["start"], 16), int(b["end"], 16)
        names = [trace_name(op) for off, op, _, _, _ in ins if lo <= off <= hi]
        loads = sum(nm.startswith("LDG") for nm in names) * _trips(b, 4096, 4096, 4096)
        if loads and (best is None or loads > best[0]):
            best = (loads, names)
    return _staging(best[1])


def warp0_rows(res) -> np.ndarray:
    """Trace rows of warp 0 of the first CTA, in program order."""
    rows = res.trace.rows
    mine = np.flatnonzero((rows["cta"] == rows["cta"][0]) & (rows["warp"] == 0))
    return mine[np.argsort(rows["seq"][mine], kind="stable")]


def trace_order(kernel: str) -> tuple[list, dict]:
    res = gpusim.simulate(kernel, 256, mode="full", keep_trace=True)
    names = [res.trace.opcodes[o] for o in res.trace.rows["op"][warp0_rows(res)]]
    return _staging(names), res.params


@pytest.mark.parametrize("kernel", STAGING)
def test_staging_order_follows_the_sass(kernel):
    got, params = trace_order(kernel)
    assert got and got == sass_order(kernel, params)


# ------------------------------------------------------------------ the dot block after the barrier

_SASS_LINE = re.compile(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P[T\d]+\s+)?(\S+)\s*([^;]*);")
_WIDTH = {"LDS": 1, "LDS.64": 2, "LDS.128": 4}


def _block_after_first_barrier_sass(kernel: str, params: dict) -> list:
    """[(trace name, byte offset or None, producers)] of the shared loads and FFMAs between the
    SASS's first and second BAR.SYNC: a load's immediate offset, an FFMA's two multiplicands as the
    positions (among the block's loads) of the loads that wrote them."""
    _, text, _ = _record(kernel, tuple(sorted(params.items())))
    out, reg, nload, bars = [], {}, 0, 0
    for m in _SASS_LINE.finditer(text):
        op, args = m.group(1), [a.strip() for a in m.group(2).replace(".reuse", "").split(",")]
        if op.startswith("BAR.SYNC"):
            bars += 1
            if bars == 2:
                break
            continue
        if bars != 1 or not (op in _WIDTH or op == "FFMA"):
            continue
        dst = int(args[0][1:])
        if op == "FFMA":
            srcs = (int(a[1:]) if re.fullmatch(r"R\d+", a) else a for a in args[1:3])
            out.append(("FFMA", None, tuple(sorted(reg.get(a, -1) for a in srcs))))
            reg.pop(dst, None)
        else:
            imm = re.search(r"\+0x([0-9a-f]+)\]", args[1])
            out.append((trace_name(op), int(imm.group(1), 16) if imm else 0, ()))
            for j in range(_WIDTH[op]):
                reg[dst + j] = nload
            nload += 1
    return _relative(out)


def _block_after_first_barrier_trace(kernel: str, n: int, params=None) -> tuple[list, dict]:
    """The same for warp 0 of the first CTA's trace, its first n entries after the first barrier
    (lane 0's address for a load)."""
    res = gpusim.simulate(kernel, 256, mode="full", keep_trace=True, params=params)
    t, rows = res.trace, res.trace.rows
    out, load_of, bars = [], {}, 0
    for r in warp0_rows(res):
        nm = t.opcodes[rows["op"][r]]
        if nm.startswith("BAR"):
            bars += 1
            if bars == 2:
                break
            continue
        if bars != 1:
            continue
        if nm == "FFMA":
            out.append(("FFMA", None, tuple(sorted(load_of.get(rows[s][r], -1) for s in ("src0", "src1")))))
        elif nm.split(".")[0] == "LDS":
            load_of[rows["seq"][r]] = len(load_of)
            out.append((nm, int(t.addr[rows["mem"][r]][0]), ()))
        if len(out) == n:
            break
    return _relative(out), res.params


def _relative(seq: list) -> list:
    """Load addresses relative to the lowest of the same opcode (one base register per opcode)."""
    low = {}
    for nm, a, _ in seq:
        if a is not None:
            low[nm] = min(low.get(nm, a), a)
    return [(nm, None if a is None else a - low[nm], p) for nm, a, p in seq]


@pytest.mark.parametrize("kernel,params", [("regtile1d", None), ("regtile1d", {"TM": 4, "BK": 16}),
                                           ("regtile2d", None)])
def test_dot_block_order_follows_the_sass(kernel, params):
    """After the barrier: the shared loads (opcode, offset) and FFMAs in the SASS's order, each FFMA
    fed by the same loads. regtile1d's block is its whole unrolled dot product (defaults and the
    committed TM4_BK16 variant); regtile2d's is one trip of its rolled dotIdx loop (the trace's
    first trip)."""
    params = gpusim.simulate(kernel, 256, params=params).params
    want = _block_after_first_barrier_sass(kernel, params)
    got, _ = _block_after_first_barrier_trace(kernel, len(want), params)
    assert len(want) > 20 and got == want
