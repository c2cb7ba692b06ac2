"""A user's raw ncu export, imported: the same records and comparisons as the project's own."""
import gzip
import json

import pytest

from gpusim.errors import RecordError
from gpusim.hw.ncu_import import import_export, kernel_identifier, unit_scale
from gpusim.report.cli import main
from gpusim.report.compare import compare_records, compare_rows
from gpusim.hw.records import HW_DIR, hw_record, validate_record

RAW = HW_DIR / "h200" / "ncu_raw"
BASE, DEFAULT = RAW / "ladder_2048_base.csv.gz", RAW / "ladder_2048_default.csv.gz"


def test_units_to_base():
    assert unit_scale("Mbyte") == (1e6, "byte")
    assert unit_scale("ms") == (1e6, "ns")
    assert unit_scale("Ghz") == (1e9, "hz")
    assert unit_scale("Gbyte/second") == (1e9, "byte/second")
    assert unit_scale("Kbyte/block") == (1e3, "byte/block")
    assert unit_scale("sector") == (1.0, "sector")
    assert unit_scale("%") == (1.0, "%")


def test_kernel_names():
    assert kernel_identifier("regtile2d") == "regtile2d"
    assert kernel_identifier("void regtile2d<128, 128>(int, int, const float *)") == "regtile2d"
    assert kernel_identifier("ns::copy4(const float4 *, float4 *, int)") == "copy4"
    assert kernel_identifier("_Z9regtile2diiifPKfS0_fPf") == "regtile2d"


@pytest.mark.parametrize("path", [BASE, DEFAULT], ids=["base-units", "default-units"])
def test_import_matches_the_projects_records(path):
    recs, notes = import_export(path)
    assert [(r["kernel"], r["M"], r["N"], r["K"]) for r in recs] == \
        [("regtile2d", 2048, 2048, 2048), ("copy4", 2048, 2048, 2048), ("naive", 2048, 2048, 2048)]
    assert all("by its name" in n for n in notes if n.startswith("launch"))
    for r in recs:
        validate_record(r)
        own = hw_record(r["kernel"], 2048)
        assert r["grid"] == own["grid"] and r["block"] == own["block"]
        assert set(r["ncu"]["metrics"]) == set(own.metrics)
        for m, v in own.metrics.items():
            got = r["ncu"]["metrics"][m]
            if isinstance(v, int) and "bytes" not in m:
                assert got == v, m                  # counts exactly, in either unit style
            else:                                   # rates and scaled bytes to the export's printed digits
                assert got == pytest.approx(v, rel=2e-5, abs=6e-3), m
        if path == BASE:                            # with instances: the per-opcode and per-PC tables too
            for f in ("inst_executed_per_opcode", "inst_executed_per_pc"):
                assert r["ncu"][f] == own["ncu"][f]
        assert "gpu__time_duration" in r["timing"]["method"]     # no event time given: says whose time


def test_compare_table_is_the_projects():
    """The Done-when: a user's raw CSV, imported with their event time, gives the project's comparison."""
    recs, _ = import_export(BASE, kernel="copy4", time_ms=hw_record("copy4", 2048)["time_ms_median"])
    assert recs[0]["timing"]["method"].startswith("the user's own event timing")
    mine = compare_records([validate_record(recs[0])])
    own = [dict(r._asdict(), size=2048) for r in compare_rows(["copy4"], 2048)]
    assert [(r["kernel"], r["metric"], r["simulated"]) for r in mine] == \
        [(r["kernel"], r["metric"], r["simulated"]) for r in own]
    for a, b in zip(mine, own):
        assert a["recorded"] == pytest.approx(b["recorded"], rel=1e-6, abs=6e-3), a["metric"]


def _damaged(tmp_path, edit) -> str:
    lines = gzip.decompress(BASE.read_bytes()).decode().splitlines()
    p = tmp_path / "damaged.csv"
    p.write_text("\n".join(edit(lines)) + "\n")
    return str(p)


