"""The warp-selection policy against traces/hw/h200/micro/sched_fairness.json (calibration, not the
ladder): 32 warps of one CTA (8 per SMSP) run the same independent work; the record gives each
warp's finish as a fraction of the CTA's span. Measured: warps competing for the LG queue, the MIO
queue finish together (earliest 0.97 / 0.93); with 4 FFMA chains, a warp that can issue every
cycle keeps the slot and pairs of warps per SMSP finish in a staircase (earliest 0.26); in every
mode the younger warps finish first (the record's Spearman correlation of warp index and finish
-0.87 to -0.98). The default policy (greedy-then-youngest, with freed queue entries going to the
warps that began waiting first) reproduces these; greedy-then-oldest (the engine's policy until
2026-11-30) finished the old warps first (Spearman above +0.8 in every mode), and without the queue rule
it starved the young ones in the queue-bound modes (earliest finish more than 0.2 below the record's),
both ruled out. Not reproduced (docs/notes/2026-12-01-scheduler-policy.md): with 2
chains the H200 issues 0.95 FFMA per cycle and rotates over all 8 warps; the engine's FP32
warp-switch bubble (from micro/fma_issue_rate.json, whose FFMAs read three registers) holds it
to 0.66 and a staircase; micro/fma_operands.json shows FFMAs with an immediate operand, as here,
have no bubble, and the trace does not say which kind a row is.

The traces follow calibrate/sched_fairness.cu's loops (SASS: per trip 8 independent
loads then the 8 FADDs that sum them, or 16 FFMAs per chain, and the loop's IADD3/ISETP/BRA)."""
import json
from pathlib import Path

import numpy as np
import pytest

from gpusim.arch.presets import H200
from gpusim.timing import simulate_sm, LEVEL_L1
from gpusim.trace.trace import Trace
from tests.timing.hand_trace import HandTrace

REC = json.loads((Path(__file__).resolve().parents[2] / "traces/hw/h200/micro/sched_fairness.json").read_text())
TRIPS = {"lg": 8, "lds": 16, "ffma4": 16, "ffma2": 16}


def fairness_trace(mode: str, warps: int = 32) -> Trace:
    ht = HandTrace()
    for w in range(warps):
        add = ht.warp(w)
        acc = [add("MOV") for _ in range(4)]
        for _ in range(TRIPS[mode]):
            if mode in ("lg", "lds"):
                ld = [add("LDG", sec=32, lines=32) if mode == "lg" else add("LDS", wf=8) for _ in range(8)]
                for x in ld:
                    acc[0] = add("FADD", (acc[0], x))
            else:
                chains = 4 if mode == "ffma4" else 2
                for _ in range(64 // chains):
                    for c in range(chains):
                        acc[c] = add("FFMA", (acc[c],))
            i = add("IADD3"); p = add("ISETP", (i,)); add("BRA", (p,))
        add("EXIT")
    return ht.trace()


def finish_fractions(mode: str) -> np.ndarray:
    t = fairness_trace(mode)
    res = simulate_sm(t, H200, global_level=np.full(len(t), LEVEL_L1, np.int8))
    order = np.argsort(res.warps[:, 1])             # by warp index in the CTA
    return res.warp_retire[order] / res.cycles


@pytest.mark.parametrize("mode", ["lg", "lds"])
def test_queue_bound_warps_finish_together(mode):
    """Earliest finish within 0.1 of the recorded median (0.97 / 0.93)."""
    f = finish_fractions(mode)
    want = REC["modes"][mode]["earliest_finish_fraction_median"]
    assert want > 0.9
    assert f.min() == pytest.approx(want, abs=0.1)


def test_warp_that_can_issue_every_cycle_keeps_the_slot():
    """ffma4: recorded earliest finish 0.26 (a staircase); the engine's is below 0.5 too."""
    assert REC["modes"]["ffma4"]["earliest_finish_fraction_median"] < 0.5
    assert finish_fractions("ffma4").min() < 0.5


def _spearman(f: np.ndarray) -> float:
    return float(np.corrcoef(np.arange(len(f)), np.argsort(np.argsort(f)))[0, 1])


@pytest.mark.parametrize("mode", ["lg", "lds", "ffma4", "ffma2"])
def test_younger_warps_finish_first(mode):
    """The record's warps finish in reverse order of age (Spearman of warp index and finish -0.87 to
    -0.98): the scheduler prefers the youngest eligible warp, and among warps that met a full queue in
    the same cycle the youngest. The engine's order agrees (below -0.8; micro/barrier_wait.json shows the
    same in regtile1d: a CTA's younger warps reach its barriers first)."""
    want = REC["modes"][mode]["spearman_warp_vs_finish_median"]
    assert want < -0.8
    assert _spearman(finish_fractions(mode)) < -0.8


@pytest.mark.xfail(strict=True, reason="known gap: with 2 chains the H200 rotates over all 8 warps of an SMSP "
                   "(earliest finish 0.95), the engine's warps finish in pairs (0.25): module doc, "
                   "docs/notes/2026-12-01-scheduler-policy.md")
def test_ffma2_warps_finish_together():
    """ffma2: the recorded earliest finish is above 0.9. The diagnosis policy "gtl" (greedy, then the eligible
    warp that issued least recently; removed 2026-12-02) rotated them so (0.95) and kept ffma4's staircase,
    but lost the lds mode's age order (Spearman -0.69 against the H200's -0.98)."""
    want = REC["modes"]["ffma2"]["earliest_finish_fraction_median"]
    assert want > 0.9
    assert finish_fractions("ffma2").min() == pytest.approx(want, abs=0.1)
