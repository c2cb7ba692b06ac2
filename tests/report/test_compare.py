"""compare: its summary (one line over every point and, where both ladders are in it, one per ladder) and the
recorded stall ratios it sets beside the prediction's."""
from pathlib import Path

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


def test_stalls_are_compared_with_warm_caches_where_pc_samples_have_them():
    """The timed launches find the caches warm; the kernel records' ncu counters ran with them flushed. Where
    a warm PC-sample record exists, the recorded stall ratios are its states over its selected samples:
    selected is then 1 and the sum is the warp's cycles per instruction; elsewhere the ncu ratios stay."""
    import json
    from gpusim.hw.records import hw_record
    from gpusim.report.compare import STALL_PREFIX, STALL_SUFFIX, recorded_values, warm_stall_ratios
    rec = hw_record("reduce_smem", 2048)
    got = recorded_values(rec)
    warm = warm_stall_ratios("reduce_smem", 2048, rec["params"])
    assert warm and all(got[k] == v for k, v in warm.items())
    assert got[STALL_PREFIX + "selected" + STALL_SUFFIX] == 1.0
    pc = json.loads((Path(rec.path).parent / "pcsamp" / "pcsamp_reduce_smem_2048.json").read_text())
    t = pc["totals"]
    assert sum(warm.values()) == pytest.approx(t["smsp__pcsamp_sample_count"] / t["smsp__pcsamp_warps_issue_stalled_selected"],
                                               rel=0.01)
    # warm, reduce_smem's warps at 2048 wait on their shared loads most; flushed, on DRAM
    assert max((v, k) for k, v in warm.items() if "selected" not in k)[1] == STALL_PREFIX + "short_scoreboard" + STALL_SUFFIX
    assert rec.metrics[STALL_PREFIX + "long_scoreboard" + STALL_SUFFIX] > rec.metrics[STALL_PREFIX + "short_scoreboard" + STALL_SUFFIX]
    assert warm_stall_ratios("reduce_smem", 2048, {"BLOCK": 512}) is None       # another launch's samples
    assert warm_stall_ratios("regtile2d", 4096, hw_record("regtile2d", 4096)["params"]) is None   # flushed samples