def test_damaged_exports_are_refused_by_name(tmp_path):
    cut = _damaged(tmp_path, lambda ls: ls[:-1] + [ls[-1][: len(ls[-1]) // 2]])
    with pytest.raises(RecordError, match=r"line 5 has \d+ cells where the header has"):
        import_export(cut)
    with pytest.raises(RecordError, match="no 'Grid Size' column"):
        import_export(_damaged(tmp_path, lambda ls: [ls[0].replace('"Grid Size"', '"Grid"')] + ls[1:]))
    with pytest.raises(RecordError, match="no ncu raw-page header"):
        import_export(_damaged(tmp_path, lambda ls: ["hello"]))
    with pytest.raises(RecordError, match="no launch with ID 7"):
        import_export(BASE, launch=7)
    with pytest.raises(RecordError, match="not copy4 at M, N, K"):
        import_export(BASE, kernel="copy4", mnk=(1024, 1024, 1024))
    with pytest.raises(RecordError, match="one launch's time"):
        import_export(BASE, time_ms=1.0)
    bad = tmp_path / "bad.csv.gz"
    bad.write_bytes(BASE.read_bytes()[:2000])
    with pytest.raises(RecordError, match="damaged gzip"):
        import_export(bad)


def test_a_garbled_metric_is_left_out_with_a_note(tmp_path):
    def garble(ls):
        head = next(__import__("csv").reader([ls[0]]))
        i = head.index("dram__bytes_read.sum")
        rows = [next(__import__("csv").reader([ln])) for ln in ls[2:]]
        rows[0][i] = "12abc"
        import csv
        import io
        buf = io.StringIO()
        csv.writer(buf, quoting=csv.QUOTE_ALL).writerows(rows)
        return ls[:2] + buf.getvalue().splitlines()
    recs, notes = import_export(_damaged(tmp_path, garble))
    assert "dram__bytes_read.sum" not in recs[0]["ncu"]["metrics"]
    assert "dram__bytes_read.sum" in recs[1]["ncu"]["metrics"]
    assert any("not a number, left out: dram__bytes_read.sum" in n for n in notes)


def test_unknown_kernel_asks_which(tmp_path):
    p = _damaged(tmp_path, lambda ls: ls[:2] + [ls[2].replace('"regtile2d"', '"mygemm"', 1)])
    with pytest.raises(RecordError, match="no gpusim kernel is named 'mygemm'; say which with --kernel"):
        import_export(p)
    recs, notes = import_export(p, kernel="regtile2d")
    assert recs[0]["kernel"] == "regtile2d" and "as given" in recs[0]["imported"]["matched"]


def test_cli_import_then_compare(tmp_path, capsys):
    assert main(["hw", "import", str(BASE), "-o", str(tmp_path), "--launch", "1", "--time-ms", "0.00864"]) == 0
    assert "copy4_2048.json" in capsys.readouterr().out
    out = tmp_path / "copy4_2048.json"
    rec = json.loads(out.read_text())
    assert rec["time_ms_median"] == 0.00864 and rec["imported"]["from"] == BASE.name
    assert main(["compare", "--no-time", "--json", "--record", str(out)]) == 0
    rows = json.loads(capsys.readouterr().out)
    rows = rows["rows"] if isinstance(rows, dict) else rows
    by = {r["metric"]: r for r in rows}
    assert by["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"]["diff"] == 0
    assert main(["compare", "--record", str(out), "--size", "2048"]) == 2     # its own launches: no --size


def test_compare_prints_the_projects_table(tmp_path, monkeypatch):
    """Done-when of the import: the user's export, imported with their event time, gives the same
    `gpusim compare` table, time and stall columns included, as the project's record of that launch."""
    import io

    from rich.console import Console

    from gpusim.report import render
    t = str(hw_record("copy4", 2048)["time_ms_median"])
    assert main(["hw", "import", str(BASE), "-o", str(tmp_path), "--kernel", "copy4", "--time-ms", t]) == 0

    def page(argv):
        buf = io.StringIO()
        monkeypatch.setattr(render, "console", Console(width=80, file=buf))
        assert main(argv) == 0
        return buf.getvalue().splitlines()
    mine = page(["compare", "--record", str(tmp_path / "copy4_2048.json")])
    own = page(["compare", "copy4", "--size", "2048"])
    cut = [next(i for i, ln in enumerate(lines) if ln.startswith("┏")) for lines in (mine, own)]
    assert "copy4_2048.json" in " ".join(mine[:cut[0]])              # the title names the source
    assert "traces/hw/h200" in " ".join(own[:cut[1]])
    import re

    def cells(lines):       # the table's words, whatever width the title gave it
        return [w for w in (re.sub(r"[\s━┏┳┓┃┡╇┩│└┴┘─]+", " ", ln).strip() for ln in lines) if w]
    assert cells(mine[cut[0]:]) == cells(own[cut[1]:])
