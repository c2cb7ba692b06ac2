"""The engine's inputs for one round of a prediction: the window traces of the CTAs an SM runs together
(the front-end re-run for their first trips), where each of their global loads is served from (the
cache model), and ptxas's facts from the SASS that ran (stall counts, dependency and read barriers,
register reads). gpusim.estimate.kernel_time times them."""
from __future__ import annotations

import os
import weakref
from concurrent.futures import Future

import numpy as np

from gpusim.arch import GPU, get_arch
from gpusim.estimate.simulate import allocate, run_cta
from gpusim.kernel.context import Sampler
from gpusim.kernel.spec import get_kernel
from gpusim.memory.counters import cost_trace
from gpusim.timing import GROUPS_FROM_WARPS_PER_SMSP
from gpusim.timing.control_codes import global_scoreboards, read_barrier_table, scoreboard_table, stall_table
from gpusim.timing.register_banks import bank_profile
from gpusim.trace.trace import Trace


class _TripSampler(Sampler):
    """A timing-window sampler that also records each periodic loop's real trip count."""

    def __init__(self, window: int | None):
        super().__init__(False, window=window)
        self.trips: list[int] = []

    def iterations(self, n, period):
        self.trips.append(n)
        return super().iterations(n, period)


def _l2_warm(result, gpu: GPU) -> bool:
    """The kernel's arrays fit in the L2: the recorded launches find them there (no L2 model needed)."""
    try:
        from gpusim.memory.cache import l2_capacity_bytes
    except ImportError:
        return False
    from gpusim.estimate.simulate import array_bytes
    total = sum(array_bytes(result.kernel, result.M, result.N, result.K).values())
    if not get_kernel(result.kernel).is_gemm:
        # each line of a streaming kernel's arrays is read (or written) by one CTA, so it sits in the L2
        # partition near that CTA's SM alone, and the two partitions hold different lines: more than half
        # the L2 holds its working set, as much as micro/l2_resident.json's copy keeps launch after launch.
        # An SGEMM's A and B are read by CTAs on both halves, and one SM reaches half the L2
        # (l2_capacity_bytes; micro/latency_chase_sweep.json): about half of it is distinct.
        return total <= gpu.l2_stream_resident_bytes
    return total <= l2_capacity_bytes(gpu)


_HELPER = None      # the thread the L2 model and the engine runs go to (in_background)
HELPER_ENV = "GPUSIM_HELPER_THREAD"


def helper_thread() -> bool:
    """Whether a prediction puts its L2 model and engine runs on a second thread (in_background) and splits
    the L2 model's long streams over two (cache_model._split_sets): yes unless GPUSIM_HELPER_THREAD=0.
    A sweep's local workers that leave no second CPU each (sweep._worker_env) are started with it off: each
    would otherwise keep two threads busy on one CPU's share (the 36-point ladder on two workers on two CPUs: 71.8 s with the
    helper, 66.8 s without, 128.6 -> 121.8 s of user CPU). The same results either way."""
    return os.environ.get(HELPER_ENV, "1") != "0"


def in_background(fn, *args, **kw) -> Future:
    """fn(*args, **kw) in gpusim's helper thread: the L2 model's and the engine's compiled loops release the
    GIL (nogil), so they run on a second core while this one runs the front-end for the windows; the same
    result as a call. A thread that waits for a job the helper is running first runs the jobs still
    queued itself, the latest first (_Job), so that near the end of a prediction, when it has only waiting
    left, both cores work through the queue. Without the helper (helper_thread()), the call is made here
    and now, and its Future is returned done."""
    global _HELPER
    if not helper_thread():
        done = Future()
        try:
            done.set_result(fn(*args, **kw))
        except BaseException as e:      # noqa: BLE001 - handed to the caller as Future.result does
            done.set_exception(e)
        return done
    if _HELPER is None:
        from concurrent.futures import ThreadPoolExecutor
        _HELPER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gpusim-helper")
    job = _Job(_HELPER, fn, args, kw)
    # only jobs the helper has not started can be taken back: the others leave the list (so that a
    # prediction that stopped half-way leaves no traces behind in it)
    _QUEUED[:] = [j for j in _QUEUED if not j._queued.running() and not j._queued.done()]
    _QUEUED.append(job)
    return job


_QUEUED: list = []      # the jobs submitted and not yet run here or started there (the main thread's list)


