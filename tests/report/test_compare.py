"""compare's summary: one line over every point and, where both ladders are in it, one per ladder."""
import pytest

from gpusim.report.compare import ladder_of, timing_summary


def _rows(times):
    return [{"kernel": k, "size": s, "metric": "time_ms", "simulated": sim, "recorded": rec}
            for (k, s), (sim, rec) in times.items()]


def test_ladders_are_told_apart():
    assert ladder_of("regtile2d") == "sgemm" and ladder_of("dbuf") == "sgemm"
    assert ladder_of("transpose_pad") == "memory"
    assert ladder_of("coalesced-BLOCKSIZE16") == "sgemm" and ladder_of("nosuchkernel") == "other"


def test_the_summary_splits_by_ladder():
    s = timing_summary(_rows({("naive", 1024): (1.1, 1.0), ("regtile2d", 1024): (0.9, 1.0),
                              ("copy4", 1024): (1.5, 1.0), ("sgemv", 1024): (1.0, 1.0)}))
    assert s["points"] == 4 and s["mape_pct"] == pytest.approx(17.5)
    assert s["ladders"]["sgemm"]["mape_pct"] == pytest.approx(10.0)
    assert s["ladders"]["memory"]["mape_pct"] == pytest.approx(25.0)
    assert s["ladders"]["memory"]["worst"] == "copy4@1024"


def test_one_ladder_gets_no_ladder_lines():
    s = timing_summary(_rows({("naive", 1024): (1.1, 1.0), ("regtile2d", 1024): (0.9, 1.0)}))
    assert "ladders" not in s
