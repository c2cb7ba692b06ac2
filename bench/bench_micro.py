"""The engine against the shared-memory and L2 microbenchmarks it is calibrated on (calibration, not
validation): for each recorded configuration, the H200's figure and the engine's, rebuilt from the
kernels' SASS as the tests do (tests/timing/test_shared_return.py, test_l2_path.py).

  lds_bursts_order.json: per configuration, cycles per rep (the loop), the median warp's issue
  time (t1 - t0) and its wait for the last value (t2 - t1), and ncu's warp states of five of them
  (lds_bursts_order_ncu.json) beside the engine's, with the part of the engine's mio_throttle that
  waited for the SM-wide pool rather than the SMSP's own queue; l2_requests.json: SM cycles per request
  (one warp per SMSP, where clock64 is the SM's own time); tile_loads.json: cycles per K tile of
  regblock's staging loop (tests/timing/test_tile_loads.py), 2048^2, every global load an L2 hit;
  lds_wide_return.json: one warp's cycles per shared load until a burst is back, by width and
  conflict (tests/timing/test_lds_wide_return.py); mio_capacity.json: the median issue time of a
  burst of B shared loads per warp layout (8 bursts per warp, each consumed before the next, as
  calibrate/mio_capacity.cu does), and the warp-cycles spent in mio_throttle beside ncu's
  for the same launches (mio_capacity_ncu.json: its per-issue ratio times smsp__inst_executed.sum;
  per-issue ratios do not compare, the H200's kernel issues 1.2-2.3x the engine's instructions for
  its shared-memory fill, clock reads and stamp stores), with the part of the engine's that waited
  for the SM-wide pool. The lds_bursts_order and mio_capacity traces carry the
  lds_bursts kernels' SASS barriers for their shared loads (test_shared_return.SASS_BARRIERS; the
  cap<> kernels' own SASS was not kept).
smsp_phase.json: whether the warps of one SMSP run regtile2d's dotIdx trips together (phases of one
  warp's trip starts within another's, and for two warps of one CTA the cycles between their starts of
  the same trip), the H200's beside the engine's regtile2d window at 4096.
dot_pair.json: regtile2d's dotIdx trip by one or two warps of an SMSP (tests/timing/test_dot_pair.py).
barrier_wait.json: the order in which a regtile1d CTA's warps reach its two barriers (mean rank by warp)
  and the spread of their arrivals, the H200's beside the engine's window at 4096, for each policy
  (tests/timing/test_barrier_wait.py).
queue_warps_ncu.json: mio_queue_depth's / lg_queue_depth's bursts by 4-32 warps of one CTA, ncu's warp
  states per issue beside the engine's (the stamp stores' read barrier as the SASS has it:
  tests/timing/test_queue_warps.py) and the kernel's cycles; then lg_throughput.json's 64 warps of
  L1-hit loads (its loop as a hand trace: 8 LDG, their sum), how the wait splits between the LG queue
  and the data (long_scoreboard / lg_throttle, a ratio that does not depend on the instruction count),
  without and with the read barriers of its SASS (micro/lg_throughput.sass), and the loads pending in
  the LSU pipe and their latency beside ncu's count of them (micro/lg_throughput_lsu.json).
lds_writeback.json / _ncu.json: 32 warps of LDS.32 / .64 / .128 whose lanes read 1-32 distinct words
  (tests/timing/test_queue_bursts.py's traces after the loops' SASS): loads per cycle, ncu's shared loads in
  flight and their latency, and the warp states per issue, the H200's beside the engine's.
l2_light_ncu.json: read_bw's and read_bw_f32's streams at light load (tests/timing/test_l2_path.py's
  traces after their SASS): global-load latency from issue to retirement and loads in flight per SM.
wb_mix.json: an FFMA warp (dot_ffma's trip) beside shared-load warps on its SMSP or another, and load warps
  alone or in pairs (tests/timing/test_wb_mix.py's traces after the loops' SASS): median cycles a trip / burst.
sched_pick.json: A warps of one SMSP with K independent FFMA chains (tests/timing/test_sched_pick.py's trace
  after the loop's SASS): cycles a trip, and the first warp's finish as a fraction of the last's, the H200's
  beside the engine's under its default policy and under "gtl".
Usage: python bench/bench_micro.py [--only lds|l2|tile|wide|mio|phase|dot|barrier|queue|wb|stream|mix|pending|dense|misses|lockstep|pick]
"""
import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gpusim.arch.presets import H200  # noqa: E402
from gpusim.timing import simulate_sm, LEVEL_L1, LEVEL_L2  # noqa: E402
from tests.timing.test_shared_return import stamped_trace, REPS, SASS_BARRIERS  # noqa: E402
from tests.timing.test_lds_wide_return import ONE_WARP, OPS, ROWS as WIDE_ROWS, back_time  # noqa: E402
from tests.timing.test_l2_path import l2_trace  # noqa: E402
from tests.timing.test_tile_loads import REC as TILE_REC, tile_cycles  # noqa: E402
from tests.timing.test_mio_capacity import cap_run  # noqa: E402

