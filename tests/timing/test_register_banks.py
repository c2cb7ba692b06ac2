"""The register banks' reads (gpusim/timing/register_banks.py) against traces/hw/h200/micro/ffma_dispatch.json
(calibration: one warp per SM, 64 independent FFMAs a trip in eight operand patterns) and micro/dot_pair.json's
lone warp (held out: regtile2d's dotIdx trip, its loads included).

The engine runs each recorded loop as a one-warp trace with the loop's own instructions in order, ptxas's
stall counts of its SASS and the FFMAs' register reads. Trip times are compared as differences from pattern
0 (the FFMAs with the most reuse): the H200's loop also pays 6-7 cycles for its taken branch, which the
engine does not model, and the differences are what the banks decide."""
import json
import re
from pathlib import Path

import numpy as np
import pytest

from gpusim.arch.presets import H200
from gpusim.timing import simulate_sm
from gpusim.timing.control_codes import parse_sass
from gpusim.timing.register_banks import fp32_reads, pack, bank_profile, row_banks
from tests.timing.hand_trace import HandTrace

ROOT = Path(__file__).resolve().parents[2]
REC = json.loads((ROOT / "traces/hw/h200/micro/ffma_dispatch.json").read_text())["details"]["rows"]
SASS = (ROOT / "traces/hw/h200/micro/ffma_dispatch.sass").read_text()
TRIPS = 32


def _function(pattern: int) -> str:
    return next(p for p in re.split(r"\n\s*Function : ", SASS) if p.startswith(f"_Z7ffma_p{pattern}"))


def loop_run(pattern: int, banks: bool = True):
    """(engine cycles a trip, dispatch_stall cycles a trip) of the pattern's loop run by one warp."""
    row = next(r for r in REC if r["pattern"] == pattern)
    listing = [(int(i["pc"], 16), i["sass"]) for i in row["loop"]]
    stall = {off: n for off, _, n in parse_sass(_function(pattern))}
    ops = [re.sub(r"^@!?P\d\s+", "", t).split()[0] for _, t in listing]
    ht = HandTrace()
    add = ht.warp(0)
    acc = {}
    clock = []
    for _ in range(TRIPS):
        clock.append(add("CS2R"))
        for k, (off, text) in enumerate(listing):
            op = ops[k]
            if op == "FFMA":
                dst = text.split()[1].rstrip(",")
                acc[dst] = add("FFMA", (acc[dst],) if dst in acc else ())
            else:
                add({"ISETP.NE.AND": "ISETP.NE.AND", "IADD3": "IADD3", "BRA": "BRA"}[op])
    add("EXIT")
    t = ht.trace()
    counts = {}
    for (off, _), op in zip(listing, ops):
        counts.setdefault(op if op != "FFMA" else "FFMA", []).append(max(stall[off], 1))
    means = {op: float(np.mean(v)) for op, v in counts.items()}
    means["CS2R"] = 1.0
    prof = tuple(pack(x) for x in fp32_reads(listing + listing)[64:]) if banks else None
    res = simulate_sm(t, H200, stall_counts=means, register_banks=prof)
    names = np.array(t.opcodes)[t.rows["op"][res.trace_row]]
    starts = np.sort(res.issue_cycle[names == "CS2R"])
    trip = float(np.mean(np.diff(starts[4:])))
    return trip, res.state_cycles.get("dispatch_stall", 0) / TRIPS


def test_reuse_cache_hits_are_not_read():
    got = fp32_reads([(0, "FFMA R8, R4.reuse, R6, R8"), (16, "FFMA R9, R4, R7, R9"),
                      (32, "FFMA R10, R4, R7, R10")])
    # first: R4, R6, R8 all read (bank 0); second: R4 from the cache (same slot), R7, R9 (bank 1)
    assert got[0] == (3, 0, 3, 0)
    assert got[1] == (0, 2, 1, 2)
    # third: the second kept nothing (no .reuse), so R4 is read again
    assert got[2] == (2, 1, 2, 1)


def test_the_cache_is_per_operand_slot_and_rz_reads_nothing():
    got = fp32_reads([(0, "FFMA R8, R4.reuse, R6, R8"), (16, "FFMA R9, R6, R4, RZ")])
    assert got[1] == (2, 0, 2, 0)


