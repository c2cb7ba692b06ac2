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
from gpusim.timing.kernel_time import predict
r = gpusim.simulate("regtile2d", 1024)
p = predict(r)
print(json.dumps({{"where": gpusim.__file__, "frontend": r.frontend, "notes": r.notes,
                  "inst": r.metrics["smsp__inst_executed.sum"], "time_ms": p.time_ms}}))
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
