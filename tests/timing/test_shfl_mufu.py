"""Shuffles and MUFU against traces/hw/h200/micro/shfl_mufu.json: one warp's dependent chain of a butterfly
step (SHFL.BFLY then FADD) and of MUFU.EX2 then FADD, as calibrate/shfl_mufu.cu runs them; the engine takes
a shuffle and an XU op as fixed latencies (shfl_latency_cycles, xu_latency_cycles) and a warp waiting on
either shows short_scoreboard, as ncu counts it."""
import json
from pathlib import Path

import pytest

from gpusim.arch.presets import H200
from gpusim.timing import simulate_sm
from tests.timing.hand_trace import HandTrace

REC = json.loads((Path(__file__).resolve().parents[2] / "traces/hw/h200/micro/shfl_mufu.json").read_text())
N = 64


def _chain(first: str) -> dict:
    """Cycles per step and the warp's state cycles of N steps `first` -> FADD, each reading the last."""
    ht = HandTrace()
    add = ht.warp(0)
    x = add("MOV")
    for _ in range(N):
        x = add("FADD", (add(first, (x,)),))
    add("EXIT")
    res = simulate_sm(ht.trace(), H200)
    return {"per_step": res.cycles / N, "states": res.state_cycles}


@pytest.mark.parametrize("first,record", [("SHFL.BFLY", "shfl_fadd"), ("MUFU.EX2", "ex2_chain")])
def test_a_dependent_chain_costs_what_the_h200_measured(first, record):
    """Within 10 % of the record's cycles per step (29.4 for SHFL + FADD, 23.3 for MUFU.EX2 + FADD), and the
    wait on the shuffle or the MUFU is short_scoreboard."""
    got = _chain(first)
    own = {"SHFL.BFLY": H200.shfl_latency_cycles, "MUFU.EX2": H200.xu_latency_cycles}[first]
    assert got["per_step"] == pytest.approx(REC["value"]["latency_cycles"][record], rel=0.10)
    assert got["states"].get("short_scoreboard", 0) > N * (own - 2)     # the wait on its own result
    assert got["states"].get("short_scoreboard", 0) > got["states"].get("wait", 0)


def test_the_preset_takes_the_records_latencies():
    lat = REC["value"]["latency_cycles"]
    assert H200.shfl_latency_cycles == round(lat["shfl_chain"])
    assert H200.xu_latency_cycles == round(lat["ex2_only"])
    assert H200.xu_issue_interval_cycles == round(4 / REC["value"]["rate_per_sm_cycle"]["ex2_rate"])
