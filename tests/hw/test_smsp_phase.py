"""calibrate/smsp_phase.py: the phase of one warp's trip starts within another's, the same-trip
offsets of two warps of one CTA, and what its record (traces/hw/h200/micro/smsp_phase.json) holds."""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "calibrate"))
from smsp_phase import fold_phase, pair_phases, same_trip_offsets  # noqa: E402


def test_fold_phase_is_the_distance_of_each_start_from_the_other_warps_trip_start():
    b = np.array([0.0, 100.0, 200.0, 300.0])
    a = np.array([-5.0, 10.0, 150.0, 290.0, 400.0])       # the first and last fall outside b's trips
    assert fold_phase(a, b) == pytest.approx([0.1, 0.5, 0.1])


def test_pairs_are_grouped_by_smsp_and_cta():
    together = np.arange(0.0, 1000.0, 100.0)
    series = {0: together, 1: together + 2.0, 2: together + 50.0}
    groups = pair_phases(series, smsp={0: 0, 1: 0, 2: 1}, cta={0: 0, 1: 0, 2: 1})
    assert np.median(groups["same SMSP, same CTA"]) == pytest.approx(0.02)
    assert np.median(groups["other SMSP, other CTA"]) == pytest.approx(0.49)     # 0.5 and 0.48 apart
    offs = same_trip_offsets(series, smsp={0: 0, 1: 0, 2: 1}, cta={0: 0, 1: 0, 2: 0})
    assert np.median(offs["same SMSP"]) == 2.0 and np.median(offs["other SMSP"]) == 49.0


def test_record_holds_the_groups_and_one_sm_whole():
    rec = json.loads((ROOT / "traces/hw/h200/micro/smsp_phase.json").read_text())
    d = rec["details"]
    assert set(d["phases"]) == {"same SMSP, same CTA", "same SMSP, other CTA", "other SMSP, same CTA",
                                "other SMSP, other CTA"}
    assert rec["value"] == d["phases"]["same SMSP, same CTA"]["median"]
    one = d["one_sm"]
    assert len(one["warps"]) == len(one["stamps"]) == 16 and len({s for s, _ in one["smid_warpid"]}) == 1
    assert all(np.all(np.diff(s) > 0) for s in one["stamps"])          # trip starts in order
