"""Whole-kernel prediction (gpusim/estimate/kernel_time.py): rounds, sampling error, determinism,
and agreement with the recorded H200 times at the tolerance the model achieves today."""
import json
from pathlib import Path

import pytest

import gpusim
from gpusim.errors import GpusimError
from gpusim.timing import LSU_METRIC_NAMES
from gpusim.estimate.kernel_time import predict, plan_rounds, SAMPLING_TOLERANCE, W2

HW = Path(__file__).resolve().parents[2] / "traces" / "hw" / "h200"
LADDER = ("naive", "coalesced", "smemtile", "tiled32", "regtile1d", "regblock", "regtile2d", "vectorized")


def test_plan_rounds():
    """G CTAs over S SMs, B resident: the busiest SM runs ceil(G/S) CTAs in rounds of B and one
    partial round; fewer CTAs than SMs is one round of one CTA."""
    assert plan_rounds(64, 2, 132) == (1, [(1, 1)])            # regtile2d 1024: 64 CTAs
    assert plan_rounds(256, 2, 132) == (2, [(2, 1)])
    assert plan_rounds(16384, 2, 132) == (125, [(2, 62), (1, 1)])
    assert plan_rounds(2048, 4, 132) == (16, [(4, 4)])


@pytest.mark.slow        # minutes in all: .ci/run runs it (`pytest -m slow`)
@pytest.mark.parametrize("kernel, size", [("naive", 1024), ("coalesced", 1024), ("smemtile", 2048),
                                          ("tiled32", 2048), ("regtile2d", 512)])
def test_sampling_error_against_full_run(kernel, size):
    """Windows of W1 and W2 trips extrapolated to every trip stay within SAMPLING_TOLERANCE of the
    engine timing every trip (64 trips per CTA at these sizes)."""
    r = gpusim.simulate(kernel, size)
    est, full = predict(r), predict(r, full=True)
    assert est.rounds[0].trips > W2         # really extrapolated
    assert abs(est.cycles / full.cycles - 1) <= SAMPLING_TOLERANCE
    for k, v in full.stalls.items():        # stall ratios follow within a few tenths of a cycle
        assert est.stalls[k] == pytest.approx(v, abs=0.05 * full.metrics[
            "smsp__average_warp_latency_per_inst_issued.ratio"] + 1e-9)
    # the loads in the LSU pipe (ncu's pending count and latency) are whole-kernel figures as well: within 2 %
    # of the full run (the first window alone is 3.5 % off for smemtile and tiled32 at 1024). A pending count
    # is a figure per cycle: its loads' cycles in the pipe over the launch's, whose error the cycles' check
    # above bounds; the loads' own part is compared (smemtile 2048: -2.8 % a cycle, -0.9 % in all, +2.0 %
    # cycles)
    for k in LSU_METRIC_NAMES:
        per_cycle = "inst_pending" in k
        got, want = ((est.metrics[k] * est.cycles, full.metrics[k] * full.cycles) if per_cycle
                     else (est.metrics[k], full.metrics[k]))
        assert got == pytest.approx(want, rel=0.02, abs=0.05 * (full.cycles if per_cycle else 1)), k


@pytest.mark.slow        # minutes in all: .ci/run runs it (`pytest -m slow`)
@pytest.mark.parametrize("kernel, M, N, K", [("regtile1d", 8192, 8192, 512), ("vectorized", 2048, 2048, 8192)])
def test_sampling_error_where_the_phase_settles_late(kernel, M, N, K):
    """Two held-out shapes whose CTA pairs' relative phase still moves after the first windows: regtile1d at
    8192x8192x512 (64 trips a round: trips 8-16 cost 2217 cycles each where 16-32 cost 2006 and 24-40
    2085) and vectorized at 2048x2048x8192 (1024 trips: 3730 cycles a trip from trips 8-16, 3926 from
    32-64). Windows of 8 and 16 trips missed the full run by +5.9 % and -5.8 %; W1, W2 = 16, 48 cover both."""
    r = gpusim.simulate(kernel, M=M, N=N, K=K)
    est, full = predict(r), predict(r, full=True)
    assert est.rounds[0].trips > W2         # really extrapolated
    assert abs(est.cycles / full.cycles - 1) <= SAMPLING_TOLERANCE


