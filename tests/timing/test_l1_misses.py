"""Loads that all miss L1: the engine against traces/hw/h200/micro/l1_misses.json (calibrate/l1_misses.cu:
every warp a region of its own, 16 loads a step at immediate offsets; 4-32 warps, fills from the L2 or DRAM,
requests of one line, one sector or two lines).

The engine runs a trace of the recorded SASS's main loop (micro/l1_misses.sass, four steps unrolled), every
load on a line of its own. ncu's count of the LSU pipe's loads in flight is the figure compared: these
launches are short (tens of microseconds), so their timed rates carry the launch's own overhead.
The SM's miss entries: lg_sm_miss_depth (176) holds the one-sector rows' 221-235 in flight, lg_sm_miss_sectors
(704 = 176 x 4) the two-line rows' 148-153 (8 sectors a request); the one-line rows, from the L2 and DRAM, with 16 to
64 warps, and l1_dense.json's G = 1 rows are their check (both caps meet there).
"""
import json
from dataclasses import replace

import pytest

from gpusim.arch.presets import H200
from gpusim.timing import stall_metric, LEVEL_L2, LEVEL_DRAM
from tests.timing.test_l1_pending import sass_main_loop, loop_run, MICRO, PENDING, LATENCY

REC = json.loads((MICRO / "l1_misses.json").read_text())
ROWS = {r["label"]: r for r in REC["details"]["rows"]}
SHAPE = {0: (4, 1), 1: (1, 1), 2: (8, 2)}       # request: (sectors, lines)


def misses_run(row: dict, gpu=H200, trips: int = 6):
    """The engine on `trips` trips of the loop (4 steps each) for a record row, as ncu profiled it: after
    ncu's flush the first of an L2 row's passes reads DRAM."""
    mode, w, ctas, passes = row["mode"], row["warps_per_cta"], row["ctas_per_sm"], row["passes"]
    body = sass_main_loop("l1_misses.sass", f"_Z9l1_missesILi16ELi{mode}E")
    sectors, lines = SHAPE[mode]

    def level(c, wp, s, k):
        return LEVEL_DRAM if passes == 1 or s * passes < trips else LEVEL_L2
    return loop_run(body, trips, w, lambda c, wp, s, k: ((c * 64 + wp) * 1000 + s) * 64 + k, level, gpu, ctas,
                    sectors, lines)


def summary(label: str, gpu=H200) -> dict:
    """Loads in flight, their latency, lg_throttle and long_scoreboard per issue: the engine and the H200."""
    n = ROWS[label]["ncu"]
    m = misses_run(ROWS[label], gpu)[0].metrics
    keys = (PENDING, LATENCY, stall_metric("lg_throttle"), stall_metric("long_scoreboard"))
    return {"sim": tuple(m[k] for k in keys), "hw": tuple(n[k] for k in keys)}


def test_main_loops_have_four_steps():
    for mode in (0, 1, 2):
        assert sum(op.startswith("LDG") for op, _, _ in sass_main_loop("l1_misses.sass",
                                                                       f"_Z9l1_missesILi16ELi{mode}E")) == 64


def _rows(min_warps: int):
    return [lab for lab, r in ROWS.items() if r["warps_per_cta"] * r["ctas_per_sm"] >= min_warps]


@pytest.mark.parametrize("label", _rows(16))
def test_engine_holds_the_h200s_misses_in_flight(label):
    """With 16 warps or more (256 loads or more a step) the H200's SM holds 203-239 loads of one line or one
    sector in flight, from the L2 or DRAM, and 148-153 of two lines (8 sectors), whatever the fill's latency
    (1222-1798 cycles from DRAM). The engine's 176 miss entries and 704 sector entries hold 218-238 and 151
    (within 15 %); with the entries counted per instruction only, the two-line rows would hold 236, and with
    no miss entries (misses held in the LG pool until their fill) 87-92."""
    s = summary(label)
    sim, hw = s["sim"], s["hw"]
    assert sim[0] == pytest.approx(hw[0], rel=0.15)


def test_two_line_requests_are_held_by_their_sectors():
    """Two-line requests (8 sectors) from the L2: the sector entries hold the H200's 148 in flight (within
    10 %); with twice the entries of both kinds (what counting per instruction gives these rows) the engine
    would hold over 1.4 times as many."""
    label = next(lab for lab in _rows(32) if ROWS[lab]["mode"] == 2 and ROWS[lab]["from"] == "L2")
    hw = ROWS[label]["ncu"][PENDING]
    assert summary(label)["sim"][0] == pytest.approx(hw, rel=0.10)
    by_instruction = misses_run(ROWS[label], replace(H200, lg_sm_miss_depth=2 * H200.lg_sm_miss_depth,
                                                       lg_sm_miss_sectors=2 * H200.lg_sm_miss_sectors))[0]
    assert by_instruction.metrics[PENDING] > 1.4 * hw
