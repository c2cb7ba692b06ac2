"""A sanitizer for the Python kernels, after compute-sanitizer's memcheck, racecheck and synccheck.

The lanes of a CTA run in lockstep here, so a kernel with a shared-memory race still computes the
right answer: races are found from the accesses, not from the values. Between two barriers (one
"epoch") each shared element remembers the thread that last wrote it and up to two threads that
read it; an access by another thread in the same epoch, at least one of the two a write, is a
hazard (read-after-write, write-after-read, write-after-write), whichever warps the threads are in.
A barrier reached by only some threads of the CTA is a divergent barrier (and orders nothing).
Shared elements read before any thread wrote them are uninitialised reads (the hardware leaves
shared memory undefined; the Python model's zeros would hide it). Out-of-bounds accesses are
reported instead of raised, with the lanes turned off so the run goes on.

Each finding names the kernel, the array, the element, the CTA, the threads (threadIdx) and the
source line of the Python kernel where each access happened. Findings of one kind at one pair of
lines are merged: the first is kept, the rest counted.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field

import numpy as np

KINDS = {
    "race-raw": "read-after-write hazard",
    "race-war": "write-after-read hazard",
    "race-waw": "write-after-write hazard",
    "uninit-shared": "uninitialised shared read",
    "oob": "out-of-bounds access",
    "misaligned": "misaligned vector access",
    "barrier-divergent": "divergent barrier",
    "global-race": "global write-write race",
    "values": "wrong result",
    "unwritten": "output never written",
}


@dataclass
class Finding:
    kind: str
    kernel: str
    array: str
    index: int | None
    cta: str | None
    threads: list = field(default_factory=list)     # "(x,y,z)" of each thread involved
    lines: list = field(default_factory=list)       # "file.py:N" of each access involved
    detail: str = ""
    count: int = 1                                  # how many findings this one stands for

    def to_json(self) -> dict:
        return {"kind": self.kind, "what": KINDS[self.kind], "kernel": self.kernel, "array": self.array,
                "index": self.index, "cta": self.cta, "threads": self.threads, "lines": self.lines,
                "detail": self.detail, "count": self.count}

    def describe(self) -> str:
        where = f"{self.array}[{self.index}]" if self.index is not None else self.array
        cta = f" in CTA {self.cta}" if self.cta else ""
        thr = f", threads {' and '.join(self.threads)}" if self.threads else ""
        more = f" (and {self.count - 1} more instructions like it)" if self.count > 1 else ""
        return f"{self.kernel}: {KINDS[self.kind]} on {where}{cta}{thr}: {self.detail}{more}"


class _SharedState:
    """Per-element bookkeeping of one __shared__ array of one CTA, for the current epoch."""

    def __init__(self, size: int):
        self.w_tid = np.full(size, -1, np.int64)      # last writer this epoch
        self.w_line = np.zeros(size, np.int64)
        self.r_tid = np.full(size, -1, np.int64)      # first reader this epoch
        self.r_tid2 = np.full(size, -1, np.int64)     # a second, different reader this epoch
        self.r_line = np.zeros(size, np.int64)
        self.written = np.zeros(size, bool)           # ever written (this CTA)

    def new_epoch(self):
        self.w_tid[:] = -1
        self.r_tid[:] = -1
        self.r_tid2[:] = -1


def _groups(e: np.ndarray, t: np.ndarray):
    """Unique elements of one instruction with the least and greatest thread touching each."""
    order = np.argsort(e, kind="stable")
    es, ts = e[order], t[order]
    starts = np.flatnonzero(np.r_[True, es[1:] != es[:-1]])
    return es[starts], np.minimum.reduceat(ts, starts), np.maximum.reduceat(ts, starts)


class Sanitizer:
    """Collects findings while a kernel runs (`Ctx(..., sanitizer=...)` calls the hooks)."""

    MAX_KEPT = 200          # distinct (kind, array, lines) findings kept; more are counted only

    def __init__(self, kernel: str, source_file: str):
        self.kernel = kernel
        self.source_file = source_file
        self.findings: dict[tuple, Finding] = {}
        self.dropped = 0
        self._shared: dict[int, _SharedState] = {}
        self.globals: dict[str, np.ndarray] = {}          # the global arrays the kernel got
        self.initial: dict[str, np.ndarray] = {}          # their contents before the launch
        self._gwriter: dict[str, np.ndarray] = {}         # per element: CTA * 2^32 + thread, -1 none
        self._gline: dict[str, np.ndarray] = {}
        self._cta_seq = 0
        self.cta_names: dict[int, str] = {}               # CTA sequence number -> "(x,y,z)"

    # ---- where in the kernel source ----
    def line(self) -> int:
        f = sys._getframe(1)
        while f is not None and f.f_code.co_filename != self.source_file:
            f = f.f_back
        return f.f_lineno if f is not None else 0

    def _where(self, line: int) -> str:
        return f"{self.source_file.rsplit('/', 1)[-1]}:{line}"

    def add(self, kind: str, array: str, index, ctx, threads, lines, detail: str):
        key = (kind, array, tuple(lines))
        if key in self.findings:
            self.findings[key].count += 1
            return
        if len(self.findings) >= self.MAX_KEPT:
            self.dropped += 1
            return
        self.findings[key] = Finding(kind, self.kernel, array, None if index is None else int(index),
                                     ctx._cta() if ctx is not None else None,
                                     [ctx._thread(int(t)) for t in threads] if ctx is not None else [],
                                     [self._where(ln) for ln in lines], detail)

    # ---- hooks called by the kernel context ----
    def new_cta(self, ctx):
        self._shared.clear()
        self._cta_seq += 1
        self.cta_names[self._cta_seq] = ctx._cta()
        self.thread_name = ctx._thread          # every CTA has the same block shape

    def global_array(self, name: str, data: np.ndarray):
        if name not in self.globals:
            self.globals[name] = data
            self.initial[name] = data.copy()
            self._gwriter[name] = np.full(data.shape[0], -1, np.int64)
            self._gline[name] = np.zeros(data.shape[0], np.int64)

    def barrier(self, ctx, mask: np.ndarray):
        if mask.all():
            for st in self._shared.values():
                st.new_epoch()
            return
        on, off = np.flatnonzero(mask), np.flatnonzero(~mask)
        self.add("barrier-divergent", "__syncthreads", None, ctx, [on[0], off[0]], [self.line()],
                 f"reached by {on.size} of {mask.size} threads (first {ctx._thread(int(on[0]))}), not by "
                 f"the other {off.size} (first {ctx._thread(int(off[0]))}); it orders nothing")

    def bad_index(self, ctx, arr, el, bad, kind, size):
        t = int(np.flatnonzero(bad)[0])
        what = (f"index {int(el[t])} outside 0..{size - 1}" if kind == "oob"
                else f"element {int(el[t])} is not a multiple of the vector width")
        self.add(kind, arr.name, el[t], ctx, [t], [self.line()],
                 f"{what} ({int(bad.sum())} lanes of this instruction)")

    def shared_access(self, ctx, arr, el: np.ndarray, vec: int, act: np.ndarray, store: bool):
        lanes = np.flatnonzero(act)
        if lanes.size == 0:
            return
        st = self._shared.get(id(arr))
        if st is None:
            st = self._shared[id(arr)] = _SharedState(arr.size)
        line = self.line()
        e = (el[lanes][:, None] + np.arange(vec)).ravel()
        t = np.repeat(lanes, vec)
        u, tmin, tmax = _groups(e, t)
        if not store:
            cold = ~st.written[e]
            if cold.any():
                i = int(np.flatnonzero(cold)[0])
                self.add("uninit-shared", arr.name, e[i], ctx, [t[i]], [line],
                         "read before any thread of the CTA wrote it")
            self._conflict("race-raw", arr, st.w_tid[e], st.w_line[e], e, t, ctx, line, "wrote", "read")
            r1 = st.r_tid[u]
            first = r1 < 0
            st.r_tid[u] = np.where(first, tmin, r1)
            st.r_line[u] = np.where(first, line, st.r_line[u])
            r1 = st.r_tid[u]
            other = np.where(tmax != r1, tmax, np.where(tmin != r1, tmin, -1))
            st.r_tid2[u] = np.where((st.r_tid2[u] < 0) & (other >= 0), other, st.r_tid2[u])
            return
        # a store: earlier readers and writers of this epoch that are other threads
        r_other = np.where(st.r_tid[e] != t, st.r_tid[e], st.r_tid2[e])
        self._conflict("race-war", arr, r_other, st.r_line[e], e, t, ctx, line, "read", "wrote")
        self._conflict("race-waw", arr, st.w_tid[e], st.w_line[e], e, t, ctx, line, "wrote", "wrote")
        dup = tmin != tmax
        if dup.any():
            i = int(np.flatnonzero(dup)[0])
            self.add("race-waw", arr.name, u[i], ctx, [tmin[i], tmax[i]], [line, line],
                     "both wrote it in the same instruction: which value lands is undefined")
        st.w_tid[e] = t
        st.w_line[e] = line
        st.written[e] = True

    def _conflict(self, kind, arr, prev_tid, prev_line, e, t, ctx, line, did, does):
        hit = (prev_tid >= 0) & (prev_tid != t)
        if hit.any():
            i = int(np.flatnonzero(hit)[0])
            p = int(prev_tid[i])
            self.add(kind, arr.name, e[i], ctx, [p, t[i]], [int(prev_line[i]), line],
                     f"thread {ctx._thread(p)} {did} it at line {int(prev_line[i])}, thread "
                     f"{ctx._thread(int(t[i]))} {does} it at line {line}, with no barrier between "
                     f"({int(hit.sum())} lanes of this instruction)")

    def global_store(self, ctx, arr, el: np.ndarray, vec: int, act: np.ndarray):
        """Two threads writing one global element: a race unless it is one thread (no grid barrier)."""
        lanes = np.flatnonzero(act)
        if lanes.size == 0 or arr.name not in self._gwriter:
            return
        line = self.line()
        e = (el[lanes][:, None] + np.arange(vec)).ravel()
        who = (self._cta_seq << 32) + np.repeat(lanes, vec)
        prev = self._gwriter[arr.name][e]
        hit = (prev >= 0) & (prev != who)
        if hit.any():
            i = int(np.flatnonzero(hit)[0])
            same_cta = (int(prev[i]) >> 32) == self._cta_seq
            p_thread = int(prev[i]) & 0xFFFFFFFF
            self.add("global-race", arr.name, e[i], ctx, [p_thread, int(who[i]) & 0xFFFFFFFF],
                     [int(self._gline[arr.name][e[i]]), line],
                     ("another thread of this CTA" if same_cta else "a thread of another CTA")
                     + f" (threadIdx {ctx._thread(p_thread)}) wrote it before: which value lands is "
                     "undefined")
        self._gwriter[arr.name][e] = who
        self._gline[arr.name][e] = line

    def global_atomic(self, ctx, arr, el: np.ndarray, act: np.ndarray):
        """An atomic to global elements: written, and no race however many threads do it (the hardware
        applies them one at a time); the element's writer is the last atomic's thread."""
        lanes = np.flatnonzero(act)
        if lanes.size == 0 or arr.name not in self._gwriter:
            return
        e = el[lanes]
        self._gwriter[arr.name][e] = (self._cta_seq << 32) + lanes
        self._gline[arr.name][e] = self.line()

    def unwritten(self, name: str) -> np.ndarray:
        """Elements of global array `name` no thread stored."""
        return np.flatnonzero(self._gwriter[name] < 0)

    def writer_of(self, name: str, index: int):
        """(CTA sequence number, thread, line) of the last store to a global element, or None."""
        w = int(self._gwriter[name][index])
        return None if w < 0 else (w >> 32, w & 0xFFFFFFFF, int(self._gline[name][index]))

    def ordered(self) -> list[Finding]:
        """Findings in a stable order: kind, array, first line."""
        return sorted(self.findings.values(), key=lambda f: (list(KINDS).index(f.kind), f.array,
                                                             f.lines, f.index if f.index is not None else -1))
