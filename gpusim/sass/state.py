"""A CTA's memory and registers as the SASS emulator sees them: the launch's global allocations, the
CTA's shared window, each thread's local memory, constants and special registers (gpusim.sass.cta runs
the instructions over them)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpusim.errors import KernelIndexError, UnsupportedOperation
from gpusim.sass.listing import Instr

MAX_PERIOD = 16
SHARED_RESERVED = 0x400          # sm_90 keeps the first 1 KiB of a CTA's shared window for the system
LOCAL_TOP = 0xFFFC00             # the stack pointer a thread starts with (constant bank 0, 0x28)
LOCAL_WINDOW = 0x10000           # bytes of local memory below it a thread may use here
LOCAL_PHYS = 0x7E00_0000_0000    # where the trace places local memory, interleaved by lane (see State.local_rows)
_LINE = 128


class SassMemoryError(KernelIndexError):
    """An access outside every allocation (global) or outside the CTA's shared memory."""


@dataclass
class Allocation:
    name: str
    base: int
    nbytes: int
    words: np.ndarray | None          # uint32 view of the data, None: addresses only


class GlobalMemory:
    """The kernel's buffers at their device addresses. Without values (sampled runs) loads return
    zeros and stores are dropped, but every address is still checked against the buffers."""

    def __init__(self, allocations: list[Allocation]):
        self.allocs = sorted(allocations, key=lambda a: a.base)
        self.bases = np.array([a.base for a in self.allocs], np.int64)
        self.ends = np.array([a.base + a.nbytes for a in self.allocs], np.int64)
        self.has_values = any(a.words is not None for a in self.allocs)

    def _locate(self, addr: np.ndarray, nbytes: int, ins: Instr, what: str):
        k = np.searchsorted(self.bases, addr, side="right") - 1
        bad = (k < 0) | (addr + nbytes > self.ends[np.maximum(k, 0)]) | (addr % nbytes != 0)
        if bad.any():
            lane = int(np.flatnonzero(bad)[0])
            a = int(addr[lane])
            why = "misaligned" if a % nbytes else "outside every buffer"
            raise SassMemoryError(f"SASS /*{ins.pc:04x}*/ {ins.text}: global {what} of {nbytes} B at "
                                  f"0x{a:x} ({why}; lane {lane} of the group)")
        return k

    def _words(self, addr, nbytes, ins, what):
        """(buffer words, lanes, first word of each of those lanes) per buffer with values."""
        k = self._locate(addr, nbytes, ins, what)
        for ai in np.unique(k):
            al = self.allocs[ai]
            if al.words is not None:
                sel = k == ai
                yield al.words, sel, (addr[sel] - al.base) // 4

    def load(self, addr, nbytes, ins):
        out = np.zeros((nbytes // 4, addr.shape[0]), np.uint32)
        for words, sel, w0 in self._words(addr, nbytes, ins, "load"):
            for j in range(nbytes // 4):
                out[j, sel] = words[w0 + j]
        return out

    def store(self, addr, nbytes, vals, ins):
        for words, sel, w0 in self._words(addr, nbytes, ins, "store"):
            for j in range(nbytes // 4):
                words[w0 + j] = vals[j, sel]


class State:
    """Registers of every lane of the CTA, its shared memory, and where it reads constants."""

    def __init__(self, lanes: int, const: dict, specials: dict, shared_bytes: int, memory: GlobalMemory,
                 cta_of_lane: np.ndarray | None = None, n_regs: int = 256):
        """cta_of_lane: for several CTAs run side by side (gpusim.sass.cta), the CTA of each lane; each
        CTA has a shared window of its own, at the same addresses. n_regs: the R rows kept (those the
        program names; RZ is read as zero, never stored)."""
        self.lanes = lanes
        self.R = np.zeros((n_regs, lanes), np.uint32)
        self.UR = np.zeros((64, lanes), np.uint32)
        self.P = np.zeros((8, lanes), bool)
        self.UP = np.zeros((8, lanes), bool)
        self.P[7] = self.UP[7] = True
        self.const = const
        self.specials = specials
        self.shared_end = SHARED_RESERVED + shared_bytes
        per_cta = self.shared_end // 4 + 4
        n_cta = 1 if cta_of_lane is None else int(cta_of_lane.max()) + 1
        self.shared = np.zeros(per_cta * n_cta, np.uint32)
        # the first word of each lane's CTA's window (None: one CTA)
        self.shared_word0 = None if n_cta == 1 else cta_of_lane.astype(np.int64) * per_cta
        self.memory = memory
        self.local = None                # per-lane local memory (spills, stack arrays), made on first use
        self.dry = False                 # a trial run: no memory is written, loads read zeros
        self.cmp_log = None              # a trial run's list of integer compares' signs (ISETP), else None

    def const32(self, off: int):
        v = self.const.get(off)
        if v is None:
            raise UnsupportedOperation(f"constant bank offset 0x{off:x} is not a known kernel "
                                       "parameter or launch constant")
        return np.uint32(v)

    def special(self, name: str, ins: Instr):
        v = self.specials.get(name)
        if v is None:
            raise UnsupportedOperation(f"SASS /*{ins.pc:04x}*/ {ins.text}: special register {name} "
                                       "is not emulated")
        return v

    def _local(self, a, nbytes, ins, what):
        lo = LOCAL_TOP - LOCAL_WINDOW
        bad = (a < lo) | (a + nbytes > LOCAL_TOP) | (a % nbytes != 0)
        if bad.any():
            x = int(a[np.flatnonzero(bad)[0]])
            raise SassMemoryError(f"SASS /*{ins.pc:04x}*/ {ins.text}: local {what} of {nbytes} B at 0x{x:x}, "
                                  f"outside the {LOCAL_WINDOW} B below the stack top (or misaligned)")
        if self.local is None:
            self.local = np.zeros((LOCAL_WINDOW // 4, self.lanes), np.uint32)
        return (a - lo) // 4

    def load(self, space, addr, nbytes, on, ins):
        a = addr[on]
        out = np.zeros((nbytes // 4, self.lanes), np.uint32)
        if space == "local":
            w = self._local(a, nbytes, ins, "load")
            lanes = np.flatnonzero(on)
            for j in range(nbytes // 4):
                out[j, lanes] = self.local[w + j, lanes]
            return out
        if space == "global":
            vals = self.memory.load(a, nbytes, ins) if not self.dry else None
        else:
            self._check_shared(a, nbytes, ins, "load")
            w = self._shared_words(a, on)
            vals = None if self.dry else np.stack([self.shared[w + j] for j in range(nbytes // 4)])
        if vals is not None:
            out[:, on] = vals
        return out

    def store(self, space, addr, nbytes, vals, on, ins):
        a = addr[on]
        v = vals[:, on]
        if space == "local":          # private to each thread: written even in a trial (it is restored)
            w = self._local(a, nbytes, ins, "store")
            if not self.dry:
                lanes = np.flatnonzero(on)
                for j in range(nbytes // 4):
                    self.local[w + j, lanes] = v[j]
            return
        if space == "global":
            if not self.dry:
                self.memory.store(a, nbytes, v, ins)
            else:
                self.memory._locate(a, nbytes, ins, "store")
        else:
            self._check_shared(a, nbytes, ins, "store")
            if not self.dry:
                w = self._shared_words(a, on)
                for j in range(nbytes // 4):
                    self.shared[w + j] = v[j]

    def atomic(self, space, addr, nbytes, vals, on, ins, fn):
        """Read-modify-write for the lanes `on`, one lane after another in CTA thread order (CUDA leaves
        the order open; lane order is gpusim's choice): fn(old (words, k), vals (n, k)) -> new (words, k)
        for k lanes at distinct addresses. Returns every lane's old value (words, lanes); a trial run
        (dry) or a buffer without values reads zeros and writes nothing."""
        words = nbytes // 4
        out = np.zeros((words, self.lanes), np.uint32)
        lanes = np.flatnonzero(on)
        a = addr[lanes]
        if space == "global":
            self.memory._locate(a, nbytes, ins, "atomic")
        else:
            self._check_shared(a, nbytes, ins, "atomic")
            a = self._shared_words(a, on) * 4       # each CTA's own window
        if self.dry or lanes.size == 0:
            return out
        # rank of each lane among the lanes at its address: round r applies every lane of rank r at once
        order = np.argsort(a, kind="stable")
        sa = a[order]
        start = np.r_[True, sa[1:] != sa[:-1]]
        rank = np.empty(len(a), np.int64)
        rank[order] = np.arange(len(a)) - np.flatnonzero(start)[np.cumsum(start) - 1]
        for r in range(int(rank.max()) + 1):
            sel = rank == r
            li, ar = lanes[sel], a[sel]
            if space == "global":
                old = self.memory.load(ar, nbytes, ins)
                self.memory.store(ar, nbytes, fn(old, vals[:, li]), ins)
            else:
                old = np.stack([self.shared[ar // 4 + j] for j in range(words)])
                new = fn(old, vals[:, li])
                for j in range(words):
                    self.shared[ar // 4 + j] = new[j]
            out[:, li] = old
        return out

    def _shared_words(self, a, on):
        """Word indices in self.shared of the shared byte addresses `a` of the lanes `on`."""
        if self.shared_word0 is None:
            return a // 4
        return a // 4 + self.shared_word0[on]

    def _check_shared(self, a, nbytes, ins, what):
        bad = (a < SHARED_RESERVED) | (a + nbytes > self.shared_end) | (a % nbytes != 0)
        if bad.any():
            x = int(a[np.flatnonzero(bad)[0]])
            raise SassMemoryError(f"SASS /*{ins.pc:04x}*/ {ins.text}: shared {what} of {nbytes} B at "
                                  f"0x{x:x}, outside the CTA's {self.shared_end - SHARED_RESERVED} B "
                                  "of shared memory (or misaligned)")

    def snapshot(self):
        return (self.R.copy(), self.UR.copy(), self.P.copy(), self.UP.copy())

    def restore(self, snap):
        self.R[...], self.UR[...], self.P[...], self.UP[...] = snap
