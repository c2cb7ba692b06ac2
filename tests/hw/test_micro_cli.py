"""calibrate/micro_cli.py: the provenance fields every standalone micro's record takes; and
mio_capacity_ncu.py's reading of ncu's CSV (the one micro whose record is parsed from it)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "calibrate"))
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


def _ncu_csv(launches):
    """Raw-page CSV shaped like ncu's: a header, a units row, one row per launch (kernel, mio_throttle)."""
    from mio_capacity_ncu import METRICS
    mio = "smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio"
    head = ["ID", "Kernel Name"] + METRICS
    lines = [",".join(f'"{h}"' for h in head), ",".join('""' if h in ("ID", "Kernel Name") else '"ratio"' for h in head)]
    for i, (name, thr) in enumerate(launches):
        cells = [str(i), name] + [str(thr) if m == mio else "1" for m in METRICS]
        lines.append(",".join(f'"{c}"' for c in cells))
    return "\n".join(lines)


def test_mio_capacity_ncu_keeps_the_second_launch_of_each_burst_configuration():
    from mio_capacity_ncu import rows_of
    sig = "(unsigned int *, long long *, unsigned int)"
    text = _ncu_csv([(f"void cap<16, 1, 16>{sig}", 9.0), (f"void cap<16, 1, 16>{sig}", 2.5),
                     (f"void cap<24, 4, 1>{sig}", 0.0), (f"void cap<24, 4, 1>{sig}", 0.25), ("void other()", 7.0)])
    rows = {(r["words_per_lane"], r["conflict"], r["loads"]): r for r in rows_of(text, "0xf")}
    assert set(rows) == {(1, 16, 16), (4, 1, 24)}          # B, V, WF from cap<B, V, WF>; other kernels dropped
    assert rows[(1, 16, 16)]["stall_mio_throttle"] == 2.5 and rows[(1, 16, 16)]["launches_profiled"] == 2
    assert rows[(4, 1, 24)]["stall_mio_throttle"] == 0.25 and rows[(4, 1, 24)]["layout"] == "1 warp on each SMSP"


def test_gpu_provenance_names_the_script_s_command_and_ncu_only_when_given(monkeypatch):
    import micro_cli
    from gpusim.hw import devinfo
    monkeypatch.setattr(devinfo, "smi_query", lambda: {"name": "NVIDIA H200"})
    monkeypatch.setattr(devinfo, "utc_now", lambda: "2026-11-30T00:00:00Z")
    monkeypatch.setattr(micro_cli, "nvcc_version", lambda: "V13.0")
    got = micro_cli.gpu_provenance("dot_pair.py", stdout="x")
    assert got == {"date": "2026-11-30T00:00:00Z", "smi": {"name": "NVIDIA H200"}, "nvcc": "V13.0", "stdout": "x",
                   "command": "python3 calibrate/dot_pair.py --out $OUT"}
    assert provenance(got)["cuda"] == {"nvcc": "V13.0"}
