"""traces/hw/h200/micro/dot_pair.json (a mechanism probe, not the ladder): regtile2d's dotIdx trip (9
integer ops, 8 LDS of 2 wavefronts and 2 LDS.128 of 8 in the SASS's order, 64 FFMAs one Bs vector at a
time) run by one warp alone, two warps of one SMSP, two of two SMSPs, and two on each SMSP, with the
loop's ptxas stall counts from its SASS. dot_pair_run() builds the engine's trace of it;
bench/bench_micro.py --only dot prints both sides, with ncu's warp states (dot_pair_ncu.json). On the
H200 a warp alone takes 187 cycles a trip; two on one SMSP take 283 and 307 in turn (295 a trip each)
and start each trip 12 cycles apart, the lead changing every trip; warps on different SMSPs do not slow
each other (188). ncu's PC samples of the pair (dot_pair_ncu.json) show how the two share the SMSP: the
waiting warp waits at three points of the trip (its top, after the first load's data, the FFMA that waits
for the last loads) and takes the running warp's dispatch stalls as its own; no not_selected falls inside
an FFMA run. The engine with the loop's FFMA register reads (as the prediction runs a kernel with a SASS
record; banks=True) and that rule (presets: register_stall "hold"): 184 alone, 281 for two on one SMSP
with the ncu pair's waits per issue, but 73 cycles apart where the H200's start each trip together (a
strict xfail in test_dot_pair_delay.py). Without the loads (dot_ffma: the 64 FFMAs on registers loaded once) the H200's two
warps take turns, 83 cycles apart at 166 a trip (91 alone); the engine's too (82 of 164)."""
import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from gpusim.arch.presets import H200
from gpusim.timing import simulate_sm, LEVEL_L1, STATES
from tests.timing.hand_trace import HandTrace
from tests.timing.test_shared_return import SASS_BARRIERS

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "calibrate"))
from dot_pair import loop_range, loop_stall_counts, _function  # noqa: E402  (the record script's own readers)
from dot_pair_ncu import loop_states  # noqa: E402

REC = json.loads((ROOT / "traces/hw/h200/micro/dot_pair.json").read_text())
ROWS = {r["mask"]: r for r in REC["details"]["rows"]}
NCU = json.loads((ROOT / "traces/hw/h200/micro/dot_pair_ncu.json").read_text())
ROWS_NCU = {r["mask"]: r for r in NCU["details"]["rows"]}
SASS = (ROOT / "traces/hw/h200/micro/dot_pair.sass").read_text()
HEAD = ("SHF.L.U32", "LOP3.LUT", "SHF.L.U32", "LOP3.LUT", "LOP3.LUT", "LOP3.LUT", "LEA", "LEA", "IADD3")
STEADY = 8


