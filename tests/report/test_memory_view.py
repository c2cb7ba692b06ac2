"""`gpusim run --by-array --source`: the per-array and per-instruction tables, readable at 80 columns."""
import io
import json

import pytest
from rich.console import Console

from gpusim.report import render
from gpusim.report.cli import main


@pytest.mark.parametrize("frontend", ["sass", "python"])
def test_tables_fit_80_columns(monkeypatch, frontend):
    buf = io.StringIO()
    monkeypatch.setattr(render, "console", Console(width=80, file=buf, force_terminal=False))
    assert main(["run", "reduce_atomic", "--size", "1024", "--no-time", "--by-array", "--source",
                 "--frontend", frontend]) == 0
    out = buf.getvalue()
    assert "memory by array" in out and "memory instructions" in out
    assert "…" not in out and max(len(line) for line in out.splitlines()) <= 80
    assert ("desc[UR" in out) == (frontend == "sass")                    # the SASS text, or the line
    assert ("reduce_atomic.py:" in out) == (frontend == "python")
    assert ("warpSums" in out) == (frontend == "python")                  # shared names: Python only


def test_json_carries_them(capsys):
    assert main(["run", "copy4", "--size", "256", "--no-time", "--json", "--by-array", "--source"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["by_array"]["A"]["loads"]["sectors_per_request"] == 16.0      # float4: 512 B a warp
    assert [i["opcode"] for i in out["by_instruction"]] == ["LDG.E.128", "STG.E.128"]
