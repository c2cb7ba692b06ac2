"""L1/L2 cache model (gpusim/memory/cache.py): exact LRU/sector behaviour against a brute-force
reference, the shared-memory carveout rule, timing-window levels, and agreement with the H200
records (tolerances stated per test: what the model honestly achieves)."""
import json
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest

import gpusim
from gpusim.arch import get_arch
from gpusim.errors import GpusimError
from gpusim.memory import cache as C
from gpusim.memory.rows import first_active
from gpusim.estimate import cache_model as CM
from gpusim.timing.lower import LEVEL_L1 as T_L1, LEVEL_L2 as T_L2, LEVEL_DRAM as T_DRAM, \
    LEVEL_L2_PENDING as T_PEND

H200 = get_arch("h200")
REC = Path(__file__).resolve().parents[2] / "traces" / "hw" / "h200"


def rows(*lists):
    a = np.full((len(lists), 32), -1, np.int64)
    for i, l in enumerate(lists):
        a[i, :len(l)] = l
    return a


def test_levels_match_timing():
    assert (C.LEVEL_L1, C.LEVEL_L2, C.LEVEL_DRAM, C.LEVEL_L2_PENDING) == (T_L1, T_L2, T_DRAM, T_PEND)


def test_sector_granular_fill():
    line = 1 << 20
    a = rows([line], [line + 32], [line + 4], list(range(line, line + 128, 4)))
    s, h = C.l1_simulate(a, np.full(4, 4), 4 * 128, ways=4)
    assert s.tolist() == [1, 1, 1, 4]
    assert h.tolist() == [0, 0, 1, 2]          # sectors 0,1 filled; 2,3 miss in a present line


def test_lru_eviction_fully_associative():
    L = [(1 << 20) + 128 * i for i in range(3)]
    a = rows([L[0]], [L[1]], [L[0]], [L[2]], [L[1]], [L[0]])
    s, h = C.l1_simulate(a, np.full(6, 4), 2 * 128, ways=2)   # one set of 2 ways: exact LRU
    assert h.tolist() == [0, 0, 1, 0, 0, 0]    # L2 evicts L1 (LRU), then L1 evicts L0