MICRO = ROOT / "traces" / "hw" / "h200" / "micro"


def _stamps(name, result=False):
    """Engine stamps (warp, rep, 3) for a lds_bursts_order configuration name (and the engine's
    TimingResult with result=True)."""
    kern, nw, *rest = name.split()
    B = int(rest[-1][1:])
    V = 1 if "lds32" in kern else 2 if "lds64" in kern else 4
    n = int(nw[:-1])
    warps = [4 * i for i in range(n)] if "smsp0" in rest else list(range(n))
    t = stamped_trace(V, B, warps, broadcast="bc" in kern, sync="sync" in kern)
    res = simulate_sm(t, H200, global_level=np.full(len(t), LEVEL_L1, np.int8), scoreboards=SASS_BARRIERS)
    ops = np.array(t.opcodes)[t.rows["op"][res.trace_row]]
    wrp = t.rows["warp"][res.trace_row]
    st = np.array([res.issue_cycle[np.flatnonzero((ops == "CS2R") & (wrp == w))].reshape(REPS, 3) for w in warps])
    return (st, res) if result else st


def _summary(s):
    s = np.asarray(s, float)
    loop = (s[:, 15, 0].min() - s[:, 2, 0].min()) / 13
    return loop, np.median(s[:, 1:, 1] - s[:, 1:, 0]), np.median(s[:, 1:, 2] - s[:, 1:, 1])


def lds():
    rec = json.loads((MICRO / "lds_bursts_order.json").read_text())["details"]["stamps"]
    print(f"{'lds_bursts_order':30s} {'loop H200':>9s} {'sim':>6s} {'issue H200':>10s} {'sim':>6s} "
          f"{'t2-t1 H200':>10s} {'sim':>6s}")
    errs = []
    for name in sorted(rec):
        sim = _stamps(name)
        h, e = _summary(rec[name]), _summary(sim)
        errs.append(e[0] / h[0] - 1)
        print(f"{name:30s} {h[0]:9.0f} {e[0]:6.0f} {h[1]:10.0f} {e[1]:6.0f} {h[2]:10.0f} {e[2]:6.0f}", flush=True)
    print(f"loop time: median error {100 * np.median(errs):+.1f} %, median |error| "
          f"{100 * np.median(np.abs(errs)):.1f} % over {len(errs)} configurations\n")
    ncu = json.loads((MICRO / "lds_bursts_order_ncu.json").read_text())["value"]
    keys = ("mio_throttle", "short_scoreboard", "wait", "not_selected")
    print(f"{'lds_bursts_order_ncu (per issue)':30s} " + " ".join(f"{k[:8]:>8s} H200/sim" for k in keys)
          + "  warp cyc/inst H200/sim  sim mio_throttle from the SM pool")
    for r in ncu:
        name = r["kernel"].replace("_16 ", " ")           # "stamp_x_16 16w B16" -> "stamp_x 16w B16"
        _, res = _stamps(name, result=True)
        n = res.inst_issued
        print(f"{name:30s} " + " ".join(f"{r['stall_' + k]:8.2f} {res.state_cycles[k] / n:4.2f}" for k in keys)
              + f"  {r['smsp__average_warp_latency_per_inst_issued.ratio']:8.2f} "
              f"{res.metrics['smsp__average_warp_latency_per_inst_issued.ratio']:5.2f}"
              f"  {res.metrics['gpusim__mio_throttle_sm_pool.ratio']:10.2f}")
    print()


def l2():
    rows = json.loads((MICRO / "l2_requests.json").read_text())["details"]["rows"]
    print(f"{'l2_requests (ld.global.ca, 4 warps/SM)':40s} {'H200':>8s} {'sim':>8s}  cycles per request")
    for r in rows:
        if r["load"] != "ld.global.ca" or r["warps_per_sm"] != 4:
            continue
        D = r["distinct_lines_per_request"]
        t = l2_trace(4, D)
        ops = np.array(t.opcodes)[t.rows["op"]]
        lvl = np.where(np.char.startswith(ops.astype(str), "LDG"), LEVEL_L2, LEVEL_L1).astype(np.int8)
        res = simulate_sm(t, H200, global_level=lvl, active_sms=H200.sm_count)
        print(f"{'D = ' + str(D) + ' lines':40s} {r['cycles_per_request_clock64']:8.2f} {res.cycles / (4 * 32 * 8):8.2f}")