@pytest.mark.slow        # two predictions of 3 s each
def test_deterministic():
    r = gpusim.simulate("regtile2d", 256)
    a, b = predict(r), predict(r)
    assert a.cycles == b.cycles and a.stalls == b.stalls and a.metrics == b.metrics


def test_prediction_fields():
    p = predict(gpusim.simulate("smemtile", 256))
    m = p.metrics
    assert p.time_ms == pytest.approx(p.cycles / 1.98e6 + (gpusim.get_arch("h200").launch_overhead_us
                                                           + m["gpusim__launch_end_us"]) / 1e3)
    total = sum(p.stalls.values())
    assert total == pytest.approx(m["smsp__average_warp_latency_per_inst_issued.ratio"])
    assert p.stalls["smsp__average_warps_issue_stalled_selected_per_issue_active.ratio"] == pytest.approx(1.0)
    assert 0 < m["sm__warps_active.avg.pct_of_peak_sustained_active"] <= 100
    assert 0 < m["smsp__issue_active.avg.per_cycle_active"] <= 1


# What the model achieves today at 1024^3 (bench/bench_timing.py has all sizes): every ladder
# kernel within 25 % of the recorded CUDA-event time. Issue 4's target (MAPE <= 10 %, no point
# worse than 20 %, over the three sizes) is a benchmark's figure, not a timed test's.
ACHIEVED_TOLERANCE_1024 = 0.25


@pytest.mark.slow        # minutes in all: .ci/run runs it (`pytest -m slow`)
@pytest.mark.parametrize("kernel", LADDER)
def test_time_agrees_with_h200_at_1024(kernel):
    rec = json.loads((HW / f"{kernel}_1024.json").read_text())
    p = predict(gpusim.simulate(kernel, 1024))
    assert abs(p.time_ms / rec["time_ms_median"] - 1) <= ACHIEVED_TOLERANCE_1024


@pytest.mark.slow        # minutes in all: .ci/run runs it (`pytest -m slow`)
@pytest.mark.parametrize("path", sorted((HW / "shapes").glob("*_1024x4096x4096.json")), ids=lambda p: p.stem)
def test_held_out_shape_time_agrees_with_h200(path):
    """The second held-out set (the ladder at non-square shapes, traces/hw/h200/shapes/, recorded after
    the model's parameters were set), at its cheapest shape: the ladder's tolerance (measured: within
    15.3 % at this shape (tiled32), 15.4 % at the worst of all 32 points, bench/bench_timing.py --shapes)."""
    rec = json.loads(path.read_text())
    p = predict(gpusim.simulate(rec["kernel"], M=rec["M"], N=rec["N"], K=rec["K"]))
    assert abs(p.time_ms / rec["time_ms_median"] - 1) <= ACHIEVED_TOLERANCE_1024


@pytest.mark.slow        # minutes in all: .ci/run runs it (`pytest -m slow`)
@pytest.mark.parametrize("path", sorted((HW / "variants").glob("*_1024.json")), ids=lambda p: p.stem)
def test_held_out_variant_time_agrees_with_h200_at_1024(path):
    """The held-out set (every ladder kernel with other tile parameters, recorded after the model's
    parameters were set): the same tolerance as the ladder's (measured: within 17.2 %)."""
    rec = json.loads(path.read_text())
    p = predict(gpusim.simulate(rec["kernel"], 1024, params=rec["params"]))
    assert abs(p.time_ms / rec["time_ms_median"] - 1) <= ACHIEVED_TOLERANCE_1024


