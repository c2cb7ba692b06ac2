"""How far apart the warps that share lines run: the engine against traces/hw/h200/micro/l1_phase.json
(calibrate/l1_phase.cu: micro/l1_dense.json's loop with each warp's start of every step of one pass
stamped, CTA 0, clock64).

The engine runs a trace of the recorded SASS's main loop (micro/l1_phase.sass: four steps unrolled, each with
its predicated clock read and stamp store) and reads the issue cycle of each step's clock read. Diagnosis rows,
not calibration: the stamps cost the loop (the H200 runs it at 0.56-0.76 loads a cycle from the L2 where
l1_dense's runs at 0.70-0.89, the engine at 0.65-0.91), so what they measure is the warps' phase, not the rate.
"""
import json

import numpy as np
import pytest

from gpusim.arch.presets import H200
from gpusim.timing import LEVEL_L1, LEVEL_L2, LEVEL_DRAM
from tests.timing.test_l1_pending import sass_main_loop, loop_run, MICRO

REC = json.loads((MICRO / "l1_phase.json").read_text())
ROWS = {r["label"]: r for r in REC["details"]["rows"]}


def spreads(starts: np.ndarray, g: int) -> tuple[float, float]:
    """Median over steps of the spread (last - first) of the warps' step starts: over all 32 warps, and within
    a group of g warps on the same lines (the median over groups and steps)."""
    whole = np.median(starts.max(0) - starts.min(0))
    within = np.median([starts[i:i + g].max(0) - starts[i:i + g].min(0) for i in range(0, starts.shape[0], g)])
    return float(whole), float(within)


def phase_run(row: dict, gpu=H200, trips: int = 12, skip: int = 4):
    """The engine on `trips` trips of the loop for a record row: (loads per SM cycle, the step starts of
    CTA 0's warps after the first `skip` steps, warps x steps)."""
    g, ctas, kb, passes = row["warps_per_line"], row["ctas_per_sm"], row["kb_per_cta"], row["passes"]
    body = sass_main_loop("l1_phase.sass", f"_Z8l1_phaseILi16ELi{g}E")
    per_trip = sum(op.startswith("LDG") for op, _, _ in body) // 16
    stamps = [i for i, (op, _, _) in enumerate(body) if op.startswith("CS2R")]
    groups = 32 // g

    def line(c, w, s, k):
        return ((c * 1_000_000 + (per_trip * s + k // 16) * 16 + k % 16) * groups) + w // g

    def level(c, w, s, k):
        if kb <= 16 or w % g:
            return LEVEL_L1
        return LEVEL_DRAM if passes == 1 else LEVEL_L2
    res, n = loop_run(body, trips, 32, line, level, gpu, ctas)
    per_warp = 2 + trips * len(body)            # BAR.SYNC, the trips, EXIT
    ic = res.issue_cycle
    starts = np.array([[ic[w * per_warp + 1 + s * len(body) + p] for s in range(trips) for p in stamps]
                       for w in range(32)])
    return n / res.cycles, starts[:, skip:]


def summary(label: str) -> dict:
    row = ROWS[label]
    rate, st = phase_run(row)
    g = row["warps_per_line"]
    return {"sim": (rate, *spreads(st, g), float(np.median(np.diff(st, axis=1)))),
            "hw": (row["loads_per_sm_cycle"], *spreads(np.array(row["step_start_cycles"]), g),
                   float(np.median(np.diff(np.array(row["step_start_cycles"]), axis=1))))}


def test_main_loops_stamp_each_of_four_steps():
    for g in (8, 32):
        body = sass_main_loop("l1_phase.sass", f"_Z8l1_phaseILi16ELi{g}E")
        assert sum(op.startswith("LDG") for op, _, _ in body) == 64
        assert sum(op.startswith("CS2R") for op, _, _ in body) == 4


@pytest.mark.parametrize("label", [lab for lab, r in ROWS.items() if r["ctas_per_sm"] == 1 and r["kb_per_cta"] > 16])
def test_warps_on_the_same_lines_run_in_lockstep(label):
    """One CTA, lines from the L2 or DRAM: the H200's warps of a group start each step within 10-35 cycles of
    each other (far less than a fill), and so do the engine's (6-66): every hit of a group but the leader's
    meets its line's fill on the way, on both. So the H200's extra cost at 16-32 warps a line (micro/l1_dense.json)
    is not that fewer of its hits wait: they all do."""
    s = summary(label)
    assert s["hw"][2] < 50 and s["sim"][2] < 100