def tile():
    print(f"\n{'tile_loads (2048^2, 4 CTAs x 4 warps per SM)':46s} {'H200':>8s} {'sim':>8s}  cycles per tile")
    for r in TILE_REC["details"]["rows"]:
        if r["size"] != 2048 or r["mode"] not in ("loads+sts", "sts"):   # (the trace models these two)
            continue
        sim = tile_cycles(r["ffma_per_thread_per_tile"] // 8, stores_only=r["mode"] == "sts")
        label = f"{r['mode']}, {r['ffma_per_thread_per_tile']} FFMA/thread"
        print(f"{label:46s} {r['cycles_per_tile_median']:8.0f} {sim:8.0f}")


def wide():
    print(f"\n{'lds_wide_return (one warp)':30s} {'wf/load':>8s} {'H200':>7s} {'sim':>7s}  cycles per load")
    for k in ONE_WARP:
        v, wf = k["words_per_lane"], int(k["wavefronts_per_load_ncu"])
        bs = sorted(r["loads"] for r in WIDE_ROWS if r["mask"] == "0x1" and r["distinct_rows"] == 1
                    and r["words_per_lane"] == v and r["conflict"] == k["conflict"])
        sim = np.polyfit(bs, [back_time(OPS[v], wf, b) for b in bs], 1)[0]
        label = f"{OPS[v]} {k['conflict']}-way"
        print(f"{label:30s} {wf:8d} {k['cycles_per_load']:7.2f} {sim:7.2f}")


def _mio_issue(V, wf, B, warps, reps=8):
    """Median over warps and bursts 2..reps of the engine's burst issue time (t1 - t0), and the
    engine's TimingResult."""
    t, res = cap_run(warps, V, wf, B, reps)
    ops = np.array(t.opcodes)[t.rows["op"][res.trace_row]]
    wrp = t.rows["warp"][res.trace_row]
    spans = []
    for w in warps:
        cs = res.issue_cycle[np.flatnonzero((ops == "CS2R") & (wrp == w))].reshape(reps, 3)
        spans += list(cs[1:, 1] - cs[1:, 0])
    return float(np.median(spans)), res


def mio():
    rows = json.loads((MICRO / "mio_capacity.json").read_text())["details"]["rows"]
    # ncu's mio_throttle for the same launches, as warp-cycles (ratio x instructions issued): its
    # kernel also fills shared memory, reads clocks and stores stamps, which the engine's trace leaves
    # out, so its per-issue ratios are diluted and only the totals compare
    ncu = {(r["mask"], r["words_per_lane"], r["conflict"], r["loads"]):
           r["stall_mio_throttle"] * r["smsp__inst_executed.sum"]
           for r in json.loads((MICRO / "mio_capacity_ncu.json").read_text())["details"]["rows"]}
    print(f"\n{'mio_capacity (burst issue, cycles)':34s} {'B':>3s} {'H200':>7s} {'sim':>7s}   "
          f"mio_throttle k warp-cycles H200  sim  sim/H200 (SM pool share)")
    for r in rows:
        if r["mask"] == "0x1":
            continue
        m = int(r["mask"], 16)
        warps = [w for w in range(32) if (m >> w) & 1]
        V, c = r["words_per_lane"], r["conflict"]
        wf = c if V == 1 else V
        sim, res = _mio_issue(V, wf, r["loads"], warps)
        thr = res.state_cycles["mio_throttle"]
        pool = res.metrics["gpusim__mio_throttle_sm_pool.ratio"] * res.inst_issued
        hw = ncu.get((r["mask"], V, c, r["loads"]), float("nan"))
        ratio = f"{thr / hw:8.2f}" if hw > 0 else f"{'-':>8s}"
        share = f"{pool / thr:.2f}" if thr > 0 else "-"
        label = f"{r['layout'][:18]} {OPS[V]} {wf}wf"
        print(f"{label:34s} {r['loads']:3d} {r['issue_cycles_median']:7.0f} {sim:7.0f}   "
              f"{hw / 1e3:26.1f} {thr / 1e3:6.1f} {ratio} ({share})", flush=True)


def regtile2d_trip_starts():
    """The engine's regtile2d at 4096, its first round (2 CTAs) over a 16-slab window as predict() times
    it: per warp the issue cycles of the first shared load of each dotIdx trip (every 10th LDS: 8 LDS and
    2 LDS.128 a trip), with each warp's SMSP and CTA."""
    import gpusim
    from gpusim.estimate import kernel_time as KT
    from gpusim.timing import lower, run_lowered
    res = gpusim.simulate("regtile2d", 4096)
    gpu = gpusim.get_arch("h200")
    tr, _ = KT.build_window(res, KT._resident(res, gpu, 2), 16)
    counts, boards, reads, banks = ptx = KT.ptxas_facts(res)
    lw = lower(tr, gpu, global_level=KT.prediction_levels(res, gpu, ptx)[0](tr, gpu), stall_counts=counts,
               scoreboards=boards, read_barriers=reads, register_banks=banks)
    t = run_lowered(lw, gpu)
    ops = np.array(tr.opcodes)[tr.rows["op"][t.trace_row]].astype(str)
    lds_rows = np.char.startswith(ops, "LDS")
    series = {w: np.sort(t.issue_cycle[np.flatnonzero(lds_rows & (t.row_warp == w))[::10]].astype(np.float64))
              for w in range(len(t.warps))}
    return series, {w: int(lw.warp_smsp[w]) for w in series}, {w: int(lw.warp_cta[w]) for w in series}


def phase():
    """smsp_phase.json: do the warps of one SMSP run regtile2d's dotIdx trips together? The H200's
    figures beside the engine's on its own regtile2d window."""
    sys.path.insert(0, str(ROOT / "calibrate"))
    from smsp_phase import pair_phases, same_trip_offsets, summarize, summarize_offsets
    rec = json.loads((MICRO / "smsp_phase.json").read_text())["details"]
    series, smsp, cta = regtile2d_trip_starts()
    sim_ph, sim_off = summarize(pair_phases(series, smsp, cta)), summarize_offsets(same_trip_offsets(series, smsp, cta))
    print(f"\nsmsp_phase: regtile2d 4096, start of each dotIdx trip; H200 trip {rec['trip_cycles_median']:.0f} cycles, "
          f"engine {np.median([np.median(np.diff(v)) for v in series.values()]):.0f}")
    print(f"{'pairs of warps':30s} {'median phase H200':>18s} {'sim':>6s}   (0 together, 0.5 half a trip apart)")
    for g, h in rec["phases"].items():
        print(f"{g:30s} {h['median']:18.3f} {sim_ph.get(g, {}).get('median', float('nan')):6.3f}")
    print(f"{'one CTA, same trip':30s} {'median |offset| H200':>20s} {'sim':>6s}   cycles")
    for g, h in rec["same_trip_offsets_same_cta"].items():
        print(f"{g:30s} {h['median']:20.0f} {sim_off.get(g, {}).get('median', float('nan')):6.0f}")


def dot():
    """dot_pair.json: regtile2d's dotIdx trip by one warp, two on one SMSP, two on two SMSPs, two on each
    SMSP: trip time and the cycles between same-SMSP warps' starts of the same trip, H200 beside engine (with
    the loop's FFMA register reads, as the prediction runs a kernel with a SASS record); then the eight
    warps' SMSP phases, and the engine's from an in-step start and from the H200's arrangement."""
    from tests.timing.test_dot_pair import REC, STEADY, dot_pair_run, trip_and_offset, staggered_run, _smsp_phases
    print(f"\n{'dot_pair (regtile2d dotIdx trip)':34s} {'trip H200':>9s} {'sim':>6s}   {'same-SMSP offset H200':>21s} {'sim':>6s}")
    for r in REC["details"]["rows"]:
        warps = sorted(int(w) for w in r["warp_slots"])
        hw_st = {int(w): np.array(t) for w, t in REC["details"]["stamps"][r["mask"]].items()}
        hw_trip, hw_off = trip_and_offset(hw_st)
        sim_trip, sim_off = trip_and_offset(dot_pair_run(warps, loads=r["kernel"] == "dot_pair", banks=True)[0])
        fmt = lambda v: "/".join(f"{x:.0f}" for x in v) if v else "-"      # noqa: E731
        print(f"{r['layout']:34s} {hw_trip:9.0f} {sim_trip:6.0f}   {fmt(hw_off):>21s} {fmt(sim_off):>6s}")
    # ncu's states for the same trips (dot_pair_ncu.json: 132 CTAs, one per SM): PC samples of the trip
    # loop's instructions per selected sample, the loop's own states per issued instruction
    sys.path.insert(0, str(ROOT / "calibrate"))
    from dot_pair_ncu import loop_states
    ncu = json.loads((MICRO / "dot_pair_ncu.json").read_text())
    keys = ("not_selected", "wait", "short_scoreboard", "dispatch_stall")
    print(f"{'dot_pair loop states per issue':34s} " + " ".join(f"{k[:10]:>10s} H200/sim" for k in keys))
    for r in REC["details"]["rows"]:
        hw = loop_states(ncu, r["mask"])
        res = dot_pair_run(sorted(int(w) for w in r["warp_slots"]), loads=r["kernel"] == "dot_pair", banks=True)[1]
        n = res.inst_issued
        print(f"{r['layout']:34s} " + " ".join(f"{hw.get(k, 0.0):10.2f} {res.state_cycles.get(k, 0) / n:4.2f}    "
                                             for k in keys))
    slots = next(r for r in REC["details"]["rows"] if r["mask"] == "0xff")["warp_slots"]
    hw_st = {int(w): np.array(t) for w, t in REC["details"]["stamps"]["0xff"].items()}
    fmt = lambda v: " / ".join(f"{x:.0f}" for x in v)      # noqa: E731
    print(f"\neight warps, SMSPs' trip starts behind the first (cycles): H200 "
          f"{fmt(_smsp_phases(hw_st, STEADY, lambda w: slots[str(w)] % 4))}, pairs {fmt(trip_and_offset(hw_st)[1])}")
    for name, delay in (("in-step start", [0] * 8), ("started as the H200 settles", [0, 18, 37, 55] * 2)):
        st = staggered_run(delay)
        trip, off = trip_and_offset(st)
        print(f"  engine, {name}: {fmt(_smsp_phases(st, STEADY, lambda w: w % 4))}, pairs {fmt(off)}, "
              f"{trip:.0f} cycles a trip")
    # dot_pair_delay.json: warp 4 held back before its first trip (the engine: a chain of delay / 4 IADD3s)
    from tests.timing.test_dot_pair_delay import ROWS as DELAY_ROWS, phase
    print(f"\n{'warps 0 and 4, warp 4 held back':34s} {'phase H200':>10s} {'sim':>6s}   (cycles apart, trips 24-63; "
          f"half a trip: in turns)")
    for r in DELAY_ROWS:
        if r["mask"] != "0x11":
            continue
        loads = r["kernel"] == "dot_pair"
        st = dot_pair_run([0, 4], trips=64, loads=loads, banks=True, hold={4: r["delay"] // 4})[0]
        p, trip = phase(st, 0, 4)
        print(f"{r['kernel'] + ', ' + str(r['delay']) + ' cycles':34s} {r['pairs'][0]['phase_median']:10.0f} {p:6.0f}"
              f"   (trip H200 {np.mean(list(r['trip_cycles_median'].values())):.0f}, sim {trip:.0f})")


def barrier():
    """barrier_wait.json: which warps of a regtile1d CTA reach its barriers first, and how spread out."""
    from tests.timing.test_barrier_wait import REC, engine_arrivals
    sys.path.insert(0, str(ROOT / "calibrate"))
    from barrier_wait import arrival_ranks
    groups = [range(0, 4), range(4, 8), range(8, 12), range(12, 16)]
    fmt = lambda r: " ".join(f"{np.mean([r[i] for i in g]):5.1f}" for g in groups)   # noqa: E731
    print(f"\nbarrier_wait: regtile1d 4096, mean arrival rank of warps 0-3 / 4-7 / 8-11 / 12-15 (0 first), "
          f"median spread of a CTA's arrivals (cycles)")
    print(f"{'':12s} {'first barrier':>24s} {'spread':>7s}   {'second barrier':>24s} {'spread':>7s}")
    print(f"{'H200':12s} {fmt(REC['arrival1_mean_rank']):>24s} {REC['spread1_median_cycles']:7.0f}   "
          f"{fmt(REC['arrival2_mean_rank']):>24s} {REC['spread2_median_cycles']:7.0f}")
    a1, a2 = engine_arrivals(16)
    sp = lambda a: float(np.median((a.max(axis=1) - a.min(axis=1))[:, 4:]))   # noqa: E731  (from slab 4)
    print(f"{'sim':12s} {fmt(arrival_ranks(a1)):>24s} {sp(a1):7.0f}   {fmt(arrival_ranks(a2)):>24s} "
          f"{sp(a2):7.0f}")
    from tests.timing.test_barrier_wait import engine_load_times, within_cta_share
    from tests.timing.test_coalesced_wait import REC as CW, engine_a_load_times, within_share
    slabs, chunks = {}, {}
    for dr in ("spread", "grouped"):
        lat = engine_load_times(dr)
        slabs[dr] = (lat, within_cta_share(lat))
        lat, keys = engine_a_load_times(dr)
        chunks[dr] = (lat, within_share(lat, keys))
    _load_times("global-load time per warp and slab (cycles): 10/50/90th percentile, share of variance within a "
                "CTA's slab", REC, slabs)
    _load_times("coalesced_wait: coalesced 4096, each warp's first A load of a K chunk (cycles), share of variance "
                "within a CTA's chunk", CW, chunks)


def _load_times(title, rec, sims):
    """The H200's load-time percentiles and within-CTA share (a record's details) beside the engine's, for
    each way of spreading the DRAM rows: sims {dram_rows: (latencies, share)}."""
    q = rec["load_latency_quantiles_cycles"]
    print(title)
    print(f"{'H200':12s} {q['10']:5.0f} {q['50']:5.0f} {q['90']:5.0f}   {rec['load_latency_within_cta_share']:.2f}")
    for dr, (lat, share) in sims.items():
        p10, p50, p90 = np.percentile(lat, [10, 50, 90])
        print(f"{'sim ' + dr:12s} {p10:5.0f} {p50:5.0f} {p90:5.0f}   {share:.2f}   (DRAM rows {dr})")

def queue():
    from tests.timing.test_queue_warps import ROWS, run as burst_run
    keys = ("lg_throttle", "mio_throttle", "long_scoreboard", "short_scoreboard")
    print("\nqueue_warps_ncu (per issue, H200/sim)  " + "  ".join(f"{k[:12]:>13s}" for k in keys) + "   cycles H200/sim")
    for (kind, B, warps), r in ROWS.items():
        res = burst_run(B, warps, kind=kind)
        n = res.inst_issued
        print(f"{kind} {warps:2d} warps B{B:<3d}                 " + "  ".join(
            f"{r['stall_' + k]:6.1f} {res.state_cycles[k] / n:6.1f}" for k in keys)
            + f"   {r['sm__cycles_elapsed.max']:8d} {res.cycles:8d}")


def lg_loop_read_barriers():
    """(i, d) pairs of lg_throughput.sass's timed loop (two unrolled trips of 8 LDG): load i + d may not
    issue before the pipe has taken load i (the waiter carried to the next load, as the engine does)."""
    from gpusim.timing.control_codes import barriers
    ins = [x for x in barriers((MICRO / "lg_throughput.sass").read_text()) if 0x1160 <= x[0] <= 0x1820]
    mem = [k for k, x in enumerate(ins) if x[1].startswith("LDG")]
    owner, pairs = {}, set()
    for k, (_, op, _, rb, wait) in enumerate(ins):
        for b in range(6):
            if wait >> b & 1 and b in owner:
                i = mem.index(owner.pop(b))
                pairs.add((i, next((n for n, j in enumerate(mem) if j >= k), len(mem)) - i))
        if op.startswith("LDG") and rb != 7:
            owner[rb] = k
    return len(mem), tuple(sorted(pairs))


def lg_split():
    from tests.timing.test_queue_bursts import lg_loop
    rec = json.loads((MICRO / "lg_throughput.json").read_text())
    lsu = {r["distinct_lines_per_request"]: r["ncu"]
           for r in json.loads((MICRO / "lg_throughput_lsu.json").read_text())["details"]["rows"]}
    pend, lat = "sm__inst_pending_pipe_lsu_mem_lg_cmd_read.avg.per_cycle_active", \
        "sm__average_inst_latency_pipe_lsu_mem_lg_cmd_read.ratio"
    n_mem, pairs = lg_loop_read_barriers()
    print(f"\nlg_throughput (64 warps, L1 hits): long_scoreboard / lg_throttle, H200 vs engine without / with "
          f"the SASS's read barriers {pairs}; then the loads pending per SM cycle and their latency "
          f"(lg_throughput_lsu.json), H200 / engine")
    for r in rec["details"]["rows"]:
        D = r["distinct_lines_per_request"]
        if D < 4:
            continue
        t = lg_loop(D)
        hw = r["ncu"]
        line = f"  D = {D:2d} lines: H200 {hw[ncu_stall('long_scoreboard')] / hw[ncu_stall('lg_throttle')]:.2f}"
        for rb in (None, [(("LDG.E",) * n_mem, pairs)]):
            res = simulate_sm(t, H200, global_level=np.full(len(t), LEVEL_L1, np.int8), read_barriers=rb)
            line += f"   engine {res.state_cycles['long_scoreboard'] / max(res.state_cycles['lg_throttle'], 1):.2f}"
        if D in lsu:
            line += (f"   pending {lsu[D][pend]:.1f} / {res.metrics[pend]:.1f}"
                     f"   latency {lsu[D][lat]:.0f} / {res.metrics[lat]:.0f}")
        print(line)


def few_words():
    from tests.timing.test_queue_bursts import FEW_WORDS, few_word_stream
    from gpusim.timing import LSU_PENDING, LSU_LATENCY
    rate = json.loads((MICRO / "lds_writeback.json").read_text())["details"]
    ncu = {r["kernel"].split()[0]: r for r in json.loads((MICRO / "lds_writeback_ncu.json").read_text())["value"]}
    print(f"\n{'lds_writeback (32 warps)':18s} {'LDS/cycle':>13s} {'in flight':>11s} {'latency':>11s}   "
          f"{'mio_throttle':>13s} {'short_scoreb':>13s} {'not_selected':>13s}   (H200 / engine)")
    for k in sorted(FEW_WORDS):
        m = ncu[k]
        r = simulate_sm(few_word_stream(k), H200)
        st = {s: r.state_cycles[s] / r.inst_issued for s in ("mio_throttle", "short_scoreboard", "not_selected")}
        cols = [f"{rate[k]['lds_per_cycle_per_sm']:6.3f} {32 * 256 / r.cycles:6.3f}",
                f"{m[LSU_PENDING.format('shared')]:5.1f} {r.metrics[LSU_PENDING.format('shared')]:5.1f}",
                f"{m[LSU_LATENCY.format('shared')]:5.0f} {r.metrics[LSU_LATENCY.format('shared')]:5.0f}"]
        cols += [f"{m['stall_' + s]:6.2f} {v:6.2f}" for s, v in st.items()]
        print(f"{k:18s} " + "  ".join(cols))


def streams():
    from tests.timing.test_l2_path import LIGHT, LAT, stream_trace
    from gpusim.timing import LSU_PENDING
    print(f"\n{'l2_light (ncu)':44s} {'latency H200':>12s} {'sim':>6s}   {'in flight / SM H200':>19s} {'sim':>6s}")
    for v in LIGHT["value"]:
        name = v["kernel"]
        w, sms = int(name.split("(")[1].split()[0]), int(name.split(", ")[1].split()[0])
        t, lv = stream_trace(w, "f32" in name, "2048 MiB" in name)
        r = simulate_sm(t, H200, global_level=lv, active_sms=sms)
        pend = v["sm__inst_pending_pipe_lsu_mem_lg_cmd_read.max"] / v["sm__cycles_active.max"]
        print(f"{name:44s} {v[LAT]:12.0f} {r.metrics[LAT]:6.0f}   {pend:19.1f} {r.metrics[LSU_PENDING.format('lg')]:6.1f}")


def wb_mix():
    from tests.timing.test_wb_mix import ROWS, wb_mix_run, median_period
    print(f"\n{'wb_mix':20s} {'load kind':18s}  warp role: H200 / engine cycles a trip (ffma) or burst (lds)")
    for lab, r in ROWS.items():
        f, l, k = lab.split()
        bits = lambda m: [w for w in range(8) if (int(m, 16) >> w) & 1]     # noqa: E731
        stamps, _ = wb_mix_run(bits(f), bits(l), int(k))
        cols = [f"{w} {r['roles'][w]}: {c:.0f} / {median_period(stamps[int(w)]):.0f}" for w, c in r["median_cycles"].items()]
        print(f"F {f:5s} L {l:5s}     {r['kind'] if l != '0x0' else '-':18s}  " + "   ".join(cols[:3]) + ("  ..." if len(cols) > 3 else ""))


def pending():
    """l1_pending.json's G = 32 rows (32 warps on the same U lines a step): the engine on the recorded SASS loop
    beside the H200, with a hit on a pending line freeing its LG entry at its own return (the preset) and
    holding it until the fill (the rule before)."""
    import dataclasses
    from tests.timing.test_l1_pending import summary
    print(f"\n{'l1_pending, G = 32 of 32 warps':34s} {'loads/cycle':>17s} {'in flight':>15s} {'latency':>13s} "
          f"{'lg_throttle':>13s} {'long_sb':>13s}")
    print(f"{'':34s}" + "   H200   sim" * 5 + "   (sim with the entry held until the fill)")
    held = dataclasses.replace(H200, pending_hit_entry_until_fill=True)
    for u, dram in ((4, False), (8, False), (16, False), (32, False), (16, True)):
        s, h = summary(u, dram), summary(u, dram, held)["sim"]
        cells = "".join(f" {hv if hv is not None else float('nan'):6.2f} {sv:5.2f}" if k in (0, 3, 4)
                        else f" {hv if hv is not None else float('nan'):6.0f} {sv:5.0f}"
                        for k, (hv, sv) in enumerate(zip(s["hw"], s["sim"])))
        print(f"{'U ' + str(u) + (' DRAM' if dram else ' L2'):34s}{cells}   ({h[0]:.2f} {h[1]:.0f} {h[2]:.0f} {h[3]:.2f} {h[4]:.2f})")


def dense():
    """l1_dense.json: L1TEX at about two instructions a load, the engine on the recorded SASS loop beside the H200."""
    from tests.timing.test_l1_dense import summary, ROWS
    print(f"\n{'l1_dense':52s} {'loads/cycle':>13s} {'L1TEX %':>13s} {'in flight':>13s} {'latency':>13s} "
          f"{'lg_throttle':>13s} {'long_sb':>13s}")
    print(f"{'':52s}" + "   H200    sim" * 6)
    for label in ROWS:
        s = summary(label)
        print(f"{label:52s}" + "".join(f" {h:6.2f} {v:6.2f}" for h, v in zip(s["hw"], s["sim"])))


def misses():
    """l1_misses.json: streams of L1 misses (4-32 warps, L2 or DRAM, one-line, one-sector or two-line requests),
    the engine on the recorded SASS loop beside the H200, with the SM's miss entries (the preset) and without."""
    import dataclasses
    from tests.timing.test_l1_misses import summary, ROWS
    print(f"\n{'l1_misses':72s} {'in flight':>13s} {'latency':>13s} {'lg_throttle':>13s} {'long_sb':>13s}"
          "   (sim without miss entries)")
    print(f"{'':72s}" + "   H200    sim" * 4)
    none = dataclasses.replace(H200, lg_sm_miss_depth=0)
    for label in ROWS:
        s, z = summary(label), summary(label, none)["sim"]
        print(f"{label:72s}" + "".join(f" {h:6.1f} {v:6.1f}" for h, v in zip(s["hw"], s["sim"]))
              + f"   ({' '.join(f'{v:.1f}' for v in z)})")


def lockstep():
    """l1_phase.json: how far apart the warps that share lines start each step, the engine beside the H200."""
    from tests.timing.test_l1_phase import summary, ROWS
    print(f"\n{'l1_phase':72s} {'loads/cycle':>13s} {'spread, all':>13s} {'in a group':>13s} {'step':>13s}")
    print(f"{'':72s}" + "   H200    sim" * 4)
    for label in ROWS:
        s = summary(label)
        print(f"{label:72s}" + "".join(f" {h:6.2f} {v:6.2f}" if k == 0 else f" {h:6.0f} {v:6.0f}"
                                       for k, (h, v) in enumerate(zip(s["hw"], s["sim"]))))


def pick():
    """sched_pick.json: which warp an SMSP picks, the H200 beside the engine's policy (gty)."""
    from tests.timing.test_sched_pick import CONFIGS, REC, engine_stamps, summary
    print(f"\nsched_pick: A warps of one SMSP, K FFMA chains  {'cycles a trip (H200, gty)':>26s}   first finish / last"
          f" (H200, gty)")
    for k, a in CONFIGS:
        r = REC[(k, a)]
        sims = [summary(engine_stamps(k, a))]
        print(f"  K = {k}, A = {a}  {r['cycles_per_trip_per_warp_median']:26.1f} {sims[0][0]:7.1f}"
              f"   {r['earliest_finish_fraction_median']:5.2f} {sims[0][1]:5.2f}")


def ncu_stall(reason):
    return f"smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", choices=("lds", "l2", "tile", "wide", "mio", "phase", "dot", "barrier", "queue", "wb",
                                       "stream", "mix", "pending", "dense", "misses", "lockstep", "pick"))
    a = ap.parse_args()
    if a.only in (None, "lds"):
        lds()
    if a.only in (None, "l2"):
        l2()
    if a.only in (None, "tile"):
        tile()
    if a.only in (None, "wide"):
        wide()
    if a.only in (None, "mio"):
        mio()
    if a.only in (None, "phase"):
        phase()
    if a.only in (None, "dot"):
        dot()
    if a.only in (None, "barrier"):
        barrier()
    if a.only in (None, "queue"):
        queue()
        lg_split()
    if a.only in (None, "wb"):
        few_words()
    if a.only in (None, "stream"):
        streams()
    if a.only in (None, "mix"):
        wb_mix()
    if a.only in (None, "pending"):
        pending()
    if a.only in (None, "dense"):
        dense()
    if a.only in (None, "misses"):
        misses()
    if a.only in (None, "lockstep"):
        lockstep()
    if a.only in (None, "pick"):
        pick()


if __name__ == "__main__":
    main()
