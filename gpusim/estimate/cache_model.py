"""The cache model of a whole launch: gpusim.memory's L1 and L2 run over a simulated result.

The estimate hands the sampled CTAs' trace, the grid and the schedule to the memory stage's caches
(gpusim.memory.cache: the L1 per SM, the chip-wide L2 over the tile stream) and gathers the
whole-kernel hit rates and DRAM traffic under ncu's metric names. The model itself is described in
gpusim/memory/cache.py and docs/model.md.
"""
from __future__ import annotations

import itertools
import json

import numpy as np

from gpusim.arch import GPU, get_arch
from gpusim.errors import GpusimError
from gpusim.estimate.simulate import _classes, array_bytes, simulate
from gpusim.kernel.spec import get_kernel
from gpusim.memory.cache import (L2_WAYS, LINE, SECTOR, _global_load_rows, _l2_tiles, _new_cache, _sampled_bitmap,
                                 _sampled_lists,
                                 _window_events, l1_capacity_bytes, l1_simulate, l2_capacity_bytes,
                                 phased_schedule, time_windows)
from gpusim.memory.stream import compulsory_l2, reach_sectors, writeback_fractions, written_back_sectors
from gpusim.paths import device_dir


def _cta_bidx(result):
    """Trace CTA id -> blockIdx, as gpusim.simulate enumerates them."""
    spec = get_kernel(result.kernel)
    gx, gy, gz = result.grid
    px, py = spec.grid_period(result.M, result.N, result.K, **result.params)
    sampled = result.mode == "sampled"
    return [(x, y, z) for (x, _), (y, _), (z, _) in itertools.product(
        _classes(gx, px, sampled), _classes(gy, py, sampled), [(i, 1) for i in range(gz)])]


