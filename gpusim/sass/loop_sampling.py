"""Loop sampling for the CTA emulator (gpusim.sass.cta.CtaRun inherits it): at a loop's back-edge,
find the period of whole iterations, try the farthest jump on which the path still holds, and let the
recorded iterations stand for the skipped ones (the rule is described in gpusim.sass.cta)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gpusim.errors import GpusimError
from gpusim.sass.state import MAX_PERIOD, _LINE

SNAPS_KEPT = 2 * MAX_PERIOD + 2     # register snapshots a loop keeps: two periods of the longest, two residues
HISTORY_KEPT = 3 * MAX_PERIOD + 2   # arrivals whose data registers and ended inner loops synthesis compares


class SynthesisMismatch(Exception):
    """A timing window's synthesized trips were not what running them gives (the window is then run)."""


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
    taints: list = field(default_factory=list)      # the registers holding data at the last arrivals
    ended: list = field(default_factory=list)       # len(loop_trips) at each arrival (inner loops that ended)
    check: tuple | None = None                      # a synthesized stretch to check against the next period


class LoopSampling:
    """The loop-sampling half of CtaRun: its methods read and write the run's records and registers."""

    def _sig(self, a: int, b: int):
        """The signature of records a..b: one hash per CTA of the run (its instructions and masks)."""
        pcs = tuple(self.r_pc[a:b])
        if self.n_cta == 1:
            return (hash((pcs, b"".join(x.tobytes() for x in self.r_on[a:b]),
                          b"".join(x.tobytes() for x in self.r_ex[a:b]))),)
        k = b - a
        on = np.stack(self.r_on[a:b]).reshape(k, self.n_cta, self.Wc).transpose(1, 0, 2).copy()
        ex = np.stack(self.r_ex[a:b]).reshape(k, self.n_cta, self.Wc).transpose(1, 0, 2).copy()
        return tuple(hash((pcs, on[c].tobytes(), ex[c].tobytes())) for c in range(self.n_cta))

    def _per_cta(self, lane_ok: np.ndarray) -> np.ndarray:
        """Per-lane booleans -> one per CTA (all of its lanes)."""
        return lane_ok.reshape(self.n_cta, -1).all(axis=1)

    def _arrive(self, loop: _Loop, header: int, bra_pc: int):
        n = len(self.r_op)
        if loop.arrivals:
            loop.sigs.append(self._sig(loop.arrivals[-1], n))
        loop.arrivals.append(n)
        if loop.done:
            return
        if self.window is not None:
            if not self.synthesize and len(loop.arrivals) < self.window - SNAPS_KEPT:
                return
            loop.snaps = (loop.snaps + [self.st.snapshot()])[-SNAPS_KEPT:]
            if self.synthesize:
                loop.taints = (loop.taints + [frozenset(self.taint)])[-HISTORY_KEPT:]
                loop.ended = (loop.ended + [len(self.loop_trips)])[-HISTORY_KEPT:]
                if loop.check and len(loop.arrivals) == loop.check[0]:
                    self._check_synthesized(loop)
            if len(loop.arrivals) < self.window:
                if self.synthesize and loop.check is None:
                    self._synthesize(loop, header, bra_pc)
                return
            if len(loop.arrivals) > self.window + SNAPS_KEPT:
                loop.done = True
                return
        elif self.sample_loops:
            loop.snaps = (loop.snaps + [self.st.snapshot()])[-SNAPS_KEPT:]
            if len(loop.sigs) > SNAPS_KEPT:
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
        r = np.array([("R", i) not in t for i in range(self.st.R.shape[0])])
        u = np.array([("UR", i) not in t for i in range(64)])
        p = np.array([("P", i) not in t for i in range(8)])
        up = np.array([("UP", i) not in t for i in range(8)])
        return r, u, p, up

    def _stride_delta(self, snaps, p: int):
        """(per-CTA ok, the registers' advance over p iterations): a CTA is ok when every register that
        holds no data advances by the same amount over each of the last two stretches of p iterations,
        for the last two residues (affine in the trip, up to a period-p pattern such as a double
        buffer's toggle), in each of its lanes. The advance is (R delta, UR delta, {64-bit pair: delta}).
        """
        none = np.zeros(self.n_cta, bool)
        if len(snaps) < 2 * p + 2:
            return none, None
        cr, cu, cp, cq = self._clean_rows()
        ok = np.ones(self.st.lanes, bool)
        for last in (-1, -2):
            a, b, c = snaps[last], snaps[last - p], snaps[last - 2 * p]
            ok &= ((a[0] - b[0])[cr] == (b[0] - c[0])[cr]).all(axis=0)
            ok &= ((a[1] - b[1])[cu] == (b[1] - c[1])[cu]).all(axis=0)
            ok &= ((a[2][cp] == b[2][cp]) & (b[2][cp] == c[2][cp])).all(axis=0)
            ok &= ((a[3][cq] == b[3][cq]) & (b[3][cq] == c[3][cq])).all(axis=0)
        a, b = snaps[-1], snaps[-1 - p]
        # both residues must advance alike
        ok &= ((a[0] - b[0])[cr] == (snaps[-2][0] - snaps[-2 - p][0])[cr]).all(axis=0)
        ok &= ((a[1] - b[1])[cu] == (snaps[-2][1] - snaps[-2 - p][1])[cu]).all(axis=0)
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
            ok &= (d == v[1] - v[2]) & (d == v[3] - v[4])
            wide[(kind, n)] = d
        return self._per_cta(ok), (a[0] - b[0], a[1] - b[1], wide)

    def _period(self, loop: _Loop, check_addresses: bool = True):
        """(p, stride delta) for the smallest period p at which the recorded iterations repeat (same
        instructions and masks; with check_addresses, memory addresses moved by whole 128-byte lines)
        and the registers advance alike; None if none yet. Side by side, each CTA must find the same
        (as alone it would): else NotUniform."""
        sigs = loop.sigs
        nobs = len(sigs)
        found = np.zeros(self.n_cta, np.int64)        # each CTA's smallest period (0: none yet)
        first = None
        for p in range(1, min(MAX_PERIOD, nobs // 2) + 1):
            ok = np.array([all(sigs[-1 - t][c] == sigs[-1 - t - p][c] for t in range(p))
                           for c in range(self.n_cta)])
            ok &= found == 0
            if not ok.any():
                continue
            if check_addresses:
                ok &= self._addr_periodic(loop, p)
            if not ok.any():
                continue
            good, delta = self._stride_delta(loop.snaps, p)
            ok &= good
            found[ok] = p
            if ok.all() and first is None:
                first = (p, delta)
            if (found > 0).all():
                break
        if first is not None and (found == first[0]).all():
            return first
        if (found == 0).all():
            return None
        from gpusim.sass.cta import NotUniform
        raise NotUniform(f"loop at 0x{loop.header:04x}: the CTAs find different periods ({sorted(set(found.tolist()))})")

    def _addr_periodic(self, loop: _Loop, p: int) -> np.ndarray:
        """Per CTA: did every memory address of the last p iterations move by the same whole number
        of 128-byte lines (over all the CTA's lanes) since p iterations before?"""
        arr = loop.arrivals
        ok = np.ones(self.n_cta, bool)
        for t in range(p):
            a0, a1 = arr[-2 - t], arr[-1 - t]
            b0 = arr[-2 - t - p]
            for k in range(a1 - a0):
                x, y = self.r_addr[a0 + k], self.r_addr[b0 + k]
                if x is None:
                    continue
                for c, (xc, yc) in enumerate(zip(x.reshape(self.n_cta, -1), y.reshape(self.n_cta, -1))):
                    if not ok[c]:
                        continue
                    on = xc >= 0
                    d = xc[on] - yc[on]
                    if d.size and (d[0] % _LINE or (d != d[0]).any()):
                        ok[c] = False
                if not ok.any():
                    return ok
        return ok

    def _synthesize(self, loop: _Loop, header: int, bra_pc: int):
        """A timing window's trips without running them: once the last three periods of the outermost
        loop repeat (instructions, masks, data registers, producers: the same or moved by one period's
        records; addresses moved by the same step in each lane), the records of the periods up to one
        before the window are the last period's, each address moved on by its step, and the registers
        jump there. The path must hold one period past them (a trial), and the period the emulator runs
        next must continue the steps (_check_synthesized), else SynthesisMismatch."""
        enclosing = [o for o in self.loops.values() if o is not loop and o.header < header and bra_pc < o.bra_pc]
        if enclosing:
            return
        region = {pc for pc in self.data_pcs | self.local_pcs if header <= pc <= bra_pc}
        if region:
            return
        found = self._period(loop, check_addresses=False)
        if found is None:
            return
        p, delta = found
        A = len(loop.arrivals)
        m = (self.window - A) // p - 1
        if m < 1:
            loop.check = ()           # too late to gain anything: run on
            return
        if A < 3 * p + 1 or loop.taints[-1] != loop.taints[-1 - p]:
            return
        # the inner loops that ended in each of the last two periods: the same (header, trips) each time
        inner = [self.loop_trips[loop.ended[-1 - (k + 1) * p]:loop.ended[-1 - k * p]] for k in (0, 1)]
        if inner[0] != inner[1]:
            return
        arr = loop.arrivals
        e0, e1, e2, e3 = arr[-1 - 3 * p], arr[-1 - 2 * p], arr[-1 - p], arr[-1]
        L = e3 - e2
        if not (e2 - e1 == L == e1 - e0):
            return
        steps = self._steps(e0, e1, e2, L)
        if steps is None:
            return
        ok, seen, logs, ref, done = self._path_trials(loop, header, bra_pc, p, delta)
        holds = ok(m + 1)
        if self.n_cta > 1 and not holds:
            ok(m + 1, alone=True)
            if any(seen[m + 1]):
                done()
                from gpusim.sass.cta import NotUniform
                raise NotUniform(f"loop at 0x{header:04x}: the CTAs hold their path for different trips")
        done()
        if not holds:
            loop.check = ()           # the loop ends within the window: run it
            return
        d_addr, shifts = steps
        ops, pcs, ons, exs, ws = (lst[e2:e3] for lst in (self.r_op, self.r_pc, self.r_on, self.r_ex, self.r_w))
        addrs, srcs = self.r_addr[e2:e3], self.r_src[e2:e3]
        n_inner = len(inner[0])
        # every synthesized address in one array, (trip, memory record, lane): the period's addresses
        # moved on t steps (a step is 0 in the lanes that are off, so they stay -1); the records are
        # views of it (one np.where per record and trip was most of a long window's synthesis)
        mem_j = [j for j, x in enumerate(addrs) if x is not None]
        slot = [-1] * L
        for i, j in enumerate(mem_j):
            slot[j] = i
        if mem_j:
            moved = (np.stack([addrs[j] for j in mem_j])[None]
                     + np.arange(1, m + 1, dtype=np.int64)[:, None, None] * np.stack([d_addr[j] for j in mem_j])[None])
        shifting = [any(f) for f in shifts]
        for t in range(1, m + 1):
            self.loop_trips += inner[0]
            self.r_op += ops
            self.r_pc += pcs
            self.r_on += ons
            self.r_ex += exs
            self.r_w += ws
            if mem_j:
                trip = moved[t - 1]
                self.r_addr += [None if s < 0 else trip[s] for s in slot]
            else:
                self.r_addr += addrs
            self.r_src += [tuple(v + t * L if sh else v for v, sh in zip(sr, f)) if mv else sr
                           for sr, f, mv in zip(srcs, shifts, shifting)]
        for r, seq in self.writer.items():
            if seq >= e2:
                self.writer[r] = seq + m * L
        base = list(arr[-p:])
        snaps = loop.snaps[-p:]
        for t in range(1, m + 1):
            for i in range(p):
                arr.append(base[i] + t * L)
                loop.sigs.append(loop.sigs[-p])
                loop.taints.append(loop.taints[-p])
                loop.ended.append(loop.ended[-p] + n_inner)
                if (m - t) * p + (p - i) <= SNAPS_KEPT:     # only the snapshots that are kept
                    loop.snaps.append(self._advance(snaps[i], t, delta))
        loop.snaps = loop.snaps[-SNAPS_KEPT:]
        loop.taints, loop.ended = loop.taints[-HISTORY_KEPT:], loop.ended[-HISTORY_KEPT:]
        self._advance(snaps[-1], m, delta, into=self.st)
        # the next period is run: it must move on by the same steps
        loop.check = (len(arr) + p, p, L, d_addr, shifts, inner[0])

    def _steps(self, e0: int, e1: int, e2: int, L: int):
        """(address step per record, producer shift flags per record) when the three stretches of L
        records from e0, e1, e2 move alike: every address by the same step in each lane (off lanes
        the same), every producer the same seq or one stretch on; else None."""
        d_addr, shifts = [], []
        for j in range(L):
            x, y, z = self.r_addr[e2 + j], self.r_addr[e1 + j], self.r_addr[e0 + j]
            if x is None:
                if y is not None or z is not None:
                    return None
                d_addr.append(None)
            else:
                on = x >= 0
                if y is None or z is None or not (np.array_equal(on, y >= 0) and np.array_equal(on, z >= 0)):
                    return None
                d = np.where(on, x - y, 0)
                if not np.array_equal(d, np.where(on, y - z, 0)):
                    return None
                d_addr.append(d)
            s2, s1, s0 = self.r_src[e2 + j], self.r_src[e1 + j], self.r_src[e0 + j]
            if not len(s2) == len(s1) == len(s0):
                return None
            f = []
            for a, b, c in zip(s2, s1, s0):
                if a == b + L and b == c + L:
                    f.append(True)
                elif a == b == c:
                    f.append(False)
                else:
                    return None
            shifts.append(tuple(f))
        return d_addr, shifts

    def _check_synthesized(self, loop: _Loop):
        """The period run after a synthesized stretch moved on as the stretch did (else the stretch
        was wrong: SynthesisMismatch, and the caller runs the window without synthesis)."""
        _, p, L, d_addr, shifts, inner = loop.check
        arr = loop.arrivals
        e2, e3 = arr[-1 - p], arr[-1]
        good = (e3 - e2 == L and loop.taints[-1] == loop.taints[-1 - p]
                and self.loop_trips[loop.ended[-1 - p]:loop.ended[-1]] == inner
                and self.r_pc[e2:e3] == self.r_pc[e2 - L:e2]
                and all(np.array_equal(a, b) for a, b in zip(self.r_on[e2:e3], self.r_on[e2 - L:e2]))
                and all(np.array_equal(a, b) for a, b in zip(self.r_ex[e2:e3], self.r_ex[e2 - L:e2])))
        if good:
            for j in range(L):
                x, y = self.r_addr[e2 + j], self.r_addr[e2 - L + j]
                if (x is None) != (y is None) or (x is not None and not np.array_equal(
                        x, np.where(y >= 0, y + d_addr[j], -1))):
                    good = False
                    break
                if self.r_src[e2 + j] != tuple(v + L if sh else v for v, sh in zip(self.r_src[e2 - L + j], shifts[j])):
                    good = False
                    break
        loop.check = ()
        if not good:
            raise SynthesisMismatch(f"loop at 0x{loop.header:04x}: the trips after a synthesized stretch "
                                    "do not continue it")

    def _advance(self, base, n: int, delta, into=None):
        """Registers `base` (a snapshot) moved n periods on: the rows that hold no data by n deltas,
        64-bit pairs as 64-bit values; data rows and predicates as they are. into: a register state
        to put them in (its own arrays, no new ones), else a new snapshot."""
        d_r, d_u, wide = delta
        cr, cu, _, _ = self._clean_rows()
        if into is None:
            R, UR, P, UP = (x.copy() for x in base)
        else:
            into.restore(base)
            R, UR, P, UP = into.R, into.UR, into.P, into.UP
        nn = np.uint32(n & 0xFFFFFFFF)
        # only the rows that move (the loop's counters and addresses, a few of 256): the others stay
        # as copied, and a whole-file gather of every clean row took most of a window's front-end time
        for arr, clean, d in ((R, cr, d_r), (UR, cu, d_u)):
            moving = np.flatnonzero(clean & d.any(axis=1))
            arr[moving] += nn * d[moving]
        for (kind, r), d in wide.items():
            arr = R if kind == "R" else UR
            v0 = base[0 if kind == "R" else 1]
            v = (v0[r].astype(np.uint64) | (v0[r + 1].astype(np.uint64) << np.uint64(32))) + np.uint64(n) * d
            arr[r] = (v & np.uint64(0xFFFFFFFF)).astype(np.uint32)
            arr[r + 1] = (v >> np.uint64(32)).astype(np.uint32)
        return R, UR, P, UP

    def _path_trials(self, loop: _Loop, header: int, bra_pc: int, p: int, delta):
        """(ok, seen, logs, ref, done): ok(n[, alone]) runs dry the iteration n periods after the last
        and tells whether every CTA of the run takes the last iteration's path, every integer compare
        on the same side of equality (seen[n]: each CTA's verdict, logs[n]: the compares of one that
        held, ref: the last iteration's); done() puts back what the trials changed."""
        prev = loop.snaps[-2]                 # the start of the last iteration
        last = (loop.arrivals[-2], loop.arrivals[-1])
        want = (self.r_pc[last[0]:last[1]], self.r_on[last[0]:last[1]])
        saved = (self.writer.copy(), set(self.taint),
                 [(_g.pc, _g.lanes.copy(), _g.blocked, _g.calls) for _g in self.groups])
        per = self.st.lanes // self.n_cta
        live = self.live

        def trial(n: int, only: int | None = None):
            """((pcs, guard masks) or None when it does not come back to the header, its integer
            compares); only: that CTA's lanes alone."""
            self.writer, self.taint = saved[0].copy(), set(saved[1])
            self._advance(prev, n, delta, into=self.st)
            self.st.cmp_log = []
            self.parted = False
            if only is not None:
                self.live = live.copy()
                self.live[:only * per] = False
                self.live[(only + 1) * per:] = False
            try:
                return self._trial(header, bra_pc, 4 * (last[1] - last[0]) + 64), self.st.cmp_log
            finally:
                self.st.cmp_log = None
                self.live = live

        ref = trial(0)[1]           # the last iteration's integer compares (each lane's a - b)

        def judge(result, c: int) -> bool:
            """Does CTA c take the last iteration's path, every integer compare on the same side of
            equality as in the last? An affine a - b that keeps its side never crosses zero in
            between, so no compare (EQ / NE included) can have flipped there and back."""
            got, log = result
            if got is None or got[0] != want[0]:
                return False
            w, ln = slice(c * self.Wc, (c + 1) * self.Wc), slice(c * per, (c + 1) * per)
            return (all(np.array_equal(x[w], y[w]) for x, y in zip(got[1], want[1]))
                    and len(log) == len(ref)
                    and all(np.array_equal(np.sign(x[ln]), np.sign(y[ln])) for x, y in zip(log, ref)))

        seen: dict = {}         # n -> each CTA's verdict (judged alone where the joint trial parts)
        logs: dict = {}         # n -> the compares of a trial that held

        def ok(n: int, alone: bool = False) -> bool:
            if n in seen and (not alone or len(seen[n]) == self.n_cta):
                return all(seen[n])
            got = trial(n)
            if got[0] is not None and got[0][0] == want[0] or self.n_cta == 1:
                v = [judge(got, c) for c in range(self.n_cta)]
            elif alone and not self.parted:     # every CTA took the joint trial's path: it fails alone too
                v = [False] * self.n_cta
            elif alone:
                v = [judge(trial(n, c), c) for c in range(self.n_cta)]
            else:
                v = [False]
            seen[n] = v
            if all(v):
                logs[n] = got[1]
            return all(v)

        def done():
            self.writer, self.taint = saved[0], saved[1]
            self.groups[:] = [_Group(pc, lanes, bl, c) for pc, lanes, bl, c in saved[2]]
            self.st.restore(loop.snaps[-1])

        return ok, seen, logs, ref, done

    def _skip(self, loop: _Loop, header: int, bra_pc: int, p: int, delta, reweight: bool = True):
        """Jump n*p iterations ahead, n as large as the path allows (a trial of the last one)."""
        ok, seen, logs, ref, done = self._path_trials(loop, header, bra_pc, p, delta)
        lo, hi = self._jump(ok, logs, ref, p)
        if self.n_cta > 1 and hi * p < (1 << 30) and (ok(hi, alone=True) or any(seen[hi])):
            from gpusim.sass.cta import NotUniform
            raise NotUniform(f"loop at 0x{header:04x}: the CTAs would jump different numbers of iterations")
        done()
        loop.done = True
        if lo == 0:
            return
        self._advance(loop.snaps[-1], lo, delta, into=self.st)
        loop.skipped = lo * p
        if reweight:
            for i in range(loop.arrivals[-1 - p], loop.arrivals[-1]):
                self.r_w[i] *= (1 + lo)

    @staticmethod
    def _jump(ok, logs: dict, ref: list, p: int) -> tuple[int, int]:
        """(lo, lo + 1): the most periods lo the path holds for (ok(lo), not ok(lo + 1)). The compares
        of the last iteration (n = 0) and of the next (n = 1) give each lane's a - b as a line in n:
        where the first of them reaches zero is the guess, which two trials confirm; else (a - b not
        affine, or no compare ever turns) a doubling search and a bisection find it."""
        cap = 1 << 30
        if not (p < cap and ok(1)):
            return 0, 1
        guess = None
        for a, b in zip(ref, logs[1]):
            s = b - a
            lim = np.concatenate([(a[(a > 0) & (s < 0)] - 1) // -s[(a > 0) & (s < 0)],
                                  (-a[(a < 0) & (s > 0)] - 1) // s[(a < 0) & (s > 0)],
                                  np.zeros(int(((a == 0) & (s != 0)).sum()), np.int64)])
            if lim.size:
                m = int(lim.min())
                guess = m if guess is None else min(guess, m)
        if guess is not None and 1 <= guess and (guess + 1) * p < cap and ok(guess) and not ok(guess + 1):
            return guess, guess + 1
        lo, hi = 1, 2
        while hi * p < cap and ok(hi):
            lo, hi = hi, hi * 2
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if ok(mid):
                lo = mid
            else:
                hi = mid
        return lo, hi

    def _trial(self, header: int, bra_pc: int, max_steps: int):
        """Run one iteration from the header without recording or writing memory: (pcs, guard masks)
        of its records when it comes back to the header, else None."""
        st = self.st
        groups_before, live_before = self.groups, self.live.copy()
        n0 = len(self.r_op)
        self.groups = [_Group(header, self.live.copy())]
        st.dry = True
        got = None
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
                    got = (self.r_pc[n0:], self.r_on[n0:])
                    break
        except GpusimError:
            got = None
        finally:
            st.dry = False
            for lst in (self.r_op, self.r_pc, self.r_on, self.r_ex, self.r_addr, self.r_src, self.r_w):
                del lst[n0:]
            self.groups, self.live = groups_before, live_before
        return got