def test_rows_take_the_profile_in_order_per_warp():
    ops = np.array([0, 1, 1, 0, 1, 1, 1])           # opcode 1 is FFMA; two warps of rows 0-3 and 4-6
    out = row_banks(ops, np.array([0, 4, 7]), ["IADD3", "FFMA"], (pack((1, 0, 1, 1)), pack((0, 2, 1, 2))))
    assert out[0] == 0 and out[3] == 0
    assert list(out[[1, 2, 4, 5, 6]]) == [pack((1, 0, 1, 1)), pack((0, 2, 1, 2)), pack((1, 0, 1, 1)),
                                          pack((0, 2, 1, 2)), pack((1, 0, 1, 1))]


def test_the_record_separates_reused_from_unreused_operands():
    """The H200's trips: 84-92 cycles with a reused operand per FFMA (patterns 0, 1, 2, 6, 7), 115-122
    with none (3 and 4): the operands, not the instruction count, set the time."""
    trip = {r["pattern"]: r["cycles_per_trip_min"] for r in REC}
    assert max(trip[p] for p in (0, 1, 2, 6, 7)) < 93 < 114 < min(trip[3], trip[4])


@pytest.mark.parametrize("pattern", [0, 1, 2, 3, 4, 6, 7])
def test_trip_time_over_pattern_0_follows_the_h200(pattern):
    """Engine trip minus pattern 0's within 5 cycles of the H200's (differences 0-38 cycles); without
    the banks' reads every pattern would take the same time."""
    hw = {r["pattern"]: r["cycles_per_trip_min"] for r in REC}
    sim0, _ = loop_run(0)
    sim, _ = loop_run(pattern)
    assert abs((sim - sim0) - (hw[pattern] - hw[0])) <= 5


def test_pattern_5_is_the_rules_outlier():
    """a[m] * a[m + n], both operands from one array: the H200 takes 12 cycles over pattern 0, the engine
    21 (28 stalled FFMAs a trip against 19). Kept as a known miss: every lead of 0-3 cycles leaves it 9
    cycles over."""
    hw = {r["pattern"]: r["cycles_per_trip_min"] for r in REC}
    gap = (loop_run(5)[0] - loop_run(0)[0]) - (hw[5] - hw[0])
    assert 0 < gap <= 10


@pytest.mark.parametrize("pattern", range(8))
def test_trip_time_within_8_percent(pattern):
    """The whole trip, branch cost included on the H200's side only: within 8 % (engine 2-6 % short but
    pattern 5)."""
    hw = next(r for r in REC if r["pattern"] == pattern)["cycles_per_trip_min"]
    assert abs(loop_run(pattern)[0] / hw - 1) < 0.08


def test_without_the_reads_the_patterns_do_not_differ():
    a, _ = loop_run(0, banks=False)
    b, _ = loop_run(4, banks=False)
    assert a == b


def test_stalled_ffmas_per_trip_match_the_pc_samples():
    """ncu samples a stalled FFMA in dispatch_stall once per execution (its samples equal its selected
    ones); the engine's dispatch_stall cycles a trip against the count of such FFMAs: within 20 % summed
    over the eight patterns."""
    hw = sim = 0.0
    for r in REC:
        hw += sum(1 for i in r["loop"] if i["sass"].startswith("FFMA") and i["dispatch_stall"] > 0.5 * i["selected"])
        sim += loop_run(r["pattern"])[1]
    assert abs(sim / hw - 1) < 0.20


def test_ladder_profiles_put_regtile2d_above_vectorized():
    """What the SASS says before any run: regtile2d's loop FFMAs need more bank reads per FFMA (reused
    operands fewer) than vectorized's, whose H200 dispatch stalls are a quarter of regtile2d's
    (traces/hw/h200/pcsamp/)."""
    def hot_reads(k):
        prof = bank_profile(k, {})
        return np.mean([(p & 3) + (p >> 2 & 3) for p in prof])
    assert hot_reads("regtile2d") > hot_reads("vectorized")


def test_the_committed_sass_is_the_recorded_binarys():
    """micro/ffma_dispatch.sass is the binary the record ran: each pattern's loop, as the micro's script
    finds it (the backward branch and its target), is the record's instruction for instruction."""
    import sys
    sys.path.insert(0, str(ROOT / "calibrate"))
    from ffma_dispatch import loop_instructions
    for r in REC:
        got = [(f"0x{pc:04x}", text) for pc, text in loop_instructions(SASS, r["pattern"])]
        assert got == [(i["pc"], i["sass"]) for i in r["loop"]]
