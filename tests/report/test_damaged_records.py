"""A damaged H200 record is never dropped in silence: the output says which file and what is wrong."""
import shutil
from types import SimpleNamespace

import pytest

from gpusim.kernel import get_kernel
from gpusim.hw import records
from gpusim.report import render


@pytest.fixture
def hw_copy(tmp_path, monkeypatch):
    d = tmp_path / "h200"
    d.mkdir()
    shutil.copy2(records.device_dir("h200") / "naive_2048.json", d)
    (d / "lsu").mkdir()
    shutil.copy2(records.device_dir("h200") / "lsu" / "lsu_naive_2048.json", d / "lsu")
    monkeypatch.setattr(records, "device_dir", lambda device: d)
    return d


def _launch(M=2048):
    return SimpleNamespace(kernel="naive", arch="H200", M=M, N=M, K=M, params=dict(get_kernel("naive").params),
                           warnings=[])


def test_an_intact_record_is_used_and_a_missing_one_is_no_warning(hw_copy):
    r = _launch()
    assert render.h200_record(r)["kernel"] == "naive" and render.lsu_record(r)
    r2 = _launch(1024)
    assert render.h200_record(r2) is None and r2.warnings == []


@pytest.mark.parametrize("damage,says", [
    (lambda t: t[: len(t) // 2], "not valid JSON"),
    (lambda t: t.replace('"gpusim.hw/1"', '"gpusim.hw/9"'), "schema 'gpusim.hw/9'"),
    (lambda t: t.replace('"time_ms_median"', '"time_ms_mdn"'), "missing field 'time_ms_median'"),
])
def test_a_damaged_kernel_record_is_a_warning_naming_it(hw_copy, damage, says):
    f = hw_copy / "naive_2048.json"
    f.write_text(damage(f.read_text()))
    r = _launch()
    assert render.h200_record(r) is None
    (w,) = r.warnings
    assert "naive_2048.json" in w and says in w and "left out" in w


def test_a_damaged_lsu_record_is_a_warning(hw_copy):
    (hw_copy / "lsu" / "lsu_naive_2048.json").write_text("{")
    r = _launch()
    assert render.lsu_record(r) == {} and "lsu_naive_2048.json is damaged" in r.warnings[0]
