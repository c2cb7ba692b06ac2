"""A wheel installed outside the checkout finds the same committed SASS, records and twins, and
predicts the same as the checkout (gpusim.paths)."""
import json
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SNIPPET = """
import json, sys
sys.path[:0] = {paths!r}
import gpusim
import gpusim.timing.engine as E
from gpusim import jit
from gpusim.estimate.kernel_time import predict
r = gpusim.simulate("regtile2d", 1024)
p = predict(r)
print(json.dumps({{"where": gpusim.__file__, "frontend": r.frontend, "notes": r.notes,
                  "inst": r.metrics["smsp__inst_executed.sum"], "time_ms": p.time_ms,
                  "shipped": jit.shipped_has(E.run)}}))
"""


def _run(paths, cwd):
    # -S: no site-packages .pth files, so an editable install's import hook cannot step in
    out = subprocess.run([sys.executable, "-S", "-c", SNIPPET.format(paths=paths)], cwd=cwd,
                         capture_output=True, text=True, timeout=1200)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_wheel_in_another_directory_predicts_as_the_checkout(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(".git", "__pycache__", "*.egg-info", "build",
                                                            ".build", "sim", ".pytest_cache"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q",
                    "-w", str(tmp_path / "dist"), str(src)], check=True, capture_output=True, timeout=600)
    wheel = next((tmp_path / "dist").glob("gpusim-*.whl"))
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
                   check=True, capture_output=True, timeout=600)
    site = sysconfig.get_paths()["purelib"]
    installed = _run([str(target), site], tmp_path)
    checkout = _run([str(ROOT), site], tmp_path)
    assert installed["where"].startswith(str(target)) and checkout["where"].startswith(str(ROOT))
    assert installed["frontend"] == checkout["frontend"] == "sass"
    assert installed["notes"] == checkout["notes"]
    assert installed["inst"] == checkout["inst"]
    assert installed["time_ms"] == checkout["time_ms"]
    assert installed["shipped"] == checkout["shipped"]      # the wheel carries the compiled copy (gpusim.jit)


@pytest.mark.slow
def test_cuda_extra_alone_compiles_and_simulates_an_uncommitted_set(tmp_path):
    """A fresh venv with `pip install '.[cuda]'` and no CUDA on the PATH compiles a parameter set that
    has no committed SASS and simulates it (the README's second row of 'where the SASS comes from')."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    pip = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", f"{ROOT}[cuda]"],
                         capture_output=True, text=True, timeout=1200)
    if pip.returncode != 0:
        pytest.skip(f"pip could not install .[cuda] here: {pip.stderr.strip().splitlines()[-1:]}")
    from gpusim.sass.compile import committed
    params = {"BM": 128, "BN": 128, "BK": 8, "TM": 4, "TN": 8}     # regtile2d with TM=4 alone
    assert committed("regtile2d", params) is None                  # not under traces/static
    env = {"HOME": str(tmp_path), "PATH": f"{venv / 'bin'}:/usr/bin:/bin",
           "GPUSIM_CACHE_DIR": str(tmp_path / "cache")}
    which = subprocess.run(["bash", "-c", "command -v nvcc"], env=env, capture_output=True, text=True)
    assert which.stdout.strip() == "", which.stdout     # no nvcc on the PATH: the wheel's is found by gpusim
    out = subprocess.run([str(venv / "bin" / "gpusim"), "run", "regtile2d", "--param", "TM=4",
                          "--size", "256", "--no-time", "--json"], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=1200)
    assert out.returncode == 0, out.stderr[-2000:]
    res = json.loads(out.stdout)
    assert any("compiled now (nvcc 13.0.88)" in n for n in res["notes"]), res["notes"]
    # one FFMA per thread and k, and the epilogue's alpha * acc + beta * C per element
    assert res["inst_executed_per_opcode"]["FFMA"] == 256 ** 3 // 32 + 256 ** 2 // 32
