"""L1TEX under loads it cannot take as fast as the SMSPs issue them: the engine against
traces/hw/h200/micro/l1_dense.json (calibrate/l1_dense.cu: CTAs of 32 warps, U loads a step at
immediate offsets, about two instructions a load; groups of G warps on the same lines).

The engine runs a trace of the recorded SASS's main loop (micro/l1_dense.sass, four steps unrolled): with
G = 32 the leader warp's loads (warp 0, first in the cache model's order) miss and the other 31 warps' are
L1 hits on those lines; with G = 1 every load misses. Regions of 8 KB are L1 hits throughout. Calibration
rows, not the ladder.
"""
import json

import pytest

from gpusim.arch.presets import H200
from gpusim.timing import stall_metric, LEVEL_L1, LEVEL_L2, LEVEL_DRAM
from tests.timing.test_l1_pending import sass_main_loop, loop_run, MICRO, PENDING, LATENCY

REC = json.loads((MICRO / "l1_dense.json").read_text())
ROWS = {r["label"]: r for r in REC["details"]["rows"]}
LSUIN = "l1tex__lsuin_requests.avg.pct_of_peak_sustained_elapsed"


def dense_run(row: dict, gpu=H200, flushed: bool = False, trips: int = 6):
    """The engine on `trips` trips of the loop (4 steps each) for a record row; flushed: the first pass's loads
    (1 / passes of them) read DRAM, as in ncu's launch after its flush."""
    g, u, ctas, kb, passes = row["warps_per_line"], row["loads_per_step"], row["ctas_per_sm"], row["kb_per_cta"], \
        row["passes"]
    body = sass_main_loop("l1_dense.sass", f"_Z8l1_denseILi{u}ELi{g}E")
    groups = 32 // g
    resident = kb <= 8

    def line(c, w, s, k):
        step = 4 * s + k // u
        return ((c * 1_000_000 + step * u + k % u) * groups) + (w // g)

    def level(c, w, s, k):
        if resident or w % g:
            return LEVEL_L1
        if kb >= 4096 or (flushed and s * passes < trips):
            return LEVEL_DRAM
        return LEVEL_L2
    return loop_run(body, trips, 32, line, level, gpu, ctas)


def summary(label: str, gpu=H200) -> dict:
    """The engine's loads per SM cycle (as timed: warm L2), L1TEX busy %, loads in flight, latency,
    lg_throttle and long_scoreboard per issue (as ncu profiled: after a flush), beside the H200's."""
    row = ROWS[label]
    res, loads = dense_run(row, gpu)
    m = dense_run(row, gpu, flushed=True)[0].metrics
    n = row["ncu"]
    return {"sim": (loads / res.cycles, res.metrics["gpusim__l1tex_tag_busy.pct"], m[PENDING], m[LATENCY],
                    m[stall_metric("lg_throttle")], m[stall_metric("long_scoreboard")]),
            "hw": (row["loads_per_sm_cycle"], n[LSUIN], n[PENDING], n[LATENCY], n[stall_metric("lg_throttle")],
                   n[stall_metric("long_scoreboard")])}


def test_main_loops_have_four_steps():
    for g in (1, 32):
        for u in (8, 16):
            assert sum(op.startswith("LDG") for op, _, _ in sass_main_loop("l1_dense.sass",
                                                                           f"_Z8l1_denseILi{u}ELi{g}E")) == 4 * u


def _rows(g: int, resident: bool):
    """Labels of the rows with G = g whose region stays in L1 (resident) or is read from the L2."""
    return [lab for lab, r in ROWS.items() if r["warps_per_line"] == g and (r["kb_per_cta"] <= 8) == resident
            and r["kb_per_cta"] < 4096]


@pytest.mark.parametrize("label", _rows(32, True))
def test_engine_hits_at_one_request_a_cycle(label):
    """Every load an L1 hit: the H200's L1TEX takes 0.97-0.99 requests a cycle, the engine's within 5 %."""
    s = summary(label)
    assert s["sim"][0] == pytest.approx(s["hw"][0], rel=0.05)


@pytest.mark.parametrize("label", _rows(1, False))
def test_engine_misses_at_the_l2_share(label):
    """Every load an L1 miss to the L2 (the 128-KB regions miss L1 with either carveout): the H200's SM gets
    0.21-0.26 lines a cycle (28-33 B, the SM's share of the L2's bandwidth), the engine within 20 %. The
    H200 holds 220-240 of them in flight with 32 or 64 warps; with the SM's miss entries (lg_sm_miss_depth,
    lg_sm_miss_sectors: micro/l1_misses.json) the engine holds 231-238 (without it 91-92: the LG pool's 92 until return)."""
    s = summary(label)
    assert s["sim"][0] == pytest.approx(s["hw"][0], rel=0.20)
    assert s["sim"][2] == pytest.approx(s["hw"][2], rel=0.08)


@pytest.mark.parametrize("label", [lab for lab, r in ROWS.items() if 2 <= r["warps_per_line"] <= 8
                                   and 8 < r["kb_per_cta"] < 4096])
def test_engine_lines_shared_by_up_to_8_warps(label):
    """Groups of 2-8 warps on each line from the L2 (one miss and G - 1 hits on it): the engine's loads per
    cycle within 20 % of the H200's (0.42-0.89; the worst G = 4 on one CTA, 0.82 against 0.70, 0.79 before
    the SM's miss entries), and its loads in flight within 25 % (296-365 on the H200; 337-408 in the engine,
    127-243 without the miss entries: the misses then hold the LG pool until their fill). With 16 or 32
    warps on a line, or fills from DRAM, the H200 slows down (G = 32: 0.74-0.77) and the engine does not
    (0.92-0.95): not modelled (docs/notes/2026-11-30-l1-pending-hits.md)."""
    s = summary(label)
    assert s["sim"][0] == pytest.approx(s["hw"][0], rel=0.20)
    assert s["sim"][2] == pytest.approx(s["hw"][2], rel=0.25)