def test_pipe_busy_matches_the_counted_work():
    """The Speed Of Light figures come from the engine's own counters, extrapolated like the warp
    states: the shared pipe's busy cycles on the busiest SM equal that SM's share of the counted
    shared wavefronts (one per cycle), and the FMA pipes' issues its share of FFMA + IMAD."""
    r = gpusim.simulate("smemtile", 512)
    p = predict(r)
    m, c = p.metrics, r.metrics
    G = r.grid[0] * r.grid[1] * r.grid[2]
    share = p.ctas_per_sm / G
    wf = (c["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"]
          + c["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"]) * share
    assert m["gpusim__shared_pipe_busy.pct"] * p.cycles / 100 == pytest.approx(wf, rel=0.03)
    fma = sum(n for op, n in r.inst_executed_per_opcode.items()
              if op.split(".")[0] in ("FFMA", "FMUL", "FADD", "IMAD")) * share
    assert m["gpusim__pipe_fma_issue.pct"] * 4 * p.cycles / 100 == pytest.approx(fma, rel=0.03)
    assert 0 < m["gpusim__l1tex_busy.pct"] <= 100


def test_predict_rejects_an_unknown_scoreboard_rule():
    with pytest.raises(GpusimError, match="scoreboards must be"):
        predict(gpusim.simulate("naive", 256), scoreboards="some")


def test_pending_l2_hits_get_their_own_level_and_latency():
    """regtile1d at 2048 (its data does not stay in the L2): in the predicted lockstep schedule the CTAs
    of a grid row read each chunk of A together, so most of the L1 misses are L2 hits on a fill in
    flight (LEVEL_L2_PENDING), timed at (D + L) / 2 from the preset's measured latencies; with
    l2_pending=False there are none and such rows are L2 hits."""
    from gpusim.arch.presets import H200
    from gpusim.timing import engine as E
    from gpusim.estimate.kernel_time import lowered_round
    from gpusim.timing.lower import LEVEL_L2, LEVEL_L2_PENDING
    r = gpusim.simulate("regtile1d", 2048)
    on, off = predict(r), predict(r, l2_pending=False)
    lw_on, lw_off = lowered_round(r, on, 4), lowered_round(r, off, 4)
    missed = lw_off.level >= LEVEL_L2
    assert (lw_on.level[missed] >= LEVEL_L2).all()
    assert (lw_on.level == LEVEL_L2_PENDING).sum() > 0.5 * (lw_off.level == LEVEL_L2).sum()
    assert (lw_off.level == LEVEL_L2_PENDING).sum() == 0
    dram = H200.dram_latency_ns * H200.sm_clock_max_mhz / 1000
    assert lw_on.params[E.P_PEND_LAT] == round((dram + H200.l2_hit_latency_cycles) / 2)
    assert any("wait for the fill" in n for n in on.notes)


@pytest.mark.slow        # tens of seconds: .ci/run runs it (`pytest -m slow`)
def test_progress_reports_each_step():
    """predict(progress=...) is told after the first-round finish order, the L2 model and each round: the
    counts rise by one up to the total (what `gpusim run` draws its bar from)."""
    seen = []
    predict(gpusim.simulate("regtile2d", 2048), progress=lambda done, total: seen.append((done, total)))
    assert seen == [(i, len(seen)) for i in range(1, len(seen) + 1)] and len(seen) >= 3


def test_launch_overhead_from_its_micro():
    """The predicted time adds what CUDA events see of a launch besides its work: the preset's figure is
    micro/launch_overhead.json's empty launch (one CTA of 256 threads) queued behind other work, as the
    ladder's timed launches run. Up to 1024 CTAs the launch shape hardly matters (3.4-4.4 us); paced by
    the host instead, an empty launch measures the host's launch path, longer."""
    rec = json.loads((HW / "micro" / "launch_overhead.json").read_text())
    gpu = gpusim.get_arch("h200")
    assert gpu.launch_overhead_us == pytest.approx(rec["value"], abs=0.01)
    rows = rec["details"]["rows"]
    small = [r for r in rows if r["grid"] <= 1024]
    assert all(3.4 <= r["queued_us_median"] <= 4.4 for r in small)
    assert all(r["paced_us_median"] > r["queued_us_median"] + 1.0 for r in small)
    p = predict(gpusim.simulate("regtile2d", 512))
    assert p.time_ms - p.cycles / (gpu.sm_clock_max_mhz * 1e3) == pytest.approx(
        (gpu.launch_overhead_us + p.metrics["gpusim__launch_end_us"]) / 1e3)


