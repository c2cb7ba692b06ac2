"""The kernel context: what a Python kernel receives as its first argument.

A CTA runs in lockstep over all its threads: every thread-level value is a
numpy vector with one lane per thread of the CTA. Each call that stands for a
SASS instruction (a load, an FFMA, a barrier, an IMAD ...) appends one
CTA-level record; `finish()` slices the records into warps of 32 and returns
the per-warp trace. Divergence is a stack of lane masks (`with k.where(...)`):
an instruction is executed by the warps with at least one active lane, which
is what a SASS branch around a divergent region does.

Values that feed the scoreboard are wrapped in `Val` (lanes + the index of the
instruction that produced them); index arithmetic stays plain numpy, and the
integer SASS it compiles to is issued explicitly with `k.op(...)`.
"""
from __future__ import annotations

import contextlib
import math
import os
import sys
from dataclasses import dataclass

import numpy as np

from gpusim.errors import KernelIndexError, LaunchError, UnsupportedOperation
from gpusim.kernel.opcodes import TABLE, mem_opcode, SPACE_GLOBAL, SPACE_SHARED

NO_SRC = -1


class Val:
    """A per-lane register value and the CTA-level instruction that produced it."""
    __slots__ = ("v", "src")

    def __init__(self, v: np.ndarray, src: int = NO_SRC):
        self.v = v
        self.src = src

    def __repr__(self):
        return f"Val(src={self.src}, lanes={self.v.shape[0]})"


@dataclass(frozen=True)
class Dim3:
    x: object
    y: object = 0
    z: object = 0


def _lanes(x):
    return x.v if isinstance(x, Val) else x


def _src(x):
    return x.src if isinstance(x, Val) else NO_SRC


def _f32(x):
    return np.asarray(_lanes(x), np.float32)


class Sampler:
    """Decides which iterations of a periodic loop run, and with what weight.

    Full mode runs every iteration with weight 1. Sampled mode runs the first
    `period` iterations and the last `period` ones as they are, and stands for
    every middle iteration by the one of the same residue modulo `period` in
    [period, 2*period). Exact when an iteration's counts depend only on its
    residue: true for loops whose addresses move by a fixed element stride,
    with `period` from `align_period` (alignment to 128-byte lines repeats).
    """

    def __init__(self, sampled: bool, window: int | None = None):
        self.sampled = sampled
        self.window = window     # timing window: only the first `window` iterations, weight 1

    def iterations(self, n: int, period: int):
        if self.window is not None:
            return [(i, 1) for i in range(min(n, self.window))]
        if not self.sampled or n <= 3 * period:
            return [(i, 1) for i in range(n)]
        middle = n - 2 * period                 # iterations period .. n-period-1
        out = [(i, 1) for i in range(period)]
        for r in range(period):
            out.append((period + r, len(range(r, middle, period))))
        out += [(i, 1) for i in range(n - period, n)]
        return out


def align_period(*elem_strides: int, elem_bytes: int = 4, line_bytes: int = 128) -> int:
    """Iterations after which every stride's byte offset is back on a 128-B line."""
    period = 1
    for s in elem_strides:
        b = (int(s) * elem_bytes) % line_bytes
        p = line_bytes // math.gcd(b, line_bytes) if b else 1
        period = period * p // math.gcd(period, p)
    return period


def _caller_line() -> str:
    """'file.py:line' of the kernel code that issued the access: the first frame outside this module."""
    f = sys._getframe(2)
    while f is not None and f.f_code.co_filename == __file__:
        f = f.f_back
    return f"{os.path.basename(f.f_code.co_filename)}:{f.f_lineno}" if f is not None else "?"


class GlobalArray:
    """A float32 array in global memory; `+ n` is pointer arithmetic (in elements)."""

    def __init__(self, k: "Ctx", name: str, data: np.ndarray, base_addr: int, offset: int = 0):
        self._k, self.name, self.data, self.base_addr, self.offset = k, name, data, base_addr, offset

    def __add__(self, n: int) -> "GlobalArray":
        return GlobalArray(self._k, self.name, self.data, self.base_addr, self.offset + int(n))

    def ld(self, idx, vec: int = 1, srcs=()):
        return self._k._load(self, SPACE_GLOBAL, idx, vec, srcs)

    def st(self, idx, val, vec: int = 1, srcs=()):
        return self._k._store(self, SPACE_GLOBAL, idx, val, vec, srcs)


