"""The text reports fit the page: at 80 columns no metric name or number is cut ("…"), `gpusim run`'s
default sections of the default run fit one screen, compare's summary comes first and short; at 200
columns the tables give ncu's metric names. Each report is captured from a rich Console of the width."""
import io
import random

import pytest
from rich.console import Console

from gpusim.errors import GpusimError
from gpusim.report import render
from gpusim.report.cli import DEFAULT_SIZE, main


def _page(monkeypatch, width):
    """Routes the reports to a recording console `width` columns wide; returns a function giving the text."""
    con = Console(width=width, record=True, file=io.StringIO())
    monkeypatch.setattr(render, "console", con)
    return lambda: con.export_text()


def _fits(text, width):
    assert "…" not in text, [line for line in text.splitlines() if "…" in line]
    assert max(map(len, text.splitlines())) <= width


@pytest.fixture(scope="module")
def regtile2d():
    """`gpusim run regtile2d` (the default run) simulated and timed once for the module (seconds)."""
    from gpusim import simulate
    from gpusim.estimate.kernel_time import predict
    r = simulate("regtile2d", DEFAULT_SIZE, DEFAULT_SIZE, DEFAULT_SIZE, keep_trace=True)
    return r, predict(r, not_issued=True)


def test_the_default_run_fits_one_screen_at_80_columns(regtile2d, monkeypatch):
    r, pred = regtile2d
    text = _page(monkeypatch, 80)
    render.print_summary(r, pred, None, render.pick_sections(None))
    out = text()
    _fits(out, 80)
    assert len(out.splitlines()) <= 50, out
    assert "predicted time" in out and "binding limit: shared pipe" in out and "Warp State Statistics" in out
    assert "more: --section all" in out        # says where the rest went


@pytest.mark.parametrize("width", [80, 200])
def test_every_section_is_readable_at_any_width(regtile2d, monkeypatch, width):
    """Every section (the H200 has this launch: its column too) without a cut cell; a narrow page names
    the metrics by short labels and says where ncu's names are, a wide one by ncu's names."""
    r, pred = regtile2d
    text = _page(monkeypatch, width)
    render.print_summary(r, pred, None, render.pick_sections(["all"]))
    out = text()
    _fits(out, width)
    ncu_name = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
    if width < render.WIDE:
        assert ncu_name not in out and "shared load bank conflicts" in out and "COLUMNS=160" in out
    else:
        assert ncu_name in out and "COLUMNS=160" not in out
    # the shared-memory CTA limit differs from ncu's by design: a note says why
    assert "carveout" in out


def test_counts_only_default_is_the_launch_and_memory_counts():
    assert render.pick_sections(None, timed=False) == ("Occupancy", "MemoryWorkloadAnalysis")
    assert render.pick_sections(None, trace=True) == ("SpeedOfLight", "WarpStateStats", "warps")
    assert render.pick_sections(["speedoflight,Occupancy", "SourceCounters"]) == \
        ("SpeedOfLight", "Occupancy", "SourceCounters")
    assert "warps" not in render.pick_sections(["all"]) and "warps" in render.pick_sections(["all"], trace=True)


@pytest.mark.parametrize("argv,says", [
    (["--section", "SpeedOfLite"], "unknown section 'SpeedOfLite'; did you mean SpeedOfLight?"),
    (["--section", "warps"], "add --trace"),
    (["--section", "Occupancy", "--json"], "--json prints every figure"),
])
def test_a_bad_section_is_one_line_before_anything_runs(capsys, argv, says):
    assert main(["run", "naive", "--size", "64", *argv]) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1 and "Traceback" not in err


def test_pick_sections_names_them_all_when_nothing_is_close():
    with pytest.raises(GpusimError, match="sections: SpeedOfLight, Occupancy, .*, warps, all"):
        render.pick_sections(["zzz"])


def test_trace_section_warps_prints_the_per_warp_view_alone(tmp_path, capsys):
    assert main(["run", "smemtile", "--size", "128", "--trace", "--section", "warps",
                 "--timeline", str(tmp_path / "t.json")]) == 0
    out = capsys.readouterr().out
    assert "per-warp stalls" in out and "timeline:" in out
    assert "Speed Of Light" not in out and "Warp State Statistics" not in out and "predicted time" not in out


def test_the_per_warp_view_fits_80_columns(tmp_path, monkeypatch):
    """Too many states for 80 columns: the ones with the most cycles, the rest summed as "other"."""
    text = _page(monkeypatch, 80)
    assert main(["run", "smemtile", "--size", "128", "--trace", "--section", "warps",
                 "--timeline", str(tmp_path / "t.json")]) == 0
    out = text()
    _fits(out, 80)
    assert "other=" in out


