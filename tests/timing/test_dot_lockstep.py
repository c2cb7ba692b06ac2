"""traces/hw/h200/micro/dot_lockstep.json (a mechanism probe, not the ladder): what holds two warps of one SMSP
near each other on regtile2d's dotIdx trip (micro/dot_pair.json: 12 cycles apart; micro/smsp_phase.json: at
4096 regtile2d's same-SMSP warps of one CTA in step, those of two CTAs not). The H200 says: not the shared
words they read (two warps of one CTA reading different rows of the tiles keep exactly the offset of two
reading the same ones), and not being of one CTA as such. Warps of two CTAs on one SM start 180-460 cycles
apart, drift for the first trips while one runs alone, and from trip 8 on hold their offset to the cycle; the
offsets they settle at lie near a whole trip (in step) or about a third of one past it. Warps of one CTA start
together and settle near each other. The engine's two warps of one SMSP settle 60 cycles apart on dot_pair's
loop (tests/timing/test_dot_pair.py), whatever their start (docs/notes/2026-12-01-warp-pairs.md).
"""
import json
import statistics
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
REC = json.loads((ROOT / "traces/hw/h200/micro/dot_lockstep.json").read_text())["details"]
ROWS = {r["mode"]: r for r in REC["rows"]}
sys.path.insert(0, str(ROOT / "calibrate"))
import dot_lockstep  # noqa: E402  (the micro's own analysis)
from dot_pair import loop_stall_counts  # noqa: E402


def test_the_record_holds_every_mode_with_pairs():
    assert set(ROWS) == {"same", "split", "cross"}
    assert ROWS["same"]["pairs"] == ROWS["split"]["pairs"] == 3
    assert ROWS["cross"]["pairs"] >= 300          # about 132 SMs x 3 runs


def test_the_rows_follow_from_the_stamps_kept():
    """The same / split rows are what the micro's analysis makes of the stamps the record keeps."""
    runs = {}
    for key, warps in REC["stamps"].items():
        mode, label = key.split()
        runs[(mode, label)] = {(0, int(w)): (0, int(w) + 1, t) for w, t in warps.items()}
    for row in dot_lockstep.summarize(runs):
        assert row["offset_median"] == ROWS[row["mode"]]["offset_median"]
        assert row["trip_cycles_median"] == ROWS[row["mode"]]["trip_cycles_median"]


def test_reading_the_same_shared_words_is_not_what_holds_the_pair():
    """split gives every warp its own tile row (no Bs word read by both): same offset, same trip time."""
    assert ROWS["split"]["offset_median"] == pytest.approx(ROWS["same"]["offset_median"], abs=2)
    assert ROWS["split"]["trip_cycles_median"] == pytest.approx(ROWS["same"]["trip_cycles_median"], abs=2)
    assert ROWS["same"]["phase_median"] < 0.15       # near each other, as dot_pair's 0x11 row (12 cycles)


def test_a_pair_keeps_the_offset_it_has_once_both_run():
    """cross: from trip 8 on, every pair's median offset is its offset at trip 8 (within 2 cycles), though
    it grew from the start (one warp ran alone first); the settled offsets are near a whole trip for some
    pairs and about a third of a trip past one for others."""
    pairs = REC["cross_pairs"]
    kept = [abs(off - gap8) <= 2 for _, gap8, off, _ in pairs]
    assert sum(kept) >= 0.95 * len(pairs)
    assert statistics.median(gap8 - gap0 for gap0, gap8, _, _ in pairs) > 50
    phases = [min((off / trip) % 1, 1 - (off / trip) % 1) for _, _, off, trip in pairs]
    assert sum(p > 0.25 for p in phases) > 0.25 * len(phases)
    assert sum(p < 0.1 for p in phases) > 0.1 * len(phases)


def test_the_committed_sass_is_the_recorded_binarys():
    """traces/hw/h200/micro/dot_lockstep.sass is the binary the record ran: its trip loop's ptxas stall counts
    are those the record took."""
    sass = (ROOT / "traces/hw/h200/micro/dot_lockstep.sass").read_text()
    assert loop_stall_counts(sass, "dot_lockstep") == REC["loop_stall_counts"]