def test_a_kernels_windows_share_one_choice_of_waiter_groups(monkeypatch):
    """The engine's waiter groups are chosen per kernel, by its warps per SMSP at full occupancy, so a
    round of fewer CTAs (coalesced's last, one CTA: 8 warps per SMSP where a full round has 16) runs the
    same compiled variant of the loop as the others; the groups change no result."""
    import gpusim.timing as T
    from gpusim.arch.presets import H200
    from gpusim.estimate import kernel_time as KT
    seen = []
    real = T.run_lowered

    def spy(lw, arch, log_states=0, groups=None):
        res = real(lw, arch, log_states, groups)
        seen.append((groups, res.cycles, res.warp_state_cycles.copy()))
        return res
    monkeypatch.setattr(T, "run_lowered", spy)
    r = gpusim.simulate("coalesced", 1024, keep_trace=True)
    levels = KT._Levels(r, H200, True, l2_hits_only=True)
    # one CTA: 8 warps per SMSP; the loop is not cut at these windows, so the round is timed whole, once
    KT.time_round(r, H200, 1, levels, windows=(1, 2))
    assert [g for g, _, _ in seen] == [True]
    monkeypatch.setattr(KT, "_groups", lambda result, gpu: False)
    KT.time_round(r, H200, 1, levels, windows=(1, 2))
    assert [g for g, _, _ in seen[1:]] == [False]
    for (_, c_on, s_on), (_, c_off, s_off) in zip(seen[:1], seen[1:]):
        assert c_on == c_off and (s_on == s_off).all()
    assert not KT._groups(gpusim.simulate("regtile2d", 1024), H200)    # 2 CTAs of 8 warps: 4 per SMSP


def test_the_block_scheduler_rule_reproduces_its_microbenchmark():
    """schedule_cycles on micro/cta_turnaround.json's spinning CTAs (each round exactly the spin, 8 CTAs
    resident per SM), with the first round and the launch's end as predict takes them (micro/launch_end.json,
    whose end figure is that of CTAs that touch memory, where these spin: about twice theirs), gives each
    launch's time within 4 % (plus the empty launch's own), at every grid past one round; and its
    parameters are the records'."""
    from gpusim.estimate.kernel_time import schedule_cycles
    rec = json.loads((HW / "micro" / "cta_turnaround.json").read_text())
    gpu = gpusim.get_arch("h200")
    d = rec["details"]
    assert gpu.cta_dispatch_ns == pytest.approx(d["dispatch_ns"], abs=0.1)
    assert gpu.cta_slot_gap_ns == pytest.approx(d["slot_gap_ns"], abs=0.1)
    end = json.loads((HW / "micro" / "launch_end.json").read_text())
    assert gpu.launch_end_ns == pytest.approx(end["value"])
    assert gpu.cta_first_round_ns == pytest.approx(end["details"]["first_round_ns_per_cta"], abs=1e-3)
    one = {r["spin_cycles"]: r["queued_us_median"] for r in d["rows"] if r["grid"] == 1}
    checked = 0
    for r in d["rows"]:
        if r["spin_cycles"] == 0 or r["grid"] <= gpu.sm_count:
            continue
        _, plan = plan_rounds(r["grid"], d["resident_ctas_per_sm"], gpu.sm_count)
        cyc = schedule_cycles([(ctas, n, float(r["spin_cycles"]), 0.0) for ctas, n in plan], gpu,
                              sms_reached=min(r["grid"], gpu.sm_count),
                              first_round_ctas=min(r["grid"], d["resident_ctas_per_sm"] * gpu.sm_count))
        # the launch of one spinning CTA holds the spin once: the rest is the schedule's and the launch's end
        predicted_us = one[r["spin_cycles"]] + (cyc - r["spin_cycles"]) / gpu.sm_clock_max_mhz \
            + gpu.launch_end_ns / 1e3
        assert predicted_us == pytest.approx(r["queued_us_median"], rel=0.04), r
        checked += 1
    assert checked >= 16


