"""traces/hw/h200/micro/mio_capacity.json (calibration, not the ladder): warps issue bursts of B
independent LDS of one kind (LDS.32 with a 1- to 32-way bank conflict, LDS.64, LDS.128); the issue
time of a burst shows where the MIO path stops taking loads. One warp alone: a burst issues at 4
cycles a load until about 31 loads are in flight, whatever their wavefronts, then at the rate its
loads return (2 cycles a wavefront): the engine's per-SMSP depth (30, counted until the data
returns) gives the same issue times (all within 5 %; most to the cycle). Many warps are another
matter (docs/notes/2026-11-30-mio-capacity.md). mio_capacity_ncu.json (ncu's warp states for the same
launches) says what the wait is called and how long the warps wait there in all: the engine's totals
agree wherever bursts are long."""
import json
from pathlib import Path

import numpy as np
import pytest

from gpusim.arch.presets import H200
from gpusim.timing import simulate_sm, LEVEL_L1
from tests.timing.hand_trace import HandTrace
from tests.timing.test_shared_return import SASS_BARRIERS

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


NCU = json.loads((Path(__file__).resolve().parents[2] / "traces/hw/h200/micro/mio_capacity_ncu.json").read_text())


def cap_run(warps: list, V: int, wf: int, loads: int, reps: int = 8):
    """The engine on the cap<> kernel's bursts (calibrate/mio_capacity.cu): per warp `reps`
    bursts of `loads` independent LDS of V words a lane and wf wavefronts, each between clock reads
    and consumed by ptxas's IADD3 chain (two loaded registers a step) before the next, with the shared
    loads' SASS barriers. Returns (the trace, its TimingResult); bench/bench_micro.py times the same."""
    ht = HandTrace()
    for w in range(max(warps) + 1):
        add = ht.warp(w)
        if w in warps:
            acc = add("IMAD.MOV")
            for _ in range(reps):
                add("NOP")
                add("CS2R")
                ld = [add(OPS[V], wf=wf) for _ in range(loads)]
                add("CS2R")
                regs = [j for j in ld for _ in range(V)]
                for k in range(0, len(regs), 2):
                    acc = add("IADD3", (regs[k], regs[min(k + 1, len(regs) - 1)], acc))
                t2 = add("CS2R")
                add("STG", (t2,), sec=1, lines=1)
        add("EXIT")
    t = ht.trace()
    return t, simulate_sm(t, H200, global_level=np.full(len(t), LEVEL_L1, np.int8), scoreboards=SASS_BARRIERS)


@pytest.mark.parametrize("wf", [1, 16, 32])
def test_one_warp_per_smsp_short_bursts_wait_in_mio_throttle_and_it_is_the_sm_pool(wf):
    """One warp on each SMSP, bursts of 16 (a warp's own queue holds 30): ncu counts the H200's wait for
    the SM's shared-load path as mio_throttle (mio_capacity_ncu.json), and the engine's wait there is
    all the SM pool's, which it reports as mio_throttle too. Conflict-free loads wait on neither."""
    hw = next(r["stall_mio_throttle"] for r in NCU["details"]["rows"]
              if r["mask"] == "0xf" and r["words_per_lane"] == 1 and r["conflict"] == wf and r["loads"] == 16)
    _, res = cap_run([0, 1, 2, 3], 1, wf, 16)
    thr, pool = res.state_cycles["mio_throttle"] / res.inst_issued, res.metrics["gpusim__mio_throttle_sm_pool.ratio"]
    if wf == 1:
        assert hw < 0.1 and thr < 0.1
    else:
        assert hw > 0.5 and thr > 0.5 and pool == pytest.approx(thr)


MASK_WARPS = {"0xf": [0, 1, 2, 3], "0x1111": [0, 4, 8, 12], "0xffff": list(range(16))}
# long bursts of 4-32-wavefront LDS.32 in every multi-warp layout: the SMSP queue (4 warps on one SMSP),
# the SM pool (one warp on each SMSP) and both (16 warps)
LONG_BURSTS = [r for r in NCU["details"]["rows"] if r["mask"] in MASK_WARPS and r["words_per_lane"] == 1
               and r["conflict"] >= 4 and r["loads"] >= 32]


@pytest.mark.parametrize("row", LONG_BURSTS, ids=lambda r: f"{r['mask']}-WF{r['conflict']}-B{r['loads']}")
def test_warp_cycles_in_mio_throttle_match_the_h200_for_long_bursts(row):
    """Total warp-cycles in mio_throttle (ncu: the per-issue ratio times instructions issued; its kernel
    issues 1.2-2.3x the engine's instructions, for its shared-memory fill and stamps, so per-issue
    ratios do not compare). Measured: 0.87-1.09 of the H200's in all 48 of these."""
    hw = row["stall_mio_throttle"] * row["smsp__inst_executed.sum"]
    _, res = cap_run(MASK_WARPS[row["mask"]], 1, row["conflict"], row["loads"])
    assert res.state_cycles["mio_throttle"] == pytest.approx(hw, rel=0.15)
