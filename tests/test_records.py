"""The hardware-record schema: loader, errors, and the committed records' provenance."""
import json

import pytest

import gpusim
import gpusim.paths

from gpusim.errors import RecordError
from gpusim.hw import records as R
from gpusim.report.compare import compare_rows


def kernel_record(**over):
    rec = {
        "schema": R.SCHEMA, "kernel": "naive", "params": {"BLOCK": 32}, "M": 64, "N": 64, "K": 64,
        "command": "python3 -m gpusim.hw.batch", "date": "2026-11-29T00:00:00Z", "device": "NVIDIA H200",
        "driver": "580.159.04", "cuda": {"runtime": "13.0"}, "clocks": {"sm_mhz": {"median": 1980}},
        "build_flags": ["-arch=sm_90", "-O3"],
        "check": {"rel_err": 1e-7, "unwritten": 0, "passed": True},
        "time_ms_median": 0.5, "time_ms_quantiles": {"min": 0.49, "max": 0.6},
        "ncu": {"cache_control": "all", "clock_control": "none",
                "metrics": {"smsp__inst_executed.sum": 1000, "dram__bytes_read.sum": 32768.0,
                            "launch__registers_per_thread": 32}},
    }
    rec.update(over)
    return rec


def micro_record(**over):
    rec = {"schema": R.MICRO_SCHEMA, "bench": "latency_ffma", "what": "FFMA latency", "how": "chain",
           "value": 4.0, "unit": "cycles", "command": "x", "date": "2026-11-29T00:00:00Z",
           "device": "NVIDIA H200", "driver": "580", "cuda": "13.0", "clocks": {}, "build_flags": []}
    rec.update(over)
    return rec


def test_round_trip(tmp_path):
    for rec in (kernel_record(), micro_record()):
        p = R.dump_record(rec, tmp_path / "r.json")
        back = R.load_record(p)
        assert back == rec
        assert back.path == str(p)
    k = R.load_record(R.dump_record(kernel_record(), tmp_path / "k.json"))
    assert k.kind == "kernel" and k.size == 64 and k.passed
    assert k.metrics["smsp__inst_executed.sum"] == 1000
    assert R.load_record(R.dump_record(micro_record(), tmp_path / "m.json")).kind == "micro"