def test_rounds_cost_the_dispatch_and_the_slot_gap():
    """One round: its CTAs start a dispatch apart; later rounds add the slot's gap (less the cycles the
    round's stores drain after its warps exit), or r dispatches where those take longer; with both
    parameters 0 the rounds simply add up."""
    from dataclasses import replace
    from gpusim.estimate.kernel_time import schedule_cycles
    gpu = gpusim.get_arch("h200")
    per_ns = gpu.sm_clock_max_mhz * 1e-3
    d, g = gpu.cta_dispatch_ns * per_ns, gpu.cta_slot_gap_ns * per_ns
    assert schedule_cycles([(8, 1, 1000.0, 0.0)], gpu) == pytest.approx(7 * d + 1000)
    assert schedule_cycles([(8, 3, 1000.0, 0.0)], gpu) == pytest.approx(7 * d + 1000 + 2 * max(1000 + g, 8 * d))
    assert schedule_cycles([(8, 3, 100.0, 0.0)], gpu) == pytest.approx(7 * d + 100 + 2 * 8 * d)
    assert schedule_cycles([(2, 4, 5000.0, 0.0), (1, 1, 3000.0, 0.0)], gpu) == pytest.approx(
        d + 5000 + 3 * (5000 + g) + 3000 + g)
    # stores still draining after the warps exit: the gap passes meanwhile
    assert schedule_cycles([(2, 4, 5000.0, g / 2)], gpu) == pytest.approx(d + 5000 + 3 * (5000 + g / 2))
    assert schedule_cycles([(2, 4, 5000.0, 2 * g)], gpu) == pytest.approx(d + 4 * 5000)
    # the block scheduler reaches the SMs one after another: the last of them starts its first CTA that share
    # of a dispatch interval late, and the busiest SM is taken as the last
    assert schedule_cycles([(8, 1, 1000.0, 0.0)], gpu, sms_reached=132) == pytest.approx(8 * d + 1000)
    assert schedule_cycles([(1, 1, 1000.0, 0.0)], gpu, sms_reached=66) == pytest.approx(d / 2 + 1000)
    assert schedule_cycles([(2, 4, 5000.0, 0.0)], gpu, sms_reached=132) == pytest.approx(
        schedule_cycles([(2, 4, 5000.0, 0.0)], gpu) + d)
    # a first round of G1 CTAs over the chip: its last CTA starts G1 x cta_first_round_ns after the first,
    # or the scheduler's reach if that is later; the later rounds as before
    b = gpu.cta_first_round_ns * per_ns
    assert schedule_cycles([(8, 1, 1000.0, 0.0)], gpu, sms_reached=132, first_round_ctas=1056) == \
        pytest.approx(1056 * b + 1000)
    assert schedule_cycles([(1, 1, 1000.0, 0.0)], gpu, sms_reached=128, first_round_ctas=128) == \
        pytest.approx(d * 128 / 132 + 1000)
    assert schedule_cycles([(2, 4, 5000.0, 0.0)], gpu, sms_reached=132, first_round_ctas=264) == \
        pytest.approx(max(264 * b, d) + 5000 + 3 * (5000 + g))
    flat = replace(gpu, cta_dispatch_ns=0.0, cta_slot_gap_ns=0.0)
    assert schedule_cycles([(2, 4, 5000.0, 0.0), (1, 1, 3000.0, 0.0)], flat) == pytest.approx(23000.0)
    # a round timed with its CTAs following in their slots (steady_round) brings its own later rounds
    assert schedule_cycles([(2, 4, 5000.0, 0.0, 4200.0), (1, 1, 3000.0, 0.0, None)], gpu) == pytest.approx(
        d + 5000 + 3 * 4200 + 3000 + g)


def _one_round_rows():
    import sys
    sys.path.insert(0, str(HW.parents[2] / "calibrate"))
    from one_round import spread_fit
    from gpusim.estimate.kernel_time import expected_max
    return json.loads((HW / "micro" / "one_round.json").read_text())["details"]["rows"], spread_fit, expected_max


