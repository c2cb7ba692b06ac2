"""traces/hw/h200/micro/lds_wide_return.json (calibration, not the ladder): one warp issues bursts of B
independent shared loads of one kind (LDS.32 / .64 / .128 with a 1-, 2- or 4-way bank conflict, so 1 to
16 wavefronts; ncu's wavefronts per load are in the record) and branches on the last one's value. A
warp's loads come back in order, so the time until that branch is when the whole burst is back. The
slope of that time in B is what a load costs the warp's return path: 2 cycles a wavefront, whatever the
width (one warp's LDS.128 bursts of 8-48: 8.0 cycles a load conflict-free, 16.0 with a 2-way
conflict), not wavefronts x registers per lane (16 / 32), the rule the engine had from bursts timed
until an IADD3 chain had consumed them (test_shared_return.py). The kinds timed at three sizes only
read up to 1.6 cycles a load above 2 per wavefront: their largest burst (96 result registers) comes
back ~20 cycles late in every kind of 2 or 4 words, the longer bursts do not."""
import json
from pathlib import Path

import numpy as np
import pytest

from gpusim.arch.presets import H200
from gpusim.timing import simulate_sm
from tests.timing.hand_trace import HandTrace

REC = json.loads((Path(__file__).resolve().parents[2] / "traces/hw/h200/micro/lds_wide_return.json").read_text())
ONE_WARP = [k for k in REC["details"]["kinds"] if k["mask"] == "0x1" and k["distinct_rows"] == 1]
ROWS = REC["details"]["rows"]
OPS = {1: "LDS", 2: "LDS.64", 4: "LDS.128"}


def back_time(op: str, wf: int, loads: int) -> int:
    """Cycles from the clock read before a burst to the one after the branch on its last load."""
    ht = HandTrace()
    add = ht.warp(0)
    add("CS2R")
    last = [add(op, wf=wf) for _ in range(loads)][-1]
    add("CS2R")
    p = add("ISETP.NE.AND", srcs=(last,))
    add("BRA", srcs=(p,))
    add("CS2R")
    add("EXIT")
    t = ht.trace()
    res = simulate_sm(t, H200)
    ops = np.array(t.opcodes)[t.rows["op"][res.trace_row]]
    clocks = res.issue_cycle[ops == "CS2R"]
    return int(clocks[2] - clocks[0])


def kind_id(k):
    return f"{OPS[k['words_per_lane']]}-{int(k['wavefronts_per_load_ncu'])}wf"


@pytest.mark.parametrize("kind", ONE_WARP, ids=kind_id)
def test_one_warp_gets_its_loads_back_at_the_measured_rate(kind):
    v, wf = kind["words_per_lane"], int(kind["wavefronts_per_load_ncu"])
    pts = sorted(r["loads"] for r in ROWS if r["mask"] == "0x1" and r["distinct_rows"] == 1
                 and r["words_per_lane"] == v and r["conflict"] == kind["conflict"])
    got = [back_time(OPS[v], wf, b) for b in pts]
    slope = np.polyfit(pts, got, 1)[0]
    assert abs(slope - kind["cycles_per_load"]) <= max(1.0, 0.05 * kind["cycles_per_load"])


@pytest.mark.parametrize("row", [r for r in ROWS if r["mask"] == "0x1" and r["distinct_rows"] == 1
                                 and r["loads"] * r["words_per_lane"] != 96],
                         ids=lambda r: f"V{r['words_per_lane']}-WF{r['conflict']}-B{r['loads']}")
def test_one_warp_burst_is_back_when_measured(row):
    """The engine's burst is back 13-18 cycles before the H200's, whatever the kind and size: ptxas
    gives the ISETP on the last load a stall count of 13 before its branch (the record's SASS), which
    this hand trace leaves out. (The bursts of exactly 96 result registers, left out here, come back
    ~20 cycles later still in every kind of 2 or 4 words: see the module doc.)"""
    wf = next(int(k["wavefronts_per_load_ncu"]) for k in ONE_WARP
              if (k["words_per_lane"], k["conflict"]) == (row["words_per_lane"], row["conflict"]))
    got = back_time(OPS[row["words_per_lane"]], wf, row["loads"])
    assert 10 <= row["back_cycles_median"] - got <= 20
