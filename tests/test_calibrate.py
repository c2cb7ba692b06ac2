"""calibrate/: the runner that re-records every microbenchmark (`python3 -m calibrate`) knows every driver,
lists them and shows each driver's help without a GPU, picks what --only names, and reports a driver that
fails (here fake drivers in a temporary folder, never the GPU ones)."""
import json
import os
import subprocess
import sys
import tarfile
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CAL = ROOT / "calibrate"
sys.path.insert(0, str(ROOT))
from calibrate import runner  # noqa: E402


@pytest.fixture(scope="module")
def no_gpu_env(tmp_path_factory):
    """An environment where importing cupy fails, as on a machine without a GPU."""
    block = tmp_path_factory.mktemp("nocupy")
    (block / "cupy").mkdir()
    (block / "cupy" / "__init__.py").write_text("raise ImportError('no cupy on this machine')\n")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(block), str(ROOT)])}


def _driver_files():
    return sorted(p.name for p in CAL.iterdir()
                  if p.suffix in (".py", ".sh") and p.name not in runner.HELPERS)


def test_every_driver_file_is_known_to_the_runner():
    known = set().union(*(d.files() for d in runner.DRIVERS))
    unknown = [f for f in _driver_files() if f not in known]
    assert not unknown, (f"{unknown} in calibrate/ but not run by `python3 -m calibrate`: add each to DRIVERS in "
                         "calibrate/runner.py (out_then_record, sh_then_record or micro_batch), or to HELPERS "
                         "there if it is not a driver")
    names = [d.name for d in runner.DRIVERS]
    assert len(names) == len(set(names)), "two drivers share a name"
    for d in runner.DRIVERS:
        assert d.path().exists(), f"{d.name}: {d.path()} does not exist"


def test_every_cuda_source_is_used_by_a_driver():
    texts = {p.name: p.read_text() for p in CAL.iterdir() if p.suffix in (".py", ".sh", ".cu", ".cuh")}
    for src in sorted(p.name for p in CAL.iterdir() if p.suffix in (".cu", ".cuh")):
        assert any(src in t for n, t in texts.items() if n != src), f"calibrate/{src}: no driver builds it"