def _compare_rows(kernels=None, sizes=(1024, 2048, 4096)):
    """compare's rows over the ladder without simulating: each record against itself, its time and stalls
    moved by up to 40 % and its shared-store wavefronts 2-15 % fewer (as the simulator counts them)."""
    from gpusim.report.compare import STALL_PREFIX, TIME_METRICS, compare_rows, recorded_values
    from gpusim.hw.records import hw_record
    rnd = random.Random(0)
    counts = {"smsp__inst_executed.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
              "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "launch__occupancy_limit_shared_mem",
              "launch__registers_per_thread"}

    def sim(kernel, size, params=None):
        v = recorded_values(hw_record(kernel, size))
        out = {m: x for m, x in v.items() if m in counts or m == "time_ms" or m in TIME_METRICS
               or m.startswith(STALL_PREFIX)}
        out["time_ms"] *= rnd.uniform(0.6, 1.4)
        out.update({m: x * rnd.uniform(0.5, 1.5) for m, x in out.items() if m.startswith(STALL_PREFIX)})
        out["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"] *= rnd.uniform(0.85, 0.98)
        out["launch__occupancy_limit_shared_mem"] = 32
        return out
    return [dict(r._asdict(), size=s) for s in sizes for r in compare_rows(kernels, s, sim_fn=sim)]


@pytest.mark.parametrize("width", [80, 200])
def test_the_compare_summary_over_the_ladder_is_under_40_lines(monkeypatch, width):
    """Every kernel of both ladders at three sizes: one row per kernel, the notes on the counts that
    differ, the summary lines, all in under 40 lines; no cut cell."""
    from gpusim.report.compare import point_summary, timing_summary
    rows = _compare_rows()
    text = _page(monkeypatch, width)
    render.print_compare_summary(point_summary(rows), "simulated vs recorded on the H200 (traces/hw/h200)")
    render.print_timing_summary(timing_summary(rows))
    out = text()
    _fits(out, width)
    assert len(out.splitlines()) < 40, out
    for k in ("naive", "regtile2d", "transpose_naive", "softmax"):
        assert f"│ {k} " in out
    store = "shared store wavefronts" if width < render.WIDE else "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"
    assert "counts that differ" in out and store in out and "not counted" in out
    assert "summary sgemm ladder" in out and "summary memory ladder" in out


def test_compare_prints_its_summary_first_and_detail_on_request(monkeypatch):
    """`gpusim compare` (counts only, two kernels at one size): the summary table at the top, no
    metric-by-metric rows; --detail adds those, short-named at 80 columns."""
    text = _page(monkeypatch, 80)
    args = ["compare", "naive", "smemtile", "--size", "1024", "--no-time"]
    assert main(args) == 0
    out = text()
    _fits(out, 80)
    head = out.splitlines()[:40]
    assert any("│ smemtile" in line for line in head) and len(out.splitlines()) < 40
    assert "global load sectors" not in out
    text = _page(monkeypatch, 80)
    assert main(args + ["--detail"]) == 0
    out = text()
    _fits(out, 80)
    assert "smemtile at 1024" in out and "global load sectors" in out and "carveout" in out


def test_the_width_follows_columns(monkeypatch):
    """$COLUMNS sets the page width when stdout is not a terminal (otherwise 160 wide)."""
    import importlib
    import sys
    monkeypatch.setattr(sys, "stdout", io.StringIO())      # not a terminal, whatever runs the tests
    monkeypatch.setenv("COLUMNS", "93")
    try:
        assert importlib.reload(render).console.width == 93
        monkeypatch.delenv("COLUMNS")
        assert importlib.reload(render).console.width == 160
    finally:
        monkeypatch.delenv("COLUMNS", raising=False)
        importlib.reload(render)


def test_one_size_gets_both_times_and_names_the_top_stalls_that_differ(monkeypatch):
    from gpusim.report.compare import point_summary
    points = point_summary(_compare_rows(["naive", "regtile2d", "copy4"], sizes=(2048,)))
    points[1]["top_stall"] = "drain" if points[1]["h200_top_stall"] != "drain" else "wait"
    text = _page(monkeypatch, 80)
    render.print_compare_summary(points, "simulated vs recorded")
    out = text()
    _fits(out, 80)
    assert "predicted ms" in out and "H200 ms" in out
    assert f"top stall, simulated / H200: regtile2d {points[1]['top_stall']} / {points[1]['h200_top_stall']}" \
        in " ".join(out.split())
