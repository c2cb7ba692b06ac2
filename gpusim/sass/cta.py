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

from typing import NamedTuple

import numpy as np

from gpusim.errors import GpusimError, UnsupportedOperation
from gpusim.kernel.opcodes import ATOMIC, TABLE
from gpusim.sass import semantics
from gpusim.sass.listing import Instr, back_edges
from gpusim.sass.loop_sampling import LoopSampling, _Group, _Loop
from gpusim.sass.state import LOCAL_PHYS, LOCAL_TOP, LOCAL_WINDOW, GlobalMemory, State

TRIALS_SKIP_DATA = True     # a loop sampler's trial leaves out the instructions whose results are data (_step)


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
        self.n_regs = _registers_used(instrs)
        self.uses_local = any(ins.base in ("LDL", "STL") for ins in instrs)

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


def _registers_used(instrs) -> int:
    """Rows of the register file the emulator keeps: past the highest R any operand names, room for the
    widest access from it (a 128-bit load's four, 64-bit pairs); snapshots copy the file at every
    trip of a sampled loop, and most kernels name a few dozen of the 255."""
    top = 0
    for ins in instrs:
        for op in ins.operands:
            if op.kind in ("R", "mem") and op.n != 255:
                top = max(top, op.n)
    return min(256, top + 8)


class _Columns(NamedTuple):
    """A run's records as arrays (CtaRun._columns)."""
    ex: np.ndarray          # (record, warp): the lanes that execute it, bits
    on: np.ndarray          # (record, warp): the lanes its guard leaves on, bits
    op: np.ndarray          # per record: opcode id
    weight: np.ndarray
    pc: np.ndarray          # byte offset
    src: np.ndarray         # (record, 3): producer records, -1 none
    is_mem: np.ndarray      # per record: it has addresses
    slot: np.ndarray        # per record: its index among the memory records, -1 none
    addr: np.ndarray | None     # (CTA, memory record, warp, lane)
    alike: bool             # every CTA's warps ran the same records


class _JoinPart(NamedTuple):
    """A run's part of a joined trace (CtaRun.join_part): its rows, its address rows, each CTA's end in
    both, and fill(rows, addr, mem0), writing it into rows and addr (arrays of those sizes) with its memory
    rows pointing past the mem0 address rows before it."""
    n_rows: int
    n_mem: int
    row_ends: np.ndarray
    addr_ends: np.ndarray
    fill: object

    @staticmethod
    def of_traces(parts: list) -> "_JoinPart":
        """The part of CTAs traced one by one (traces()): their rows and addresses copied in order."""
        row_ends = np.cumsum([0] + [len(t.rows) for t in parts], dtype=np.int64)
        addr_ends = np.cumsum([0] + [t.addr.shape[0] for t in parts], dtype=np.int64)

        def fill(rows_out, addr_out, mem0):
            for t, r0, r1, a0, a1 in zip(parts, row_ends, row_ends[1:], addr_ends, addr_ends[1:]):
                rows_out[r0:r1].view(np.uint8)[:] = np.ascontiguousarray(t.rows).view(np.uint8).reshape(-1)
                mem = rows_out["mem"][r0:r1]
                mem[mem >= 0] += mem0 + a0
                addr_out[a0:a1] = t.addr
        return _JoinPart(int(row_ends[-1]), int(addr_ends[-1]), row_ends[1:], addr_ends[1:], fill)


class NotUniform(Exception):
    """CTAs run side by side stopped executing alike (gpusim.sass.frontend then runs them one by one)."""


