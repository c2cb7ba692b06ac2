"""L1 and L2 sector caches: where each global load's data comes from, and the kernel's hit rates.

Model (sources in shared/HARDWARE.md and traces/hw/h200/micro/):

* **L1** (one per SM): 128-B lines of four 32-B sectors, sector-granular fills, LRU over lines,
  hashed sets of `L1_WAYS` ways (associativity not measured: stated as an assumption). Global
  loads allocate (plain LDG.E caches in L1 on sm_90: the records' 95-99 % L1 hit rates for naive
  and coalesced show it); stores write through without allocating and are not modelled in L1.
  Capacity = the unified 256 KB less the shared-memory carveout. The carveout is the smallest
  size the hardware supports (0, 8, 16, 32, 64, 100, 132, 164, 196, 228 KB [CC]) that holds the
  resident CTAs' shared memory (blocks_per_sm x (static + 1 KB reserved)). This is a lower bound:
  ncu's launch__shared_mem_config_size matches it for naive, coalesced, tiled32 and smemtile and is
  one size larger for regtile1d, regtile2d, regblock and vectorized (the driver's rule is not
  documented); for these kernels the L1 working set is far below either capacity.
  The CTAs resident on one SM share its L1; for whole-kernel rates each CTA class of a sampled
  trace is run alone in 1/blocks_per_sm of the capacity (co-resident CTAs of the ladder kernels
  are 132 launches apart and share few lines).
* **L2** (chip-wide): 60 MB in two partitions; a single SM reaches about 30 MB of it at L2
  latency (micro/latency_chase_sweep.json: 283 cycles at 24 MB, 430 at 32 MB, 685 = DRAM at
  64 MB). The L2 is modelled as one 30 MB (`L2_EFFECTIVE_FRACTION` x l2_bytes) sector cache, LRU,
  hashed sets of 16 ways, fed by the L1 misses of every CTA of the launch: each partition ends up
  holding the lines its own SMs read, and the ladder kernels' CTAs on both halves read the same
  A and B, so the chip holds about 30 MB of distinct data. DRAM read bytes = L2 sector misses x 32
  (caches start empty: ncu flushes them before the profiled pass).
* **The chip-wide stream** is built from the kernel's tiles, not from every instruction: for an
  SGEMM, CTA (bx, by) reads, per 32-wide K chunk c, its A rows' line c, its B tile's column lines
  in the chunk's 32 K rows, and its C lines once at the end. The rows/lines of CTA (0, 0) and their
  steps in bx and by come from the trace itself (affine kernels). CTAs run for the same time T
  and progress uniformly through K; launch order is the grid's linear order and
  `schedule="fluid"` starts CTA i at i*T/S (S = 132 x blocks_per_sm resident slots: the steady
  state where slots free up at a constant rate, after per-SM timing differences spread the first
  wave's phases), `schedule="waves"` at floor(i/S)*T, `schedule="phased"` by list scheduling from
  the first wave's finish fractions (phased_schedule: the block scheduler gives the next CTA to the
  slot that frees first; equal fractions are waves), `schedule="measured"` at the start the H200
  recorded for it (traces/hw/h200/ctasched/: a replay for diagnosis, not a prediction). Accesses
  are interleaved chunk by chunk in time order. Set sampling (every `sample`-th set of the hashed L2, capacity scaled alike)
  keeps 4096^3 launches to ~1e7 simulated accesses; against sample=1 it changes the DRAM bytes
  by < 0.1 % (regtile2d 2048, coalesced 4096) but by +2 % (sample 4) and +6.5 % (sample 16) for
  naive 2048, whose reuse distance sits at the capacity (tests/memory/test_cache.py).
* **The schedule** decides the larger launches' DRAM traffic (docs/notes/2026-11-29-l2-schedule.md):
  the prediction uses "phased" with the engine's first-round finish fractions
  (gpusim.estimate.kernel_time); pending hits are timed as LEVEL_L2_PENDING (global_levels).
"""
from __future__ import annotations


import numpy as np
from numba import njit

from gpusim.arch import GPU, get_arch
from gpusim.errors import GpusimError
from gpusim.kernel.opcodes import TABLE, SPACE_GLOBAL
from gpusim.jit import guard_cache
from gpusim.memory import rows as _rows
from gpusim.memory.rows import distinct, first_active