def test_expected_max_is_the_normal_order_statistic():
    """Blom's approximation against the expected largest of n standard normal draws, integrated: within 1 %
    from 8 draws on, 4.5 % for two (whose exact value is 1/sqrt(pi))."""
    import numpy as np
    from statistics import NormalDist
    from gpusim.estimate.kernel_time import expected_max
    x = np.linspace(-8.0, 8.0, 160001)
    pdf = np.exp(-x * x / 2) / np.sqrt(2 * np.pi)
    cdf = np.array([NormalDist().cdf(v) for v in x[::100]])
    cdf = np.interp(x, x[::100], cdf)
    for n in (8, 33, 128, 1056):
        exact = float(np.trapezoid(x * n * pdf * cdf ** (n - 1), x))
        assert expected_max(n) == pytest.approx(exact, rel=0.01), n
    exact2 = float(np.trapezoid(x * 2 * pdf * cdf, x))
    assert exact2 == pytest.approx(1 / np.sqrt(np.pi), rel=1e-4)     # (the integration's own check)
    assert expected_max(2) == pytest.approx(exact2, rel=0.05)


def test_the_slowest_cta_spread_is_the_micro_fit_and_predicts_sgemv():
    """The preset's sm_l2_latency_spread is the record's chase fit; that fit, from CTAs that only chase L2
    hits, gives the slowest over the median CTA of sgemv's loop (the twin, and with a copy of x a CTA) on
    2-132 CTAs within 3 points; softmax, whose CTAs wait on the L2 for part of their time only, spreads
    less than a pure L2 wait would."""
    rows, spread_fit, expected_max = _one_round_rows()
    sigma = spread_fit(rows)
    assert gpusim.get_arch("h200").sm_l2_latency_spread == pytest.approx(sigma, abs=1e-4)
    checked = 0
    for r in rows:
        if r["kernel"] not in ("sgemv", "sgemv_x", "softmax") or not 2 <= r["grid"] <= 132:
            continue
        measured = r["cta_cycles_max"] / r["cta_cycles_median"]
        model = 1 + sigma * expected_max(r["grid"])
        if r["kernel"] == "softmax":
            assert measured < model + 0.01, r
        else:
            assert measured == pytest.approx(model, abs=0.03), r
            checked += 1
    assert checked == 24


def test_a_one_round_launch_times_its_l2_hits_on_the_slowest_sm():
    """All CTAs resident at once: the busiest SM's L2 latency is the slowest of G SMs' (1 + spread x the
    expected largest of G normal draws), and the prediction says so; a launch of several rounds, or a
    preset without the spread, keeps the preset's latency."""
    from dataclasses import replace
    from gpusim.estimate.kernel_time import slowest_l2_latency
    _, _, expected_max = _one_round_rows()
    gpu = gpusim.get_arch("h200")
    one = gpusim.simulate("sgemv", 1024)            # 128 CTAs of 256 threads: one round
    slow = slowest_l2_latency(one, gpu)
    assert slow.l2_hit_latency_cycles == pytest.approx(
        gpu.l2_hit_latency_cycles * (1 + gpu.sm_l2_latency_spread * expected_max(128)))
    assert slow.l2_hit_latency_cycles > gpu.l2_hit_latency_cycles * 1.06
    many = gpusim.simulate("saxpy", 1024)           # 4096 CTAs: four rounds of eight
    assert slowest_l2_latency(many, gpu) is gpu
    assert slowest_l2_latency(one, replace(gpu, sm_l2_latency_spread=0.0)).l2_hit_latency_cycles == \
        gpu.l2_hit_latency_cycles
    p = predict(gpusim.simulate("sgemv", 1024, keep_trace=True))
    assert any("slowest" in n and "micro/one_round.json" in n for n in p.notes)
    # the launch's end over the 128 SMs it reaches is in the time, not in the SMs' cycles
    end_us = gpu.launch_end_ns * 128 / 132 / 1e3
    assert p.metrics["gpusim__launch_end_us"] == pytest.approx(end_us)
    assert p.time_ms == pytest.approx(p.cycles / (gpu.sm_clock_max_mhz * 1e3) + (gpu.launch_overhead_us + end_us) / 1e3)


