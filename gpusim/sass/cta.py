"""Run one CTA of a SASS function and record what its warps execute.

The CTA's threads are lanes of numpy vectors (registers, predicates, uniform registers). Threads
that sit at the same instruction run together; the group at the lowest address runs first, which
reconverges divergent threads where their paths meet, as the convergence barriers (BSSY/BSYNC)
ptxas places do. Each execution of an instruction by a group becomes one CTA-level record; every
warp with a lane in the group executes it (predicated-off lanes included, as ncu counts), and
`trace()` slices the records into the per-warp trace the memory and timing stages read.

Long loops are sampled, not assumed: at a loop's back-edge the emulator compares whole iterations.
Once the registers that do not hold data (`semantics.Handler.data`) advance by the same amount
every iteration, and the iterations repeat with a period p (same instructions, masks, and memory
addresses that moved by whole 128-byte lines), it looks for the largest multiple m of p such that
the m-th next iteration would still take the same path (a trial run of that one iteration on the
extrapolated registers), jumps the registers ahead by m iterations and lets the last p recorded
iterations stand for the skipped ones (their weight grows by m / p). Comparisons on affine values
change outcome at most once, so a path that holds at both ends holds between. A loop whose branch
or addresses depend on loaded data, that diverges, or shows no period is run in full, and says so.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gpusim.errors import GpusimError, KernelIndexError, UnsupportedOperation
from gpusim.kernel.opcodes import ATOMIC, TABLE
from gpusim.memory.counters import cost_atomic_rows
from gpusim.sass import semantics
from gpusim.sass.listing import Instr, back_edges

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

    def __init__(self, lanes: int, const: dict, specials: dict, shared_bytes: int, memory: GlobalMemory):
        self.lanes = lanes
        self.R = np.zeros((256, lanes), np.uint32)
        self.UR = np.zeros((64, lanes), np.uint32)
        self.P = np.zeros((8, lanes), bool)
        self.UP = np.zeros((8, lanes), bool)
        self.P[7] = self.UP[7] = True
        self.const = const
        self.specials = specials
        self.shared_end = SHARED_RESERVED + shared_bytes
        self.shared = np.zeros(self.shared_end // 4 + 4, np.uint32)
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
            vals = None if self.dry else np.stack([self.shared[a // 4 + j] for j in range(nbytes // 4)])
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
                for j in range(nbytes // 4):
                    self.shared[a // 4 + j] = v[j]

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


class Program:
    """A parsed SASS function with its handlers (built on first use) and loop structure."""

    def __init__(self, name: str, instrs: list[Instr], shared_bytes: int):
        self.name = name
        self.instrs = instrs
        self.shared_bytes = shared_bytes
        self.handlers: list = [None] * len(instrs)
        self.op_ids: list = [None] * len(instrs)      # opcode ids (gpusim.kernel.opcodes.TABLE)
        self.back = back_edges(instrs)
        self.wide = _wide_registers(instrs)

    def handler(self, idx: int) -> semantics.Handler:
        h = self.handlers[idx]
        if h is None:
            h = self.handlers[idx] = semantics.build(self.instrs[idx])
            self.op_ids[idx] = TABLE.id(self.instrs[idx].opcode, atomic_ok=True)   # it gives them addresses
        return h


def _wide_registers(instrs) -> set:
    """Registers n whose pair (n, n+1) holds a 64-bit value somewhere (addresses, IMAD.WIDE)."""
    out = set()
    for ins in instrs:
        for op in ins.operands:
            if op.kind == "mem" and op.n != 255 and (op.wide or (ins.base in ATOMIC and "E" in ins.mods)):
                out.add(("R", op.n))
        if "WIDE" in ins.mods or "64" in ins.mods and ins.base in ("LDC", "ULDC", "CS2R"):
            d = ins.operands[0]
            if d.kind in ("R", "UR"):
                out.add((d.kind, d.n))
            if "WIDE" in ins.mods and len(ins.operands) > 3 and ins.operands[3].kind in ("R", "UR"):
                out.add((ins.operands[3].kind, ins.operands[3].n))
        if ins.base == "CS2R" and ins.operands and ins.operands[0].kind == "R":
            out.add(("R", ins.operands[0].n))
    return out


@dataclass(eq=False)          # groups are told apart by identity (their lanes are arrays)
class _Group:
    pc: int
    lanes: np.ndarray
    blocked: bool = False
    calls: tuple = ()          # pcs of the CALLs it is inside (outermost first)

    def order(self) -> tuple:
        """Where it stands in the code for picking the next group: a group inside a subroutine stands
        at its CALL (the subroutine sits after EXIT, it returns before the code after the CALL)."""
        return self.calls + (self.pc,)


@dataclass
class _Loop:
    header: int
    bra_pc: int
    arrivals: list = field(default_factory=list)    # record index at each taken back-edge
    sigs: list = field(default_factory=list)        # signature of each iteration (between arrivals)
    snaps: list = field(default_factory=list)       # register state at the last 3 arrivals
    done: bool = False
    skipped: int = 0                                # iterations jumped over


class CtaRun:
    """Executes one CTA; `run()` fills the records, `trace()` turns them into warp rows."""

    def __init__(self, prog: Program, block: tuple, block_idx: tuple, grid: tuple, params: dict,
                 memory: GlobalMemory, weight: int = 1, sample_loops: bool = True, window: int | None = None):
        self.prog = prog
        bx, by, bz = block
        self.nthreads = bx * by * bz
        self.W = -(-self.nthreads // 32)
        L = self.W * 32
        tid = np.arange(L, dtype=np.int64)
        u = np.uint32
        specials = {
            "SR_TID.X": (tid % bx).astype(u), "SR_TID.Y": ((tid // bx) % by).astype(u),
            "SR_TID.Z": (tid // (bx * by)).astype(u),
            "SR_CTAID.X": np.full(L, block_idx[0], u), "SR_CTAID.Y": np.full(L, block_idx[1], u),
            "SR_CTAID.Z": np.full(L, block_idx[2], u), "SR_LANEID": (tid % 32).astype(u),
            "SR_CgaCtaId": np.zeros(L, u),
        }
        lane = tid % 32              # the lane masks of each thread's lane in its warp
        specials.update({"SR_EQMASK": (1 << lane).astype(u), "SR_LTMASK": ((1 << lane) - 1).astype(u),
                         "SR_LEMASK": ((2 << lane) - 1).astype(u), "SR_GTMASK": (~((2 << lane) - 1)).astype(u),
                         "SR_GEMASK": (~((1 << lane) - 1)).astype(u)})
        const = {0x0: bx, 0x4: by, 0x8: bz, 0xC: grid[0], 0x10: grid[1], 0x14: grid[2],
                 0x28: 0xFFFC00, 0x208: 0, 0x20C: 0}
        const.update(params)
        self.st = State(L, const, specials, prog.shared_bytes, memory)
        self.live = tid < self.nthreads
        self.groups = [_Group(0, self.live.copy())]
        self.weight = weight
        self.sample_loops = sample_loops and window is None
        self.window = window             # timing window: an outermost loop runs `window` trips, then its last ones
        self.loop_trips: list = []       # (header, trips, trips recorded) of every loop that ended
        # records
        self.r_op, self.r_pc, self.r_on, self.r_ex, self.r_addr, self.r_src, self.r_w = ([] for _ in range(7))
        self._bits_cache: dict = {}
        self.writer: dict = {}
        self.taint: set = set()
        self.data_pcs: set = set()       # instructions whose guard, branch or address is data
        self.local_clean: dict = {}      # local byte offset -> it holds a value that is not data
        self.local_pcs: set = set()      # local stores of values that are not data (spilled pointers, counters)
        self.loops: dict = {}
        self.notes: list[str] = []
        self.steps = 0

    # ------------------------------------------------------------ records

    def _bits(self, lanes: np.ndarray) -> np.ndarray:
        key = id(lanes)
        got = self._bits_cache.get(key)
        if got is not None and got[0] is lanes:
            return got[1]
        b = np.packbits(lanes.reshape(self.W, 32), axis=1, bitorder="little").view("<u4").reshape(self.W)
        if len(self._bits_cache) > 4096:
            self._bits_cache.clear()
        self._bits_cache[key] = (lanes, b)
        return b

    def _record(self, idx: int, lanes, on, addr, h):
        ex = self._bits(lanes)
        onb = ex if on is lanes else self._bits(on)
        srcs = ()
        if h is not None and h.reads:
            w = self.writer
            s = {w[r] for r in h.reads if r in w}
            if s:
                srcs = tuple(sorted(s, reverse=True)[:3])
        self.r_op.append(self.prog.op_ids[idx])
        self.r_pc.append(idx)
        self.r_on.append(onb)
        self.r_ex.append(ex)
        if addr is not None:
            a = np.where(on, addr, -1)
            self.r_addr.append(a)
        else:
            self.r_addr.append(None)
        self.r_src.append(srcs)
        self.r_w.append(self.weight)
        seq = len(self.r_op) - 1
        if h is not None:
            for r in h.writes:
                self.writer[r] = seq

    # ------------------------------------------------------------ execution

    def _next_group(self) -> _Group:
        """The group to run next: the lowest address among those not waiting at a barrier (released
        when all wait), with the threads of other groups at the same address joining it."""
        ready = [g for g in self.groups if not g.blocked]
        while not ready:
            self._release_barrier()
            ready = list(self.groups)
        g = min(ready, key=_Group.order)
        for o in ready:
            if o is not g and o.pc == g.pc and o.calls == g.calls:
                g.lanes = g.lanes | o.lanes
                self.groups.remove(o)
        return g

    def run(self, max_steps: int = 200_000_000):
        instrs = self.prog.instrs
        n_instr = len(instrs)
        while self.groups:
            g = self._next_group()
            idx = g.pc // 16
            if idx >= n_instr:
                raise GpusimError(f"{self.prog.name}: execution ran past the end of the SASS")
            self.steps += 1
            if self.steps > max_steps:
                raise GpusimError(f"{self.prog.name}: more than {max_steps} instructions in one CTA")
            self._step(g, idx, instrs[idx])
        return self

    def _guard(self, ins: Instr, lanes):
        gd = ins.guard
        if gd is None:
            return lanes
        if gd.n == 7:
            return lanes if not gd.inv else np.zeros_like(lanes)
        p = (self.st.P if gd.kind == "P" else self.st.UP)[gd.n]
        if (gd.kind, gd.n) in self.taint:
            self.data_pcs.add(ins.pc)
        return lanes & (~p if gd.inv else p)

    def _step(self, g: _Group, idx: int, ins: Instr):
        h = self.prog.handler(idx)
        lanes = g.lanes
        on = self._guard(ins, lanes)
        kind = h.kind
        if kind == "bra":
            self._record(idx, lanes, on, None, None)
            if h.reads:                   # a predicate operand: taken where it holds too
                if any(r in self.taint for r in h.reads):
                    self.data_pcs.add(ins.pc)
                on = lanes & h.run(self.st, on)
            self._branch(g, ins, lanes, on)
            return
        if kind in ("call", "ret"):
            self._record(idx, lanes, on, None, None)
            self._call(g, ins, h, lanes, on)
            return
        if kind == "exit":
            self._record(idx, lanes, on, None, None)
            self.live &= ~on
            rest = lanes & ~on
            if rest.any():
                g.lanes, g.pc = rest, g.pc + 16
            else:
                self.groups.remove(g)
            return
        if kind == "bar":
            if ins.guard is not None:
                raise UnsupportedOperation(f"SASS /*{ins.pc:04x}*/ {ins.text}: a predicated barrier")
            self._record(idx, lanes, on, None, None)
            g.blocked = True
            return
        addr = None
        data = h.data
        if on is lanes or on.any():
            if h.addr_regs and any(r in self.taint for r in h.addr_regs):
                self.data_pcs.add(ins.pc)
            addr = h.run(self.st, on)
            if h.space == "local":
                data = self._local_taint(h, addr, on, ins)
                addr = self._local_rows(addr, on, h.nbytes)
        elif h.kind in ("load", "store", "atom"):       # an atomic's addresses are recorded as a store's
            addr = np.full(self.st.lanes, -1, np.int64)
        self._record(idx, lanes, on, addr, h)
        if h.writes:
            if data or (self.taint and any(r in self.taint for r in h.reads)):
                self.taint.update(h.writes)
            elif self.taint:
                self.taint.difference_update(h.writes)
        g.pc += 16

    def _local_taint(self, h, addr, on, ins) -> bool:
        """Whether a local load's result is data: local memory keeps, per byte offset, whether what was
        stored there was (spilled accumulators are; a spilled pointer is not, and a loop that keeps
        one there is not sampled: the sampler cannot step local memory)."""
        off = int(addr[on][0])
        span = range(off, off + h.nbytes, 4)
        if h.kind == "store":
            clean = not any(r in self.taint for r in h.reads if r not in h.addr_regs)
            for x in span:
                self.local_clean[x] = clean
            if clean:
                self.local_pcs.add(ins.pc)
            return False
        return not any(self.local_clean.get(x, False) for x in span)

    def _local_rows(self, addr, on, nbytes):
        """Local addresses as the trace costs them: each warp's local memory interleaved by lane, so
        that the same offset in every lane is one contiguous run (32 x nbytes bytes)."""
        lo = LOCAL_TOP - LOCAL_WINDOW
        lane = np.arange(self.st.lanes)
        off = np.where(on, addr - lo, 0)
        phys = (LOCAL_PHYS + (lane // 32) * (32 * LOCAL_WINDOW) + (off // nbytes) * (32 * nbytes)
                + (lane % 32) * nbytes)
        return np.where(on, phys, -1)

    def _call(self, g: _Group, ins: Instr, h, lanes, on):
        """CALL.REL.NOINC: the lanes `on` jump to the subroutine; RET: each lane goes back to the offset
        its return register holds (as MOV set it before the CALL); lanes the guard leaves off go on."""
        rest = lanes & ~on
        if ins.base == "CALL":
            jumps = [(ins.operands[-1].n, on, g.calls + (ins.pc,))] if on.any() else []
        else:
            if not g.calls:
                raise UnsupportedOperation(f"SASS /*{ins.pc:04x}*/ {ins.text}: RET outside a CALL")
            if any(r in self.taint for r in h.reads):
                self.data_pcs.add(ins.pc)
            target = h.run(self.st, on)
            jumps = []
            for t in np.unique(target[on]):
                if t % 16 or not 0 <= t < 16 * len(self.prog.instrs):
                    raise GpusimError(f"SASS /*{ins.pc:04x}*/ {ins.text}: return to 0x{int(t):x}, not an instruction")
                jumps.append((int(t), on & (target == t), g.calls[:-1]))
        if rest.any():
            g.lanes, g.pc = rest, g.pc + 16
        else:
            self.groups.remove(g)
        self.groups += [_Group(pc, ln, calls=c) for pc, ln, c in jumps]

    def _release_barrier(self):
        for g in self.groups:
            g.blocked = False
            g.pc += 16

    def _branch(self, g: _Group, ins: Instr, lanes, on):
        target = ins.operands[-1].n
        taken_all = on is lanes or bool((on == lanes).all())
        back = self.prog.back.get(ins.pc)
        if taken_all:
            g.pc = target
        else:
            if not on.any():
                g.pc += 16
            else:
                g.lanes = lanes & ~on
                g.pc += 16
                self.groups.append(_Group(target, on, calls=g.calls))
        if back is None or self.st.dry:
            return
        loop = self.loops.get(back)
        if taken_all and len(self.groups) == 1:
            if loop is None:
                loop = self.loops[back] = _Loop(back, ins.pc)
            self._arrive(loop, back, ins.pc)
        elif loop is not None:
            if not on.any():          # the loop is left
                n_rec = len(loop.arrivals) + 1
                self.loop_trips.append((back, n_rec + loop.skipped, n_rec))
                del self.loops[back]
            else:                     # a divergent loop: its iterations cannot stand for each other
                loop.done = True

    # ------------------------------------------------------------ loop sampling

    def _sig(self, a: int, b: int):
        return hash((tuple(self.r_pc[a:b]), b"".join(x.tobytes() for x in self.r_on[a:b]),
                     b"".join(x.tobytes() for x in self.r_ex[a:b])))

    def _arrive(self, loop: _Loop, header: int, bra_pc: int):
        n = len(self.r_op)
        if loop.arrivals:
            loop.sigs.append(self._sig(loop.arrivals[-1], n))
        loop.arrivals.append(n)
        if loop.done:
            return
        if self.window is not None:
            if len(loop.arrivals) < self.window - 2 * MAX_PERIOD - 2:
                return
            loop.snaps = (loop.snaps + [self.st.snapshot()])[-(2 * MAX_PERIOD + 2):]
            if len(loop.arrivals) < self.window:
                return
            if len(loop.arrivals) > self.window + 2 * MAX_PERIOD + 2:
                loop.done = True
                return
        elif self.sample_loops:
            loop.snaps = (loop.snaps + [self.st.snapshot()])[-(2 * MAX_PERIOD + 2):]
            if len(loop.sigs) > 2 * MAX_PERIOD + 2:
                loop.done = True
                self.notes.append(f"loop at 0x{header:04x}: no period of at most {MAX_PERIOD} iterations; "
                                  "run in full")
                return
        else:
            return
        enclosing = [o for o in self.loops.values() if o is not loop and o.header < header and bra_pc < o.bra_pc]
        if self.window is not None and enclosing:
            loop.done = True           # windows cut the outermost loop only
            return
        if any(not o.done for o in enclosing):
            return       # an enclosing loop may still be sampled: its iterations must stay alike
        found = self._period(loop, check_addresses=self.window is None)
        if found is None:
            return
        p, delta = found
        region = {pc for pc in self.data_pcs if header <= pc <= bra_pc}
        spilled = {pc for pc in self.local_pcs if header <= pc <= bra_pc}
        if region or spilled:
            loop.done = True
            self.notes.append(
                f"loop at 0x{header:04x}: " + (f"its control or addresses depend on loaded data (0x{min(region):04x})"
                                               if region else f"it keeps addresses or counters in local memory "
                                               f"(spills, 0x{min(spilled):04x})") + "; run in full")
            return
        self._skip(loop, header, bra_pc, p, delta, reweight=self.window is None)

    def _clean_rows(self):
        """Masks of the R / UR rows and P / UP rows that hold no data."""
        t = self.taint
        r = np.array([("R", i) not in t for i in range(256)])
        u = np.array([("UR", i) not in t for i in range(64)])
        p = np.array([("P", i) not in t for i in range(8)])
        up = np.array([("UP", i) not in t for i in range(8)])
        return r, u, p, up

    def _stride_delta(self, snaps, p: int):
        """The registers' advance over p iterations, when every register that holds no data advances
        by the same amount over each of the last two stretches of p iterations, for the last two
        residues (affine in the trip, up to a period-p pattern such as a double buffer's toggle);
        else None. Returns (R delta, UR delta, {64-bit pair: delta})."""
        if len(snaps) < 2 * p + 2:
            return None
        cr, cu, cp, cq = self._clean_rows()
        for last in (-1, -2):
            a, b, c = snaps[last], snaps[last - p], snaps[last - 2 * p]
            if not (np.array_equal((a[0] - b[0])[cr], (b[0] - c[0])[cr])
                    and np.array_equal((a[1] - b[1])[cu], (b[1] - c[1])[cu])
                    and np.array_equal(a[2][cp], b[2][cp]) and np.array_equal(b[2][cp], c[2][cp])
                    and np.array_equal(a[3][cq], b[3][cq]) and np.array_equal(b[3][cq], c[3][cq])):
                return None
        a, b = snaps[-1], snaps[-1 - p]
        if not (np.array_equal((a[0] - b[0])[cr], (snaps[-2][0] - snaps[-2 - p][0])[cr])
                and np.array_equal((a[1] - b[1])[cu], (snaps[-2][1] - snaps[-2 - p][1])[cu])):
            return None          # both residues must advance alike
        # 64-bit pairs advance as 64-bit values (a carry from the low word is not a constant step)
        wide = {}
        for kind, n in self.prog.wide:
            k = 0 if kind == "R" else 1
            clean = cr if kind == "R" else cu
            if n + 1 >= len(clean) or not (clean[n] and clean[n + 1]):
                continue
            v = [x[k][n].astype(np.uint64) | (x[k][n + 1].astype(np.uint64) << np.uint64(32))
                 for x in (snaps[-1], snaps[-1 - p], snaps[-1 - 2 * p], snaps[-2], snaps[-2 - p])]
            d = v[0] - v[1]
            if not (np.array_equal(d, v[1] - v[2]) and np.array_equal(d, v[3] - v[4])):
                return None
            wide[(kind, n)] = d
        return a[0] - b[0], a[1] - b[1], wide

    def _period(self, loop: _Loop, check_addresses: bool = True):
        """(p, stride delta) for the smallest period p at which the recorded iterations repeat (same
        instructions and masks; with check_addresses, memory addresses moved by whole 128-byte lines)
        and the registers advance alike; None if none yet."""
        sigs = loop.sigs
        nobs = len(sigs)
        for p in range(1, min(MAX_PERIOD, nobs // 2) + 1):
            if not all(sigs[-1 - t] == sigs[-1 - t - p] for t in range(p)):
                continue
            if check_addresses and not self._addr_periodic(loop, p):
                continue
            delta = self._stride_delta(loop.snaps, p)
            if delta is not None:
                return p, delta
        return None

    def _addr_periodic(self, loop: _Loop, p: int) -> bool:
        arr = loop.arrivals
        for t in range(p):
            a0, a1 = arr[-2 - t], arr[-1 - t]
            b0 = arr[-2 - t - p]
            for k in range(a1 - a0):
                x, y = self.r_addr[a0 + k], self.r_addr[b0 + k]
                if x is None:
                    continue
                on = x >= 0
                d = x[on] - y[on]
                if d.size and (d[0] % _LINE or (d != d[0]).any()):
                    return False
        return True

    def _skip(self, loop: _Loop, header: int, bra_pc: int, p: int, delta, reweight: bool = True):
        """Jump n*p iterations ahead, n as large as the path allows (a trial of the last one)."""
        d_r, d_u, wide = delta
        now, prev = loop.snaps[-1], loop.snaps[-2]      # starts of the next and of the last iteration
        cr, cu, _, _ = self._clean_rows()
        last = (loop.arrivals[-2], loop.arrivals[-1])
        want = (self.r_pc[last[0]:last[1]], [x.tobytes() for x in self.r_on[last[0]:last[1]]])

        def state_after(base, n: int):
            R, UR, P, UP = (x.copy() for x in base)
            nn = np.uint32(n & 0xFFFFFFFF)
            R[cr] = base[0][cr] + nn * d_r[cr]
            UR[cu] = base[1][cu] + nn * d_u[cu]
            for (kind, r), d in wide.items():
                arr = R if kind == "R" else UR
                v0 = base[0 if kind == "R" else 1]
                v = (v0[r].astype(np.uint64) | (v0[r + 1].astype(np.uint64) << np.uint64(32))) + np.uint64(n) * d
                arr[r] = (v & np.uint64(0xFFFFFFFF)).astype(np.uint32)
                arr[r + 1] = (v >> np.uint64(32)).astype(np.uint32)
            return R, UR, P, UP

        saved = (self.writer.copy(), set(self.taint),
                 [(_g.pc, _g.lanes.copy(), _g.blocked, _g.calls) for _g in self.groups])

        def trial(n: int):
            self.writer, self.taint = saved[0].copy(), set(saved[1])
            self.st.restore(state_after(prev, n))
            self.st.cmp_log = []
            try:
                return self._trial(header, bra_pc, want, 4 * (last[1] - last[0]) + 64), self.st.cmp_log
            finally:
                self.st.cmp_log = None

        ref = trial(0)[1]           # the last iteration's integer compares (the side of each lane's a - b)

        def ok(n: int) -> bool:
            """Does the iteration n periods after the last one take its path, every integer compare on the
            same side of equality as in the last? An affine a - b that keeps its side never crosses zero
            in between, so no compare (EQ / NE included) can have flipped there and back."""
            good, log = trial(n)
            return good and len(log) == len(ref) and all(np.array_equal(x, y) for x, y in zip(log, ref))

        lo, hi = 0, 1
        while hi * p < (1 << 30) and ok(hi):
            lo, hi = hi, hi * 2
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if ok(mid):
                lo = mid
            else:
                hi = mid
        self.writer, self.taint = saved[0], saved[1]
        self.groups[:] = [_Group(pc, lanes, bl, c) for pc, lanes, bl, c in saved[2]]
        loop.done = True
        if lo == 0:
            self.st.restore(now)
            return
        self.st.restore(state_after(now, lo))
        loop.skipped = lo * p
        if reweight:
            for i in range(loop.arrivals[-1 - p], loop.arrivals[-1]):
                self.r_w[i] *= (1 + lo)

    def _trial(self, header: int, bra_pc: int, want, max_steps: int) -> bool:
        """Run one iteration from the header without recording or writing memory; True when it takes
        the recorded path and comes back to the header."""
        st = self.st
        groups_before, live_before = self.groups, self.live.copy()
        n0 = len(self.r_op)
        self.groups = [_Group(header, self.live.copy())]
        st.dry = True
        okay = False
        try:
            steps = 0
            while self.groups and steps < max_steps:
                g = self._next_group()
                if not header <= g.pc <= bra_pc:
                    break
                idx = g.pc // 16
                ins = self.prog.instrs[idx]
                self._step(g, idx, ins)
                steps += 1
                if ins.pc == bra_pc and len(self.groups) == 1 and self.groups[0].pc == header:
                    got = self.r_pc[n0:]
                    okay = got == want[0] and [x.tobytes() for x in self.r_on[n0:]] == want[1]
                    break
        except GpusimError:
            okay = False
        finally:
            st.dry = False
            for lst in (self.r_op, self.r_pc, self.r_on, self.r_ex, self.r_addr, self.r_src, self.r_w):
                del lst[n0:]
            self.groups, self.live = groups_before, live_before
        return okay

    # ------------------------------------------------------------ the trace

    def trace(self, cta: int):
        """The records sliced into warps: one row per (record, warp that executes it)."""
        from gpusim.trace.trace import ROW_DTYPE, Trace, cost_rows
        n = len(self.r_op)
        if n == 0:
            return Trace(np.zeros(0, ROW_DTYPE), np.zeros((0, 32), np.int64), list(TABLE.ids))
        ex = np.stack(self.r_ex)
        on = np.stack(self.r_on)
        ii, ww = np.nonzero(ex)
        rows = np.zeros(len(ii), ROW_DTYPE)
        rows["cta"] = cta
        rows["warp"] = ww
        rows["op"] = np.asarray(self.r_op, np.int16)[ii]
        rows["mask"] = on[ii, ww]
        rows["weight"] = np.asarray(self.r_w, np.int64)[ii]
        rows["seq"] = ii
        rows["pc"] = np.asarray(self.r_pc, np.int32)[ii] * 16
        src = np.full((n, 3), -1, np.int32)
        for i, s in enumerate(self.r_src):
            if s:
                src[i, :len(s)] = s
        rows["src0"], rows["src1"], rows["src2"] = src[ii, 0], src[ii, 1], src[ii, 2]
        rows["mem"] = -1
        mem_ids = np.array([a is not None for a in self.r_addr], bool)
        is_mem = mem_ids[ii]
        if not is_mem.any():
            return Trace(rows, np.zeros((0, 32), np.int64), list(TABLE.ids))
        slot = np.full(n, -1, np.int64)
        which = np.flatnonzero(mem_ids)
        slot[which] = np.arange(len(which))
        full = np.stack([self.r_addr[i] for i in which]).reshape(len(which), self.W, 32)
        addr = full[slot[ii[is_mem]], ww[is_mem]]
        rows["mem"][is_mem] = np.arange(addr.shape[0])
        cost_rows(rows, addr)
        cost_atomic_rows(rows, addr)          # sectors / wavefronts of atomics by their own rules
        return Trace(rows, addr, list(TABLE.ids))