def _reference(addr, nbytes, cap, ways):
    lines = max(ways, cap // 128)
    nsets = max(1, lines // ways)
    sets = [OrderedDict() for _ in range(nsets)]
    out = []
    for r in range(addr.shape[0]):
        secs = []
        for x in addr[r]:
            if x < 0:
                continue
            for b in (x, x + nbytes[r] - 1):
                if b // 32 not in secs:
                    secs.append(b // 32)
        hit = 0
        for sct in secs:
            ln, bit = sct >> 2, 1 << (sct & 3)
            with np.errstate(over="ignore"):      # the hash is defined modulo 2**64, as the jitted one wraps
                st = sets[C._hash.py_func(ln) % nsets]
            if ln in st:
                st.move_to_end(ln)
                hit += bool(st[ln] & bit)
                st[ln] |= bit
            else:
                if len(st) >= ways:
                    st.popitem(last=False)
                st[ln] = bit
        out.append((len(secs), hit))
    return out


def test_l1_against_brute_force():
    rng = np.random.default_rng(1)
    base = 0x7F00_0000_0000
    addr = base + 4 * rng.integers(0, 4096, (400, 32))
    addr[rng.random((400, 32)) < 0.2] = -1
    nbytes = rng.choice([4, 8, 16], 400)
    addr = addr - addr % nbytes[:, None]
    addr[addr < base] = -1
    for cap, ways in ((4096, 4), (8192, 8), (2048, 16)):
        s, h = C.l1_simulate(addr, nbytes, cap, ways)
        assert list(zip(s.tolist(), h.tolist())) == _reference(addr, nbytes, cap, ways)


@pytest.mark.parametrize("blocks,smem,ncu", [(2, 0, 8192), (1, 8192, 16384), (2, 8192, 32768)])
def test_carveout_matches_ncu_where_the_rule_holds(blocks, smem, ncu):
    # naive/coalesced, tiled32, smemtile: launch__shared_mem_config_size in the records
    assert C.shared_carveout_bytes(H200, blocks, smem) == ncu
    assert C.l1_capacity_bytes(H200, blocks, smem) == 262144 - ncu


def test_global_levels_window():
    from gpusim.estimate.simulate import allocate, run_cta
    from gpusim.kernel.context import Sampler
    from gpusim.kernel.spec import get_kernel
    from gpusim.trace.trace import Trace
    r = gpusim.simulate("naive", 256, mode="sampled")
    spec = get_kernel("naive")
    arrays, bases = allocate(256, 256, 256, 0)
    tr = Trace.concat([run_cta(spec, r.params, H200, r.grid, r.block, (i, 0, 0), 1, Sampler(False, window=4),
                               arrays, bases, (256, 256, 256, 1.0, 0.5), i)[0] for i in range(2)])
    lv = C.global_levels(tr, H200)
    gidx, _ = C._global_load_rows(tr)
    assert len(lv) == len(tr) and set(np.unique(lv[gidx])) <= {0, 1}
    # naive: A's 32 lines per request miss on first touch of each 32-k line, B's line once per k
    frac_l1 = (lv[gidx] == C.LEVEL_L1).mean()
    assert 0.5 < frac_l1 < 1.0
    lv2 = C.global_levels(tr, H200, l2_miss_fraction={"A": 1.0, "B": 0.0, "C": 0.0}, bases=bases)
    miss = lv2[gidx] != C.LEVEL_L1
    first = first_active(tr.addr, tr.rows["mem"][gidx])
    is_a = (first >= bases["A"]) & (first < bases["B"])
    assert (lv2[gidx][miss & is_a] == C.LEVEL_DRAM).all()
    assert (lv2[gidx][miss & ~is_a] == C.LEVEL_L2).all()
    lv3 = C.global_levels(tr, H200, l2_miss_fraction=0.25)
    assert abs((lv3[gidx] == C.LEVEL_DRAM).sum() - 0.25 * miss.sum()) <= 1


def test_global_levels_grouped_dram_rows():
    """dram_rows="grouped": every warp's row of one load instruction of one CTA comes from one level, and
    about the requested share of those instructions goes to DRAM; "spread" splits such groups."""
    r = gpusim.simulate("regtile1d", 512, keep_trace=True)
    from gpusim.estimate.kernel_time import build_window
    tr, _ = build_window(r, [(0, 0, 0), (1, 0, 0)], 4)
    gidx, _ = C._global_load_rows(tr)
    key = tr.rows["seq"][gidx].astype(np.int64) * 1024 + tr.rows["cta"][gidx]

    def levels_per_group(lv):
        return [set(lv[gidx][key == k]) for k in np.unique(key)]
    grouped = C.global_levels(tr, H200, l2_miss_fraction=0.3, dram_rows="grouped")
    missed = [g for g in levels_per_group(C.global_levels(tr, H200, l2_miss_fraction=0.0)) if C.LEVEL_L2 in g]
    per = levels_per_group(grouped)
    assert all(len(g) == 1 for g in per)
    n_dram = sum(g == {C.LEVEL_DRAM} for g in per)
    assert abs(n_dram - 0.3 * len(missed)) <= 1
    spread = C.global_levels(tr, H200, l2_miss_fraction=0.3)
    assert any(len(g) > 1 for g in levels_per_group(spread))
    with pytest.raises(GpusimError):
        C.global_levels(tr, H200, dram_rows="by line")


def test_set_sampling_error():
    r = gpusim.simulate("regtile2d", 2048, mode="sampled", keep_trace=True)
    full = sum(CM.l2_simulate(r, sample=1)["line_misses"])
    for s in (4, 16):
        assert abs(sum(CM.l2_simulate(r, sample=s)["line_misses"]) / full - 1) < 0.02


def _rec(k, M):
    return json.loads((REC / f"{k}_{M}.json").read_text())["ncu"]["metrics"]


# (kernel, size): L1 hit within 1.5 points, L1->L2 bytes within 3 %, DRAM bytes within the
# stated relative tolerance (compulsory-miss sizes and naive/coalesced at 4096)
# (the 4096 points in the slow run: 3 s each)
AGREE = [("naive", 1024, 0.02), ("coalesced", 1024, 0.02),
         pytest.param("naive", 4096, 0.05, marks=pytest.mark.slow),
         pytest.param("coalesced", 4096, 0.12, marks=pytest.mark.slow)]


@pytest.mark.parametrize("kernel,M,dram_tol", AGREE)
def test_hw_agreement(kernel, M, dram_tol):
    r = gpusim.simulate(kernel, M, mode="sampled", keep_trace=True)
    h = CM.hit_rates(r)
    m = _rec(kernel, M)
    k1 = "l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct"
    assert abs(h[k1] - m[k1]) < 1.5
    kx = "l1tex__m_xbar2l1tex_read_bytes.sum"
    assert abs(h[kx] / m[kx] - 1) < 0.03
    kd = "dram__bytes_read.sum"
    assert abs(h[kd] / m[kd] - 1) < dram_tol


def test_phased_schedule():
    """Equal finish fractions give lockstep waves; an older slot finishing at half the round keeps
    the SM's two slots half a round apart (naive's recorded schedule, traces/hw/h200/ctasched/)."""
    start, dur = C.phased_schedule(10, 2, [1.0, 1.0])
    assert start.tolist() == [0, 0, 0, 0, 1, 1, 1, 1, 2, 2] and dur.tolist() == [1.0] * 10
    start, dur = C.phased_schedule(10, 2, [0.5, 1.0])
    assert start.tolist() == [0, 0, 0, 0, 0.5, 0.5, 1, 1, 1.5, 1.5]
    assert dur.tolist() == [0.5, 0.5, 1, 1] + [1.0] * 6


def _ctasched(k, n):
    return json.loads((REC / "ctasched" / f"ctasched_{k}_{n}.json").read_text())


@pytest.mark.parametrize("kernel", ["naive", "regtile2d", "vectorized", "smemtile"])
def test_ctasched_record(kernel):
    """The stamped launch spans the recorded (unstamped) time within 2 %, so the stamps do not
    change the schedule they record; naive's first wave finishes in two halves on every SM
    (older CTA at 0.51 of the other's time), regtile2d's and vectorized's together."""
    d = _ctasched(kernel, 4096)
    span = max(d["end_ns"]) / 1e6
    assert span == pytest.approx(json.loads((REC / f"{kernel}_4096.json").read_text())["time_ms_median"], rel=0.02)
    s, e, sm = (np.asarray(d[k]) for k in ("start_ns", "end_ns", "sm"))
    T = np.median(e - s)
    first = np.where(s < 0.05 * T)[0]
    per = {}
    for i in first:
        per.setdefault(sm[i], []).append(e[i] - s[i])
    ratio = np.median([min(v) / max(v) for v in per.values() if len(v) == 2])
    lo, hi = {"naive": (0.45, 0.6), "smemtile": (0.65, 0.8), "regtile2d": (0.95, 1.0), "vectorized": (0.95, 1.0)}[kernel]
    assert lo <= ratio <= hi


@pytest.mark.parametrize("kernel,tol", [("naive", 0.03), pytest.param("regtile2d", 0.03, marks=pytest.mark.slow)])
def test_l2_with_the_recorded_schedule(kernel, tol):
    """Given the H200's own CTA schedule (a replay), the L2 model's DRAM bytes match ncu's within 3 %
    for naive (62 staggered waves) and regtile2d (4 lockstep waves): what remains of the L2 error
    is the predicted schedule. (coalesced does not: 4.4 GB against 8.0; see cache.py's known gap.)"""
    r = gpusim.simulate(kernel, 4096, mode="sampled", keep_trace=True)
    h = CM.hit_rates(r, schedule="measured")
    assert h["dram__bytes_read.sum"] / _rec(kernel, 4096)["dram__bytes_read.sum"] == pytest.approx(1.0, abs=tol)


def test_measured_schedule_needs_a_record():
    r = gpusim.simulate("regtile2d", 512, mode="sampled", keep_trace=True)
    with pytest.raises(gpusim.errors.GpusimError, match="no CTA schedule record"):
        CM.hit_rates(r, schedule="measured")


def test_pending_fill_rule_with_the_recorded_schedule():
    """pending_ns: tiled32's CTAs in a grid row share A's row block and start within a DRAM latency
    of each other in the H200's record, so most of their A hits find the line still being filled by
    a sharer's miss; the DRAM bytes (misses alone) do not move, and without the window nothing is
    pending. Another schedule needs its time unit (one round in ns) to place the window."""
    r = gpusim.simulate("tiled32", 4096, mode="sampled", keep_trace=True)
    base = CM.l2_simulate(r, schedule="measured")
    pend = CM.l2_simulate(r, schedule="measured", pending_ns=H200.dram_latency_ns)
    assert base["line_pending"] == [0, 0, 0] and base["latency_miss_fraction"] == base["miss_fraction"]
    assert pend["line_misses"] == base["line_misses"]
    a_acc, a_miss, a_pend = pend["line_accesses"][0], pend["line_misses"][0], pend["line_pending"][0]
    assert a_pend > 0.5 * (a_acc - a_miss)
    assert pend["latency_miss_fraction"][0] == pytest.approx((a_miss + a_pend) / a_acc)
    assert pend["pending_fraction"][0] == pytest.approx(a_pend / a_acc)
    with pytest.raises(gpusim.errors.GpusimError, match="needs unit_ns"):
        CM.l2_simulate(r, schedule="waves", pending_ns=H200.dram_latency_ns)


def test_lockstep_waves_make_a_shared_line_pending_for_all_but_its_first_reader():
    """In the predicted schedules a wave's CTAs start together, so the CTAs of a grid row reach each
    chunk of A's row block at the same time: one misses, the others' hits are pending whatever the
    window's length (here 1 ns in a 1 ms round), while with no window none is. The misses are those
    of the schedule without the window."""
    r = gpusim.simulate("tiled32", 4096, mode="sampled", keep_trace=True)
    base = CM.l2_simulate(r, schedule="waves")
    pend = CM.l2_simulate(r, schedule="waves", pending_ns=1.0, unit_ns=1e6)
    assert base["line_pending"] == [0, 0, 0]
    assert pend["line_misses"] == base["line_misses"]
    a_acc, a_miss, a_pend = pend["line_accesses"][0], pend["line_misses"][0], pend["line_pending"][0]
    assert a_pend > 0.9 * (a_acc - a_miss)


SHARERS = json.loads((REC / "micro" / "sharer_phase.json").read_text())["details"]


def within(case: str, array: str) -> float:
    """The record's share of `array`'s later readers within the 254-ns window of their cluster's first."""
    return SHARERS[case][array]["share_within_ns"]["254"]


@pytest.fixture(scope="module")
def regtile1d_pending():
    """The L2 model's share of regtile1d's L2 hits at 4096 that are pending, per array, as predict() counts
    them (phased schedule, its time unit the first-round probe, the preset's window)."""
    from gpusim.estimate.kernel_time import first_round_probe, ptxas_facts
    from gpusim.timing.lower import l2_pending_window_ns
    r = gpusim.simulate("regtile1d", 4096, keep_trace=True)
    f, round_ns = first_round_probe(r, H200, r.occupancy.blocks_per_sm, ptxas_facts(r))
    l2 = CM.l2_simulate(r, arch=H200, schedule="phased", slot_finish=f, pending_ns=l2_pending_window_ns(H200),
                       unit_ns=round_ns)
    return {nm: l2["pending_fraction"][i] / (1 - l2["miss_fraction"][i]) for i, nm in enumerate("AB")}


def test_record_sharers_keep_step_through_the_array_they_miss():
    """micro/sharer_phase.json (ladder twins at 4096, every CTA's slab ends): in regtile1d, regtile2d,
    vectorized and smemtile the sharers of the array whose lines the L2 misses more often (the cache model:
    B for the register-tiled three, 0.13-0.34 of its line reads; A for smemtile, 0.48) come within the
    pending window of a slab's first reader 0.31-0.61 of the time; those of the other array (misses
    0.01-0.03) 0.03-0.13, over microseconds. (Two runs on 2026-12-01 differ by up to 0.05: smemtile's A
    0.29 and 0.31, regtile2d's B 0.31 and 0.32; hence 0.25.)"""
    for case in ("regtile1d_4096", "regtile2d_4096", "vectorized_4096"):
        assert within(case, "B") > 0.25 > 0.15 > within(case, "A")
    assert within("smemtile_4096", "A") > 0.25 > 0.15 > within("smemtile_4096", "B")
    assert SHARERS["regtile1d_4096"]["A"]["offset_quantiles_ns"]["50"] > 1000


def test_record_the_more_missed_array_does_not_decide_alone():
    """The same record's other kernels: the rule above is not the whole story. tiled32 at 4096 keeps both
    arrays' sharers in step (0.87 each, though the model's L2 misses 0.97 of B's lines and 0.02 of A's),
    and regblock's A sharers (misses 0.02) keep step better than its B sharers (misses 0.12)."""
    assert within("tiled32_4096", "A") > 0.8 and within("tiled32_4096", "B") > 0.8
    assert within("regblock_4096", "A") > within("regblock_4096", "B")


@pytest.mark.xfail(strict=True, reason="known gap: the first-round probe's finish order moves the lockstep count; "
                   "with the measured S2R and LDC latencies (micro/special_regs.json) regtile1d's younger CTA ends "
                   "at 0.83 of the older's time (0.80 before, the H200's 0.999) and B's pending share is 0.44 "
                   "(0.51 before) against the H200's 0.61")
def test_lockstep_count_of_pending_b_hits_matches_the_sharers(regtile1d_pending):
    """The model's lockstep schedule gives regtile1d's B hits at 4096 the H200's pending share within 0.1
    (0.55 against 0.61): B's sharers wait on each other's fills and stay together."""
    assert regtile1d_pending["B"] == pytest.approx(within("regtile1d_4096", "B"), abs=0.1)


@pytest.mark.xfail(strict=True, reason="known gap: in the lockstep schedule a grid row's 64 CTAs reach A's "
                   "chunks together, so 0.93 of A's L2 hits are pending where the H200's sharers give 0.07 "
                   "(docs/notes/2026-12-01-l2-pending-fills.md)")
def test_lockstep_count_of_pending_a_hits_matches_the_sharers(regtile1d_pending):
    assert regtile1d_pending["A"] == pytest.approx(within("regtile1d_4096", "A"), abs=0.1)


PENDING_FILL = json.loads((REC / "micro" / "pending_fill.json").read_text())["details"]


def test_record_a_hit_on_a_fill_in_flight_waits_what_is_left_of_it():
    """micro/pending_fill.json: a follower SM's L2 hit on a line the leader SM's miss began fetching `delay`
    before takes max(L, D - delay) (D the leader's median latency): within 10 % where the fill is still on its
    way, and a plain hit's latency (within 10 % of L) once the delay passes D - L. The rule under the
    pending level (gpusim.timing.lower.l2_pending_window_ns, l2_pending_latency_cycles)."""
    D, L = PENDING_FILL["leader_median_cycles"], H200.l2_hit_latency_cycles
    window_ns = (D - L) * 1000 / H200.sm_clock_max_mhz
    pending = [b for b in PENDING_FILL["bins"] if b["delay_ns"] + 25 < window_ns]
    later = [b for b in PENDING_FILL["bins"] if b["delay_ns"] - 25 > window_ns + 50]
    assert len(pending) >= 3 and len(later) >= 10
    for b in pending:
        assert b["follower_median_cycles"] == pytest.approx(D - b["delay_ns"] * H200.sm_clock_max_mhz / 1000, rel=0.1)
        assert b["follower_median_cycles"] > 1.15 * L
    for b in later:
        assert b["follower_median_cycles"] == pytest.approx(L, rel=0.1)


def test_whole_stream_events_are_every_cta_and_chunk_in_schedule_order():
    """Without windows the events are every (CTA, chunk), each once and counted, in time order."""
    start, dur = np.arange(10) / 4, np.ones(10)
    spans, weight = C.time_windows(0.0, float((start + dur).max()), 1e6, 1000, windows=False)
    i, c, t, mode, blk = C._window_events(start, dur, 5, spans)
    assert len(i) == 10 * 6 and set(zip(i.tolist(), c.tolist())) == {(a, b) for a in range(10) for b in range(6)}
    assert (mode == 2).all() and (blk == 0).all() and weight.tolist() == [1.0]


def test_time_windows_count_each_event_once_and_their_weights_cover_the_span():
    start, dur = np.arange(4000) / 100, np.ones(4000)
    t1 = float((start + dur).max())
    spans, weight = C.time_windows(0.0, t1, 1e10, 200_000, windows=True)
    assert len(spans) == C.COUNTED_WINDOWS and weight.sum() == pytest.approx(len(weight))
    i, c, t, mode, blk = C._window_events(start, dur, 63, spans)
    key = i * 64 + c
    assert len(np.unique(key)) == len(key)                       # one event per (CTA, chunk)
    assert set(np.unique(blk[mode == 2]).tolist()) == {b for *_, b in spans}
    assert 0 < (mode == 2).sum() < 4000 * 64 / 10                # far fewer than the whole stream


@pytest.mark.parametrize("kernel", ["coalesced", pytest.param("regtile2d", marks=pytest.mark.slow)])
def test_l2_cost_is_flat_in_the_problem_size(kernel):
    """Past WINDOW_LINES the chip-wide stream is simulated in windows: at 16384 and 32768 no more lines
    than the budget, far fewer than the stream holds. (Not the same miss fractions: regtile2d's A
    misses rise at 32768, where one CTA's B stream between two readers of an A chunk outgrows the L2.)"""
    for n in (16384, 32768):
        r = gpusim.simulate(kernel, n, keep_trace=True)
        l2 = CM.l2_simulate(r, pending_ns=300.0, unit_ns=10000.0)
        assert l2["lines_simulated"] <= 1.3 * C.WINDOW_BUDGET < l2["lines_in_stream"] / 4


@pytest.mark.slow
@pytest.mark.parametrize("kernel", ["naive", "coalesced", "tiled32", "regtile2d", "regblock", "vectorized"])
def test_windowed_l2_agrees_with_the_whole_stream(kernel):
    """At 8192, windows against every event of the stream: miss fractions per array within 0.002
    (measured: 0.0002 at most), pending fractions within 0.005 (tiled32's A: 0.0084 against 0.0117,
    which moves its predicted time by 0.02 %)."""
    r = gpusim.simulate(kernel, 8192, keep_trace=True)
    whole = CM.l2_simulate(r, pending_ns=300.0, unit_ns=10000.0, windows=False)
    win = CM.l2_simulate(r, pending_ns=300.0, unit_ns=10000.0, windows=True)
    assert win["lines_simulated"] < whole["lines_simulated"]
    assert win["miss_fraction"] == pytest.approx(whole["miss_fraction"], abs=0.002)
    assert win["pending_fraction"] == pytest.approx(whole["pending_fraction"], abs=0.005)


def test_set_sampling_takes_powers_of_two_and_halves_add_up(monkeypatch):
    """The sampled sets are every 2**k-th; a long stream runs as two halves of them on two threads, whose
    counts equal one pass over all of them."""
    r = gpusim.simulate("regtile2d", 1024, mode="sampled", keep_trace=True)
    with pytest.raises(GpusimError, match="power of two"):
        CM.l2_simulate(r, sample=3)
    whole = CM.l2_simulate(r, sample=2)
    monkeypatch.setattr(CM, "L2_SPLIT_LINES", 0)          # every stream in two halves
    halves = CM.l2_simulate(r, sample=2)
    assert whole["lines_simulated"] > 0
    for k in ("line_accesses", "line_misses", "line_pending"):
        assert halves[k] == whole[k], k


def test_sampled_bitmap_marks_the_lines_the_hash_samples():
    """_sampled_bitmap's bit k says whether _sampled_set takes line lo + k, per part."""
    from numba import njit

    @njit
    def hashed(lo, n, n_all, shift, parts, part):
        out = np.zeros(n, np.bool_)
        for k in range(n):
            out[k] = C._sampled_set(lo + k, n_all, 1.0 / n_all, shift, parts, part) >= 0
        return out
    lo, n, n_all = 7 * 2**28 + 13, 50_003, 1920 * 8
    for parts, part in ((1, 0), (2, 0), (2, 1)):
        bits = C._sampled_bitmap(lo, n, n_all, 3, parts, part)
        got = np.unpackbits(bits, bitorder="little")[:n].astype(bool)
        want = hashed(lo, n, n_all, 3, parts, part)
        assert 0 < want.sum() < n and (got == want).all()


@pytest.mark.parametrize("kernel", ["coalesced", "regtile2d"])
def test_l2_counts_are_the_same_with_and_without_the_bitmap(kernel, monkeypatch):
    """A stream that passes its lines many times looks them up in the bitmap; the counts are the hash's."""
    r = gpusim.simulate(kernel, 1024, mode="sampled", keep_trace=True)
    monkeypatch.setattr(CM, "BITMAP_PASSES", 1)
    used = []
    orig = CM._sampled_bitmap
    monkeypatch.setattr(CM, "_sampled_bitmap", lambda *a: used.append(a) or orig(*a))
    with_bits = CM.l2_simulate(r, sample=2)
    assert used
    monkeypatch.setattr(CM, "BITMAP_MAX_LINES", 0)
    without = CM.l2_simulate(r, sample=2)
    for k in ("line_accesses", "line_misses", "line_pending"):
        assert with_bits[k] == without[k], k


@pytest.mark.parametrize("kernel", ["coalesced", "regtile2d"])
def test_l2_counts_are_the_same_from_the_lists_of_sampled_lines(kernel, monkeypatch):
    """A's and B's chunks read from _sampled_lists where CTAs share them, or their lines tested one by one:
    the same accesses in the same order, so the same counts, pending hits included."""
    r = gpusim.simulate(kernel, 1024, mode="sampled", keep_trace=True)
    used = []
    orig = CM._sampled_lists
    monkeypatch.setattr(CM, "_sampled_lists", lambda *a: used.append(a) or orig(*a))
    runs = {}
    for reuse in (1, 10**9):        # every tile from its lists; none
        used.clear()
        monkeypatch.setattr(CM, "LIST_REUSE", reuse)
        runs[reuse] = CM.l2_simulate(r, sample=2, pending_ns=300.0, unit_ns=10000.0)
        assert bool(used) == (reuse == 1)
    assert sum(runs[1]["line_pending"]) > 0
    for k in ("line_accesses", "line_misses", "line_pending"):
        assert runs[1][k] == runs[10**9][k], k


def test_l2_line_is_lru_with_the_pending_window():
    """_l2_line against a reference LRU (an ordered dict per set) on random lines over a few sets: the
    outcome of every access (hit, miss, pending hit: a hit within W of its line's fill) and the tags."""
    from collections import OrderedDict
    from numba import njit

    @njit
    def run(lines, sets, times, tags, stamp, fill_t, W):
        out = np.empty(lines.size, np.int64)
        for k in range(lines.size):
            out[k] = C._l2_line(lines[k], sets[k], tags, stamp, k + 1, times[k], W, fill_t)
        return out
    rng = np.random.default_rng(5)
    n_sets, n = 3, 4000
    lines = rng.integers(0, 40 * n_sets, n)
    sets, times, W = lines % n_sets, np.cumsum(rng.random(n)), 3.0
    tags, _, stamp, nsets, ways = C._new_cache(n_sets * C.L2_WAYS * C.LINE, C.L2_WAYS)
    assert (nsets, ways) == (n_sets, C.L2_WAYS)
    got = run(lines, sets, times, tags, stamp, np.full(tags.size, -np.inf), W)
    lru = [OrderedDict() for _ in range(n_sets)]     # line -> its fill time, least recent first
    want = []
    for line, st, t in zip(lines.tolist(), sets.tolist(), times.tolist()):
        d = lru[st]
        if line in d:
            d.move_to_end(line)
            want.append(2 if t - d[line] < W else 0)
            continue
        if len(d) == C.L2_WAYS:
            d.popitem(last=False)
        d[line] = t
        want.append(1)
    assert got.tolist() == want
    assert {0, 1, 2} <= set(want)
    for st in range(n_sets):
        assert set(tags[st * ways:(st + 1) * ways].tolist()) - {-1} == set(lru[st])


def test_l1_simulate_reads_the_rows_it_is_given_in_their_order():
    """rows= runs addr[rows] in that order without gathering them: the same counts as the gathered rows."""
    rng = np.random.default_rng(3)
    addr = rng.integers(0, 64 * 128, size=(50, 32)).astype(np.int64)
    addr[rng.random((50, 32)) < 0.3] = -1
    rows = rng.integers(0, 50, size=80)
    nb = np.full(80, 4)
    s1, h1 = C.l1_simulate(addr[rows], nb, 8 * 128, ways=4)
    s2, h2 = C.l1_simulate(addr, nb, 8 * 128, ways=4, rows=rows)
    assert s1.tolist() == s2.tolist() and h1.tolist() == h2.tolist()
    assert h1.sum() > 0 and (s1 > h1).any()


def test_error_diffusion_spreads_each_arrays_units_evenly():
    """_diffuse: per array, a unit goes to DRAM each time its DRAM fractions sum past one, else to the
    pending level each time its pending fractions do; the arrays keep separate sums."""
    key = np.array([0, 1, 0, 1, 0, 1, 0, 1], np.int64)
    frac = np.array([0.5, 0.0, 0.5, 0.0, 0.5, 0.0, 0.5, 0.0])
    pend = np.array([0.0, 0.5, 0.0, 0.5, 0.0, 0.5, 0.0, 0.5])
    assert C._diffuse(key, frac, pend, 2).tolist() == [0, 0, 1, 2, 0, 0, 1, 2]
    third = np.full(6, 1 / 3)
    assert C._diffuse(np.zeros(6, np.int64), third, np.zeros(6), 1).tolist() == [0, 0, 1, 0, 0, 1]
