"""kernels_cuda/micro/micro_cli.py: the provenance fields every standalone micro's record takes."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "kernels_cuda" / "micro"))
from micro_cli import BUILD_FLAGS, provenance  # noqa: E402


def test_provenance_takes_the_run_s_date_device_driver_tools_and_clocks_in_record_order():
    smi = {"name": "NVIDIA H200", "driver_version": 580.159, "clocks.sm": 1980, "power.draw": 80}
    got = provenance({"date": "2026-11-29T00:00:00Z", "smi": smi, "nvcc": "V13.0", "ncu": "2025.3"})
    assert list(got) == ["date", "device", "driver", "cuda", "clocks", "build_flags"]
    assert got["device"] == "NVIDIA H200" and got["driver"] == "580.159"
    assert got["cuda"] == {"nvcc": "V13.0", "ncu": "2025.3"}
    assert got["clocks"] == {"clocks.sm": 1980} and got["build_flags"] == BUILD_FLAGS


def test_provenance_names_ncu_only_when_the_run_used_it():
    got = provenance({"date": "d", "smi": {}, "nvcc": "V13.0"})
    assert got["cuda"] == {"nvcc": "V13.0"} and got["device"] == "NVIDIA H200" and got["clocks"] == {}
