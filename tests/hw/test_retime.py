"""The ladder launches timed again in other device sessions (gpusim/hw/retime.py, traces/hw/h200/retime/):
what each file holds, and how the bench sets them beside the records."""
import json
import sys
from pathlib import Path

import pytest

from gpusim.hw.retime import SCHEMA, SIZES
from gpusim.kernel.spec import LADDERS

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted((ROOT / "traces" / "hw" / "h200" / "retime").glob("retime_*.json"))


def test_each_session_times_every_point_of_its_ladder_in_several_passes():
    assert len(FILES) >= 3
    for f in FILES:
        rec = json.loads(f.read_text())
        assert rec["schema"] == SCHEMA and rec["device"] == "NVIDIA H200", f
        assert rec["date"] and rec["driver"] and rec["command"].startswith("PYTHONPATH=. python3 -m gpusim.hw.retime")
        times = rec["time_ms_median_by_pass"]
        assert set(times) == {f"{k}_{n}" for k in LADDERS[rec["ladder"]] for n in SIZES}, f
        for key, passes in times.items():
            assert len(passes) >= 2 and all(t > 0 for t in passes), key
            assert rec["check"][key]["passed"], key
            # one session's passes agree far better than the sessions do with each other (softmax 2048 aside)
            if key != "softmax_2048":
                assert max(passes) / min(passes) < 1.05, (f.name, key, passes)


def test_the_bench_reads_each_sessions_median(monkeypatch):
    """bench_timing.retimed gives one figure a session, the median of its passes, in file order."""
    import statistics
    sys.path.insert(0, str(ROOT / "bench"))
    import bench_timing
    got = bench_timing.retimed("sgemv", 1024)
    recs = [json.loads(f.read_text())["time_ms_median_by_pass"] for f in FILES]
    want = [statistics.median(r["sgemv_1024"]) for r in recs if "sgemv_1024" in r]
    assert len(want) >= 2 and got == pytest.approx(want)
    assert len(bench_timing.retimed("coalesced", 4096)) >= 1
    assert bench_timing.retimed("no_such_kernel", 1024) == []