class _Job(Future):
    """A helper-thread job that the thread asking for results may take back from the queue and run
    itself (each job runs once, on one thread or the other; the jobs are pure functions of their
    arguments, so the result is the same)."""

    def __init__(self, pool, fn, args, kw):
        super().__init__()
        self._call = (fn, args, kw)
        self._queued = pool.submit(fn, *args, **kw)

    def _run_here(self) -> bool:
        """Run it on this thread if the helper has not started it; whether it did."""
        if not self._queued.cancel():
            return False
        (fn, args, kw), self._call = self._call, None     # (its trace and arrays go with the run)
        try:
            self.set_result(fn(*args, **kw))
        except BaseException as e:      # noqa: BLE001 - handed to the caller as Future.result does
            self.set_exception(e)
        return True

    def result(self, timeout=None):
        if not super().done():
            if not self._run_here():
                # the helper has it: meanwhile take the latest jobs still queued, then wait
                while not self._queued.done() and _QUEUED:
                    job = _QUEUED.pop()
                    if job is not self and not job.done():
                        job._run_here()
                try:
                    self.set_result(self._queued.result(timeout))
                except TimeoutError:
                    raise
                except BaseException as e:      # noqa: BLE001
                    self.set_exception(e)
                self._call = None
        if self in _QUEUED:
            _QUEUED.remove(self)
        return super().result()


class _Levels:
    """Where each global load of a window is served from: the cache model (gpusim.memory.cache)
    when it exists: L1 from the window's own L1 replay, and the kernel's chip-wide L2 miss
    fraction per array (hit_rates) spread over the L1 misses as DRAM rows; else None (all L2).
    The chip-wide L2 model runs in the helper thread from construction until the first window
    asks for its levels (or hit_rates / source are read)."""

    def __init__(self, result, gpu: GPU, enabled: bool = True, warm_l2: bool = True, schedule: str = "fluid",
                 slot_finish=None, l2_hits_only: bool = False, pending_ns: float = 0.0, dram_rows: str = "spread",
                 unit_ns: float | None = None):
        self.fn, self.kw, self._source, self.warm = None, {}, "all L2", False
        self._hit_rates, self._pending = None, None
        if not enabled:
            return
        try:
            from gpusim.estimate.cache_model import hit_rates
            from gpusim.memory.cache import global_levels   # the cache-model work
        except ImportError:
            return
        occ = result.occupancy
        self.kw = {"blocks_per_sm": occ.blocks_per_sm, "smem_per_block": occ.shared_bytes_per_block}
        self.fn = global_levels
        self.warm = warm_l2 and _l2_warm(result, gpu)
        if self.warm or l2_hits_only:
            # the recorded times launch the kernel again and again on the same buffers: when
            # A, B and C fit in the L2 they stay there, and no load goes to DRAM
            # (l2_hits_only: every L1 miss an L2 hit, for the short window of slot_finish)
            self.kw["l2_miss_fraction"] = 0.0
            self._source = ("cache model (L1 replay; warm L2 holds the arrays)" if self.warm else
                            "cache model (L1 replay; every L1 miss an L2 hit)")
            return
        self._source = "cache model (L1 replay, chip-wide L2)"
        self._pending = (in_background(hit_rates, result, schedule=schedule, slot_finish=slot_finish,
                                        pending_ns=pending_ns, unit_ns=unit_ns), result, gpu, dram_rows, pending_ns)

    def _settle(self):
        """Take the L2 model's result (waiting for the helper thread) into the levels' arguments."""
        if self._pending is None:
            return
        (fut, result, gpu, dram_rows, pending_ns), self._pending = self._pending, None
        try:
            hr = fut.result()
        except TypeError:
            self._source = "cache model (L1 only)"
            return
        frac = hr.get("gpusim__l2_miss_fraction_by_array")
        if frac is not None:
            stream = not get_kernel(result.kernel).is_gemm    # compulsory misses: on first touches
            self.kw.update(l2_miss_fraction=frac, bases=result.bases,
                           dram_rows="first_touch" if stream and dram_rows == "spread" else dram_rows)
            if stream:
                from gpusim.estimate.cache_model import _stream_reach
                self.kw["reach"] = _stream_reach(result, gpu)
        wb = hr.get("gpusim__dram_writeback_fraction_by_array")
        if wb:      # the working set outgrows the L2: stored lines go back to DRAM
            self.kw.update(writeback_fraction=wb, bases=result.bases)
            if pending_ns:
                self.kw["l2_pending_fraction"] = hr["gpusim__l2_pending_fraction_by_array"]
        self._hit_rates = hr

    @property
    def hit_rates(self) -> dict | None:
        """The chip-wide L2 model's figures (cache_model.hit_rates), None without it."""
        self._settle()
        return self._hit_rates

    @property
    def source(self) -> str:
        self._settle()
        return self._source

    def __call__(self, trace: Trace, gpu: GPU):
        if self.fn is None:
            return None
        self._settle()
        return np.asarray(self.fn(trace, gpu, **self.kw), np.int8)


