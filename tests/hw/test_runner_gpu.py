"""The runner on a real GPU (marked gpu: skipped where cupy or a device is missing)."""
import shutil

import pytest

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def cp():
    cupy = pytest.importorskip("cupy")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("no CUDA device")
    except Exception:      # noqa: BLE001
        pytest.skip("no CUDA device")
    if not shutil.which("nvcc"):
        pytest.skip("nvcc is needed to build the twins")
    return cupy


@pytest.mark.parametrize("kernel", ["naive", "vectorized", "regblock"])
def test_twin_passes_cublas_check_and_records(cp, kernel, tmp_path):
    from gpusim.hw import runner
    from gpusim.hw.records import load_record
    recs = runner.record([kernel], sizes=[256], out_dir=tmp_path, cublas=False, target_s=0.05,
                         command="pytest")
    assert len(recs) == 1
    r = load_record(tmp_path / f"{kernel}_256.json")
    assert r.passed, r["check"]
    assert r["check"]["unwritten"] == 0 and r["check"]["writes_past_end"] == 0
    assert r["timing"]["launches"] >= 10 and r["time_ms_median"] > 0


def test_cublas_is_plain_fp32(cp):
    from gpusim.hw import runner
    out = runner.measure_cublas(cp, 512, 512, 512, target_s=0.05)
    assert out["check"]["passed"]
    assert out["check"]["rel_err"] < 1e-5        # TF32 would land near 1e-4..1e-3
