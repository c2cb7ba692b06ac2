"""gpusim sweep (gpusim.estimate.sweep) and the preset fields --set changes (gpusim.arch.override).

Small sizes only: a point at 256 or 512 counts in 2-3 s and predicts in 2-3 s more."""
import csv
import json
import sys

import pytest

import gpusim
from gpusim.arch import GPU, arch_overrides, get_arch, override
from gpusim.errors import GpusimError
from gpusim.estimate.sweep import sweep, sweep_points
from gpusim.report.cli import main

SQUARE = ["regtile2d", "--size", "512", "--param", "BN=64,128", "--param", "BK=8,16", "--no-time", "--json"]


def _sweep_json(capsys, *extra):
    assert main(["sweep", *SQUARE, *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_two_worker_cluster_gives_the_serial_rows(capsys, tmp_path):
    serial = _sweep_json(capsys, "--workers", "1", "--csv", str(tmp_path / "rows.csv"))
    pytest.importorskip("distributed")
    dask = _sweep_json(capsys, "--workers", "2")
    assert serial["rows"] == dask["rows"]
    assert [(r["params"]["BN"], r["params"]["BK"]) for r in serial["rows"]] == [(64, 8), (64, 16), (128, 8), (128, 16)]
    assert all(r["status"] == "ok" and r["occupancy_pct"] > 0 for r in serial["rows"])
    assert "no Dask" in serial["ran"] and "LocalCluster of 2 worker processes" in dask["ran"]
    with open(tmp_path / "rows.csv") as f:
        table = list(csv.DictReader(f))
    assert [(int(r["BN"]), int(r["BK"])) for r in table] == [(64, 8), (64, 16), (128, 8), (128, 16)]
    assert list(tmp_path.iterdir()) == [tmp_path / "rows.csv"]     # no temporary file left beside it


def test_a_refused_combination_is_listed_with_its_reason(capsys):
    rows = sweep("regtile2d", params={"TM": [3, 5]}, sizes=[256], workers=1, time=False)
    assert [(r["status"], r["params"]["TM"]) for r in rows] == [("refused", 3), ("refused", 5)]
    assert [r["reason"] for r in rows] == [f"regtile2d: BM=128 must be a multiple of TM={tm}" for tm in (3, 5)]
    assert main(["sweep", "regtile2d", "--size", "256", "--param", "TM=3,8", "--no-time", "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert "1 refused" in out and "refused TM=3 256 h200: regtile2d: BM=128 must be a multiple of TM=3" in out
    assert out.index("└") < out.index("refused TM=3")      # listed below the table of the others


def test_without_dask_more_workers_are_refused_and_one_runs_here(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)      # import distributed: ImportError
    assert main(["sweep", "regtile2d", "--size", "512", "--no-time", "--workers", "2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install 'gpusim[sweep]'" in err
    rows = sweep("regtile2d", params={"TM": [3]}, sizes=[256], workers=1, time=False)
    assert len(rows) == 1 and rows[0]["status"] == "refused"


def test_points_are_the_product_of_the_axes():
    pts = sweep_points("regtile2d", {"BN": ["64", 128, 64]}, [512, (256, 512, 128)], ["h200", "a6000"],
                       {"l2_bytes": ["50331648", 100663296]})
    assert len(pts) == 2 * 2 * 2 * 2        # the repeated 64 counted once
    assert pts[0] == {"point": 0, "kernel": "regtile2d", "params": {"BN": 64}, "M": 512, "N": 512, "K": 512,
                      "arch": "h200", "sets": {"l2_bytes": 50331648}}
    assert {(p["M"], p["N"], p["K"]) for p in pts} == {(512, 512, 512), (256, 512, 128)}


@pytest.mark.parametrize("sets,msg", [
    ({"l2_byte": 1}, "no field 'l2_byte'; did you mean l2_bytes"),
    ({"sm_count": "1.5"}, "sm_count takes an integer (H200: 132)"),
    ({"sm_count": 66.0}, "sm_count takes an integer"),
    ({"sm_count": True}, "sm_count takes an integer"),
    ({"sm_count": "0"}, "sm_count must be positive"),
    ({"dram_bandwidth_gbps": "fast"}, "dram_bandwidth_gbps takes a number"),
    ({"dram_bandwidth_gbps": "nan"}, "dram_bandwidth_gbps takes a number"),
    ({"dram_latency_ns": -1}, "dram_latency_ns must be positive"),
    ({"launch_overhead_us": -1}, "launch_overhead_us must be 0 or more"),
    ({"fma_warp_switch_bubble": "maybe"}, "is a switch, true or false"),
    ({"register_stall": "yield"}, "has no field 'register_stall'"),
    ({"name": "B200"}, "cannot be changed"),
])
def test_set_fields_are_checked(sets, msg):
    with pytest.raises(GpusimError) as e:
        override("h200", sets)
    assert msg in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(GpusimError):
        sweep_points("regtile2d", sizes=[512], sets={k: [v] for k, v in sets.items()})


def test_set_types_and_what_changed():
    gpu = override("h200", {"l2_bytes": "100663296", "dram_achieved_bandwidth_gbps": "2000",
                            "lg_sm_untaken_depth": "0", "fma_warp_switch_bubble": "false"})
    assert isinstance(gpu, GPU) and gpu.name == "H200" and gpu.l2_bytes == 100663296
    assert isinstance(gpu.dram_achieved_bandwidth_gbps, float) and gpu.lg_sm_untaken_depth == 0
    assert arch_overrides(gpu) == {"l2_bytes": {"old": 62914560, "new": 100663296},
                                   "fma_warp_switch_bubble": {"old": True, "new": False},
                                   "lg_sm_untaken_depth": {"old": 64, "new": 0},
                                   "dram_achieved_bandwidth_gbps": {"old": 4699.0, "new": 2000.0}}
    assert override("h200", {}) is get_arch("h200") and arch_overrides(get_arch("h200")) == {}


def test_run_reports_the_changed_fields(capsys):
    argv = ["run", "regtile2d", "--size", "256", "--no-time", "--set", "l2_bytes=100663296", "--set", "sm_count=66"]
    assert main([*argv, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["arch_overrides"] == {"sm_count": {"old": 132, "new": 66},
                                     "l2_bytes": {"old": 62914560, "new": 100663296}}
    assert main(argv) == 0
    assert ("H200 preset with fields changed (--set): sm_count 132 -> 66, l2_bytes 62,914,560 -> 100,663,296"
            in capsys.readouterr().out)


@pytest.mark.slow        # tens of seconds: .ci/run runs it (`pytest -m slow`)
def test_a_changed_field_reaches_the_prediction():
    """The result carries its GPU: predict, the occupancy and the L2 model read it, not the preset."""
    from gpusim.estimate.kernel_time import predict

    def timed(**sets):
        r = gpusim.simulate("regtile2d", 256, arch=override("h200", sets), keep_trace=True)
        return r, predict(r)
    r, base = timed()
    assert "arch_overrides" not in r.to_json()      # a preset's output as it was
    # 4 CTAs on one SM, where 132 SMs take one each
    _, one_sm = timed(sm_count=1)
    assert one_sm.time_ms > 1.5 * base.time_ms and one_sm.ctas_per_sm == 4 and base.ctas_per_sm == 1
    # an L2 of 256 KiB no longer holds A, B and C (768 KiB): the chip-wide L2 model runs, loads go to DRAM
    assert "warm L2" in base.memory_levels and "dram__bytes_read.sum" not in base.metrics
    r, small_l2 = timed(l2_bytes=1 << 18)
    assert "chip-wide L2" in small_l2.memory_levels and small_l2.metrics["dram__bytes_read.sum"] > 0
    assert small_l2.time_ms > base.time_ms
    assert r.to_json()["arch_overrides"] == {"l2_bytes": {"old": 62914560, "new": 1 << 18}}


@pytest.mark.slow
def test_the_local_clusters_workers_start_with_gpusims_malloc_and_thread_settings():
    """The local workers start with gpusim.pages.MALLOC in place of Dask's MALLOC_TRIM_THRESHOLD_ of 64 KB
    (which fixes glibc's mmap threshold, so each large numpy temporary is mapped and unmapped afresh: half
    the CPU in page faults), Dask's one-thread settings kept, and, filling the CPUs, without the helper
    thread; this process's environment is left as it was."""
    pytest.importorskip("distributed")
    import os
    from gpusim.estimate.sweep import _client, default_workers
    from gpusim.pages import MALLOC
    before = dict(os.environ)
    workers = max(2, default_workers())      # no second CPU each: the helper thread off in the workers
    client, cluster = _client(workers, None)
    names = (*MALLOC, "OMP_NUM_THREADS", "GPUSIM_HELPER_THREAD")
    try:
        env = set(client.run(lambda: tuple(os.environ.get(k) for k in names)).values())
    finally:
        client.close()
        cluster.close()
    assert env == {(*(str(v) for v in MALLOC.values()), "1", "0")}
    assert dict(os.environ) == before


def test_workers_that_fill_the_cpus_run_without_the_helper_thread(monkeypatch):
    """A local worker without a second CPU of its own starts with GPUSIM_HELPER_THREAD=0."""
    import gpusim.estimate.sweep as S
    monkeypatch.setattr(S, "default_workers", lambda: 4)
    assert S._worker_env(1) == S._worker_env(2) == {}
    assert S._worker_env(3) == S._worker_env(8) == {"GPUSIM_HELPER_THREAD": "0"}