def loop_banks(kernel: str = "dot_pair") -> tuple:
    """The packed register reads (register_banks) of the FP32 instructions of a kernel's trip loop in
    micro/dot_pair.sass (dot_pair.py's loop_range), with the reuse its back edge carries."""
    from gpusim.timing.register_banks import fp32_reads, pack
    lo, hi = loop_range(SASS, kernel)
    listing = [(int(m.group(1), 16), m.group(2))
               for m in re.finditer(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", _function(SASS, kernel))
               if lo <= int(m.group(1), 16) <= hi]
    return tuple(pack(x) for x in fp32_reads(listing + listing)[len(fp32_reads(listing)):])


def add_trip(add, acc: list):
    """dot_pair's trip after its clock read, in the SASS's order: the integer head, 8 LDS of 2 wavefronts and
    2 LDS.128 of 8, the 64 FFMAs one Bs vector at a time (lane 0's stamp after the first), the back edge."""
    for op in HEAD:
        add(op)
    a = [add("LDS", wf=2)]
    add("ISETP.NE.AND")
    b = [add("LDS.128", wf=8)]
    a += [add("LDS", wf=2) for _ in range(7)]
    b.append(add("LDS.128", wf=8))
    add("MOV")
    add("IADD3")
    for j in range(2):
        for i in range(8):
            for n in range(4):
                k = i * 8 + j * 4 + n
                acc[k] = add("FFMA", (a[i], b[j], acc[k]))
                if j == i == n == 0:
                    add("STG.E.64", sec=1, lines=1)       # lane 0's stamp
    add("IADD3.X")
    add("BRA")


def dot_pair_run(warps: list, trips: int = 64, loads: bool = True, banks: bool = False,
                 arch=H200, hold: dict | None = None, log: bool = False):
    """Per warp (SMSP w % 4) the engine's start cycle of each trip (its clock read), and the TimingResult.
    loads=False: dot_ffma's trip, the 64 FFMAs on registers loaded once (its SASS's loop: clock read, two
    IADD3, the stamp, the FFMAs, ISETP, IADD3.X, BRA). hold: {warp: n}, warp held back before its first
    trip by a chain of n dependent IADD3s (4 cycles each; micro/dot_pair_delay.json's spin). log: keep the
    stall intervals (TimingResult.state_log) and return the trace as well."""
    ht = HandTrace()
    for w in range(max(warps) + 1):
        add = ht.warp(w)
        if w in warps:
            acc = [add("CS2R") for _ in range(64)]
            x = None
            if hold and hold.get(w):
                x = add("IADD3")
                for _ in range(hold[w] - 1):
                    x = add("IADD3", (x,))
            for _ in range(trips):
                add("CS2R", (x,) if x is not None else ())
                if not loads:
                    add("IADD3")
                    add("IADD3")
                    add("STG.E.64", sec=1, lines=1)
                    for k in range(64):
                        acc[k] = add("FFMA", (acc[k],))
                    add("ISETP.NE.AND")
                    add("IADD3.X")
                    add("BRA")
                    continue
                add_trip(add, acc)
        add("EXIT")
    t = ht.trace()
    res = simulate_sm(t, arch, global_level=np.full(len(t), LEVEL_L1, np.int8),
                      stall_counts=REC["details"]["loop_stall_counts" if loads else "loop_stall_counts_ffma"],
                      scoreboards=SASS_BARRIERS,
                      register_banks=loop_banks("dot_pair" if loads else "dot_ffma") if banks else None,
                      log_states=4_000_000 if log else 0)
    ops = np.array(t.opcodes)[t.rows["op"][res.trace_row]]
    wp = t.rows["warp"][res.trace_row]
    starts = {w: np.sort(res.issue_cycle[np.flatnonzero((ops == "CS2R") & (wp == w))])[64:] for w in warps}
    return (starts, res, t) if log else (starts, res)


def trip_and_offset(starts: dict) -> tuple[float, list]:
    """Mean trip time over trips STEADY.. (the H200's pair alternates 283 / 307) and, per pair of warps on
    one SMSP, the median cycles between their starts of the same trip."""
    trip = float(np.mean([np.mean(np.diff(s[STEADY:])) for s in starts.values()]))
    ws = sorted(starts)
    off = [float(np.median(np.abs(starts[a][STEADY:] - starts[b][STEADY:])))
           for i, a in enumerate(ws) for b in ws[i + 1:] if a % 4 == b % 4]
    return trip, off


def test_record_pairs_share_an_smsp_as_the_engine_places_them():
    """The H200 put warps 0 and 4 on one SMSP (%warpid % 4), as the engine does (w % 4)."""
    for mask in ("0x11", "0xff"):
        slots = ROWS[mask]["warp_slots"]
        assert {int(w): s % 4 for w, s in slots.items()}[0] == {int(w): s % 4 for w, s in slots.items()}[4]


def test_warps_on_different_smsps_do_not_slow_each_other():
    """H200: 187 alone, 188 with warp 1 on another SMSP; the engine's the same alone and paired."""
    assert ROWS["0x3"]["trip_cycles_median"]["0"] == pytest.approx(ROWS["0x1"]["trip_cycles_median"]["0"], abs=2)
    alone, _ = trip_and_offset(dot_pair_run([0])[0])
    two, _ = trip_and_offset(dot_pair_run([0, 1])[0])
    assert two == pytest.approx(alone, abs=1)


def test_two_warps_of_one_smsp_each_take_longer_than_one_alone():
    """Both sides: sharing an SMSP costs each warp time (H200 295 against 187 a trip, the engine 221 against
    161); where the two warps' trips start relative to each other is where they differ (module doc)."""
    hw_pair = np.mean(list(ROWS["0x11"]["trip_cycles_median"].values()))
    assert hw_pair > 1.3 * ROWS["0x1"]["trip_cycles_median"]["0"]
    alone, _ = trip_and_offset(dot_pair_run([0])[0])
    pair, off = trip_and_offset(dot_pair_run([0, 4])[0])
    assert pair > 1.3 * alone and len(off) == 1


def test_without_loads_two_warps_of_one_smsp_take_turns_on_both():
    """dot_ffma: the H200's two warps start each trip half a trip apart (83 of 166 cycles), the engine's
    too: the FFMA block by itself does not keep warps in step; the loads do (module doc)."""
    hw = ROWS["ffma 0x11"]
    hw_trip = np.mean(list(hw["trip_cycles_median"].values()))
    assert hw["same_smsp_same_trip_offset_median"][0] > 0.4 * hw_trip
    trip, off = trip_and_offset(dot_pair_run([0, 4], loads=False)[0])
    assert off[0] > 0.4 * trip


def test_with_register_banks_two_warps_without_loads_still_take_turns():
    """dot_ffma with the loop's FFMA register reads (held out from the hold rule's calibration): the H200's
    pair takes turns (83 of 166 cycles apart), the engine's too (82 of 164). The former yield rule
    (register_stall "yield") kept it 15 cycles apart."""
    trip, off = trip_and_offset(dot_pair_run([0, 4], loads=False, banks=True)[0])
    phase = (off[0] / trip) % 1
    assert min(phase, 1 - phase) > 0.4


def test_the_committed_sass_is_the_recorded_binarys():
    """traces/hw/h200/micro/dot_pair.sass (the PCs of dot_pair_ncu.json's samples) is the binary the records
    ran: its loops' ptxas stall counts are those the record took from its own build, and its loops sit at
    the record's PCs."""
    assert loop_stall_counts(SASS) == REC["details"]["loop_stall_counts"]
    assert loop_stall_counts(SASS, "dot_ffma") == REC["details"]["loop_stall_counts_ffma"]
    pcs = {r["kernel"]: r["loop_pcs"] for r in NCU["details"]["rows"]}
    for kernel in ("dot_pair", "dot_ffma"):
        assert [f"0x{x:04x}" for x in loop_range(SASS, kernel)] == pcs[kernel]


def test_register_banks_give_the_lone_warps_dispatch_stalls():
    """Held out from the banks' calibration (micro/ffma_dispatch.json): with the loop's FFMA register
    reads, one warp's trip is within 5 % of the H200's 187 cycles (161 without them) and its
    dispatch_stall per issue within 0.08 of ncu's 0.34 over the loop (dot_pair_ncu.json)."""
    st, res = dot_pair_run([0], banks=True)
    trip, _ = trip_and_offset(st)
    hw_trip = ROWS["0x1"]["trip_cycles_median"]["0"]
    assert abs(trip / hw_trip - 1) < 0.05
    assert trip_and_offset(dot_pair_run([0])[0])[0] < 0.9 * hw_trip
    ds = res.state_cycles.get("dispatch_stall", 0) / res.inst_issued
    assert abs(ds - loop_states(NCU, "0x1")["dispatch_stall"]) < 0.08


def _hw_ffma_run_not_selected(mask: str) -> float:
    """The H200's share (dot_pair_ncu.json's PC samples of the trip loop) of its FFMA not_selected samples
    that fall inside the FFMA runs: at FFMAs with no short_scoreboard sample (that wait for no load)."""
    row = ROWS_NCU[mask]
    lo, hi = (int(x, 16) for x in row["loop_pcs"])
    ffma = {f"0x{int(m.group(1), 16):04x}" for m in re.finditer(r"/\*([0-9a-f]{4,})\*/\s+FFMA ", _function(SASS, row["kernel"]))
            if lo <= int(m.group(1), 16) <= hi}
    per = row["pcsamp_per_pc"]
    ns, sb = per["smsp__pcsamp_warps_issue_stalled_not_selected"], per["smsp__pcsamp_warps_issue_stalled_short_scoreboard"]
    return sum(ns.get(pc, 0) for pc in ffma if not sb.get(pc)) / sum(ns.get(pc, 0) for pc in ffma)


def _ffma_run_not_selected(res, t) -> float:
    """The engine's share of a run's FFMA not_selected cycles that fall inside the FFMA runs: at FFMA rows
    with no short_scoreboard cycles (that wait for no load)."""
    rows = t.rows["op"][res.trace_row]
    ops = np.array(t.opcodes)
    at = {}
    for w, s, a, b, r in res.state_log:
        if ops[rows[r]] == "FFMA":
            trip_row = res.trace_row[r]
            at.setdefault(trip_row, np.zeros(len(STATES)))[s] += b - a
    ns, sb = STATES.index("not_selected"), STATES.index("short_scoreboard")
    total = sum(v[ns] for v in at.values())
    return sum(v[ns] for v in at.values() if v[sb] == 0) / total


def test_with_register_banks_a_pair_shares_the_smsp_as_ncu_samples_it():
    """The hold rule's calibration (presets: register_stall): the H200's pair (dot_pair_ncu.json 0x11) has
    almost no not_selected inside its FFMA runs (7 of its 1,008 FFMA not_selected samples; 1,001 at the FFMA
    that waits for the last loads), and over the loop 0.74 dispatch_stall and 0.72 not_selected per issue.
    The engine's pair: each ratio within 0.15, the trip within 10 % of 295 cycles, and 48 % of its FFMA
    not_selected inside the runs, all at one FFMA: the hand trace takes the loop's FFMA stall counts as
    their mean (65 cycles over 64 FFMAs), which puts the one 2-cycle stall mid-trip, where the other warp
    takes the SMSP, while the SASS has it on the first FFMA (the stamp's STG waits for it). The former
    yield rule (register_stall "yield", removed 2026-12-02) put over 90 % of them inside the runs (the two
    warps alternating FFMAs), "pass" 76 %."""
    hw = loop_states(NCU, "0x11")
    assert _hw_ffma_run_not_selected("0x11") < 0.05
    hw_pair = np.mean(list(ROWS["0x11"]["trip_cycles_median"].values()))
    starts, res, t = dot_pair_run([0, 4], banks=True, log=True)
    trip, _ = trip_and_offset(starts)
    assert abs(trip / hw_pair - 1) < 0.10
    assert _ffma_run_not_selected(res, t) < 0.6
    for st in ("dispatch_stall", "not_selected"):
        assert abs(res.state_cycles[st] / res.inst_issued - hw[st]) < 0.15, st


def staggered_run(delay: list, trips: int = 40) -> dict:
    """dot_pair's trip run by eight warps (two per SMSP), warp w held back by a chain of delay[w] dependent
    IADD3s (4 cycles each) before its first trip, the accumulators zeroed by one CS2R (so no warp's
    preamble holds back its SMSP's other warp): per warp the start cycle of each trip."""
    ht = HandTrace()
    for w in range(8):
        add = ht.warp(w)
        acc = [add("CS2R")] * 64
        x = add("IADD3")
        for _ in range(delay[w]):
            x = add("IADD3", (x,))
        for _ in range(trips):
            add("CS2R", (x,))
            add_trip(add, acc)
        add("EXIT")
    t = ht.trace()
    res = simulate_sm(t, H200, global_level=np.full(len(t), LEVEL_L1, np.int8),
                      stall_counts=REC["details"]["loop_stall_counts"], scoreboards=SASS_BARRIERS,
                      register_banks=loop_banks("dot_pair"))
    ops = np.array(t.opcodes)[t.rows["op"][res.trace_row]]
    wp = t.rows["warp"][res.trace_row]
    return {w: np.sort(res.issue_cycle[np.flatnonzero((ops == "CS2R") & (wp == w))])[1:] for w in range(8)}


def _smsp_phases(starts: dict, first: int, smsp_of) -> list:
    """Median start offset of each SMSP's first warp from warp 0's, trips first.., in SMSP order of their lag."""
    lag = {smsp_of(w): float(np.median(starts[w][first:] - starts[0][first:])) for w in range(4)}
    return sorted(lag.values())


def test_the_h200_staggers_its_smsps_a_quarter_trip_apart():
    """micro/dot_pair.json's eight warps (0xff; stamps from the warps' first trip, all within 26 cycles): the
    two warps of each SMSP stay 12 cycles apart, the lead changing every trip, while the four SMSPs settle
    about a quarter of the 295-cycle trip apart (0 / 85 / 163 / 229 cycles), the SMSP of the oldest warps
    first: each SMSP's loads go while the others run their FFMAs."""
    st = {int(w): np.array(x) for w, x in REC["details"]["stamps"]["0xff"].items()}
    slots = ROWS["0xff"]["warp_slots"]
    trip = ROWS["0xff"]["trip_cycles_median"]
    assert max(x[0] for x in st.values()) - min(x[0] for x in st.values()) < 30
    for w in range(4):
        pair = [p for p in range(4, 8) if slots[str(p)] % 4 == slots[str(w)] % 4][0]
        assert np.all(np.abs(st[pair][STEADY:] - st[w][STEADY:]) <= 15)
    phases = _smsp_phases(st, STEADY, lambda w: slots[str(w)] % 4)
    quarter = np.mean(list(trip.values())) / 4
    assert phases[0] == 0
    assert all(abs(b - a - quarter) < 0.35 * quarter for a, b in zip(phases, phases[1:]))


def test_the_engine_keeps_the_h200s_smsp_arrangement_once_in_it():
    """Started with its SMSPs a quarter trip apart (chains of 0 / 18 / 37 / 55 IADD3s) and each SMSP's two
    warps together, the engine keeps the SMSPs apart: 72 / 148 / 220 cycles behind the first, 285 cycles a
    trip (H200 85 / 163 / 229 and 295). Its pairs drift to 73 cycles apart (H200 12; the strict xfail in
    test_dot_pair_delay.py)."""
    st = staggered_run([0, 18, 37, 55, 0, 18, 37, 55])
    trip, _ = trip_and_offset(st)
    assert abs(trip / np.mean(list(ROWS["0xff"]["trip_cycles_median"].values())) - 1) < 0.05
    phases = _smsp_phases(st, STEADY, lambda w: w % 4)
    assert all(abs(b - a - trip / 4) < 0.35 * trip / 4 for a, b in zip(phases, phases[1:]))


@pytest.mark.xfail(strict=True, raises=AssertionError,
                   reason="known: from an in-step start the engine's pairs split in the first trip")
def test_from_an_in_step_start_the_engine_reaches_the_h200s_arrangement():
    """All eight warps started together, as on the H200: the engine's pairs split and settle 73-212 cycles
    apart at 284 cycles a trip (with the former yield rule: half a trip apart at 258). In trip 0 the pipe
    serves the loads by issue time, so a pair's second LDS.128s come back with the other three SMSPs'
    between them and the later warp's FFMAs wait. docs/notes/2026-12-01-warp-pairs.md has what was tried."""
    st = staggered_run([0] * 8)
    trip, off = trip_and_offset(st)
    assert max(off) < 40