def test_list_works_without_a_gpu(no_gpu_env):
    out = subprocess.run([sys.executable, "-m", "calibrate", "--list"], cwd=ROOT, env=no_gpu_env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == len(runner.DRIVERS)
    for d, line in zip(runner.DRIVERS, lines):
        assert line.split()[0] == d.name
        assert runner.summary_line(d.path()) in line and "(no docstring)" not in line


def test_every_driver_help_works_without_a_gpu(no_gpu_env):
    scripts = sorted({d.path() for d in runner.DRIVERS} | {CAL / "micro_cli.py"})

    def help_of(script):
        r = subprocess.run([sys.executable, str(script), "--help"], cwd=ROOT, env=no_gpu_env,
                           capture_output=True, text=True, timeout=120)
        return script.name, r.returncode, r.stderr[-600:]

    with ThreadPoolExecutor(4) as ex:
        bad = [(n, rc, err) for n, rc, err in ex.map(help_of, scripts) if rc != 0]
    assert not bad, "\n".join(f"calibrate/{n} --help exited {rc}:\n{err}" for n, rc, err in bad)


def test_only_picks_the_named_drivers(tmp_path, capsys):
    picked = runner.plan(runner.DRIVERS, ["l2_write"])
    assert [d.name for d in picked] == ["l2_write"]
    steps = picked[0].argv(tmp_path)
    assert steps[0][1:] == [str(CAL / "l2_write.py"), "--out", str(tmp_path / "raw" / "l2_write")]
    assert steps[1][2:] == ["--record", str(tmp_path / "raw" / "l2_write"),
                            "--dest", str(tmp_path / "micro" / "l2_write.json")]
    # a script's stem picks every driver of that script
    assert {d.name for d in runner.plan(runner.DRIVERS, ["run_micro"])} == \
        {d.name for d in runner.DRIVERS if d.script == "run_micro.py"}
    assert runner.main(["--only", "sched_pick", "--dry-run", "--out", str(tmp_path)]) == 0
    shown = capsys.readouterr().out.splitlines()
    assert len(shown) == 2 and all(s.startswith("sched_pick: ") for s in shown)
    assert "calibrate/sched_pick.sh" in shown[0] and "--record" in shown[1]
    with pytest.raises(SystemExit):
        runner.plan(runner.DRIVERS, ["no_such_driver"])


FAKE = """
import argparse, json, sys, time
from pathlib import Path
ap = argparse.ArgumentParser()
ap.add_argument("--out"); ap.add_argument("--record"); ap.add_argument("--dest")
a = ap.parse_args()
MODE = {mode!r}
if a.out:
    if MODE == "fail":
        print("building ..."); sys.exit("boom: no GPU on this machine")
    if MODE == "slow":
        time.sleep(60)
    Path(a.out, "raw.txt").write_text("1")
else:
    if MODE == "ok":
        rec = {{"schema": "gpusim.hw.micro/1", "bench": "fake", "what": "w", "how": "h", "value": 1.0,
               "unit": "cycles", "command": "x", "date": "d", "device": "NVIDIA H200", "driver": "1",
               "cuda": "13.0", "clocks": {{}}, "build_flags": []}}
        Path(a.dest).write_text(json.dumps(rec))
        Path(a.dest).with_suffix(".sass").write_text("SASS")
"""


def test_a_failing_driver_is_reported_and_the_others_run(tmp_path, capsys):
    fakes = []
    for mode in ("fail", "ok", "slow", "norecord"):
        script = tmp_path / f"fake_{mode}.py"
        script.write_text(textwrap.dedent(FAKE.format(mode=mode)))
        fakes.append(runner.out_then_record(str(script)))
    out = tmp_path / "out"
    rc = runner.main(["--out", str(out), "--budget-s", "3"], drivers=tuple(fakes))
    text = capsys.readouterr().out
    assert rc == 1
    summary = json.loads((out / "summary.json").read_text())
    assert summary["fake_ok"]["ok"] and not summary["fake_fail"]["ok"]
    assert "exited 1: boom: no GPU on this machine" in summary["fake_fail"]["why"]
    assert "budget" in summary["fake_slow"]["why"]
    assert summary["fake_norecord"]["why"] == "left no micro/fake_norecord.json"
    tail = text.split("failed (logs in")[1]
    assert all(f"fake_{m}:" in tail for m in ("fail", "slow", "norecord")) and "fake_ok:" not in tail
    # what the ok driver left is packed for gpusim.hw.unpack, which puts it under <dest>/micro/
    with tarfile.open(out / "micro.tar.gz") as tf:
        assert sorted(tf.getnames()) == ["micro/fake_ok.json", "micro/fake_ok.sass"]
    from gpusim.hw import unpack
    assert unpack.main([str(out), "--dest", str(tmp_path / "hw")]) == 0
    assert json.loads((tmp_path / "hw" / "micro" / "fake_ok.json").read_text())["bench"] == "fake"
    assert (tmp_path / "hw" / "micro" / "fake_ok.sass").read_text() == "SASS"


def test_the_shared_command_line_sends_a_record_where_dest_says(tmp_path):
    sys.path.insert(0, str(CAL))
    import micro_cli
    got = []
    micro_cli.out_or_record(lambda out: got.append(("out", out)), lambda d, dest: got.append(("record", d, dest)),
                            "x.json", ["--record", str(tmp_path), "--dest", str(tmp_path / "m" / "x.json")])
    micro_cli.out_or_record(None, lambda d, dest: got.append(("record", d, dest)), "x.json",
                            ["--record", str(tmp_path)])
    micro_cli.out_or_record(lambda out: got.append(("out", out)), None, "x.json", ["--out", str(tmp_path / "o")])
    assert got == [("record", tmp_path, tmp_path / "m" / "x.json"),
                   ("record", tmp_path, ROOT / "traces" / "hw" / "h200" / "micro" / "x.json"),
                   ("out", tmp_path / "o")]
    assert (tmp_path / "m").is_dir() and (tmp_path / "o").is_dir()
