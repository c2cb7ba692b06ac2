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


def test_window_pc_cycles_add_up_to_the_window():
    """Every warp cycle of a --trace window lands at one PC, in its state: per state, the PCs' cycles sum
    to the engine's own state cycles (selected: one per issued instruction)."""
    from gpusim.estimate.kernel_time import predict
    from gpusim.estimate.simulate import simulate
    from gpusim.estimate.window import time_window
    from gpusim.report.stall_sites import window_pc_cycles
    r = simulate("sgemv", 1024, 1024, 1024)
    w = time_window(r, predict(r))
    by_pc = window_pc_cycles(w)
    assert len(by_pc) > 20
    for state, cycles in w.timing.state_cycles.items():
        assert sum(s.get(state, 0.0) for s in by_pc.values()) == pytest.approx(cycles), state
    # the waits on the row's loads sit at the FFMAs that use them, as in ncu's Source view
    fma = [s for pc, s in by_pc.items() if "long_scoreboard" in s]
    assert fma and max(s["long_scoreboard"] for s in fma) > 0.1 * w.timing.state_cycles["long_scoreboard"]


def test_pcsamp_by_pc_matches_the_record_totals():
    """The warm memory-ladder records: per state, the PCs' samples sum to ncu's total for that state, and
    the record says the caches were left warm."""
    from gpusim.report.stall_sites import load_pcsamp_by_pc, pc_rows
    per_pc, sass, caches = load_pcsamp_by_pc("softmax", 2048)
    rec = json.loads(pcsamp_path("softmax", 2048).read_text())
    assert caches == "none" and set(per_pc) <= set(sass)
    for metric, total in rec["totals"].items():
        if metric.startswith(PREFIX) and not metric.endswith("_not_issued"):
            state = metric[len(PREFIX):].replace("no_instructions", "no_instruction")
            assert sum(s.get(state, 0.0) for s in per_pc.values()) == pytest.approx(total), metric
    rows = pc_rows({0x4c0: {"long_scoreboard": 3.0}, 0x10: {"selected": 1.0}}, per_pc, top=3)
    assert [r[0] for r in rows] == sorted(r[0] for r in rows)
    assert any(r[0] == 0x4c0 and r[1] == pytest.approx(75.0) and r[4] == "long_scoreboard" for r in rows)