def window_trace(result, block_idx: list, window: int | None, seed: int = 0, ahead: list | None = None):
    """(trace, trips, trips recorded) of the CTAs `block_idx` resident together, the longest loop cut to
    `window` trips. The SASS front-end records the first `window` trips and the loop's last one (it jumps
    the registers there), the Python kernels the first `window` only. ahead: a longer list that begins
    with block_idx, whose CTAs a later call will want in this window: the SASS front-end runs the missing
    ones with these (its CTAs run side by side, so a run of more costs about what one of fewer does)."""
    if getattr(result, "frontend", "python") == "sass":
        from gpusim.estimate.simulate import array_bytes, layout
        from gpusim.sass import frontend as F
        M, N, K = result.M, result.N, result.K
        spec = get_kernel(result.kernel)
        # a CTA's window trace depends on its block index, its place in the list (the CTA id the trace
        # carries) and the window only, so one prediction's rounds, chains and re-timings run each once
        memo = _window_memo(result)
        keys = [(b, i, window) for i, b in enumerate(block_idx)]
        want = keys
        if ahead is not None and len(ahead) > len(block_idx) and list(ahead[:len(block_idx)]) == list(block_idx):
            want = [(b, i, window) for i, b in enumerate(ahead)]
        missing = [k for k in want if k not in memo]
        if missing:
            prog, _ = F.program(result.kernel, tuple(sorted(result.params.items())))
            bases = layout(M, N, K, spec)
            mem = F.memory(array_bytes(spec, M, N, K), bases)
            todo = [(b, 1) for b, _, _ in missing]
            first = missing[0][1]
            if [i for _, i, _ in missing] != list(range(first, first + len(missing))):   # not one run of ids
                todo, first, missing = [(b, 1) for b, _, _ in want], 0, want
            problem = (M, N, K, *spec.launch_scalars())
            if missing == want:      # all of them: one trace made in place, each CTA's a part of it
                whole, row_end, addr_end, info = F.run_ctas_joined(
                    prog, result.grid, result.block, todo, mem, problem, bases, first, sample_loops=False,
                    window=window, args=spec.arguments)
                cost_trace(whole)
                memo[("joined", window)] = (tuple(want), whole, row_end, addr_end)
                r0, a0 = np.r_[0, row_end[:-1]], np.r_[0, addr_end[:-1]]
                for j, (k, (_notes, loops)) in enumerate(zip(missing, info)):
                    memo[k] = (_Part(whole, r0[j], row_end[j], a0[j], addr_end[j]), loops)
            else:
                ran = F.run_ctas(prog, result.grid, result.block, todo, mem, problem, bases, first,
                                 sample_loops=False, window=window, args=spec.arguments, by_warp=True)
                for k, (t, _notes, loops) in zip(missing, ran):
                    memo[k] = (cost_trace(t), loops)
        trips, rec = 0, 0
        for k in keys:
            _t, loops = memo[k]
            if loops:
                longest = max(loops, key=lambda x: x[1])
                trips, rec = max(trips, longest[1]), max(rec, longest[2])
        return _joined(memo, keys, want, window), trips, rec
    tr, trips = build_window(result, block_idx, window, seed)
    return tr, trips, trips if window is None else min(trips, window)


def _joined(memo: dict, keys: list, want: list, window) -> Trace:
    """The CTAs `keys`' window traces (memo's) as one trace. A round's CTAs begin the lists of its chains
    (_resident's SM-0 CTAs, in order), so the longest list a window was asked for (`want`, keys
    first) is joined once and kept, and a shorter one is the first rows and addresses of it, a view, not
    a copy (a round's and its chains' joins copied seven CTAs' traces for four). Traces that carry source
    sites (the Python front-end's) are joined each time (a view would keep the longer list's site names)."""
    traces = [memo[k][0] for k in keys]
    if any(t.site is not None for t in traces):
        return Trace.concat([_whole(t) for t in traces])
    n = len(keys)
    got = memo.get(("joined", window))
    if got is None or len(got[0]) < n or got[0][:n] != tuple(keys):
        longer = [_whole(memo[k][0]) for k in want]
        got = (tuple(want), Trace.concat(longer), np.cumsum([len(t.rows) for t in longer]),
               np.cumsum([t.addr.shape[0] for t in longer]))
        memo[("joined", window)] = got
    whole, row_end, addr_end = got[1], got[2][n - 1], got[3][n - 1]
    if n == len(got[0]):
        return whole
    regions: dict = {}
    for t in traces:
        regions.update(t.shared_regions)
    return Trace(whole.rows[:row_end], whole.addr[:addr_end], whole.opcodes, None, [], regions,
                 costed=all(t.costed for t in traces), prefix_of=whole)


