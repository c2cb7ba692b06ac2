"""traces/hw/h200/micro/mio_capacity.json (calibration, not the ladder): warps issue bursts of B
independent LDS of one kind (LDS.32 with a 1- to 32-way bank conflict, LDS.64, LDS.128); the issue
time of a burst shows where the MIO path stops taking loads. One warp alone: a burst issues at 4
cycles a load until about 31 loads are in flight, whatever their wavefronts, then at the rate its
loads return (2 cycles a wavefront): the engine's per-SMSP depth (30, counted until the data
returns) gives the same issue times (all within 5 %; most to the cycle). Many warps are another
matter (gpusim/timing/README.md, MIO capacity): the engine departs from the H200 both ways."""
import json
from pathlib import Path

import numpy as np
import pytest

from gpusim.arch.presets import H200
from gpusim.timing import simulate_sm
from tests.timing.hand_trace import HandTrace

REC = json.loads((Path(__file__).resolve().parents[2] / "traces/hw/h200/micro/mio_capacity.json").read_text())
ONE_WARP = [r for r in REC["details"]["rows"] if r["mask"] == "0x1"]
OPS = {1: "LDS", 2: "LDS.64", 4: "LDS.128"}


def burst_issue(warps: list, op: str, wf: int, loads: int) -> float:
    """Median over `warps` of the cycles from the clock read before a burst to the one after its last
    issue (warp w on SMSP w % 4; warps not listed only exit)."""
    ht = HandTrace()
    for w in range(max(warps) + 1):
        add = ht.warp(w)
        if w in warps:
            add("CS2R")
            for _ in range(loads):
                add(op, wf=wf)
            add("CS2R")
        add("EXIT")
    t = ht.trace()
    res = simulate_sm(t, H200)
    ops = np.array(t.opcodes)[t.rows["op"][res.trace_row]]
    wp = t.rows["warp"][res.trace_row]
    spans = [np.diff(res.issue_cycle[(ops == "CS2R") & (wp == w)])[0] for w in warps]
    return float(np.median(spans))


@pytest.mark.parametrize("row", ONE_WARP, ids=lambda r: f"V{r['words_per_lane']}-WF{r['conflict']}-B{r['loads']}")
def test_one_warp_fills_the_queue_as_measured(row):
    v, wf = row["words_per_lane"], row["conflict"]
    got = burst_issue([0], OPS[v], wf if v == 1 else v, row["loads"])
    assert got == pytest.approx(row["issue_cycles_median"], rel=0.05)
