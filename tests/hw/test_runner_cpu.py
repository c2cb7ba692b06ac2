"""The runner's logic on a numpy stand-in for cupy (no GPU, no nvcc needed).

The stand-in computes each twin's C with numpy, so these tests check the
plumbing: poisoning, the check's verdicts, timing summaries, record files and
their schema, ncu row assignment. The real thing runs in test_runner_gpu.py.
"""
import json
import sys

import numpy as np
import pytest

from gpusim.hw import gpu as hwgpu
from gpusim.hw import ncu as ncu_mod
from gpusim.hw import runner, twins
from gpusim.hw.records import load_record
from tests.hw import fakecupy


@pytest.fixture
def fake(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "cupy", fakecupy)
    monkeypatch.setattr(twins, "build", lambda name, p, d: (tmp_path / f"{name}.cubin",
                                                            {"registers": 32, "spill_stores": 0}, "nvcc ..."))
    monkeypatch.setattr(runner, "smi_query", lambda *a: {"name": "Fake GPU", "driver_version": "0.0"})
    return fakecupy


def test_record_writes_valid_passing_records(fake, tmp_path):
    seen = []
    recs = runner.record(["naive", "tiled32"], sizes=[64], out_dir=tmp_path, target_s=0.001,
                         progress=lambda d, t, label: seen.append((d, t, label)), command="test")
    assert [r["kernel"] for r in recs] == ["naive", "tiled32", "cublas"]
    for name in ("naive_64.json", "tiled32_64.json", "cublas_64.json"):
        r = load_record(tmp_path / name)
        assert r.passed and r["check"]["unwritten"] == 0
        assert r["time_ms_median"] > 0 and r["timing"]["launches"] >= 10
        assert r["device"] == "Fake GPU" and r["command"] == "test"
    assert load_record(tmp_path / "tiled32_64.json")["check"]["beta"] == 0.0      # C = A*B only
    assert seen[-1][0] == seen[-1][1]


