"""The command line: JSON output, kernel list, and one-line errors without tracebacks."""
import json
import os
import subprocess
import sys

import pytest

from gpusim.report.cli import main
from gpusim.timing.states import STATES


def test_run_json(capsys):
    """`gpusim run KERNEL --json` prints one JSON object with the counters and the predicted time and stalls."""
    assert main(["run", "naive", "--size", "64", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["kernel"] == "naive" and out["M"] == out["N"] == out["K"] == 64
    assert out["metrics"]["smsp__inst_executed.sum"] > 0
    assert out["time_ms"] > 0 and out["cycles"] > 0
    assert out["stalls"]["smsp__average_warps_issue_stalled_selected_per_issue_active.ratio"] == 1.0
    # the stall sites hold every issued instruction once as `selected`
    assert sum(s.get("selected", 0) for s in out["stall_sites"].values()) == pytest.approx(
        out["timing_metrics"]["gpusim__inst_issued_per_sm"])
    assert sum(out["inst_executed_per_opcode"].values()) == out["metrics"]["smsp__inst_executed.sum"]
    # each reason's share of its cycles in which the warp's SMSP issued nothing (selected: never)
    assert out["timing_metrics"]["gpusim__selected_not_issued.pct"] == 0.0


def test_run_summary(capsys):
    assert main(["run", "naive", "--M", "64", "--N", "32", "--K", "16", "--section", "all"]) == 0
    out = capsys.readouterr().out
    assert "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum" in out
    assert "Source Counters by opcode" in out
    assert "SMSP issued nothing" in out


def test_list(capsys):
    assert main(["list"]) == 0
    assert "naive" in capsys.readouterr().out


@pytest.mark.parametrize("argv,msg", [
    (["run", "nosuch"], "known kernels: naive"),
    (["run", "naive", "--param", "BLOCK=64"], "exceeds 1024"),
    (["run", "naive", "--param", "FOO=1"], "unknown parameter 'FOO'"),
    (["run", "naive", "--param", "BLOCK"], "NAME=VALUE"),
    (["run", "naive", "--arch", "v100"], "unknown arch"),
    (["run", "naive", "--size", "-4"], "positive"),
])
def test_errors_are_one_line(capsys, argv, msg):
    """Bad input stops with exit code 2 and a one-line message, no traceback."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert msg in err and "Traceback" not in err and err.count("\n") == 1


def test_run_trace_writes_a_perfetto_timeline(tmp_path, capsys):
    """--trace prints the per-warp table and writes Chrome trace-event JSON that Perfetto opens: each
    warp's track holds its issues (one cycle, named by opcode) and its stall intervals (named by ncu
    state), which do not overlap. Its times are whole SM cycles, and the file says so, with the clock."""
    path = tmp_path / "t.json"
    assert main(["run", "smemtile", "--size", "256", "--trace", "--window", "2", "--timeline", str(path)]) == 0
    out = capsys.readouterr().out
    assert "smsp__average_warp_latency_per_inst_issued.ratio" in out and "per-warp stalls" in out
    doc = json.loads(path.read_text())
    slices = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    issues = [e for e in slices if e["cat"] == "issue"]
    stalls = [e for e in slices if e["cat"] == "stall"]
    assert issues and all(e["dur"] == 1 for e in issues) and doc["otherData"]["events"] == len(issues)
    assert stalls and {e["name"] for e in stalls} <= set(STATES) - {"selected"}
    assert doc["otherData"]["stall_intervals"] == len(stalls)
    by_warp = {}
    for e in slices:
        by_warp.setdefault(e["tid"], []).append((e["ts"], e["ts"] + e["dur"]))
    for spans in by_warp.values():
        spans.sort()
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))
    from gpusim.arch import get_arch
    other = doc["otherData"]
    assert other["time_unit"] == "cycles" and other["clock_mhz"] == get_arch("h200").sm_clock_max_mhz
    assert other["ns_per_cycle"] == pytest.approx(1e3 / other["clock_mhz"])
    assert doc["displayTimeUnit"] == "ms"       # the format's default: no finer than the file's 1 unit = 1 cycle
    assert all(isinstance(e["ts"], int) and isinstance(e["dur"], int) for e in slices)
    assert max(e["ts"] + e["dur"] for e in slices) <= other["cycles"] == other["last_cycle"] + 1
    assert "1 us on the time axis is 1 SM cycle" in " ".join(out.split())


def test_run_trace_json_says_where_the_timeline_went(tmp_path, capsys):
    path = tmp_path / "t.json"
    assert main(["run", "smemtile", "--size", "128", "--trace", "--json", "--timeline", str(path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["timeline"]["path"] == str(path) and out["timeline"]["events"] > 0 and path.exists()


def test_run_trace_needs_the_timing(capsys):
    assert main(["run", "smemtile", "--size", "128", "--trace", "--no-time"]) == 2
    assert "--no-time" in capsys.readouterr().err


def test_compare_counts_only(capsys):
    """`gpusim compare KERNEL --size N --no-time --json` needs no GPU: simulated against recorded rows."""
    assert main(["compare", "smemtile", "--size", "1024", "--no-time", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    by_metric = {r["metric"]: r for r in rows}
    row = by_metric["smsp__inst_executed.sum"]
    assert row["kernel"] == "smemtile" and row["size"] == 1024
    assert row["simulated"] == row["recorded"] > 0


def test_hw_record_refuses_without_gpu(capsys):
    """On a machine without cupy or a GPU, `gpusim hw record` stops with a one-line reason."""
    try:
        import cupy  # noqa: F401
        pytest.skip("cupy is installed here")
    except ImportError:
        pass
    assert main(["hw", "record", "naive", "--sizes", "256"]) == 2
    assert "needs cupy and a CUDA GPU" in capsys.readouterr().err


@pytest.mark.slow        # tens of seconds: .ci/run runs it (`pytest -m slow`)
def test_run_puts_the_h200_record_of_the_same_launch_beside_the_prediction(capsys):
    """Where traces/hw/h200 holds this very launch (kernel, default parameters, size), `gpusim run` prints
    its measured time and ncu's stall ratios beside the prediction, and --json carries them; a held-out
    variant (traces/hw/h200/variants/) gets its own record, never the default parameters' one; a launch
    without a record gets neither."""
    assert main(["run", "regtile1d", "--size", "1024", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    rec = json.loads(open("traces/hw/h200/regtile1d_1024.json").read())
    assert out["h200"]["time_ms"] == rec["time_ms_median"]
    key = "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio"
    assert out["h200"]["stalls"][key] == rec["ncu"]["metrics"][key]
    for k in ("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "launch__registers_per_thread"):
        assert out["h200"]["metrics"][k] == rec["ncu"]["metrics"][k] == out["metrics"][k]
    assert main(["run", "regtile1d", "--size", "1024"]) == 0
    text = capsys.readouterr().out
    assert "H200 recorded" in text and "H200 (ncu)" in text
    assert main(["run", "regtile1d", "--size", "1024", "--param", "TM=4", "--param", "BK=16", "--json"]) == 0
    var = json.loads(open("traces/hw/h200/variants/regtile1d-BK16TM4_1024.json").read())
    assert json.loads(capsys.readouterr().out)["h200"]["time_ms"] == var["time_ms_median"] != rec["time_ms_median"]
    assert main(["run", "regtile1d", "--size", "1024", "--param", "TM=4", "--param", "BK=16"]) == 0
    assert "traces/hw/h200/variants/regtile1d-BK16TM4_1024.json" in capsys.readouterr().out
    assert main(["run", "regtile1d", "--size", "512", "--param", "TM=4", "--param", "BK=16", "--json"]) == 0
    assert "h200" not in json.loads(capsys.readouterr().out)


def _cells(text, first):
    """The cells of the table row whose first cell is `first` (rich's box characters as separators)."""
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip("│ ").split("│")]
        if cells and cells[0] == first:
            return cells
    raise AssertionError(f"no row {first!r}")


def test_run_sets_every_section_beside_the_h200_record(capsys):
    """With a record of the same launch, each section gets an "H200 (ncu)" column holding the record's
    value of the same ncu name: exact counts, launch figures, SASS opcodes (ncu's spelling with the
    modifier the simulator leaves off), the cache model's rates and the predictions; without one, none."""
    rec = json.loads(open("traces/hw/h200/regtile1d_4096.json").read())["ncu"]
    assert main(["run", "regtile1d", "--size", "4096", "--section", "all"]) == 0
    text = capsys.readouterr().out
    req = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
    assert _cells(text, req)[1] == _cells(text, req)[3] == f"{int(rec['metrics'][req]):,}"
    assert _cells(text, "launch__registers_per_thread")[2] == str(int(rec["metrics"]["launch__registers_per_thread"]))
    assert _cells(text, "BAR.SYNC.DEFER_BLOCKING")[3] == f"{rec['inst_executed_per_opcode_with_modifier']['BAR.SYNC.DEFER_BLOCKING']:,}"
    dram = _cells(text, "dram__bytes_read.sum")
    assert dram[1] == "byte" and dram[3] == f"{rec['metrics']['dram__bytes_read.sum']:,.0f}"
    assert _cells(text, "gpusim__l1tex_busy.pct (LSU requests in the L1TEX stage)")[3] == "-"
    issue = rec["metrics"]["smsp__issue_active.avg.per_cycle_active"]       # the same figure, ncu's other name
    assert _cells(text, "smsp__issue_active.avg.pct_of_peak_sustained_active")[3] == f"{100 * issue:.3f}"
    assert main(["run", "regtile1d", "--size", "512", "--no-time"]) == 0
    assert "H200 (ncu)" not in capsys.readouterr().out


def test_compare_variants_joins_the_held_out_records(capsys):
    """`gpusim compare --variants` compares each kernel's held-out variant (traces/hw/h200/variants/),
    labelled by its record's name, with the variant's own parameters simulated: its counts equal ncu's."""
    assert main(["compare", "regtile2d", "--variants", "--size", "2048", "--no-time", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows and {r["kernel"] for r in rows} == {"regtile2d-BN64TM4"}
    inst = next(r for r in rows if r["metric"] == "smsp__inst_executed.sum")
    assert inst["simulated"] == inst["recorded"]


@pytest.mark.slow        # minutes in all: .ci/run runs it (`pytest -m slow`)
def test_run_of_a_recorded_non_square_launch_shows_its_h200_time(capsys):
    """A non-square launch recorded under traces/hw/h200/shapes/ (default parameters, times only) gets its
    measured time beside the prediction; with other parameters it has no record and gets none."""
    args = ["run", "regtile2d", "--M", "4096", "--N", "1024", "--K", "2048", "--json"]
    assert main(args) == 0
    rec = json.loads(open("traces/hw/h200/shapes/regtile2d_4096x1024x2048.json").read())
    h = json.loads(capsys.readouterr().out)["h200"]
    assert h["time_ms"] == rec["time_ms_median"] and h["record"].endswith("shapes/regtile2d_4096x1024x2048.json")
    assert main(args + ["--param", "BN=64", "--param", "TM=4"]) == 0
    assert "h200" not in json.loads(capsys.readouterr().out)


@pytest.mark.slow        # minutes in all: .ci/run runs it (`pytest -m slow`)
def test_run_shows_the_lsu_pipe_beside_ncus_count_of_it(capsys):
    """`gpusim run` prints the loads the engine keeps in the LSU pipe (pending per cycle and latency, under
    ncu's names, over the whole kernel) and, where traces/hw/h200/lsu/ has this launch, ncu's own count
    beside them; --json carries both (lsu, h200.lsu). At a size without such a record the section
    has no H200 column."""
    rec = json.loads(open("traces/hw/h200/lsu/lsu_regtile2d_2048.json").read())["metrics"]
    lat = "sm__average_inst_latency_pipe_lsu_mem_shared_cmd_read.ratio"
    assert main(["run", "regtile2d", "--size", "2048", "--section", "MemoryWorkloadAnalysis"]) == 0
    text = capsys.readouterr().out
    assert "LSU pipe" in text and _cells(text, lat)[3] == f"{rec[lat]:.3f}"
    assert main(["run", "regtile2d", "--size", "2048", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["h200"]["lsu"][lat] == rec[lat]
    assert out["lsu"][lat] > 0 and set(out["h200"]["lsu"]) == set(out["lsu"])
    assert main(["run", "regtile2d", "--size", "1024", "--section", "MemoryWorkloadAnalysis"]) == 0
    text = capsys.readouterr().out
    assert len(_cells(text, lat)) == 3          # metric, unit, predicted: no record of this launch


def test_an_engine_step_says_when_it_compiles_the_engine_first(monkeypatch):
    """On a machine whose numba cache lacks the cycle loop, the progress bar of a step that runs it says
    the step compiles it first (30-50 s that the bar would otherwise spend at one place), and why the
    shipped copy did not serve."""
    import gpusim.timing as T
    from gpusim import jit
    from gpusim.report import commands
    monkeypatch.setattr(T, "engine_compiled", lambda: False)
    monkeypatch.setattr(jit, "shipped_miss", lambda: "the shipped copy is for numba 0.1, this is 0.2")
    assert commands._engine_step("timing") == ("timing: compiling the engine (once, 30-50 s; the shipped copy "
                                               "is for numba 0.1, this is 0.2)")
    for known in (True, None):      # compiled, or a numba whose cache cannot be read: the plain text
        monkeypatch.setattr(T, "engine_compiled", lambda known=known: known)
        assert commands._engine_step("timing") == "timing"


def test_engine_compiled_reads_numbas_cache(tmp_path):
    """A process whose numba cache folder is empty, told to leave the shipped copy unused, finds no compiled
    loop."""
    code = "from gpusim.timing import engine_compiled; print(engine_compiled())"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "GPUSIM_NO_SHIPPED": "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.slow        # two processes of 5 s each
def test_run_json_is_the_same_bytes_in_every_process():
    """`gpusim run KERNEL --json` prints the same bytes in two processes with different hash seeds: no key
    order comes from a set (the stall sites' opcodes and states once did, naive at 1024 showing it, where
    the prediction extrapolates its windows). The JSON holds no wall-clock field (SimResult.wall_s is
    printed in the text summary only), so nothing needs leaving out."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    outs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        p = subprocess.run([sys.executable, "-m", "gpusim.report.cli", "run", "naive", "--size", "1024", "--json"],
                           env=env, cwd=root, capture_output=True, check=True)
        outs.append(p.stdout)
    assert outs[0] == outs[1] and json.loads(outs[0])["stall_sites"]


def test_the_command_flushes_its_output_and_keeps_its_exit_status():
    """The `gpusim` command (cli.entry) ends its process with os._exit after main(): what it printed to a
    pipe arrives whole (the same bytes as main() in a process that exits as usual), and the exit status is
    main()'s (0, or 2 for a refusal with its message)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

    def run(*args):
        return subprocess.run([sys.executable, *args], cwd=root, capture_output=True, text=True)
    ok = run("-m", "gpusim.report.cli", "list")
    usual = run("-c", "import sys; from gpusim.report.cli import main; sys.exit(main(['list']))")
    assert ok.returncode == usual.returncode == 0, ok.stderr
    assert ok.stdout == usual.stdout and "regtile2d" in ok.stdout
    bad = run("-m", "gpusim.report.cli", "run", "nosuchkernel")
    assert bad.returncode == 2 and bad.stderr.startswith("gpusim: error: unknown kernel 'nosuchkernel'")


def test_save_trace_writes_exactly_the_path_given(tmp_path, capsys):
    """--save-trace t writes t, not t.npz (numpy's habit with a bare name), and leaves no temporary file."""
    from gpusim.trace.trace import Trace
    path = tmp_path / "t"
    assert main(["run", "naive", "--size", "64", "--no-time", "--save-trace", str(path)]) == 0
    assert f"trace written to {path}" in capsys.readouterr().out
    assert [p.name for p in tmp_path.iterdir()] == ["t"] and len(Trace.load(path)) > 0


def test_full_mode_warns_of_its_cost_before_the_run(monkeypatch, capsys):
    """--mode full at a size the estimate puts over a minute says so on stderr before simulating, and the
    JSON carries it under `warnings`; the estimate follows the runs it was fitted to (naive: 9.6 s at 256,
    73 s at 512)."""
    import gpusim.estimate.simulate as S
    assert S.full_mode_seconds(256, 256, 256, (8, 8, 1), (32, 32, 1)) < S.FULL_WARN_S
    assert S.full_mode_seconds(512, 512, 512, (16, 16, 1), (32, 32, 1)) > S.FULL_WARN_S
    monkeypatch.setattr(S, "FULL_WARN_S", 0)
    assert main(["run", "naive", "--size", "64", "--mode", "full", "--no-time", "--json"]) == 0
    cap = capsys.readouterr()
    assert cap.err.startswith("gpusim: warning: naive: --mode full runs every CTA")
    assert json.loads(cap.out)["warnings"] == [cap.err.strip()[len("gpusim: warning: "):]]


@pytest.fixture
def broken_kernels(tmp_path, monkeypatch):
    """Two modules under kernels_py that do not import (a syntax error, an exception), found beside the
    real ones; the spec cache starts empty and is put back afterwards."""
    import kernels_py
    from gpusim.kernel import spec
    (tmp_path / "broken.py").write_text("def (:\n")
    (tmp_path / "raiser.py").write_text("raise RuntimeError('needs a GPU to import')\n")
    monkeypatch.setattr(kernels_py, "__path__", [*kernels_py.__path__, str(tmp_path)])
    monkeypatch.setattr(spec, "_CACHE", {})
    monkeypatch.setattr(spec, "_BROKEN", {})


def test_a_broken_kernel_module_is_listed_and_refused_by_name(broken_kernels, capsys):
    """A module that does not import breaks neither `gpusim list` nor a run of another kernel; the list
    names it with its error, and running it is a one-line refusal that names both."""
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "naive" in out and "kernels_py/broken.py does not import: SyntaxError" in out
    assert "kernels_py/raiser.py does not import: RuntimeError: needs a GPU to import" in out
    assert main(["run", "naive", "--size", "64", "--no-time"]) == 0
    capsys.readouterr()
    assert main(["run", "raiser"]) == 2
    err = capsys.readouterr().err
    assert err == "gpusim: error: raiser: kernels_py/raiser.py does not import: RuntimeError: needs a GPU to import\n"
    assert main(["run", "broke"]) == 2
    assert "did you mean broken?" in capsys.readouterr().err


def test_version(capsys):
    import gpusim
    from gpusim.report.cli import main
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out.strip() == f"gpusim {gpusim.__version__}"


def test_the_progress_bar_shows_no_count_before_it_knows_the_total(monkeypatch):
    """A bar whose total is not known yet shows nothing there, not '0/None'."""
    import io
    from rich.console import Console
    from gpusim.report import render
    buf = io.StringIO()
    monkeypatch.setattr(render, "err_console", Console(file=buf, force_terminal=True, width=100))
    monkeypatch.setattr(render.sys.stderr, "isatty", lambda: True, raising=False)
    with render.progress_bar("step") as update:
        assert update is not None
        update(3, 9)
    assert "None" not in buf.getvalue()


def test_rank_agreement_needs_two_kernels():
    """One kernel has no order to compare: no Kendall tau of 1.00 printed for it."""
    from gpusim.report.compare import _rank_agreement
    assert _rank_agreement({"a": 1.0}, {"a": 2.0}) == (None, None)
    assert _rank_agreement({"a": 1.0, "b": 2.0}, {"a": 1.5, "b": 3.0}) == (True, 1.0)
    assert _rank_agreement({"a": 1.0, "b": 2.0}, {"a": 3.0, "b": 1.5}) == (False, -1.0)
