"""Hand-built engine traces for the microbenchmark tests: rows added warp by warp in program order."""
import numpy as np

from gpusim.kernel.opcodes import TABLE
from gpusim.trace.trace import ROW_DTYPE, Trace


class HandTrace:
    """`warp(w, cta=0)` returns an add(op, srcs=(), wf=0, sec=0, lines=0, line=-1) -> sequence number for
    warp w of CTA `cta`; `trace()` builds the Trace (every lane on, weight 1). Rows get no addresses but
    where `line` >= 0: lane l then reads word l of that 128-B line (so the engine knows which loads share
    a line: one's fill is the others' data)."""

    def __init__(self):
        self.spec = []

    def warp(self, w: int, cta: int = 0):
        seq = 0

        def add(op, srcs=(), wf=0, sec=0, lines=0, line=-1):
            nonlocal seq
            self.spec.append((cta, w, op, seq, tuple(srcs), wf, sec, lines, line))
            seq += 1
            return seq - 1
        return add

    def trace(self) -> Trace:
        rows = np.zeros(len(self.spec), ROW_DTYPE)
        addr = []
        for i, (cta, w, op, seq, srcs, wf, sec, lines, line) in enumerate(self.spec):
            s = list(srcs) + [-1] * (3 - len(srcs))
            mem = -1
            if line >= 0:
                mem = len(addr)
                addr.append(line * 128 + 4 * np.arange(32))
            rows[i] = (cta, w, TABLE.id(op), 0xFFFFFFFF, 1, seq, s[0], s[1], s[2], mem, sec, lines, wf, 0, -1)
        return Trace(rows, np.array(addr, np.int64).reshape(-1, 32), list(TABLE.ids))
