"""gpusim check: each buggy kernel under tests/estimate/buggy/ is caught with the kind of finding its
bug makes, at its source line; every kernel of kernels_py/ is clean; exit codes and JSON."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpusim.errors import KernelConfigError, UnknownKernel
from gpusim.estimate.check import check, load_kernel
from tests.kernel_sizes import every_kernel, small_size
from gpusim.report.cli import main

BUGGY = Path(__file__).resolve().parent / "buggy"
# kernel file -> (finding kinds it must produce, source line of the first access of the first finding)
EXPECTED = {
    "nobarrier": ({"race-raw", "race-war"}, "nobarrier.py:13"),
    "race": ({"race-waw", "values"}, "race.py:14"),
    "divergent": ({"race-raw", "barrier-divergent"}, "divergent.py:12"),
    "oob": ({"oob", "values"}, "oob.py:11"),
    "wrong": ({"values"}, "wrong.py:11"),
    "uninit": ({"uninit-shared", "values"}, "uninit.py:17"),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_bug_is_found_where_it_is(name):
    kinds, first_line = EXPECTED[name]
    res = check(str(BUGGY / f"{name}.py"), 64)
    assert not res.ok
    assert {f.kind for f in res.findings} == kinds
    f = res.findings[0]
    assert f.lines[0] == first_line and f.kernel == name
    if f.kind != "values":       # the CTA and the threads that made the access are named
        assert f.cta is not None and f.threads and all(t.startswith("(") for t in f.threads)


def test_a_race_is_found_though_the_values_are_right():
    """Lockstep lanes compute the right C without the barriers: only the accesses tell."""
    res = check(str(BUGGY / "nobarrier.py"), 64)
    assert res.max_rel_error < 1e-6
    raw = next(f for f in res.findings if f.kind == "race-raw")
    assert raw.array in ("As", "Bs") and len(raw.threads) == 2 and raw.threads[0] != raw.threads[1]


def test_the_wrong_result_names_the_worst_element_and_its_writer():
    res = check(str(BUGGY / "wrong.py"), 64)
    (f,) = res.findings
    assert res.max_rel_error > 0.01 > res.tol
    assert f.array == "C" and f.index is not None and f.cta is not None and f.threads
    # a looser tolerance than the error: no finding
    assert check(str(BUGGY / "wrong.py"), 64, tol=1.0).ok


@pytest.mark.parametrize("kernel", every_kernel())
def test_every_kernel_of_kernels_py_is_clean(kernel):
    res = check(kernel, *small_size(kernel))
    assert res.ok, [f.describe() for f in res.findings]
    assert res.max_rel_error < 1e-5


def test_cli_exit_codes_and_json(capsys):
    assert main(["check", str(BUGGY / "oob.py"), "--size", "32", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] is False and out["max_rel_error"] > out["tolerance"]
    oob = next(f for f in out["findings"] if f["kind"] == "oob")
    assert oob["array"] == "A" and oob["index"] == 32 * 32 and oob["lines"] == ["oob.py:11"]
    assert main(["check", "naive", "--size", "32"]) == 0
    assert "no findings" in capsys.readouterr().out


def test_refusals():
    with pytest.raises(UnknownKernel, match="no such file"):
        load_kernel("nowhere/none.py")
    with pytest.raises(UnknownKernel, match="no SPEC"):
        load_kernel(str(BUGGY / "_tiles.py"))
    with pytest.raises(KernelConfigError, match="tolerance"):
        check("naive", 32, tol=-1)


def test_a_broken_kernel_file_is_named(tmp_path):
    bad = tmp_path / "broken.py"
    bad.write_text("def f(:\n")
    out = subprocess.run([sys.executable, "-m", "gpusim.report.cli", "check", str(bad)],
                         capture_output=True, text=True)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "broken.py: could not be imported: SyntaxError" in out.stderr


@pytest.fixture
def buggy_in_kernels_py(monkeypatch):
    """The buggy kernels as if they were modules of kernels_py (run takes kernels by name)."""
    import kernels_py
    from gpusim.kernel import spec
    monkeypatch.syspath_prepend(str(BUGGY))
    monkeypatch.setattr(kernels_py, "__path__", [*kernels_py.__path__, str(BUGGY)])
    monkeypatch.setattr(spec, "_CACHE", {})
    monkeypatch.setattr(spec, "_BROKEN", {})


def test_run_mode_full_runs_the_same_checks(buggy_in_kernels_py, capsys):
    assert main(["run", "nobarrier", "--size", "64", "--mode", "full", "--no-time", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["frontend"] == "python" and out["check"]["ok"] is False
    assert {f["kind"] for f in out["check"]["findings"]} == {"race-raw", "race-war"}
    assert main(["run", "wrong", "--size", "64", "--mode", "full", "--no-time"]) == 1
    text = capsys.readouterr().out
    assert "wrong result on C" in text and "warning: the simulated output (python front-end) is off numpy's" in text
    assert main(["run", "naive", "--size", "64", "--mode", "full", "--no-time"]) == 0


# compute-sanitizer on the H200 (traces/hw/h200/sanitizer/, `python3 -m gpusim.hw.sanitize`): its report
# kinds and the gpusim check findings each stands for
SANITIZER = Path(__file__).resolve().parents[2] / "traces" / "hw" / "h200" / "sanitizer" / "compute_sanitizer.json"
THEIRS_TO_OURS = {"race Write-Read": {"race-raw", "race-war"}, "race Read-Write": {"race-raw", "race-war"},
                  "race Write-Write": {"race-waw"}, "barrier divergent": {"barrier-divergent"},
                  "invalid global read": {"oob", "misaligned"}, "invalid global write": {"oob", "misaligned"},
                  "invalid shared read": {"oob", "misaligned"}, "invalid shared write": {"oob", "misaligned"}}
OURS_WITH_A_COUNTERPART = set().union(*THEIRS_TO_OURS.values())


def _sanitizer_rows():
    return json.loads(SANITIZER.read_text())["rows"]


@pytest.mark.parametrize("row", _sanitizer_rows(), ids=lambda r: r["kernel"])
def test_check_finds_what_compute_sanitizer_finds_on_the_h200(row):
    """Every kind of report compute-sanitizer made on the CUDA twin, gpusim check makes on the Python
    kernel, and no kind it did not (wrong values and uninitialised shared reads have no counterpart
    among memcheck, racecheck and synccheck)."""
    name = row["kernel"]
    buggy = row["source"].startswith("tests/")
    res = check(str(BUGGY / f"{name}.py"), row["M"]) if buggy else check(name, *small_size(name))
    ours = {f.kind for f in res.findings} & OURS_WITH_A_COUNTERPART
    theirs = set().union(*(row[t]["kinds"] for t in ("memcheck", "racecheck", "synccheck")))
    assert all(row[t]["errors"] is not None for t in ("memcheck", "racecheck", "synccheck"))
    for kind in theirs:
        assert THEIRS_TO_OURS[kind] & ours, (kind, ours)
    for kind in ours:
        assert any(kind in THEIRS_TO_OURS[t] for t in theirs), (kind, theirs)


def test_the_sanitizer_record_covers_every_twin_and_buggy_kernel():
    have = {r["kernel"] for r in _sanitizer_rows()}
    twins = {k for k in every_kernel() if (SANITIZER.parents[4] / "kernels_cuda" / f"{k}.cu").is_file()}
    assert twins | {p.stem for p in BUGGY.glob("*.cu")} <= have
