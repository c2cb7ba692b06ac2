"""Hand-built engine traces for the microbenchmark tests: rows added warp by warp in program order."""
import numpy as np

from gpusim.kernel.opcodes import TABLE
from gpusim.trace.trace import ROW_DTYPE, Trace


class HandTrace:
    """`warp(w, cta=0)` returns an add(op, srcs=(), wf=0, sec=0, lines=0) -> sequence number for
    warp w of CTA `cta`; `trace()` builds the Trace (every lane on, weight 1, no addresses)."""

    def __init__(self):
        self.spec = []

    def warp(self, w: int, cta: int = 0):
        seq = 0

        def add(op, srcs=(), wf=0, sec=0, lines=0):
            nonlocal seq
            self.spec.append((cta, w, op, seq, tuple(srcs), wf, sec, lines))
            seq += 1
            return seq - 1
        return add

    def trace(self) -> Trace:
        rows = np.zeros(len(self.spec), ROW_DTYPE)
        for i, (cta, w, op, seq, srcs, wf, sec, lines) in enumerate(self.spec):
            s = list(srcs) + [-1] * (3 - len(srcs))
            rows[i] = (cta, w, TABLE.id(op), 0xFFFFFFFF, 1, seq, s[0], s[1], s[2], -1, sec, lines, wf, 0)
        return Trace(rows, np.zeros((0, 32), np.int64), list(TABLE.ids))
