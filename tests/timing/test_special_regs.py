"""S2R and LDC against traces/hw/h200/micro/special_regs.json: one warp's loop whose exit branches on an
S2R's value, against the same loop with a LOP3 (calibrate/special_regs.cu's s2r_loop, alu_loop), and a chase
through constant memory (ldc_chase); the engine takes both as fixed latencies (s2r_latency_cycles, ldc_latency_cycles) whose wait is
short_scoreboard, as the H200's PC samples show it at a kernel's prologue (traces/hw/h200/pcsamp/)."""
import json
from pathlib import Path

import pytest

from gpusim.arch.presets import H200
from gpusim.timing import simulate_sm
from tests.timing.hand_trace import HandTrace

REC = json.loads((Path(__file__).resolve().parents[2] / "traces/hw/h200/micro/special_regs.json").read_text())
N = 64


def _trips(read: str) -> float:
    """Engine cycles per trip of calibrate/special_regs.cu's loop as its SASS has it (s2r_loop with read
    "S2R", alu_loop with "LOP3.LUT"): the read, an IADD3 of x, ISETP on both, the exit branch, the counter's
    VIADD, x += the read, the counter's ISETP, the back branch."""
    ht = HandTrace()
    add = ht.warp(0)
    x, i = add("MOV"), add("MOV")
    for _ in range(N):
        r = add(read, () if read == "S2R" else (x,))
        k = add("IADD3", (x,))
        add("BRA", (add("ISETP.NE.AND", (r, k)),))
        i = add("IADD3", (i,))
        x = add("IMAD.IADD", (x, r))
        add("BRA", (add("ISETP.GE.AND", (i,)),))
    add("EXIT")
    res = simulate_sm(ht.trace(), H200)
    return res.cycles / N, res.state_cycles


def test_an_s2r_costs_a_trip_what_it_cost_the_h200():
    """s2r_loop's trip less alu_loop's (18.7 cycles on the H200: the S2R's latency less the LOP3's issue
    offset and latency) within 10 %, and the wait on the S2R is short_scoreboard."""
    rows = {r["kernel"]: r["cycles_per_step"] for r in REC["details"]["rows"] if "cycles_per_step" in r}
    s2r, states = _trips("S2R")
    alu, _ = _trips("LOP3.LUT")
    assert s2r - alu == pytest.approx(rows["s2r_loop"] - rows["alu_loop"], rel=0.10)
    assert states.get("short_scoreboard", 0) > N * (H200.s2r_latency_cycles - 8)


def test_an_ldc_chase_costs_what_it_cost_the_h200():
    ht = HandTrace()
    add = ht.warp(0)
    x = add("MOV")
    for _ in range(N):
        x = add("LDC", (x,))
    add("EXIT")
    res = simulate_sm(ht.trace(), H200)
    rows = {r["kernel"]: r["cycles_per_step"] for r in REC["details"]["rows"] if "cycles_per_step" in r}
    assert res.cycles / N == pytest.approx(rows["ldc_chase"], rel=0.10)
    assert res.state_cycles.get("short_scoreboard", 0) > N * (H200.ldc_latency_cycles - 2)
    assert res.state_cycles.get("short_scoreboard", 0) > res.state_cycles.get("wait", 0)


def test_the_preset_takes_the_records_latencies():
    lat = REC["value"]["latency_cycles"]
    assert H200.s2r_latency_cycles == round(lat["s2r"])
    assert H200.ldc_latency_cycles == round(lat["ldc"])