class SharedArray:
    """A float32 __shared__ array of the CTA."""

    def __init__(self, k: "Ctx", name: str, size: int, base_addr: int):
        self._k, self.name, self.size, self.base_addr, self.offset = k, name, size, base_addr, 0
        self.data = np.zeros(size, np.float32)

    def ld(self, idx, vec: int = 1, srcs=()):
        return self._k._load(self, SPACE_SHARED, idx, vec, srcs)

    def st(self, idx, val, vec: int = 1, srcs=()):
        return self._k._store(self, SPACE_SHARED, idx, val, vec, srcs)


class Ctx:
    """Execution context of one CTA. Kernels read it like CUDA's built-ins."""

    def __init__(self, kernel: str, grid: tuple, block: tuple, block_idx: tuple,
                 sampler: Sampler, shared_limit_bytes: int, sanitizer=None):
        self.kernel = kernel
        # gpusim.kernel.sanitizer.Sanitizer: hazards and bad accesses become findings, not errors
        self.san = sanitizer
        self.gridDim = Dim3(*grid)
        self.blockDim = Dim3(*block)
        self.blockIdx = Dim3(*block_idx)
        bx, by, bz = block
        self.nthreads = bx * by * bz
        tid = np.arange(self.nthreads, dtype=np.int64)
        self.threadIdx = Dim3(tid % bx, (tid // bx) % by, tid // (bx * by))
        self.tid = tid
        if sanitizer is not None:
            sanitizer.new_cta(self)
        self._sampler = sampler
        self._shared_limit = shared_limit_bytes
        self.shared_bytes = 0
        self._full = np.ones(self.nthreads, bool)
        self._mask = self._full      # lanes whose instructions take effect
        self._exec = self._full      # lanes of warps that execute the instruction (mask or predicated off)
        self._weight = 1
        # CTA-level records
        self.r_op: list[int] = []
        self.r_src: list[tuple] = []
        self.r_mask: list = []
        self.r_exec: list = []
        self.r_addr: list = []
        self.r_weight: list[int] = []
        self.r_site: list = []          # memory instructions: the kernel's "file.py:line" that issued them
        self.shared_layout: dict = {}   # shared array name -> (first byte, bytes)

    # ---- memory objects ----
    def global_array(self, name: str, data: np.ndarray, base_addr: int) -> GlobalArray:
        if self.san is not None:
            self.san.global_array(name, data)
        return GlobalArray(self, name, data, base_addr)

    def shared(self, name: str, size: int) -> SharedArray:
        """Declare a __shared__ float array; laid out in declaration order, 16-B aligned."""
        base = -(-self.shared_bytes // 16) * 16
        self.shared_bytes = base + 4 * int(size)
        if self.shared_bytes > self._shared_limit:
            raise LaunchError(f"{self.kernel}: {self.shared_bytes} B of static shared memory per block "
                              f"exceeds the preset's {self._shared_limit} B")
        self.shared_layout[name] = (base, 4 * int(size))
        return SharedArray(self, name, int(size), base)

    # ---- control ----
    @contextlib.contextmanager
    def where(self, cond, predicate: bool = False):
        """Run the body only for lanes where cond holds.

        Default: a branch around a divergent region; a warp with no lane left
        executes nothing inside. predicate=True: SASS predication (`@P LDG`);
        every warp running the enclosing code executes the instructions, with
        the lanes where cond is false turned off, so a warp with no lane on
        still counts them as executed (but makes no memory request).
        """
        saved, saved_exec = self._mask, self._exec
        self._mask = saved & np.broadcast_to(np.asarray(cond, bool), saved.shape)
        if not predicate:
            self._exec = self._mask
        try:
            yield
        finally:
            self._mask, self._exec = saved, saved_exec

    def any_active(self) -> bool:
        return bool(self._mask.any())

    def loop(self, start: int, stop: int, step: int, period: int = 1):
        """A counted loop whose trip count is uniform over the CTA.

        `period`: iterations after which the loop's address pattern repeats mod
        128 B (use `align_period`); the sampler may stand for many iterations by
        one. Yields the induction variable; records inside carry the weight.
        """
        n = max(0, -(-(stop - start) // step))
        outer = self._weight
        try:
            for i, w in self._sampler.iterations(n, period):
                self._weight = outer * w
                yield start + i * step
        finally:
            self._weight = outer

    def syncthreads(self):
        if self.san is not None:
            self.san.barrier(self, self._mask)
        elif not self._mask.all():
            raise UnsupportedOperation(f"{self.kernel}: __syncthreads() inside divergent code "
                                       f"(CTA {self._cta()}) is undefined behaviour")
        self._emit("BAR.SYNC", ())

    # ---- arithmetic ----
    def op(self, name: str, n: int = 1, srcs=()):
        """Issue n SASS instructions that carry no value we model (integer, control, ...)."""
        s = tuple(_src(x) for x in srcs)
        for _ in range(n):
            self._emit(name, s)

    def ops(self, counts: dict, srcs=()):
        """Issue the integer/control instructions of one SASS basic block, e.g.
        `k.ops({"IMAD.WIDE": 2, "ISETP.GT.AND": 1, "BRA": 1})`, read off its SASS."""
        for name, n in counts.items():
            self.op(name, n, srcs)

    def ffma(self, a, b, c) -> Val:
        # fused: one rounding, as the hardware does (the float64 product of two floats is exact)
        prod = np.asarray(_lanes(a), np.float64) * np.asarray(_lanes(b), np.float64)
        return self._fp("FFMA", prod + np.asarray(_lanes(c), np.float64), (a, b, c), old=c)

    def fmul(self, a, b) -> Val:
        return self._fp("FMUL", _lanes(a) * _lanes(b), (a, b))

    def fadd(self, a, b) -> Val:
        return self._fp("FADD", _lanes(a) + _lanes(b), (a, b))

    def fsub(self, a, b) -> Val:
        # a - b: SASS has no FSUB, it is an FADD with the second operand negated
        return self._fp("FADD", _lanes(a) - _lanes(b), (a, b))

    def fmax(self, a, b) -> Val:
        # fmaxf: FMNMX with the !PT selector; a NaN operand yields the other one, as np.fmax does
        return self._fp("FMNMX", np.fmax(_f32(a), _f32(b)), (a, b))

    def exp2(self, x) -> Val:
        # ex2.approx.ftz: one MUFU.EX2 (the XU unit's 2^x, about 2 ulp; modelled exactly rounded)
        with np.errstate(over="ignore", under="ignore"):
            return self._fp("MUFU.EX2", np.exp2(_f32(x)), (x,))

    def rcp(self, x) -> Val:
        # an approximate reciprocal, one MUFU.RCP (what __fdividef and rcp.approx start from)
        with np.errstate(divide="ignore"):
            return self._fp("MUFU.RCP", np.float32(1) / _f32(x), (x,))

    LOG2E = float(np.float32(1.4426950408889634))       # the constant ptxas multiplies by

    def expf(self, x) -> Val:
        """__expf(x) as ptxas compiles it for sm_90 (ex2.approx without ftz):
        FMUL t = x*log2(e); FSETP.GEU t >= -126; @!P FMUL t *= 0.5; MUFU.EX2; @!P FMUL r = r*r.
        The two fix-ups keep a denormal result: they are predicated, so every warp running the
        expf issues them, with only the lanes whose t < -126 on. The value is float32(exp(x))."""
        xv = _f32(x)
        t = self._fp("FMUL", xv * np.float32(self.LOG2E), (x,))
        p = self._emit("FSETP.GEU.AND", (t.src,))
        small = np.asarray(t.v < -126, bool)
        with self.where(small, predicate=True):
            half = self._emit("FMUL", (t.src, p))
        with np.errstate(over="ignore", under="ignore"):
            e = self._fp("MUFU.EX2", np.exp(xv.astype(np.float64)), (Val(t.v, half),))
        with self.where(small, predicate=True):
            sq = self._emit("FMUL", (e.src, p))
        return Val(e.v, sq)

    # ---- warp shuffles ----
    # __shfl_*_sync(0xffffffff, v, ...): a thread reads v from another lane of its own warp (32
    # consecutive threads of the CTA). A source lane outside the warp (or past the CTA's last thread)
    # gives the reader its own value, as the hardware does with the clamp of 0x1f. Lanes that are off
    # keep their old value (the register is not written).
    def _shfl(self, name: str, v, src_lane) -> Val:
        lanes = np.broadcast_to(np.asarray(_lanes(v), np.float32), (self.nthreads,))
        lane = self.tid % 32
        src_lane = np.broadcast_to(np.asarray(src_lane, np.int64), (self.nthreads,))
        src = self.tid - lane + src_lane
        ok = (src_lane >= 0) & (src_lane < 32) & (src < self.nthreads)
        out = np.where(ok, lanes[np.where(ok, src, 0)], lanes)
        out = np.where(self._mask, out, lanes).astype(np.float32)
        return Val(out, self._emit(name, (_src(v),)))

    def shfl_down(self, v, delta: int) -> Val:
        """__shfl_down_sync(0xffffffff, v, delta): lane l gets lane l+delta's v (its own past lane 31)."""
        return self._shfl("SHFL.DOWN", v, self.tid % 32 + int(delta))

    def shfl_xor(self, v, lanemask: int) -> Val:
        """__shfl_xor_sync(0xffffffff, v, lanemask): lane l gets lane l^lanemask's v (a butterfly)."""
        return self._shfl("SHFL.BFLY", v, (self.tid % 32) ^ int(lanemask))

    def shfl_idx(self, v, lane) -> Val:
        """__shfl_sync(0xffffffff, v, lane): every lane gets v of `lane` (mod 32) of its warp."""
        return self._shfl("SHFL.IDX", v, np.asarray(lane, np.int64) % 32)

    # ---- atomics ----
    ATOMIC_ADD = "REDG.E.ADD.F32.FTZ.RN.STRONG.GPU"     # atomicAdd whose result is unused, sm_90

    def atomic_add(self, arr: GlobalArray, idx, val):
        """atomicAdd(arr + idx, val) with its result unused: ptxas emits a reduction (REDG), no
        return value, so nothing to wait for. Applied lane by lane in lane order (the hardware's
        order among lanes hitting one address is unspecified; the sum differs only by rounding),
        each addition rounded to float32. The address is recorded as a store's is."""
        if not isinstance(arr, GlobalArray):
            raise UnsupportedOperation(f"{self.kernel}: atomic_add takes a global array (shared-memory "
                                       f"atomics, ATOMS, are not modelled), got {arr.name!r}")
        idx = np.broadcast_to(np.asarray(idx, np.int64), (self.nthreads,))
        el, act = self._check_index(arr, idx, 1, arr.data.shape[0])   # bounds as for a store
        if self.san is not None:
            # atomics to one element from many threads are not a race: the sanitizer only notes
            # the element as written (global_store would call it a race)
            self.san.global_atomic(self, arr, el, act)
        addr = np.where(act, arr.base_addr + 4 * el, -1)
        self._emit(self.ATOMIC_ADD, (_src(val),), addr)
        vals = np.broadcast_to(np.asarray(_lanes(val), np.float32), (self.nthreads,))
        for t in np.flatnonzero(act):
            arr.data[el[t]] = np.float32(arr.data[el[t]] + vals[t])

    def _fp(self, name, value, args, old=None) -> Val:
        value = np.asarray(value, np.float32)
        if value.ndim == 0:
            value = np.full(self.nthreads, value, np.float32)
        if self._mask is not self._full and old is not None:
            value = np.where(self._mask, value, _lanes(old)).astype(np.float32)
        i = self._emit(name, tuple(_src(x) for x in args))
        return Val(value, i)

    # ---- memory ----
    def _check_index(self, arr, idx, vec, size):
        el = arr.offset + idx
        act = self._mask
        bad = act & ((el < 0) | (el + vec > size))
        if self.san is not None:     # reported, and the lanes turned off so the run goes on
            mis = act & ~bad & (el % vec != 0) if vec > 1 else bad & False
            for kind, lanes in (("oob", bad), ("misaligned", mis)):
                if lanes.any():
                    self.san.bad_index(self, arr, el, lanes, kind, size)
            return el, act & ~bad & ~mis
        if bad.any():
            t = int(np.flatnonzero(bad)[0])
            raise KernelIndexError(
                f"{self.kernel}: out-of-bounds access to {arr.name}[{int(el[t])}] (size {size}) "
                f"in CTA {self._cta()}, thread {self._thread(t)}")
        if vec > 1:
            mis = act & (el % vec != 0)
            if mis.any():
                t = int(np.flatnonzero(mis)[0])
                raise KernelIndexError(
                    f"{self.kernel}: {16 if vec == 4 else 8}-byte access to {arr.name}[{int(el[t])}] "
                    f"is misaligned in CTA {self._cta()}, thread {self._thread(t)}")
        return el, act

    def _load(self, arr, space, idx, vec, srcs):
        idx = np.broadcast_to(np.asarray(idx, np.int64), (self.nthreads,))
        size = arr.data.shape[0]
        el, act = self._check_index(arr, idx, vec, size)
        if self.san is not None and space == SPACE_SHARED:
            self.san.shared_access(self, arr, el, vec, act, store=False)
        safe = np.where(act, el, 0)
        addr = np.where(act, arr.base_addr + 4 * el, -1)
        i = self._emit(mem_opcode(space, False, 4 * vec), tuple(_src(x) for x in srcs), addr)
        outs = [Val(np.where(act, arr.data[safe + j], 0).astype(np.float32), i) for j in range(vec)]
        return outs[0] if vec == 1 else tuple(outs)

    def _store(self, arr, space, idx, val, vec, srcs):
        idx = np.broadcast_to(np.asarray(idx, np.int64), (self.nthreads,))
        vals = (val,) if vec == 1 else tuple(val)
        if len(vals) != vec:
            raise UnsupportedOperation(f"{self.kernel}: a {vec}-wide store needs {vec} values")
        size = arr.data.shape[0]
        el, act = self._check_index(arr, idx, vec, size)
        if self.san is not None:
            if space == SPACE_SHARED:
                self.san.shared_access(self, arr, el, vec, act, store=True)
            else:
                self.san.global_store(self, arr, el, vec, act)
        addr = np.where(act, arr.base_addr + 4 * el, -1)
        s = tuple(_src(x) for x in vals) + tuple(_src(x) for x in srcs)
        self._emit(mem_opcode(space, True, 4 * vec), s[:3], addr)
        ea = el[act]
        for j, v in enumerate(vals):
            lanes = np.broadcast_to(np.asarray(_lanes(v), np.float32), (self.nthreads,))
            arr.data[ea + j] = lanes[act]

    # ---- records ----
    def _emit(self, name: str, srcs: tuple, addr=None) -> int:
        # an atomic opcode is taken only with its addresses (k.atomic_add); k.op cannot issue one
        self.r_op.append(TABLE.id(name, atomic_ok=addr is not None))
        self.r_src.append(srcs)
        self.r_mask.append(self._mask)
        self.r_exec.append(self._exec)
        self.r_addr.append(addr)
        self.r_weight.append(self._weight)
        self.r_site.append(_caller_line() if addr is not None else None)
        return len(self.r_op) - 1

    def _cta(self):
        b = self.blockIdx
        return f"({b.x},{b.y},{b.z})"

    def _thread(self, t):
        ti = self.threadIdx
        return f"({int(ti.x[t])},{int(ti.y[t])},{int(ti.z[t])})"

    def check_launch_dims(self):
        if self.nthreads <= 0:
            raise LaunchError(f"{self.kernel}: empty block")