class CtaRun(LoopSampling):
    """Executes one CTA, or several side by side; `run()` fills the records, `trace()` turns them into
    warp rows.

    block_idx may be a list of CTA indices: their threads then sit one CTA after the other in the lane
    vectors, each CTA with its own shared window, and every instruction runs once for all of them. That
    holds only while the CTAs execute alike (every group the same lanes in each CTA, the loops the same
    periods and jumps); where they would not, the run raises NotUniform. Addresses and guards may differ
    per CTA: the records keep them per warp."""

    def __init__(self, prog: Program, block: tuple, block_idx, grid: tuple, params: dict,
                 memory: GlobalMemory, weight: int = 1, sample_loops: bool = True, window: int | None = None,
                 synthesize: bool = True):
        """synthesize: a window's periodic trips are written from the last period's, not run
        (loop_sampling._synthesize)."""
        self.prog = prog
        bx, by, bz = block
        blocks = [tuple(block_idx)] if np.ndim(block_idx) == 1 else [tuple(b) for b in block_idx]
        self.n_cta = len(blocks)
        self.nthreads = bx * by * bz
        self.Wc = -(-self.nthreads // 32)        # warps of one CTA
        self.W = self.Wc * self.n_cta
        L = self.W * 32
        lane_all = np.arange(L, dtype=np.int64)
        cta_of = lane_all // (self.Wc * 32)
        tid = lane_all % (self.Wc * 32)
        bidx = np.array(blocks, np.uint32)
        u = np.uint32
        specials = {
            "SR_TID.X": (tid % bx).astype(u), "SR_TID.Y": ((tid // bx) % by).astype(u),
            "SR_TID.Z": (tid // (bx * by)).astype(u),
            "SR_CTAID.X": bidx[cta_of, 0], "SR_CTAID.Y": bidx[cta_of, 1],
            "SR_CTAID.Z": bidx[cta_of, 2], "SR_LANEID": (tid % 32).astype(u),
            "SR_CgaCtaId": np.zeros(L, u),
        }
        lane = tid % 32              # the lane masks of each thread's lane in its warp
        specials.update({"SR_EQMASK": (1 << lane).astype(u), "SR_LTMASK": ((1 << lane) - 1).astype(u),
                         "SR_LEMASK": ((2 << lane) - 1).astype(u), "SR_GTMASK": (~((2 << lane) - 1)).astype(u),
                         "SR_GEMASK": (~((1 << lane) - 1)).astype(u)})
        const = {0x0: bx, 0x4: by, 0x8: bz, 0xC: grid[0], 0x10: grid[1], 0x14: grid[2],
                 0x28: 0xFFFC00, 0x208: 0, 0x20C: 0}
        const.update(params)
        self.st = State(L, const, specials, prog.shared_bytes, memory, cta_of if self.n_cta > 1 else None,
                        prog.n_regs)
        self.live = tid < self.nthreads
        self.groups = [_Group(0, self.live.copy())]
        self.weight = weight
        self.sample_loops = sample_loops and window is None
        self.window = window             # timing window: an outermost loop runs `window` trips, then its last ones
        self.synthesize = synthesize and window is not None
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
        self.parted = False              # a trial's groups stopped holding the same lanes of each CTA

    def _check_uniform(self):
        """Side by side, every group must hold the same lanes of each CTA (else NotUniform)."""
        if self.n_cta == 1:
            return
        for g in self.groups:
            x = g.lanes.reshape(self.n_cta, -1)
            if not (x == x[0]).all():
                if self.st.dry:          # a trial: its verdict is then made per CTA (loop_sampling)
                    self.parted = True
                    return
                raise NotUniform(f"CTAs diverge at 0x{g.pc:04x}")

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
            self._check_uniform()
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
            # a trial (loop_sampling) does not compute data: no path it tests reads any (a loop whose
            # branches, guards or addresses do is not sampled), and the FP work of a tiled loop's trip was
            # most of a trial's time; its memory instructions still run, for their addresses
            trial_data = (self.st.dry and TRIALS_SKIP_DATA and kind == "alu" and h.writes
                          and (data or (self.taint and any(r in self.taint for r in h.reads))))
            if not trial_data:
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
        phys = (LOCAL_PHYS + ((lane // 32) % self.Wc) * (32 * LOCAL_WINDOW) + (off // nbytes) * (32 * nbytes)
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
        self._check_uniform()

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
                self._check_uniform()
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

    # ------------------------------------------------------------ the trace

    def trace(self, cta: int):
        """The records sliced into warps: one row per (record, warp that executes it); one CTA's run."""
        return self.traces([cta], [1])[0]

    def _columns(self, stack: bool = True) -> "_Columns":
        """The records as arrays, what traces() and joined() slice into warp rows (stack=False: without the
        addresses, addr None; _stack_addresses makes them where they are to go)."""
        n = len(self.r_op)
        ex_all = np.stack(self.r_ex)
        on_all = np.stack(self.r_on)
        op = np.asarray(self.r_op, np.int16)
        wt = np.asarray(self.r_w, np.int64)
        pc = np.asarray(self.r_pc, np.int32) * 16
        src = np.full((n, 3), -1, np.int32)
        for i, s in enumerate(self.r_src):
            if s:
                src[i, :len(s)] = s
        mem_ids = np.array([a is not None for a in self.r_addr], bool)
        which = np.flatnonzero(mem_ids)
        slot = np.full(n, -1, np.int64)
        slot[which] = np.arange(len(which))
        # CTA-major (CTA, memory record, warp, lane): a CTA whose warps all ran every memory record takes
        # its block as it is, a view, not a gather of its rows
        full = self._stack_addresses(which) if stack and len(which) else None
        # side by side the CTAs execute alike (NotUniform otherwise): each runs the same records in the
        # same warps, so their rows differ in the CTA, the lanes on, the weight and the addresses only
        ex_cta = ex_all.reshape(n, self.n_cta, self.Wc) != 0
        alike = bool((ex_cta == ex_cta[:, :1]).all())
        return _Columns(ex_all, on_all, op, wt, pc, src, mem_ids, slot, full, alike)

    def _stack_addresses(self, which, out=None):
        """The memory records `which`'s addresses CTA-major, (CTA, memory record, warp, lane), into out
        where given (an array of that shape)."""
        return np.stack([self.r_addr[i].reshape(self.n_cta, self.Wc, 32) for i in which], axis=1, out=out)

    def _template(self, cols: "_Columns", w0: int, by_warp: bool = False):
        """The rows of the CTA whose warps start at w0, but for the CTA, lanes on and CTA weight; (rows,
        record of each row, warp, is-memory, index in on_all less w0). The rows go record by record,
        each record's warps in order; by_warp: warp by warp, each warp's records in program order, the
        order the timing's lowering reads a window trace in (2.4 M rows of regtile2d at 4096 lowered in
        0.47-0.59 s, 0.63-0.75 s record by record). The memory rows point at their addresses record by
        record either way (the records' own layout: a view where every warp ran every memory record),
        and the record, warp and is-memory arrays returned are in that order; the indices in on_all
        follow the rows."""
        from gpusim.trace.trace import ROW_DTYPE
        ii, ww = np.nonzero(cols.ex[:, w0:w0 + self.Wc])
        is_mem = cols.is_mem[ii]
        mem = np.full(len(ii), -1, np.int32)
        mem[is_mem] = np.arange(int(is_mem.sum()))
        ri, rw = ii, ww
        if by_warp:
            order = np.argsort(ww, kind="stable")
            ri, rw, mem = ii[order], ww[order], mem[order]
        rows = np.zeros(len(ii), ROW_DTYPE)
        rows["warp"] = rw
        rows["op"] = cols.op[ri]
        rows["weight"] = cols.weight[ri]
        rows["seq"] = ri
        rows["pc"] = cols.pc[ri]
        rows["src0"], rows["src1"], rows["src2"] = cols.src[ri, 0], cols.src[ri, 1], cols.src[ri, 2]
        rows["mem"] = mem
        return rows, ii, ww, is_mem, ri * self.W + rw

    def _addresses(self, cols: "_Columns", c, ii, ww, is_mem):
        """CTA c's address rows, in the order of its memory rows."""
        mine = cols.addr[c]
        if int(is_mem.sum()) == mine.shape[0] * self.Wc:     # every warp ran every memory record
            return mine.reshape(-1, 32)
        return mine[cols.slot[ii[is_mem]], ww[is_mem]]

    def traces(self, cta_ids: list, weights: list, by_warp: bool = False) -> list:
        """One trace per CTA of the run (cta_ids: their ids in the trace, weights: each CTA's weight,
        a factor on the records' own); by_warp: each CTA's rows warp by warp (_template)."""
        from gpusim.trace.trace import ROW_DTYPE, Trace
        if len(self.r_op) == 0:
            return [Trace(np.zeros(0, ROW_DTYPE), np.zeros((0, 32), np.int64), list(TABLE.ids))
                    for _ in cta_ids]
        cols = self._columns()
        shared = None
        out = []
        for c, (cta, weight) in enumerate(zip(cta_ids, weights)):
            w0 = c * self.Wc
            if shared is None or not cols.alike:
                shared = self._template(cols, w0, by_warp)
            tmpl, ii, ww, is_mem, flat = shared
            # the CTAs ran alike: the rest is filled once and copied for each (as bytes: numpy copies a
            # structured array field by field)
            rows = tmpl.view(np.uint8).copy().view(ROW_DTYPE) if cols.alike else tmpl
            rows["cta"] = cta
            rows["mask"] = cols.on.reshape(-1)[flat + w0]
            if weight != 1:
                rows["weight"] *= weight
            if not is_mem.any():
                out.append(Trace(rows, np.zeros((0, 32), np.int64), list(TABLE.ids), costed=False))
                continue
            addr = self._addresses(cols, c, ii, ww, is_mem)
            out.append(Trace(rows, addr, list(TABLE.ids), costed=False))   # the memory stage costs the rows
        return out

    def joined(self, cta_ids: list, weights: list):
        """The CTAs' traces as one (Trace.concat of traces(by_warp=True)'s, the same rows and addresses),
        made in place where the CTAs ran alike (no trace per CTA, no second copy); with each CTA's end in
        its rows and in its addresses."""
        from gpusim.trace.trace import ROW_DTYPE, Trace
        part = self.join_part(cta_ids, weights)
        rows, addr = np.empty(part.n_rows, ROW_DTYPE), np.empty((part.n_mem, 32), np.int64)
        part.fill(rows, addr, 0)
        return Trace(rows, addr, list(TABLE.ids), costed=False), part.row_ends, part.addr_ends

    def join_part(self, cta_ids: list, weights: list) -> "_JoinPart":
        """The run's part of a joined trace (joined, frontend.run_ctas_joined: window traces, each CTA's rows
        warp by warp): its size, and what writes it into the rows and address rows a caller has for it
        (one buffer for several runs: no concatenation)."""
        k = len(cta_ids)
        if k != self.n_cta:
            raise ValueError(f"{k} CTA ids for a run of {self.n_cta} CTAs")
        cols = self._columns(stack=False) if len(self.r_op) else None
        if cols is None or not cols.alike:
            return _JoinPart.of_traces(self.traces(cta_ids, weights, by_warp=True))
        tmpl, ii, ww, is_mem, flat = self._template(cols, 0, by_warp=True)
        n_rows, n_mem = len(tmpl), int(is_mem.sum())
        row_mem = tmpl["mem"] >= 0                    # the memory rows in the rows' order
        ends = np.arange(1, k + 1, dtype=np.int64)
        which = np.flatnonzero(cols.is_mem)

        def fill(rows_out, addr_out, mem0):
            rows = rows_out.reshape(k, n_rows)
            rows.view(np.uint8)[:] = tmpl.view(np.uint8)
            rows["cta"] = np.asarray(cta_ids, np.int32)[:, None]
            rows["mask"] = cols.on.reshape(-1)[flat[None, :] + (np.arange(k) * self.Wc)[:, None]]
            rows["weight"] *= np.asarray(weights, np.int64)[:, None]
            if not n_mem:
                return
            rows["mem"][:, row_mem] += (mem0 + np.arange(k, dtype=np.int64) * n_mem).astype(np.int32)[:, None]
            if n_mem == len(which) * self.Wc:         # every warp ran every memory record: stacked in place
                self._stack_addresses(which, addr_out.reshape(k, len(which), self.Wc, 32))
            else:
                full = self._stack_addresses(which)
                addr_out[:] = full[:, cols.slot[ii[is_mem]], ww[is_mem]].reshape(-1, 32)
        return _JoinPart(k * n_rows, k * n_mem, ends * n_rows, ends * n_mem, fill)