LEVEL_L1, LEVEL_L2, LEVEL_DRAM, LEVEL_L2_PENDING = 0, 1, 2, 3     # as gpusim.timing.lower
CARVEOUTS_KB = {90: (0, 8, 16, 32, 64, 100, 132, 164, 196, 228)}   # [CC] sm_90 shared carveouts
L1_WAYS = 64                 # (unverified) associativity; hashed set index
L2_WAYS = 16                 # (unverified)
L2_EFFECTIVE_FRACTION = 0.5  # [M] latency_chase_sweep.json: ~30 of 60 MB reachable from one SM
SECTOR, LINE = 32, 128

METRICS = ("l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct", "lts__t_sector_op_read_hit_rate.pct",
           "lts__t_sectors_srcunit_tex_op_read.sum", "l1tex__m_xbar2l1tex_read_bytes.sum",
           "dram__bytes_read.sum")


# ---------------------------------------------------------------------------------------------
# capacities

def shared_carveout_bytes(arch: GPU, blocks_per_sm: int, smem_per_block: int) -> int:
    """Smallest supported carveout holding the resident CTAs' shared memory (see module doc)."""
    need = blocks_per_sm * (smem_per_block + arch.shared_reserved_per_block_bytes) if blocks_per_sm else 0
    for kb in CARVEOUTS_KB.get(arch.sm_version, ()):
        if kb * 1024 >= need:
            return kb * 1024
    return max(need, arch.shared_per_sm_bytes) if need > arch.shared_per_sm_bytes else arch.shared_per_sm_bytes


def l1_capacity_bytes(arch: GPU, blocks_per_sm: int, smem_per_block: int) -> int:
    return arch.l1_shared_total_bytes - shared_carveout_bytes(arch, blocks_per_sm, smem_per_block)


def l2_capacity_bytes(arch: GPU) -> int:
    return int(arch.l2_bytes * L2_EFFECTIVE_FRACTION)


# ---------------------------------------------------------------------------------------------
# the cache core: hashed set-associative LRU over 128-B lines with 4 sector-valid bits

@njit(cache=True, inline="always")
def _hash(line):
    h = (line ^ (line >> 11) ^ (line >> 23)) * 2654435761
    return (h ^ (h >> 29)) & 0x7FFFFFFF


@njit(cache=True, inline="always")
def _access(line, mask, tags, valid, stamp, set_index, ways, clock, mru):
    """The sectors of `mask` (bits 0-3) of one line, accessed one after another ending at `clock`: how many
    hit; the line is allocated on a miss (its sectors filled). mru: per set, the way it touched last, looked
    at first (a line's sectors and the warps of one load instruction come one after another); the set's
    other ways are scanned for the line only then, and for the LRU victim only on a miss (the first way of
    the oldest stamp: an empty way, -1, before any filled one). A line's sectors taken together are the
    same as one by one: the first finds the line or allocates it, the others find it, and the stamp ends
    at the last one's clock."""
    base = set_index * ways
    j = mru[set_index]
    if tags[j] != line:
        j = -1
        for w in range(ways):
            if tags[base + w] == line:
                j = base + w
                break
    if j >= 0:
        stamp[j] = clock
        mru[set_index] = j
        h = valid[j] & mask
        valid[j] |= mask
        return (h & 1) + ((h >> 1) & 1) + ((h >> 2) & 1) + ((h >> 3) & 1)
    victim = base
    oldest = stamp[base]
    for w in range(1, ways):
        if stamp[base + w] < oldest:
            oldest = stamp[base + w]
            victim = base + w
    tags[victim] = line
    valid[victim] = mask
    stamp[victim] = clock
    mru[set_index] = victim
    return 0