def test_malformed_files(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text("{not json")
    with pytest.raises(RecordError, match="not valid JSON"):
        R.load_record(p)
    p.write_text("[1, 2]")
    with pytest.raises(RecordError, match="JSON object"):
        R.load_record(p)
    with pytest.raises(RecordError, match="cannot read"):
        R.load_record(tmp_path / "missing.json")
    for field in ("command", "date", "device", "driver", "clocks", "check", "time_ms_median"):
        rec = kernel_record()
        del rec[field]
        p.write_text(json.dumps(rec))
        with pytest.raises(RecordError, match=field):
            R.load_record(p)
    rec = kernel_record(check={"rel_err": 1e-7, "passed": True})
    p.write_text(json.dumps(rec))
    with pytest.raises(RecordError, match="check.'unwritten'"):
        R.load_record(p)
    p.write_text(json.dumps(kernel_record(M="64")))
    with pytest.raises(RecordError, match="'M' should be int"):
        R.load_record(p)
    p.write_text(json.dumps(kernel_record(time_ms_median=-1)))
    with pytest.raises(RecordError, match="positive"):
        R.load_record(p)
    p.write_text(json.dumps(kernel_record(ncu={"metrics": {}})))
    with pytest.raises(RecordError, match="ncu.'cache_control'"):
        R.load_record(p)
    p.write_text(json.dumps(micro_record(unit=None)))
    with pytest.raises(RecordError, match="unit"):
        R.load_record(p)


def test_wrong_version(tmp_path):
    p = tmp_path / "old.json"
    p.write_text(json.dumps(kernel_record(schema="gpusim.hw/0")))
    with pytest.raises(RecordError, match="gpusim.hw/0"):
        R.load_record(p)
    p.write_text(json.dumps({k: v for k, v in kernel_record().items() if k != "schema"}))
    with pytest.raises(RecordError, match="no 'schema'"):
        R.load_record(p)


def test_dump_refuses_invalid(tmp_path):
    with pytest.raises(RecordError):
        R.dump_record(kernel_record(device=3), tmp_path / "x.json")
    assert not (tmp_path / "x.json").exists()


def test_record_name():
    assert R.record_name("regtile2d", 4096, {"BM": 128, "BN": 64}, {"BM": 128, "BN": 128}) == \
        "regtile2d-BN64_4096.json"
    assert R.record_name("naive", 1024) == "naive_1024.json"


def test_hw_record_missing_names_the_file():
    with pytest.raises(RecordError, match="traces/hw/h200/nosuchkernel_1024.json"):
        R.hw_record("nosuchkernel", 1024)


def test_compare_rows_joins_shared_metrics(tmp_path, monkeypatch):
    monkeypatch.setattr(R, "HW_DIR", tmp_path)
    monkeypatch.setattr(gpusim.paths, "HW_DIR", tmp_path)      # device_dir reads it there
    R.dump_record(kernel_record(M=64, N=64, K=64), tmp_path / "h200" / "naive_64.json")
    R.dump_record(kernel_record(kernel="cublas", params={}), tmp_path / "h200" / "cublas_64.json")

    def sim(kernel, size):
        return {"smsp__inst_executed.sum": 1100, "dram__bytes_read.sum": 32768, "gpusim__only": 1,
                "launch__registers_per_thread": None}
    rows = compare_rows(None, 64, sim)
    assert [(r.kernel, r.metric) for r in rows] == [("naive", "dram__bytes_read.sum"),
                                                    ("naive", "smsp__inst_executed.sum")]
    r = rows[1]
    assert (r.simulated, r.recorded, r.diff) == (1100, 1000, 100) and r.rel_diff == pytest.approx(0.1)
    assert compare_rows(["naive"], 64, lambda k, s: {"time_ms": 0.6})[0].metric == "time_ms"
    with pytest.raises(RecordError):
        compare_rows(["regtile2d"], 64, sim)
    with pytest.raises(RecordError, match="no hardware records at size 128"):
        compare_rows(None, 128, sim)


def test_compare_rows_of_the_held_out_variants(tmp_path, monkeypatch):
    """variants=True joins the records under variants/ (not the default-parameter ones), labels each row
    with the record's name and gives sim_fn the record's parameters."""
    monkeypatch.setattr(R, "HW_DIR", tmp_path)
    monkeypatch.setattr(gpusim.paths, "HW_DIR", tmp_path)      # device_dir reads it there
    R.dump_record(kernel_record(M=64, N=64, K=64), tmp_path / "h200" / "naive_64.json")
    p = {"BLOCK": 16}
    R.dump_record(kernel_record(M=64, N=64, K=64, params=p), tmp_path / "h200" / "variants" / "naive-BLOCK16_64.json")
    seen = []

    def sim(kernel, size, params=None):
        seen.append((kernel, size, params))
        return {"smsp__inst_executed.sum": 900}
    rows = compare_rows(None, 64, sim, variants=True)
    assert [(r.kernel, r.metric, r.simulated) for r in rows] == [("naive-BLOCK16", "smsp__inst_executed.sum", 900)]
    assert seen == [("naive", 64, p)]
    with pytest.raises(RecordError, match="no variant records at size 128"):
        compare_rows(None, 128, sim, variants=True)


@pytest.mark.parametrize("sub", ["variants", "shapes"])
def test_held_out_records_are_valid_and_say_how_they_were_made(sub):
    """Every record of the held-out sets loads under its schema and names its command, date, device and
    driver; the shapes are non-square, the variants' parameters differ from the kernel's defaults."""
    from gpusim.kernel.spec import get_kernel
    files = sorted((R.HW_DIR / "h200" / sub).glob("*.json"))
    assert len(files) >= 24
    for f in files:
        rec = R.load_record(f)
        assert all(rec[k] for k in ("command", "date", "device", "driver")) and rec["check"]["passed"]
        if sub == "shapes":
            assert len({rec["M"], rec["N"], rec["K"]}) > 1 and f.name == f"{rec['kernel']}_{rec['M']}x{rec['N']}x{rec['K']}.json"
        else:
            assert rec["params"] != dict(get_kernel(rec["kernel"]).params)


# ---------------------------------------------------------------- the committed records

COMMITTED = R.list_hw_records()
MICRO = R.list_hw_records(micro=True)


@pytest.mark.parametrize("rec", COMMITTED, ids=lambda r: r.path.rsplit("/", 1)[-1])
def test_committed_kernel_records(rec):
    for field in R.PROVENANCE:
        assert rec[field] not in ("", None, "unknown"), field
    assert rec["device"].startswith("NVIDIA H200")
    assert rec.passed, f"{rec.path}: the cuBLAS check failed"
    assert rec["check"]["unwritten"] == 0
    assert rec["time_ms_median"] > 0
    if "ncu" in rec:
        n, m = rec["ncu"], rec.metrics
        assert n["clock_control"] == "none" and n["cache_control"] in ("all", "none")
        # internal consistency of what ncu reported
        assert sum(n["inst_executed_per_opcode"].values()) == m["smsp__inst_executed.sum"]
        if "inst_executed_per_pc" in n:
            assert sum(n["inst_executed_per_pc"].values()) == m["smsp__inst_executed.sum"]
        stalls = sum(m[f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio"] for r in n["stall_reasons"])
        # ncu collects the stall counters over several replay passes, each its own run of the launch: a launch
        # of a few microseconds (the memory ladder at 1024 and 2048) differs from pass to pass: up to 14 % apart
        short = m.get("gpu__time_duration.sum", 1e9) < 50_000
        assert stalls == pytest.approx(m["smsp__average_warp_latency_per_inst_issued.ratio"], rel=0.15 if short else 0.02)
        if rec["kernel"] != "cublas":     # a launch takes at least 16 registers a thread (the preset's minimum)
            want = max(rec["ptxas"]["registers"], gpusim.get_arch("h200").min_regs_per_thread)
            assert m["launch__registers_per_thread"] == want


@pytest.mark.parametrize("rec", MICRO, ids=lambda r: r["bench"])
def test_committed_micro_records(rec):
    for field in R.PROVENANCE:
        assert rec[field] not in ("", None), field
    assert rec["what"] and rec["how"] and rec["unit"]


def test_committed_records_cover_the_ladder():
    if not COMMITTED:
        pytest.skip("no hardware records committed yet")
    from gpusim.kernel.spec import LADDER
    have = {(r["kernel"], r.size) for r in COMMITTED}
    for k in (*LADDER, "cublas"):
        for n in (1024, 2048, 4096):
            assert (k, n) in have, f"no record for {k} at {n}"