def test_check_catches_unwritten_elements(fake, monkeypatch):
    class Half(fakecupy._Fn):
        def __call__(self, grid, block, args, shared_mem=0):
            C = args[-1]
            keep = np.array(C[C.size // 2:])
            super().__call__(grid, block, args)
            C[C.size // 2:] = keep
    monkeypatch.setattr(fakecupy.RawModule, "get_function", lambda self, n: Half(n))
    for name, poison in (("coalesced", "C0"), ("regblock", "NaN")):
        out = runner.measure_twin(fakecupy, name, twins.default_params(name), 128, 128, 128, "x", target_s=0.001)
        assert not out["check"]["passed"], name
        assert out["check"]["unwritten"] == 128 * 128 // 2, (name, poison)


def test_check_catches_wrong_values(fake, monkeypatch):
    class Off(fakecupy._Fn):
        def __call__(self, grid, block, args, shared_mem=0):
            super().__call__(grid, block, args)
            args[-1][7] += 1.0
    monkeypatch.setattr(fakecupy.RawModule, "get_function", lambda self, n: Off(n))
    out = runner.measure_twin(fakecupy, "naive", {"BLOCK": 32}, 64, 64, 64, "x", target_s=0.001)
    assert not out["check"]["passed"] and out["check"]["rel_err"] > hwgpu.CHECK_TOL


def test_time_summary_quantiles():
    s = hwgpu.summarize_times([3.0, 1.0, 2.0, 4.0], warmup=3)
    assert s["time_ms_median"] == 2.5
    assert s["time_ms_quantiles"]["min"] == 1.0 and s["time_ms_quantiles"]["max"] == 4.0
    assert s["time_ms_all"] == [1.0, 2.0, 3.0, 4.0]
    assert "time_ms_all" not in hwgpu.summarize_times([1.0] * 101, 3)


def test_no_cupy_refuses_clearly(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)
    with pytest.raises(hwgpu.NoGpu, match="cupy"):
        hwgpu.cupy()


def test_twins_are_found_and_their_geometry_is_their_spec():
    """Every kernel with a kernels_cuda/<name>.cu is a twin (no table lists them), with the launch its
    Python spec declares, and its defaults' SASS committed."""
    from gpusim.kernel import get_kernel
    from gpusim.paths import STATIC_DIR
    names = twins.twin_names()
    assert {"naive", "regtile2d", "regblock", "dbuf"} <= set(names)
    for name in names:
        spec = get_kernel(name)
        p = twins.default_params(name)
        grid, block, src = twins.geometry(name, p, 4096, 4096, 4096)
        g, b = spec.launch(4096, 4096, 4096, **p)
        assert (grid, block) == (tuple(g) + (1,) * (3 - len(g)), tuple(b) + (1,) * (3 - len(b))), name
        assert src == f"kernels_py/{name}.py" and (STATIC_DIR / f"{name}.sass").is_file()


# ---------------------------------------------------------------- ncu parsing

CSV = '''==PROF== Connected to process 123
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","dram__bytes_read.sum","launch__registers_per_thread","sass__inst_executed_per_opcode","smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio"
"","","","","","","","","","","","byte","register/thread","inst",""
"0","123","python3","h","naive","1","7","(32, 32, 1)","(128, 128, 1)","0","9.0","1,048,576","32 (0: 32)","2,000 (FFMA: 1,500; LDG: 400; EXIT: 100)","0.00"
"1","123","python3","h","sm90_xmma_gemm","1","7","(256, 1, 1)","(64, 1, 1)","0","9.0","4096","168","n/a","1.25"
"2","123","python3","h","splitk_reduce","1","7","(256, 1, 1)","(64, 1, 1)","0","9.0","512","32","n/a","0.5"
'''


def test_parse_raw_csv():
    rows = ncu_mod.parse_raw_csv(CSV)
    assert [r["kernel"] for r in rows] == ["naive", "sm90_xmma_gemm", "splitk_reduce"]
    m = rows[0]["metrics"]
    assert m["dram__bytes_read.sum"] == 1048576 and m["launch__registers_per_thread"] == 32
    assert rows[0]["units"]["dram__bytes_read.sum"] == "byte"
    assert ncu_mod.opcode_histogram(rows[0]) == {"EXIT": 100, "FFMA": 1500, "LDG": 400}
    assert m["sass__inst_executed_per_opcode"] == 2000
    assert rows[1]["metrics"]["smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio"] == 1.25


def test_assign_rows_gives_cublas_the_rest():
    rows = ncu_mod.parse_raw_csv(CSV)
    rows[1]["metrics"]["gpu__time_duration.sum"] = 10
    rows[2]["metrics"]["gpu__time_duration.sum"] = 1
    rows = [ncu_mod.compact(r, ["gpu__time_duration.sum", "dram__bytes_read.sum"]) for r in rows]
    assert rows[0]["inst_executed_per_opcode"]["FFMA"] == 1500
    jobs = [{"label": "naive", "kernel": "naive"}, {"label": "cublas", "kernel": "cublas"}]
    out = runner.assign_rows(rows, [{"label": "naive", "n": 1}, {"label": "cublas", "n": None}], jobs)
    assert out[0]["kernel_name"] == "naive"
    assert out[1]["kernel_name"] == "sm90_xmma_gemm"
    assert out[1]["other_kernels"][0]["kernel_name"] == "splitk_reduce"
    # the child died before cuBLAS: no row for it
    assert runner.assign_rows(rows[:1], [{"label": "naive", "n": 1}], jobs)[1] is None


def test_select_metrics_uses_the_query():
    q = ("smsp__average_warps_issue_stalled_wait_per_issue_active  Ratio\n"
         "smsp__average_warps_issue_stalled_mio_throttle_per_issue_active Ratio\n"
         "smsp__inst_executed  Counter\n")
    keep, reasons, dropped = ncu_mod.select_metrics(q)
    assert reasons == ["mio_throttle", "wait"]
    assert "smsp__inst_executed.sum" in keep and "launch__registers_per_thread" in keep
    assert "lts__t_sectors_srcunit_tex_op_read.sum" in dropped and keep[-1] == ncu_mod.OPCODE_METRIC
    assert "dram__bytes_read.sum" in keep          # required: only ncu itself may refuse it
    cmd = ncu_mod.profile_command("ncu", keep, "rep", ["python3", "x.py"])
    assert cmd[cmd.index("--clock-control") + 1] == "none"
    assert cmd[cmd.index("--cache-control") + 1] == "all"
    assert "--profile-from-start" in cmd and cmd[-2:] == ["python3", "x.py"]


def test_parse_number():
    assert ncu_mod.parse_number("1,234") == 1234
    assert ncu_mod.parse_number("12.5") == 12.5
    assert ncu_mod.parse_number("n/a") is None
    assert ncu_mod.parse_number("1e3") == 1000.0


def test_bad_metrics_from_ncu_error():
    ms = ["smsp__inst_executed.sum", "launch__sm_count", "dram__bytes_read.sum", "a__b.sum", "c__d.sum"]
    err = "==ERROR== Failed to find metric launch__sm_count"
    assert ncu_mod.bad_metrics(err, ms) == ["launch__sm_count"]
    assert ncu_mod.bad_metrics(" ".join(ms), ms) == []       # the whole list echoed: no clue


def test_instanced_cells_and_pcs():
    agg, inst = ncu_mod.parse_instances("154,763,264 (0x7fac3b7a0000: 32,768; 0x7fac3b7a0010: 16)")
    assert agg == 154763264 and inst == {"0x7fac3b7a0000": 32768, "0x7fac3b7a0010": 16}
    assert ncu_mod.relative_pcs(inst) == {"0x0000": 32768, "0x0010": 16}
    agg, inst = ncu_mod.parse_instances("3 (Load/Store: 2; Floating Point: 1)")
    assert inst == {"Load/Store": 2, "Floating Point": 1}
    assert ncu_mod.parse_instances("12.5") == (12.5, {})
    row = {"kernel": "k", "metrics": {"a__b.sum": 1.0, "c__d.ratio": 0.53, "x__y.sum": 5},
           "instances": {"inst_executed": {"0x10": 2, "0x20": 1}}, "units": {"a__b.sum": "byte"}}
    api = {"metrics": {"c__d.ratio": 0.5312345}, "instances": {}}
    c = ncu_mod.compact(row, ["a__b.sum", "c__d.ratio"], api)
    assert c["metrics"] == {"a__b.sum": 1, "c__d.ratio": 0.5312345}     # API precision wins, x__y dropped
    assert c["inst_executed_per_pc"] == {"0x0000": 2, "0x0010": 1} and c["units"] == {"a__b.sum": "byte"}


def test_device_slug():
    assert runner.device_slug("NVIDIA H200") == "h200"
    assert runner.device_slug("NVIDIA GeForce RTX 5080") == "geforce_rtx_5080"