def _new_cache(capacity_bytes: int, ways: int):
    lines = max(ways, capacity_bytes // LINE)
    nsets = max(1, lines // ways)
    return (np.full(nsets * ways, -1, np.int64), np.zeros(nsets * ways, np.int8),
            np.full(nsets * ways, -1, np.int64), nsets, ways)


@njit(cache=True, nogil=True)     # nogil: the L2 model runs in a helper thread (round_inputs)
def _l1_run(addr, at, nbytes, tags, valid, stamp, nsets, ways, out_sect, out_hit):
    """Rows in order: row r's 32 byte addresses are addr[at[r]] (-1 inactive; read in place, not gathered:
    a window's rows of addresses are 256 B each), nbytes per lane per row. Fills the distinct sectors and
    the hit sectors of each row."""
    buf = np.empty(64, np.int64)
    mru = np.arange(nsets) * ways
    clock = 0
    for r in range(at.shape[0]):
        n = 0
        up = True
        nb = nbytes[r]
        ar = at[r]
        for l in range(32):
            a = addr[ar, l]
            if a < 0:
                continue
            # the lane's first and last byte's sectors, each kept once in first-touch order: a repeat of
            # the sector before is dropped as it comes; where the rest came in ascending order (lanes in
            # address order) they are distinct, else the list is cut to its distinct values after the loop
            s0 = a // 32
            s1 = (a + nb - 1) // 32
            for e in range(2 if s1 != s0 else 1):
                s = s0 if e == 0 else s1
                if n > 0 and buf[n - 1] == s:
                    continue
                if n > 0 and s < buf[n - 1]:
                    up = False
                buf[n] = s
                n += 1
        if not up:
            n = distinct(buf, n)
        # a run of sectors of one line (lanes in address order give each line's together) goes to the cache
        # as one access: 1.6x faster than sector by sector on naive's and regtile2d's 4096 windows
        hits = 0
        q = 0
        while q < n:
            line = buf[q] >> 2
            mask = np.int8(0)
            while q < n and buf[q] >> 2 == line:
                mask |= np.int8(1 << (buf[q] & 3))
                q += 1
                clock += 1
            hits += _access(line, mask, tags, valid, stamp, _hash(line) % nsets, ways, clock, mru)
        out_sect[r] = n
        out_hit[r] = hits


def l1_simulate(addr: np.ndarray, nbytes: np.ndarray, capacity_bytes: int, ways: int = L1_WAYS,
                rows: np.ndarray | None = None):
    """Run global-load rows (in the given order) through one L1; returns (sectors, hit sectors) per row.
    rows: the rows of addr to run, in order (default all of them)."""
    tags, valid, stamp, nsets, ways = _new_cache(capacity_bytes, ways)
    at = np.arange(addr.shape[0], dtype=np.int64) if rows is None else np.ascontiguousarray(rows, np.int64)
    n = at.shape[0]
    sect, hit = np.zeros(n, np.int64), np.zeros(n, np.int64)
    if n:
        _l1_run(np.ascontiguousarray(addr, np.int64), at, np.ascontiguousarray(nbytes, np.int64),
                tags, valid, stamp, nsets, ways, sect, hit)
    return sect, hit


# ---------------------------------------------------------------------------------------------
# trace helpers

def _global_load_rows(trace):
    space, is_store, nbytes, _, _ = TABLE.arrays()
    op = trace.rows["op"].astype(np.int64)
    sel = (space[op] == SPACE_GLOBAL) & ~is_store[op].astype(bool) & (trace.rows["mask"] != 0) \
        & (trace.rows["mem"] >= 0)
    return np.flatnonzero(sel), nbytes[op].astype(np.int64)


def _array_of(first_addr: np.ndarray, bases: dict, sizes: dict) -> np.ndarray:
    """The index of each row's array in `bases`' order (A/B/C: 0/1/2; -1 unknown) from its first active
    byte address."""
    out = np.full(first_addr.shape, -1, np.int8)
    for i, (nm, b) in enumerate(bases.items()):
        out[(first_addr >= b) & (first_addr < b + sizes[nm])] = i
    return out


# ---------------------------------------------------------------------------------------------
# chip-wide L2 over the tile stream

@njit(cache=True, inline="always")
def _sampled_set(line, n_all, inv, shift, parts, part):
    """The line's set among the sampled sets (every 2**shift-th of the n_all hashed ones) when it falls on
    one of this part's (set % parts == part, parts a power of two), else -1. The hash's remainder by
    n_all comes from the reciprocal inv = 1 / n_all, corrected by one: exact for hashes below 2**31, and
    a fifth of a division's time, which most of a sampled stream's lines pay for nothing else."""
    x = _hash(line)
    h = x - np.int64(x * inv) * n_all
    if h < 0:
        h += n_all
    elif h >= n_all:
        h -= n_all
    if h & ((np.int64(1) << shift) - 1):
        return -1
    st = h >> shift
    if st & (parts - 1) != part:
        return -1
    return st


@njit(cache=True, nogil=True)
def _sampled_bitmap(lo, n, n_all, shift, parts, part):
    """One bit per line lo .. lo + n - 1: whether _sampled_set takes it (this part's sampled sets). Built
    once where a stream passes each line many times: most lines of a sampled stream are not simulated, and
    a bit costs a fifth of the hash that tells so."""
    inv = 1.0 / n_all
    bits = np.zeros((n + 7) >> 3, np.uint8)
    for k in range(n):
        if _sampled_set(lo + k, n_all, inv, shift, parts, part) >= 0:
            bits[k >> 3] |= np.uint8(1 << (k & 7))
    return bits


@njit(cache=True, inline="always")
def _not_sampled(line, bits, lo):
    """Whether _sampled_bitmap's bits (of lines lo .. lo + 8 * bits.size - 1) rule the line out; False
    for a line outside them (then _sampled_set decides)."""
    k = line - lo
    return k >= 0 and k < bits.shape[0] * 8 and (bits[k >> 3] & (1 << (k & 7))) == 0


@njit(cache=True, nogil=True)
def _sampled_lists(base, c_step, pat, pat_k, nchunks, K, n_all, shift, parts, part, bits, bits_lo):
    """The sampled lines (and their sets) of every (key u, chunk c) of a tile stream whose chunk c of key u
    reads the lines base[u] + c * c_step + pat[m], in the order of m, those whose K row 32 * c + pat_k[m]
    is below K: (ptr, lines, sets), key u's chunk c at ptr[u * nchunks + c] .. ptr[u * nchunks + c + 1].
    Built once where many CTAs share a key (an SGEMM's A rows are read by every CTA of a grid row), so
    that the stream's events run over their sampled lines alone instead of testing each of their lines."""
    inv = 1.0 / n_all
    ptr = np.zeros(base.shape[0] * nchunks + 1, np.int64)
    lines = np.empty(0, np.int64)
    sets = np.empty(0, np.int64)
    for sweep in range(2):      # count, then fill
        n = 0
        for u in range(base.shape[0]):
            for c in range(nchunks):
                for m in range(pat.shape[0]):
                    if 32 * c + pat_k[m] >= K:
                        continue
                    line = base[u] + c * c_step + pat[m]
                    if _not_sampled(line, bits, bits_lo):
                        continue
                    st = _sampled_set(line, n_all, inv, shift, parts, part)
                    if st < 0:
                        continue
                    if sweep == 1:
                        lines[n] = line
                        sets[n] = st
                    n += 1
                ptr[u * nchunks + c + 1] = n
        if sweep == 0:
            lines = np.empty(n, np.int64)
            sets = np.empty(n, np.int64)
    return ptr, lines, sets


@njit(cache=True, inline="always")
def _l2_line(line, st, tags, stamp, clock, te, W, fill_t):
    """One whole-line access at schedule time te to the set-sampled L2 (LRU: the least recent stamp goes, the
    first such way, an empty one's -1, when several), its set st among the sampled ones (_sampled_set). With
    W > 0, a hit on a line whose fill began less than W before (another CTA's miss, its data still on the
    way) is pending: it gets its data with that fill, at the miss's latency. Every tag an access wrote holds
    all four sectors, so a found line is a hit. Returns 0 for a hit, 1 for a miss, 2 for a pending hit; the
    caller counts them in locals. The set's L2_WAYS ways are scanned whole, without an early exit or a branch
    per way, a compile-time width that LLVM turns into vector compares. One half of regtile2d's 4096 stream
    (8.5 M sampled accesses): 0.51-0.56 s with the scan that stopped at the match and kept the victim as it
    went (its branches mispredict) and the counts incremented in arrays here, 0.40 s with the whole scan,
    0.26 s with the counts in the caller's locals (array stores that LLVM cannot tell from the set's)."""
    base = st * L2_WAYS
    found = -1
    for w in range(L2_WAYS):
        found = w if tags[base + w] == line else found
    if found >= 0:
        j = base + found
        stamp[j] = clock
        return 2 if W > 0 and te - fill_t[j] < W else 0
    oldest = stamp[base]
    for w in range(1, L2_WAYS):
        oldest = min(oldest, stamp[base + w])
    victim = 0
    for w in range(L2_WAYS - 1, -1, -1):
        victim = w if stamp[base + w] == oldest else victim
    j = base + victim
    tags[j] = line
    stamp[j] = clock
    if W > 0:
        fill_t[j] = te
    return 1


@njit(cache=True, inline="always")
def _l2_count(out_acc, out_miss, out_pend, q, n, m, p):
    """Add one array's accesses, misses and pending hits of an event to its counts (q: A, B, C = 0, 1, 2)."""
    out_acc[q] += n
    out_miss[q] += m
    out_pend[q] += p


@njit(cache=True, nogil=True)
def _l2_tiles(ev_cta, ev_chunk, ev_t, ev_mode, ev_blk, W, nchunks, gx, a_rows, a_line0, a_row_lines, a_dx, a_dy,
              b_cls, b_line0, b_row_lines, b_dx, b_dy, K,
              c_rows, c_cls, c_line0, c_row_lines, c_rdx, c_rdy, c_cdx, c_cdy,
              tags, stamp, fill_t, nsets, sample, blk_acc, blk_miss, blk_pend, part, parts, bits, bits_lo,
              l_key, l_base, l_ptr, l_lines, l_sets):
    """ev_mode per event: 0 skipped, 1 simulated to warm the cache (not counted), 2 simulated and
    counted in its block's row of blk_* (l2_simulate's time windows). sample: a power of two. part, parts
    (a power of two): only the sampled sets s with s % parts == part (a set's LRU depends on its own
    accesses alone, so the parts can run on threads of their own, each with its own cache arrays and
    counts, and add up to the whole). bits: _sampled_bitmap(bits_lo, ...) of this part, or empty (every
    line hashed). tags, stamp: _new_cache's of nsets sets of L2_WAYS ways. l_*: A's and B's chunks from
    _sampled_lists, one after the other (l_key[t, CTA]: its key in array t's lists, A's t = 0 and B's 1;
    l_base[t]: where array t's entries start in l_ptr), or l_ptr empty: the lines of each event tested one
    by one. Either way the same accesses in the same order."""
    clock = 0
    n_all = nsets * sample
    inv = 1.0 / n_all
    shift = 0
    while (np.int64(1) << shift) < sample:
        shift += 1
    warm_acc = np.zeros(3, np.int64)
    warm_miss = np.zeros(3, np.int64)
    warm_pend = np.zeros(3, np.int64)
    for e in range(ev_cta.shape[0]):
        if ev_mode[e] == 0:
            continue
        if ev_mode[e] == 2:
            out_acc, out_miss, out_pend = blk_acc[ev_blk[e]], blk_miss[ev_blk[e]], blk_pend[ev_blk[e]]
        else:
            out_acc, out_miss, out_pend = warm_acc, warm_miss, warm_pend
        i = ev_cta[e]
        c = ev_chunk[e]
        te = ev_t[e]
        bx = i % gx
        by = i // gx
        n = m = p = 0       # accesses, misses, pending hits of A, then B, then C
        if c < nchunks and l_ptr.shape[0]:
            for t in range(2):      # A's chunk, then B's, from their lists
                at = l_base[t] + l_key[t, i] * nchunks + c
                for x in range(l_ptr[at], l_ptr[at + 1]):
                    clock += 1
                    r = _l2_line(l_lines[x], l_sets[x], tags, stamp, clock, te, W, fill_t)
                    n += 1
                    m += r & 1
                    p += r >> 1
                _l2_count(out_acc, out_miss, out_pend, t, n, m, p)
                n = m = p = 0
        elif c < nchunks:
            for q in range(a_rows.shape[0]):
                row = a_rows[q] + bx * a_dx + by * a_dy
                line = a_line0 + row * a_row_lines + c
                if _not_sampled(line, bits, bits_lo):
                    continue
                st = _sampled_set(line, n_all, inv, shift, parts, part)
                if st < 0:
                    continue
                clock += 1
                r = _l2_line(line, st, tags, stamp, clock, te, W, fill_t)
                n += 1
                m += r & 1
                p += r >> 1
            _l2_count(out_acc, out_miss, out_pend, 0, n, m, p)
            n = m = p = 0
            for j in range(32):
                k = 32 * c + j
                if k >= K:
                    break
                for q in range(b_cls.shape[0]):
                    line = b_line0 + k * b_row_lines + b_cls[q] + bx * b_dx + by * b_dy
                    if _not_sampled(line, bits, bits_lo):
                        continue
                    st = _sampled_set(line, n_all, inv, shift, parts, part)
                    if st < 0:
                        continue
                    clock += 1
                    r = _l2_line(line, st, tags, stamp, clock, te, W, fill_t)
                    n += 1
                    m += r & 1
                    p += r >> 1
            _l2_count(out_acc, out_miss, out_pend, 1, n, m, p)
        else:
            for q in range(c_rows.shape[0]):
                row = c_rows[q] + bx * c_rdx + by * c_rdy
                line = c_line0 + row * c_row_lines + c_cls[q] + bx * c_cdx + by * c_cdy
                if _not_sampled(line, bits, bits_lo):
                    continue
                st = _sampled_set(line, n_all, inv, shift, parts, part)
                if st < 0:
                    continue
                clock += 1
                r = _l2_line(line, st, tags, stamp, clock, te, W, fill_t)
                n += 1
                m += r & 1
                p += r >> 1
            _l2_count(out_acc, out_miss, out_pend, 2, n, m, p)


def phased_schedule(n_ctas: int, sm_count: int, slot_finish) -> tuple[np.ndarray, np.ndarray]:
    """(start, duration) of each CTA in units of one round, when the r CTAs that start together on an SM
    finish at slot_finish[j] of the round (j = 0 the oldest, dispatched first; the engine's first
    round gives these), and every later CTA takes one round: the block scheduler hands the next CTA
    to the slot that frees first. Equal fractions give lockstep waves; an older CTA that finishes at
    half the round (naive: the H200's first wave finishes at 0.51 and 1.0, traces/hw/h200/ctasched/)
    leaves the SM's two slots half a round apart for the rest of the launch."""
    import heapq
    f = [float(x) for x in slot_finish]
    S = sm_count * len(f)
    start, dur = np.zeros(n_ctas), np.ones(n_ctas)
    heap = []
    for i in range(min(n_ctas, S)):
        dur[i] = f[i // sm_count]
        heapq.heappush(heap, (dur[i], i % S))
    for i in range(S, n_ctas):
        t, q = heapq.heappop(heap)
        start[i] = t
        heapq.heappush(heap, (t + 1.0, q))
    return start, dur


# The chip-wide stream grows with M*N*K; past WINDOW_LINES line accesses it is simulated in time
# windows, so that its cost stays flat in the problem size: the schedule's span is cut into blocks of
# equal time, each about WINDOW_BUDGET / COUNTED_WINDOWS lines; the first and last blocks (the cold
# start and the tail) and evenly spaced middle ones, COUNTED_WINDOWS in all, are counted, each after a
# warm-up long enough for WARM_CAPACITIES times the L2's lines to pass, simulated uncounted; a middle
# block stands for the middle blocks around it. Only the windows' events are made. Every stream of
# the ladder up to 4096 is under WINDOW_LINES (whole); tests/memory/test_cache.py holds windowed
# runs to whole ones at 8192.
WINDOW_LINES = 3e8
WINDOW_BUDGET = 6e7
COUNTED_WINDOWS = 16
WARM_CAPACITIES = 4


def time_windows(t0: float, t1: float, total_lines: float, cap_lines: int, windows: bool | None = None):
    """([(warm from, count from, count to, block)], weight per block) over the schedule's span [t0, t1]
    with total_lines line accesses. windows=None: windows only past WINDOW_LINES; False: never (one span,
    everything counted); True: always (tests)."""
    if windows is False or (windows is None and total_lines <= WINDOW_LINES):
        return [(t0, t0, np.inf, 0)], np.ones(1)
    warm_lines = WARM_CAPACITIES * cap_lines
    per_window = max(cap_lines, WINDOW_BUDGET / COUNTED_WINDOWS - warm_lines)
    nb = int(max(COUNTED_WINDOWS, total_lines // per_window))
    edges = np.linspace(t0, t1, nb + 1)
    warm_t = warm_lines / (total_lines / (t1 - t0))          # time for that many lines to pass
    middle = np.unique(np.linspace(1, nb - 2, COUNTED_WINDOWS - 2).round().astype(np.int64))
    weight = np.zeros(nb)
    weight[0] = weight[-1] = 1.0
    weight[middle] = (nb - 2) / len(middle)
    spans = [(edges[b] - (warm_t if b else 0.0), edges[b], edges[b + 1] if b < nb - 1 else np.inf, int(b))
             for b in np.concatenate([[0], middle, [nb - 1]])]
    return spans, weight


def _window_events(start, dur, nchunks: int, spans):
    """(CTA, chunk, time, mode, block) of every event inside a span's [warm from, count to): mode 2 where
    it is at or after the span's count from, else 1 (warm-up). An event inside several spans' warm-ups
    or windows is made once, counted if any span counts it."""
    c_all = np.arange(nchunks + 1)
    frac = np.minimum(c_all + 0.5, nchunks) / nchunks
    out_i, out_c, out_m, out_b = [], [], [], []
    for lo, cnt, hi, b in spans:
        # the CTAs with an event in [lo, hi): their first and last chunk there
        live = np.flatnonzero((start + dur * frac[-1] >= lo) & (start + dur * frac[0] < hi))
        if live.size == 0:
            continue
        t = start[live, None] + dur[live, None] * frac[None, :]           # (ctas, nchunks + 1)
        inside = (t >= lo) & (t < hi)
        ii, cc = np.nonzero(inside)
        ii = live[ii]
        m = np.where(t[inside] >= cnt, 2, 1).astype(np.int8)
        out_i.append(ii), out_c.append(cc), out_m.append(m), out_b.append(np.full(ii.size, b))
    if not out_i:
        z = np.zeros(0, np.int64)
        return z, z, np.zeros(0), np.zeros(0, np.int8), z
    i, c, m, blk = (np.concatenate(x) for x in (out_i, out_c, out_m, out_b))
    # one event per (CTA, chunk): the counted copy where there is one
    key = i * (nchunks + 1) + c
    order = np.lexsort((-m, key))
    keep = order[np.r_[True, key[order][1:] != key[order][:-1]]]
    i, c, m, blk = i[keep], c[keep], m[keep], blk[keep]
    t = start[i] + dur[i] * frac[c]
    return i.astype(np.int64), c.astype(np.int64), t.astype(np.float64), m, blk.astype(np.int64)


def _sizes_from_bases(bases: dict) -> dict:
    """Each array's extent when only the bases are known: up to the next array's base."""
    nb_ = sorted(bases.items(), key=lambda kv: kv[1])
    return {nm: (nb_[j + 1][1] - b if j + 1 < len(nb_) else 1 << 40) for j, (nm, b) in enumerate(nb_)}


def _mark_writebacks(trace, level, fraction: dict, bases: dict | None, sizes: dict | None):
    """Set LEVEL_DRAM on the share `fraction[array]` of each array's global store rows (error diffusion
    in program order)."""
    from gpusim.memory.stream import _store_rows
    if bases is None:
        raise GpusimError("writeback_fraction needs the arrays' bases")
    sizes = sizes if sizes is not None else _sizes_from_bases(bases)
    sidx = _store_rows(trace)
    if sidx.size == 0:
        return
    sidx = sidx[np.lexsort((trace.rows["warp"][sidx], trace.rows["cta"][sidx], trace.rows["seq"][sidx]))]
    key = _array_of(first_active(trace.addr, trace.rows["mem"][sidx]), bases, sizes)
    names = list(bases)
    acc = np.zeros(len(names) + 1)
    for j, k in zip(sidx, key):
        f = fraction.get(names[k], 0.0) if k >= 0 else 0.0
        acc[k] += f
        if acc[k] >= 1.0 - 1e-12:
            acc[k] -= 1.0
            level[j] = LEVEL_DRAM


@njit(cache=True, nogil=True)
def _diffuse(key, frac, pend, n_keys):
    """Error diffusion per array over the missed units in order (global_levels): 1 where a unit goes to DRAM
    (its array's DRAM fractions summed reach one), else 2 where its pending fractions do, else 0."""
    accs = np.zeros(n_keys)
    accp = np.zeros(n_keys)
    to = np.zeros(key.shape[0], np.int8)
    for u in range(key.shape[0]):
        k = key[u]
        accs[k] += frac[u]
        if accs[k] >= 1.0 - 1e-12:
            accs[k] -= 1.0
            to[u] = 1
            continue
        accp[k] += pend[u]
        if accp[k] >= 1.0 - 1e-12:
            accp[k] -= 1.0
            to[u] = 2
    return to


def global_levels(trace, arch: GPU | str = "h200", *, blocks_per_sm: int | None = None,
                  smem_per_block: int = 0, l2_miss_fraction=0.0, bases: dict | None = None,
                  sizes: dict | None = None, dram_rows: str = "spread", l2_pending_fraction=0.0,
                  writeback_fraction=None, reach: float = np.inf) -> np.ndarray:
    """Where each trace row's global load is served from (LEVEL_L1 / LEVEL_L2 / LEVEL_DRAM /
    LEVEL_L2_PENDING).

    The trace holds the CTAs resident on one SM (a timing window): they share one L1 of
    l1_capacity_bytes, and their rows go through it interleaved in program order (sequence
    number, then CTA, then warp). A row whose sectors all hit is LEVEL_L1; a row with a miss goes
    to L2, and to DRAM for a fraction `l2_miss_fraction` of such rows (a float, or a dict by array
    name 'A'/'B'/'C' using `bases` and `sizes` to tell the arrays apart: e.g. hit_rates(...)
    ["gpusim__l2_miss_fraction_by_array"]), spread evenly over the rows in order. Rows that are
    not global loads get LEVEL_L1 (the engine does not read them).
    l2_pending_fraction (the same forms): of the L1-missed rows, the share whose L2 hit is pending
    (l2_simulate: its line's fill by another CTA's miss still on its way), spread like the DRAM rows
    over the rows that do not go to DRAM: LEVEL_L2_PENDING.
    writeback_fraction ({array: share}, needs `bases`): the share of each array's global stores the L2
    writes back to DRAM, marked LEVEL_DRAM row by row, evenly spread (the engine charges their bytes to
    the DRAM bandwidth; gpusim.memory.stream.writeback_fractions).
    dram_rows="grouped" (a diagnosis): the DRAM share is spread over groups instead of rows, a group
    being one load instruction of one CTA (its rows in every warp, per array), so the warps of a CTA
    load a tile chunk from one level together (the lines of a chunk are fetched together in the
    chip-wide stream); "spread" (default) spreads it row by row, so warps of one CTA differ;
    "first_touch" (the second ladder's compulsory-miss model, gpusim.memory.stream) puts it on the rows
    that touch their sectors first in their CTA.
    """
    if dram_rows not in ("spread", "grouped", "first_touch"):
        raise GpusimError(f"dram_rows must be 'spread', 'grouped' or 'first_touch', got {dram_rows!r}")
    arch = get_arch(arch)
    rows = trace.rows
    n_ctas = len(np.unique(rows["cta"])) if len(rows) else 0
    bps = blocks_per_sm or max(1, n_ctas)
    cap = l1_capacity_bytes(arch, bps, smem_per_block)
    level = np.full(len(rows), LEVEL_L1, np.int8)
    if writeback_fraction:
        _mark_writebacks(trace, level, writeback_fraction, bases, sizes)
    gidx, nb = _global_load_rows(trace)
    if gidx.size == 0:
        return level
    order = np.lexsort((rows["warp"][gidx], rows["cta"][gidx], rows["seq"][gidx]))
    g = gidx[order]
    sect, hit = l1_simulate(trace.addr, nb[g], cap, rows=rows["mem"][g])
    missed = sect > hit
    level[g[missed]] = LEVEL_L2
    if isinstance(l2_miss_fraction, dict) or isinstance(l2_pending_fraction, dict):
        if bases is None:
            raise GpusimError("a per-array l2_miss_fraction or l2_pending_fraction needs the arrays' bases")
        sizes = sizes if sizes is not None else _sizes_from_bases(bases)
        arr_key = _array_of(first_active(trace.addr, rows["mem"][g]), bases, sizes)
    else:
        arr_key = np.zeros(len(g), np.int8)

    def per_row(f):
        if isinstance(f, dict):
            return np.array([f.get(nm, 0.0) for nm in bases] + [0.0])[arr_key]
        return np.full(len(g), float(f))
    frac = per_row(l2_miss_fraction)
    if dram_rows == "first_touch":
        # compulsory misses fall on the rows that touch their sectors first (a softmax's first pass over
        # its row, not its second): the array's DRAM share is put on its first-touch rows alone
        from gpusim.memory.stream import first_touch_sectors
        ft = first_touch_sectors(trace, g, np.ones(len(g)), reach) > 0
        for k in np.unique(arr_key[missed]):
            on = missed & (arr_key == k)
            n_ft = int((on & ft).sum())
            frac[on] = np.where(ft[on], min(1.0, frac[on][0] * on.sum() / n_ft), 0.0) if n_ft else 0.0
    # pending among the rows that do not go to DRAM, so that the array's share of all misses is p
    pend = np.minimum(1.0, per_row(l2_pending_fraction) / np.maximum(1.0 - frac, 1e-12))
    jm = np.flatnonzero(missed)
    if dram_rows == "grouped":       # one unit = the missed rows of one (sequence number, CTA, array)
        key = (rows["seq"][g[jm]].astype(np.int64) * (1 << 20) + rows["cta"][g[jm]]) * 64 + arr_key[jm]
        first = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    else:
        first = np.arange(jm.size)
    if jm.size:
        head = jm[first]         # each unit's first row, which gives its array and fractions
        to = _diffuse(arr_key[head].astype(np.int64), frac[head], pend[head], len(bases or ()) + 1)
        to_rows = np.repeat(to, np.diff(np.r_[first, jm.size]))
        level[g[jm[to_rows == 1]]] = LEVEL_DRAM
        level[g[jm[to_rows == 2]]] = LEVEL_L2_PENDING
    return level


guard_cache(globals(), (_rows.__file__,))     # stamped by its source and rows.py's (distinct), guarded, seeded (gpusim.jit)
