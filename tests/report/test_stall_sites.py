"""gpusim.report.stall_sites: opcode groups, the PC-sample records, shares."""
import json

import pytest

from gpusim.report.stall_sites import (group, load_pcsamp, not_issued_split, pcsamp_path, regroup, shares, site_rows,
                                      PREFIX)

KERNELS = ["regtile2d", "vectorized", "regblock", "coalesced", "regtile1d", "smemtile", "tiled32", "naive"]


def test_group_names():
    assert group("FFMA") == "FFMA"
    assert group("LOP3.LUT") == "LOP3"
    assert group("ISETP.GE.AND") == "ISETP"
    assert group("LDS.128") == "LDS.128" and group("LDS") == "LDS"
    assert group("LDG.E.128") == "LDG.E.128" and group("LDG.E") == "LDG.E"
    assert group("BAR.SYNC.DEFER_BLOCKING") == "BAR"


@pytest.mark.parametrize("kernel", KERNELS)
def test_record_samples_add_up(kernel):
    """Each state's samples, summed over opcode groups, equal the record's per-kernel total of that
    metric (ncu's aggregate), and every sampled PC has its SASS text."""
    rec = json.loads(pcsamp_path(kernel, 4096).read_text())
    by_group = load_pcsamp(kernel, 4096)
    for metric, per_pc in rec["samples_per_pc"].items():
        assert set(per_pc) <= set(rec["sass"]), metric
        if not metric.startswith(PREFIX) or metric.endswith("_not_issued"):
            continue
        state = metric[len(PREFIX):].replace("no_instructions", "no_instruction")
        got = sum(states.get(state, 0.0) for states in by_group.values())
        assert got == pytest.approx(rec["totals"][metric])


def test_missing_record_is_none():
    assert load_pcsamp("naive", 123) is None
    assert not_issued_split("naive", 123) is None


@pytest.mark.parametrize("kernel", KERNELS)
def test_not_issued_split(kernel):
    """The reasons' shares of all samples add up to 100 %; selected and not_selected are never taken in a
    cycle the scheduler issued nothing; naive (one issue in 30 cycles) is almost all not-issued samples."""
    split = not_issued_split(kernel, 4096)
    assert sum(share for share, _ in split.values()) == pytest.approx(100.0, abs=0.01)
    assert split["selected"][1] == 0 and split["not_selected"][1] == 0
    assert all(0 <= ni <= 100 for _, ni in split.values())
    if kernel == "naive":
        assert split["lg_throttle"][1] > 90


def test_shares_and_rows():
    sim = regroup({"FFMA": {"selected": 30, "short_scoreboard": 50}, "LDS.128": {"mio_throttle": 20}})
    hw = {"FFMA": {"selected": 10, "not_selected": 30}}
    s = shares(sim)
    assert sum(s.values()) == pytest.approx(100.0)
    assert s[("FFMA", "short_scoreboard")] == pytest.approx(50.0)
    rows = site_rows(sim, hw, top=3)
    assert rows == [("FFMA", "not_selected", 0.0, 75.0), ("FFMA", "short_scoreboard", 50.0, 0.0),
                    ("FFMA", "selected", 30.0, 25.0)]
    assert shares({}) == {}
