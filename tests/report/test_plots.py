"""--plot on gpusim run, compare and sweep: each writes a valid PNG (matplotlib reads it back), atomically,
and a missing matplotlib is one line naming the extra to install."""
import sys

import pytest

from gpusim.report.cli import main

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _valid_png(path):
    image = pytest.importorskip("matplotlib.image")
    assert path.read_bytes()[:8] == PNG_MAGIC
    pixels = image.imread(path)
    assert pixels.ndim == 3 and pixels.shape[0] > 100 and pixels.shape[1] > 100
    assert [p.name for p in path.parent.iterdir()] == [path.name]       # no temporary file left beside it


@pytest.mark.parametrize("argv", [
    # a launch the H200 has a record of: its stall breakdown beside the prediction's
    ["run", "regtile2d", "--size", "1024"],
    # an L2 too small for A, B and C: the roofline's intensity from the cache model's DRAM bytes
    ["run", "regtile2d", "--size", "256", "--set", "l2_bytes=262144"],
    ["compare", "regtile2d", "--size", "1024"],
    pytest.param(["sweep", "regtile2d", "--size", "256", "--param", "TM=4,8", "--param", "BN=64", "--workers", "1"],
                 marks=pytest.mark.slow),                 # 10 s: the slow run
], ids=["run", "run-dram", "compare", "sweep"])
def test_plot_writes_a_png(argv, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    path = tmp_path / "out.png"
    assert main([*argv, "--plot", str(path)]) == 0
    assert f"plot written to {path}" in capsys.readouterr().out
    _valid_png(path)


def test_without_matplotlib_plot_is_refused_before_running(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)     # import matplotlib: ImportError
    for argv in (["run", "naive", "--size", "64"], ["compare", "naive", "--size", "1024"],
                 ["sweep", "naive", "--size", "64", "--workers", "1"]):
        assert main([*argv, "--plot", str(tmp_path / "p.png")]) == 2
        err = capsys.readouterr().err
        assert err.startswith("gpusim: error: ") and err.count("\n") == 1
        assert "pip install 'gpusim[plot]'" in err
    assert list(tmp_path.iterdir()) == []