class _Part:
    """One CTA's window trace inside the trace of the CTAs run with it (rows r0:r1, addresses a0:a1 of
    `whole`); made a trace of its own only where a list of CTAs other than theirs is joined (_whole)."""
    site = None                       # the SASS front-end's: no source lines

    def __init__(self, whole: Trace, r0: int, r1: int, a0: int, a1: int):
        self.whole, self.r0, self.r1, self.a0, self.a1 = whole, int(r0), int(r1), int(a0), int(a1)

    @property
    def shared_regions(self) -> dict:
        return self.whole.shared_regions

    @property
    def costed(self) -> bool:
        return self.whole.costed

    def trace(self) -> Trace:
        rows = self.whole.rows[self.r0:self.r1].copy()
        mem = rows["mem"]
        mem[mem >= 0] -= self.a0
        return Trace(rows, self.whole.addr[self.a0:self.a1], list(self.whole.opcodes), costed=self.whole.costed)


def _whole(t) -> Trace:
    """A memo's window trace of one CTA as a trace of its own."""
    return t.trace() if isinstance(t, _Part) else t


_MEMOS: dict = {}      # id(result) -> (weak reference to it, {(block, CTA id, window): (trace, loops),
                       # ("joined", window): (CTA keys, their joined trace, its row and address ends by CTA)})


def _window_memo(result) -> dict:
    """The window traces already run for this result (dropped with it)."""
    for key in [k for k, (ref, _) in _MEMOS.items() if ref() is None]:
        del _MEMOS[key]
    got = _MEMOS.get(id(result))
    if got is None or got[0]() is not result:
        got = (weakref.ref(result), {})
        _MEMOS[id(result)] = got
    return got[1]


def release_lowering(result) -> None:
    """Drop the lowering's per-row work kept for this result's joined window traces (lower's share):
    a prediction calls it when its rounds are timed."""
    from gpusim.timing.lower import release_shared
    got = _MEMOS.get(id(result))
    if got is None or got[0]() is not result:
        return
    for key, val in list(got[1].items()):
        if key[0] == "joined":
            release_shared(val[1])


def build_window(result, block_idx: list, window: int | None, seed: int = 0):
    """Trace of the CTAs `block_idx` resident together, periodic loops cut to `window` trips."""
    if getattr(result, "frontend", "python") == "sass":
        tr, trips, _ = window_trace(result, block_idx, window, seed)
        return tr, trips
    spec = get_kernel(result.kernel)
    gpu = getattr(result, "gpu", None) or get_arch(result.arch)
    M, N, K = result.M, result.N, result.K
    arrays, bases = allocate(M, N, K, seed, spec)
    sampler = _TripSampler(window)
    traces = [run_cta(spec, result.params, gpu, result.grid, result.block, b, 1, sampler, arrays, bases,
                      (M, N, K, *spec.launch_scalars()), i)[0] for i, b in enumerate(block_idx)]
    trips = max(sampler.trips) if sampler.trips else 0
    return Trace.concat(traces), trips


def _groups(result, gpu: GPU) -> bool:
    """Whether the engine keeps queue waiters in groups for this kernel: by its warps per SMSP at full
    occupancy, the same for all its windows. A window's own count would differ for a last round of fewer
    CTAs (coalesced at 4096: 16 warps per SMSP, its tail 8), and the two variants of the loop, compiled on
    a machine's first run (~20 s each), would both be needed; their results are the same."""
    warps = -(-int(np.prod(result.block)) // 32)
    return result.occupancy.blocks_per_sm * warps / gpu.smsp_per_sm >= GROUPS_FROM_WARPS_PER_SMSP


def _resident(result, gpu: GPU, r: int) -> list:
    gx, gy, gz = result.grid
    G = gx * gy * gz
    ids = [min(j * gpu.sm_count, G - 1) for j in range(r)]     # what SM 0 receives: 0, S, 2S, ...
    return [(i % gx, (i // gx) % gy, i // (gx * gy)) for i in ids]


def ptxas_facts(result, scoreboards: str = "all", read_barriers: bool = True, register_banks: bool = True):
    """(stall counts, dependency barriers, read barriers, FP32 register reads) of the kernel's recorded
    SASS, as the engine takes them (see predict for the switches); None when the kernel has no SASS
    record."""
    table = stall_table(result.kernel, result.params, result.M, result.N, result.K)
    if table is None:
        return None
    boards = {"all": scoreboard_table, "global": global_scoreboards, "none": lambda k, p: None}[scoreboards]
    reads = read_barrier_table(result.kernel, result.params) if read_barriers else None
    banks = bank_profile(result.kernel, result.params) if register_banks else None
    return table[0], boards(result.kernel, result.params), reads, banks