def _wave_starts(starts_by_slot_order):
    """The spread (last - first) of the second wave's starts: CTAs 8..15 of an SM, by start."""
    import numpy as np
    s = np.sort(np.asarray(starts_by_slot_order, float))
    return s[15] - s[8]


def test_chained_rounds_spread_out_as_the_h200s_do():
    """reduce_smem at 4096 (8 CTAs an SM at a time, 31 rounds): on the H200 (traces/hw/h200/ctasched/) the
    second wave of an SM starts spread over about a thousand cycles, its CTAs following the first wave's as
    each ends, not together. The engine's chained slots (steady_round's runs) spread them as widely, within
    a factor 1.5 of the H200's median over its SMs; its rounds timed as the first start them together."""
    import numpy as np
    from gpusim.estimate import kernel_time as KT
    from gpusim.estimate.round_inputs import _groups, _resident, window_trace
    from gpusim.timing import simulate_sm
    rec = json.loads((HW / "ctasched" / "ctasched_reduce_smem_4096.json").read_text())
    start, sm = np.asarray(rec["start_ns"], float), np.asarray(rec["sm"])
    gpu = gpusim.get_arch("h200")
    hw = np.median([_wave_starts(start[sm == m] * gpu.sm_clock_max_mhz * 1e-3) for m in np.unique(sm)])
    r = gpusim.simulate("reduce_smem", 4096)
    pred = predict(r)
    assert pred.rounds[0].later_cycles is not None and pred.rounds[0].later_cycles < pred.rounds[0].cycles
    counts, boards, reads, banks = pred.inputs["ptxas"]
    tr, _, _ = window_trace(r, _resident(r, gpu, 16), None)
    t = simulate_sm(tr, gpu, global_level=pred.inputs["levels"](tr, gpu), active_sms=gpu.sm_count,
                    stall_counts=counts, scoreboards=boards, read_barriers=reads, register_banks=banks,
                    groups=_groups(r, gpu), slots=8)
    starts = [int(t.warp_launch[t.warps[:, 0] == c].min()) for c in np.unique(t.warps[:, 0])]
    assert sorted(starts)[:8] == [0] * 8
    assert hw / 1.5 <= _wave_starts(starts) <= hw * 1.5, (hw, _wave_starts(starts))
    assert KT.steady_round(r, gpu, 8, 1, pred.inputs["levels"], None) is None     # no CTA follows


def test_write_latency_from_its_micro():
    """The preset's rise of the DRAM read latency under writes is the least-squares fit of
    micro/loaded_latency_writes.json (calibrate/loaded_latency_writes.py), and the record shows what it
    models: writes raise a read's latency where reads alone hardly do."""
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "calibrate"))
    from loaded_latency_writes import write_latency_fit
    rec = json.loads((HW / "micro" / "loaded_latency_writes.json").read_text())
    gpu = gpusim.get_arch("h200")
    a, c = write_latency_fit(rec["value"], gpu.dram_achieved_bandwidth_gbps)
    assert gpu.dram_write_latency_cycles_per_tbps == pytest.approx(a, abs=0.1)
    assert gpu.dram_mix_latency_cycles_per_tbps2 == pytest.approx(c, abs=0.1)
    rows = {(r["family"], r["stream_warps"], r["loads_in_flight"]): r for r in rec["value"]}
    idle = rows[("dram", 0, 1)]["chase_cycles"]
    assert rows[("dram", 8, 4)]["chase_cycles"] < 1.05 * idle < rows[("dram_rw", 8, 1)]["chase_cycles"] / 1.2