def _tile_sets(trace, rows_of_cta, M, N, K, bases):
    """For one CTA: A rows, B column lines, C (row, column line) pairs that its loads touch."""
    idx, _ = rows_of_cta
    a = trace.addr[trace.rows["mem"][idx]]
    a = a[a >= 0]
    out = {}
    for nm, ncols, nrows in (("A", K, M), ("B", N, K), ("C", N, M)):
        off = a - bases[nm]
        off = off[(off >= 0) & (off < nrows * ncols * 4)] // 4
        r, col = off // ncols, off % ncols
        out[nm] = (r, col * 4 // LINE)
    return out


def measured_schedule(result, n_ctas: int, with_unit: bool = False):
    """(start, duration) of each CTA in linear blockIdx order, in units of the median CTA duration,
    from the H200's record of this launch (traces/hw/h200/ctasched/, gpusim.hw.ctasched); with_unit:
    (start, duration, that median in ns)."""
    p = device_dir("h200") / "ctasched" / f"ctasched_{result.kernel}_{result.M}.json"
    if not (result.M == result.N == result.K) or not p.exists():
        raise GpusimError(f"schedule='measured': no CTA schedule record for {result.kernel} at "
                          f"{result.M}x{result.N}x{result.K} (traces/hw/h200/ctasched/)")
    rec = json.loads(p.read_text())
    if rec.get("params") != result.params or len(rec["start_ns"]) != n_ctas:
        raise GpusimError(f"schedule='measured': the record {p.name} is of another launch "
                          f"({rec.get('params')}, {len(rec['start_ns'])} CTAs)")
    s, e = np.asarray(rec["start_ns"], np.float64), np.asarray(rec["end_ns"], np.float64)
    T = float(np.median(e - s))
    return (s / T, (e - s) / T, T) if with_unit else (s / T, (e - s) / T)


# a stream that passes the arrays' lines this many times over or more looks each up in a bitmap of the
# sampled ones (memory.cache._sampled_bitmap: one hash per line, then a bit per access), up to this many lines
BITMAP_PASSES = 4
BITMAP_MAX_LINES = 2**27
LIST_REUSE = 4          # A's and B's chunks become lists of their sampled lines where this many CTAs or more share
                        # each, and the lists hold at most this share of the stream's line accesses
L2_SPLIT_LINES = 4e6    # streams past this many line accesses run as two halves of the sampled sets at once


def _split_sets(run_part, total: int):
    """run_part(part, parts)'s counts for every set: in two halves on two threads (this one and a second:
    _l2_tiles is nogil, and the thread that wants the L2 model's result has nothing else to do until it
    comes) where the stream is long and predictions use a helper thread (round_inputs.helper_thread), else
    whole; the halves' counts added."""
    from gpusim.estimate.round_inputs import helper_thread
    if total <= L2_SPLIT_LINES or not helper_thread():
        return run_part(0, 1)
    import threading
    other = {}

    def second():
        try:
            other["counts"] = run_part(1, 2)
        except BaseException as e:      # noqa: BLE001 - raised again on this thread
            other["error"] = e
    th = threading.Thread(target=second, name="gpusim-l2-half")
    th.start()
    mine = run_part(0, 2)
    th.join()
    if "error" in other:
        raise other["error"]
    return tuple(a + b for a, b in zip(mine, other["counts"]))


def l2_simulate(result, *, l2_bytes: int | None = None, schedule: str = "fluid", sample: int | None = None,
                arch: GPU | None = None, slot_finish=None, pending_ns: float = 0.0,
                unit_ns: float | None = None, windows: bool | None = None) -> dict:
    """Chip-wide L2 over the tile stream of every CTA (see module doc); past WINDOW_LINES accesses, in
    time windows (`time_windows`; windows=False: always the whole stream). Returns per-array line
    accesses and misses (scaled back by the set-sampling factor) and the settings used.
    pending_ns > 0: a hit on a line whose miss by another CTA began less than pending_ns before gets
    its data with that fill (a pending hit); such hits are counted per array ("line_pending",
    "pending_fraction" = pending / accesses, "latency_miss_fraction" = (misses + pending) / accesses).
    The schedule's time unit in ns: the record's for "measured", else unit_ns (one CTA's round)."""
    arch = arch or getattr(result, "gpu", None) or get_arch(result.arch)   # the result's GPU (--set), not the preset
    trace = result.trace
    M, N, K = result.M, result.N, result.K
    gx, gy, gz = result.grid
    if gz != 1:
        raise GpusimError("the L2 tile model handles 2-D grids only")
    bidx = _cta_bidx(result)
    pos = {b[:2]: i for i, b in enumerate(bidx)}
    gidx, _ = _global_load_rows(trace)
    cta_col = trace.rows["cta"][gidx]

    def sets_of(b):
        i = pos.get(b)
        if i is None:
            return None
        return _tile_sets(trace, (gidx[cta_col == i], None), M, N, K, result.bases)
    s00 = sets_of((0, 0))
    s10 = sets_of((1, 0)) if gx > 1 else None
    s01 = sets_of((0, 1)) if gy > 1 else None

    def step(nm, which, other):
        if other is None:
            return 0
        u, v = s00[nm][which], other[nm][which]
        return int(v.min() - u.min()) if u.size and v.size else 0
    a_rows = np.unique(s00["A"][0]).astype(np.int64)
    b_cls = np.unique(s00["B"][1]).astype(np.int64)
    c_pairs = np.unique(np.stack([s00["C"][0], s00["C"][1]], 1), axis=0) if s00["C"][0].size \
        else np.zeros((0, 2), np.int64)
    steps = {k: (step(nm, w, s10), step(nm, w, s01)) for k, nm, w in
             (("a", "A", 0), ("b", "B", 1), ("cr", "C", 0), ("cc", "C", 1))}

    occ = result.occupancy
    S = arch.sm_count * occ.blocks_per_sm
    n_ctas = gx * gy
    nchunks = -(-K * 4 // LINE)
    # each CTA's start and duration in units of one round; its chunk c's event at start + dur * frac(c)
    if schedule == "fluid":
        start, dur = np.arange(n_ctas) / S, np.ones(n_ctas)
    elif schedule == "waves":
        start, dur = (np.arange(n_ctas) // S).astype(np.float64), np.ones(n_ctas)
    elif schedule == "measured":
        start, dur, unit_ns = measured_schedule(result, n_ctas, with_unit=True)
    elif schedule == "phased":
        if not slot_finish or len(slot_finish) != occ.blocks_per_sm:
            raise GpusimError(f"schedule='phased' needs slot_finish for the {occ.blocks_per_sm} resident CTAs")
        start, dur = phased_schedule(n_ctas, arch.sm_count, slot_finish)
    else:
        raise GpusimError(f"schedule must be 'fluid', 'waves', 'phased' or 'measured', got {schedule!r}")
    if schedule != "measured":
        if pending_ns and not (unit_ns and unit_ns > 0):
            raise GpusimError(f"pending_ns with schedule={schedule!r} needs unit_ns, the duration of one CTA's "
                              "round in ns")
        unit_ns = unit_ns or 1.0
    W = pending_ns / unit_ns if pending_ns else 0.0
    cap = l2_bytes if l2_bytes is not None else l2_capacity_bytes(arch)
    chunk_lines, c_lines = a_rows.size + 32 * b_cls.size, len(c_pairs)
    total_lines = n_ctas * (nchunks * chunk_lines + c_lines)
    spans, weight = time_windows(float(start.min()), float((start + dur).max()), total_lines, cap // LINE, windows)
    i, c, t, mode, blk = _window_events(start, dur, nchunks, spans)
    order = np.lexsort((i, t))
    i, c, t, mode, blk = i[order], c[order], t[order], mode[order], blk[order]
    total = int(np.where(c < nchunks, chunk_lines, c_lines).sum())
    if sample is None:
        sample = 1
        while total / sample > 2e7 and sample < 16:
            sample *= 2
    if sample < 1 or sample & (sample - 1):
        raise GpusimError(f"sample must be a power of two (every sample-th set of the L2), got {sample}")
    nb = len(weight)
    bl = {nm: result.bases[nm] // LINE for nm in "ABC"}
    c_rows, c_cls = c_pairs[:, 0].astype(np.int64).copy(), c_pairs[:, 1].astype(np.int64).copy()

    # the arrays' lines, looked up in a bitmap of the sampled ones where the stream passes each many times
    sizes = array_bytes(result.kernel, M, N, K)
    lo = min(bl.values())
    span = max(-(-(result.bases[nm] + sizes[nm]) // LINE) for nm in "ABC") - lo
    bitmap = span * BITMAP_PASSES <= total and span <= BITMAP_MAX_LINES

    # A's and B's chunks as lists of their sampled lines (_sampled_lists) where CTAs share both: A by the CTA's
    # A rows, B by its B columns; keys are the distinct offsets of CTA (0, 0)'s lines over the grid. Where the
    # lists would hold more than a LIST_REUSE-th of the stream's line accesses (time windows that simulate a
    # small part of a long launch), the events test their lines one by one: the lists' memory stays below it
    cta = np.arange(n_ctas, dtype=np.int64)
    tiles = []
    for (dx, dy), line0, pat, pat_k, row_lines, c_step in (
            (steps["a"], bl["A"], a_rows * (K * 4 // LINE), np.zeros(a_rows.size, np.int64), K * 4 // LINE, 1),
            (steps["b"], bl["B"], (np.arange(32)[:, None] * (N * 4 // LINE) + b_cls[None, :]).ravel(),
             np.repeat(np.arange(32), b_cls.size), 1, 32 * (N * 4 // LINE))):
        offs, key = np.unique((cta % gx) * dx + (cta // gx) * dy, return_inverse=True)
        if offs.size * LIST_REUSE > n_ctas or offs.size * nchunks * pat.size * LIST_REUSE > total:
            tiles = None
            break
        tiles.append((key.astype(np.int64), (line0 + offs * row_lines).astype(np.int64), c_step,
                      pat.astype(np.int64), pat_k))

    def sampled_lists(part, parts, nsets, bits):
        """(key per array and CTA, where each array's entries start, ptr, lines, sets): A's lists and then B's
        (_l2_tiles' l_*), or empty arrays where the events test their lines."""
        if tiles is None:
            z = np.zeros(0, np.int64)
            return np.zeros((2, 0), np.int64), z, z, z, z
        made = [_sampled_lists(base, c_step, pat, pat_k, nchunks, K, nsets * sample, sample.bit_length() - 1, parts,
                               part, bits, lo) for _, base, c_step, pat, pat_k in tiles]
        (pa, la, sa), (pb, lb, sb) = made
        return (np.stack([tiles[0][0], tiles[1][0]]), np.array([0, pa.size - 1], np.int64),
                np.concatenate([pa, pb[1:] + pa[-1]]), np.concatenate([la, lb]), np.concatenate([sa, sb]))

    def run_part(part, parts):
        """The sampled sets s % parts == part: their own cache arrays and counts (_l2_tiles)."""
        tags, _, stamp, nsets, _ = _new_cache(cap // sample, L2_WAYS)
        bits = (_sampled_bitmap(lo, span, nsets * sample, sample.bit_length() - 1, parts, part) if bitmap
                else np.zeros(0, np.uint8))
        fill_t = np.full(tags.shape[0] if W else 1, -np.inf)
        counts = tuple(np.zeros((nb, 3), np.int64) for _ in range(3))
        _l2_tiles(i, c, t, mode, blk, float(W), nchunks, gx,
                  a_rows, bl["A"], K * 4 // LINE, steps["a"][0], steps["a"][1],
                  b_cls, bl["B"], N * 4 // LINE, steps["b"][0], steps["b"][1], K,
                  c_rows, c_cls, bl["C"], N * 4 // LINE, steps["cr"][0], steps["cr"][1], steps["cc"][0],
                  steps["cc"][1], tags, stamp, fill_t, nsets, sample, *counts, part, parts, bits, lo,
                  *sampled_lists(part, parts, nsets, bits))
        return counts
    b_acc, b_miss, b_pend = _split_sets(run_part, total)
    # each counted block stands for `weight` blocks (1 each where every event was simulated)
    acc, miss, pend = ((weight[:, None] * x).sum(axis=0) for x in (b_acc, b_miss, b_pend))
    windows_used = int((weight > 0).sum())
    return {"line_accesses": (acc * sample).round().astype(np.int64).tolist(),
            "line_misses": (miss * sample).round().astype(np.int64).tolist(),
            "miss_fraction": [float(m / a) if a else 0.0 for m, a in zip(miss, acc)],
            "line_pending": (pend * sample).tolist(),
            "pending_fraction": [float(p / a) if a else 0.0 for p, a in zip(pend, acc)],
            "latency_miss_fraction": [float((m + p) / a) if a else 0.0 for m, p, a in zip(miss, pend, acc)],
            "capacity_bytes": cap, "sample": sample, "schedule": schedule,
            "windows": windows_used, "blocks": nb, "lines_simulated": total,
            "lines_in_stream": int(total_lines)}


def _l1_whole(result, arch):
    trace = result.trace
    occ = result.occupancy
    smem = result.metrics.get("launch__shared_mem_per_block_static", 0) or 0
    cap = l1_capacity_bytes(arch, occ.blocks_per_sm, smem) // max(1, occ.blocks_per_sm)
    gidx, nb = _global_load_rows(trace)
    w = trace.rows["weight"][gidx]
    sect = np.zeros(len(gidx), np.int64)
    hit = np.zeros(len(gidx), np.int64)
    cta = trace.rows["cta"][gidx]
    for c in np.unique(cta):
        sel = np.flatnonzero(cta == c)
        rows = gidx[sel]
        s, h = l1_simulate(trace.addr, nb[rows], cap, rows=trace.rows["mem"][rows])
        sect[sel], hit[sel] = s, h
    return gidx, w, sect, hit, cap * max(1, occ.blocks_per_sm)


def hit_rates(result, *, schedule: str = "fluid", sample: int | None = None, l2_bytes: int | None = None,
              slot_finish=None, pending_ns: float = 0.0, unit_ns: float | None = None) -> dict:
    """Whole-kernel L1/L2 hit rates and traffic of a SimResult, keyed by ncu metric names.

    Needs the trace: `gpusim.simulate(..., keep_trace=True)`; a result without one is simulated
    again (same kernel, size and parameters) to get it.
    """
    if result.trace is None:
        result = simulate(result.kernel, result.M, result.N, result.K, arch=getattr(result, "gpu", None) or result.arch,
                          params=result.params, mode=result.mode, keep_trace=True)
    arch = getattr(result, "gpu", None) or get_arch(result.arch)
    gidx, w, sect, hit, l1cap = _l1_whole(result, arch)
    sectors = int((w * sect).sum())
    hits = int((w * hit).sum())
    if not get_kernel(result.kernel).is_gemm:       # no K loop to build a tile stream of: compulsory misses
        return _stream_rates(result, gidx, w, sect - hit, sectors, hits, l1cap, arch)
    l2 = l2_simulate(result, schedule=schedule, sample=sample, l2_bytes=l2_bytes, arch=arch,
                     slot_finish=slot_finish, pending_ns=pending_ns, unit_ns=unit_ns)
    dram_sectors = 4 * sum(l2["line_misses"])
    return _rates(result, sectors, hits, dram_sectors, l1cap,
                  miss=dict(zip("ABC", l2["miss_fraction"])), pending=dict(zip("ABC", l2["pending_fraction"])),
                  pending_lines=sum(l2["line_pending"]), l2cap=l2["capacity_bytes"], sample=l2["sample"],
                  schedule=l2["schedule"])


def _rates(result, sectors, hits, dram_sectors, l1cap, *, miss, pending, pending_lines, l2cap, sample,
           schedule) -> dict:
    """hit_rates' figures, by ncu's names and gpusim__ ones, from what either L2 model found."""
    l2_reads = sectors - hits
    return {
        "gpusim__dram_writeback_fraction_by_array": _writebacks(result),
        "dram__bytes_write.sum": dram_write_bytes(result),
        "l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct": 100.0 * hits / sectors if sectors else 0.0,
        "lts__t_sectors_srcunit_tex_op_read.sum": l2_reads,
        "l1tex__m_xbar2l1tex_read_bytes.sum": SECTOR * l2_reads,
        "lts__t_sector_op_read_hit_rate.pct": 100.0 * max(0.0, 1 - dram_sectors / l2_reads) if l2_reads else 0.0,
        "dram__bytes_read.sum": SECTOR * dram_sectors,
        "gpusim__l2_miss_fraction_by_array": miss,
        "gpusim__l2_pending_fraction_by_array": pending,
        "gpusim__l2_pending_hit_lines": pending_lines,
        "gpusim__l1_capacity_bytes": l1cap,
        "gpusim__l2_capacity_bytes": l2cap,
        "gpusim__l2_set_sample": sample,
        "gpusim__l2_schedule": schedule,
    }


def _writebacks(result) -> dict:
    """{array: share of its stored sectors the L2 writes back to DRAM} (gpusim.memory.stream)."""
    return writeback_fractions(result.trace, result.bases,
                               array_bytes(result.kernel, result.M, result.N, result.K))


def dram_write_bytes(result) -> float:
    """Bytes the L2 writes back to DRAM in the launch (gpusim.memory.stream.written_back_sectors): every
    stored line once, where the working set outgrows the L2; 0 for a launch whose arrays it keeps."""
    got = written_back_sectors(result.trace, result.bases, array_bytes(result.kernel, result.M, result.N, result.K))
    return SECTOR * sum(back for back, _ in got.values())


def _stream_reach(result, arch) -> float:
    """gpusim.memory.stream's reach for this launch: the L2 a streaming kernel keeps its lines in (each line
    in the partition near the one CTA that reads it: micro/l2_resident.json's 40 of 60 MB, as _l2_warm)
    over the CTAs resident on the chip at once."""
    G = int(np.prod(result.grid))
    return reach_sectors(arch.l2_stream_resident_bytes,
                         min(G, arch.sm_count * max(1, result.occupancy.blocks_per_sm)))


def _stream_rates(result, gidx, w, l2_row_reads, sectors, hits, l1cap, arch) -> dict:
    """hit_rates' figures for a kernel that is not an SGEMM (gpusim.memory.stream)."""
    sizes = array_bytes(result.kernel, result.M, result.N, result.K)
    per = compulsory_l2(result.trace, gidx, w, l2_row_reads, result.bases, sizes, _stream_reach(result, arch))
    return _rates(result, sectors, hits, sum(v["dram_sectors"] for v in per.values()), l1cap,
                  miss={nm: v["miss_fraction"] for nm, v in per.items()}, pending={nm: 0.0 for nm in per},
                  pending_lines=0, l2cap=arch.l2_bytes, sample=1,
                  schedule="compulsory misses (gpusim.memory.stream)")