def test_dram_writes_raise_the_read_latency():
    """copy4 at 4096 writes B back to DRAM (64 MB, past the L2): its reads are timed at the idle latency
    plus the rise its own read and write rates give (a fixed point, to the settling tolerance), which
    makes it slower than at the idle latency; a launch the L2 holds (1024) has no rise."""
    from gpusim.estimate.kernel_time import WRITE_RISE_SETTLED, dram_write_rise
    gpu = gpusim.get_arch("h200")
    r = gpusim.simulate("copy4", 4096, keep_trace=True)
    p, idle = predict(r), predict(r, dram_writes=False)
    lat0 = gpu.dram_latency_ns * gpu.sm_clock_max_mhz / 1000.0
    assert p.metrics["dram__bytes_write.sum"] == 4096 * 4096 * 4
    secs = p.cycles / (gpu.sm_clock_max_mhz * 1e6)
    rise = dram_write_rise(gpu, p.metrics["dram__bytes_read.sum"] / secs / 1e12,
                           p.metrics["dram__bytes_write.sum"] / secs / 1e12)
    assert p.metrics["gpusim__dram_read_latency_cycles"] - lat0 == pytest.approx(rise, abs=WRITE_RISE_SETTLED * lat0)
    assert p.cycles > idle.cycles and any("DRAM reads timed at" in n for n in p.notes)
    small = gpusim.simulate("copy4", 1024, keep_trace=True)
    assert predict(small).cycles == predict(small, dram_writes=False).cycles


def test_the_longest_run_first_changes_the_order_only(monkeypatch):
    """The round's longest engine run (its chained CTAs in the last window) is started before the
    front-end makes the other windows (_longest_first): the prediction is the one made without it, from
    as many engine runs (the run started first is the one the chain then asks for, not a second)."""
    import gpusim.estimate.kernel_time as kt
    from gpusim import timing
    r = gpusim.simulate("naive", 1024, 512, 1024, keep_trace=True)
    assert r.loop_trips > W2
    assert plan_rounds(512, r.occupancy.blocks_per_sm, 132)[1][0][1] >= 2      # a round that comes again
    runs = []
    real = timing.run_lowered
    monkeypatch.setattr(timing, "run_lowered", lambda lw, *a, **k: runs.append(len(lw.cls)) or real(lw, *a, **k))
    early = []
    longest = kt._longest_first

    def spy(*a):
        longest(*a)
        early.append(len(a[-1]))          # the runs it started (its last argument: the pass's jobs)
    monkeypatch.setattr(kt, "_longest_first", spy)
    first = predict(r)
    assert early and early[0] == 1
    n_first = len(runs)
    assert n_first > 0
    monkeypatch.setattr(kt, "_longest_first", lambda *a, **k: None)
    runs.clear()
    plain = predict(gpusim.simulate("naive", 1024, 512, 1024, keep_trace=True))
    assert json.dumps(first.to_json(), sort_keys=True) == json.dumps(plain.to_json(), sort_keys=True)
    assert n_first == len(runs)


def test_one_round_launches_share_the_chip_by_their_ctas():
    """sharing_sms: every SM of a launch of several rounds, or of one CTA an SM; in one round whose CTAs
    spread unevenly, the grid's CTAs over the busiest SM's (traces/hw/h200/ctasched/: such SMs finish
    together where a chip-wide bandwidth binds)."""
    from types import SimpleNamespace
    from gpusim.estimate.kernel_time import sharing_sms
    gpu = gpusim.get_arch("h200")

    def launch(ctas, per_sm):
        return SimpleNamespace(grid=(ctas, 1, 1), occupancy=SimpleNamespace(blocks_per_sm=per_sm))
    assert sharing_sms(launch(1024, 8), gpu) == 128.0      # 100 SMs of 8, 32 of 7
    assert sharing_sms(launch(512, 8), gpu) == 128.0       # 116 of 4, 16 of 3
    assert sharing_sms(launch(264, 8), gpu) == 132.0       # even: 2 each
    assert sharing_sms(launch(64, 8), gpu) == 64.0         # one CTA an SM, 64 SMs
    assert sharing_sms(launch(4096, 8), gpu) == 132.0      # several rounds
    assert sharing_sms(launch(1024, 4), gpu) == 132.0
