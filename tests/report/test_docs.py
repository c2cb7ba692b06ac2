"""The generated documentation against what gpusim/report/docs/ makes now: docs/model.md's parameter
tables (from the GPU preset), docs/validation.md's points and measured times (from the committed
records), README.md's accuracy block and figure (from docs/validation.md). The slow test runs every prediction
again and holds docs/validation.md's predicted figures to them."""
import difflib
import io
import re

import pytest

from gpusim.paths import SOURCE_ROOT
from gpusim.report import docs

FIX = "run `python3 -m gpusim.report.docs --write` and commit the result"


def _text(rel) -> str:
    return (SOURCE_ROOT / rel).read_text()


def test_every_preset_field_is_in_exactly_one_unit():
    missing, twice, unknown = docs.unassigned_fields()
    assert not (missing or twice or unknown), docs._unit_complaint(missing, twice, unknown)


def test_model_tables_are_the_generators():
    stale = docs.stale_blocks(_text(docs.MODEL_MD), docs.model_blocks(), str(docs.MODEL_MD))
    assert not stale, "\n".join(stale) + "\n" + FIX


def test_model_lists_every_field_once():
    from dataclasses import fields
    from gpusim.arch import GPU
    tables = "".join(body for key, body in docs.read_blocks(_text(docs.MODEL_MD)).items()
                     if key.startswith("params:"))
    for f in fields(GPU):
        n = len(re.findall(rf"^\| `{f.name}` \|", tables, re.M))
        assert n == 1, f"docs/model.md lists field {f.name} {n} times; {FIX}"


def test_model_names_only_files_that_exist():
    text = _text(docs.MODEL_MD)
    named = set(re.findall(r"\b((?:gpusim|bench|tests|calibrate)/[\w/]+\.(?:py|cu|sh))\b", text))
    named |= {f"gpusim/timing/{m}" for m in re.findall(r"`(\w+\.py)`", text) if "/" not in m}
    named |= {"docs/" + m for m in re.findall(r"\]\((notes/[\w.-]+\.md)\)", text)}
    missing = sorted(p for p in named if "NAME" not in p and not (SOURCE_ROOT / p).exists())
    assert not missing, f"docs/model.md names files that do not exist: {', '.join(missing)}"


def test_comments_give_the_source_and_a_field_without_one_says_so():
    src = '''
class GPU:
    name: str
    # --- a section header ---
    bare: int
    # [M] micro/a.json: a block above two fields, one record for both
    first_cycles: int = 1
    second_cycles: int = 2
    plain_bytes: int = 3  # [PG] the guide
    continued: int = 4  # [M] micro/b.json, and
    # the rest of its comment

    last: int = 5
'''
    f = docs.class_fields(src)
    assert docs.source_text(f["name"]) == docs.NO_SOURCE
    assert docs.source_text(f["bare"]) == docs.NO_SOURCE          # a section header is no source
    assert docs.source_text(f["first_cycles"]) == "[M] micro/a.json"
    assert docs.source_text(f["second_cycles"]) == "[M] micro/a.json"
    assert docs.source_text(f["plain_bytes"]) == "[PG] the guide"
    assert docs.source_text(f["continued"]) == "[M] micro/b.json, and the rest of its comment"
    assert docs.source_text(f["last"]) == docs.NO_SOURCE
    assert docs.unit_of("dram_latency_ns") == "ns" and docs.unit_of("l1_sectors_per_sm_cycle") == \
        "sectors / SM cycle" and docs.unit_of("lsu_queue_in_order", "bool") == "switch"


def test_a_stale_table_is_named():
    text = _text(docs.MODEL_MD)
    body = docs.read_blocks(text)["params:math"]
    changed = text.replace(body, body.replace("| `imad_latency_cycles` | 4 |", "| `imad_latency_cycles` | 5 |"))
    assert changed != text
    assert docs.stale_blocks(changed, docs.model_blocks(), "docs/model.md") == \
        ["docs/model.md: block params:math is stale"]
    assert docs.replace_blocks(changed, docs.model_blocks()) == docs.replace_blocks(text, docs.model_blocks())


def test_validation_lists_every_record_with_its_measured_time():
    text = _text(docs.VALIDATION_MD)
    stale = docs.stale_validation(text)
    assert not stale, "\n".join(stale) + f"\nrun `{docs.WRITE_COMMAND}`"
    parsed = docs.parse_validation(text)
    assert parsed["date"] and parsed["commit"] and parsed["summary"]
    for row in parsed["points"]:        # every point but those said not to be predicted has a prediction
        assert row["predicted"] == docs.NOT_PREDICTED or float(row["predicted"]) > 0, row


def test_readme_accuracy_block_is_validations_summary():
    readme = _text(docs.README_MD)
    if "accuracy" not in docs.read_blocks(readme):
        pytest.skip("README.md has no accuracy block")
    stale = docs.stale_blocks(readme, {"accuracy": docs.accuracy_table(_text(docs.VALIDATION_MD))}, "README.md")
    assert not stale, "\n".join(stale) + "\n" + FIX


def test_readme_figure_is_drawn_from_validation():
    """docs/img/validation.png carries the header of the docs/validation.md it was drawn from."""
    from gpusim.report.plots import png_source
    assert png_source(SOURCE_ROOT / docs.VALIDATION_PNG) == docs.figure_source(_text(docs.VALIDATION_MD)), FIX
    assert f"]({docs.VALIDATION_PNG})" in _text(docs.README_MD)


def test_a_figure_from_another_table_is_named(tmp_path):
    pytest.importorskip("matplotlib")
    from gpusim.report.plots import plot_validation, png_source
    points = [{"set": "ladder", "ladder": "sgemm", "measured": "1.0", "predicted": "1.1"},
              {"set": "ladder", "ladder": "memory", "measured": "0.01", "predicted": docs.NOT_PREDICTED}]
    png = tmp_path / "v.png"
    plot_validation(png, points, "docs/validation.md generated on 2000-01-01 from commit abc")
    assert png_source(png) == "docs/validation.md generated on 2000-01-01 from commit abc"
    assert png_source(tmp_path / "none.png") is None
    (tmp_path / "bad.png").write_bytes(b"not a png")
    assert png_source(tmp_path / "bad.png") is None


@pytest.mark.slow
def test_validation_predictions_are_current():
    """Every prediction again (tens of minutes): docs/validation.md must print what they give now."""
    text = _text(docs.VALIDATION_MD)
    head = docs.parse_validation(text)
    points = docs.predict_points(docs.validation_points(), log=io.StringIO())
    now = docs.render_validation(points, head["date"], head["commit"])
    diff = list(difflib.unified_diff(text.splitlines(), now.splitlines(), "docs/validation.md", "now", lineterm="",
                                     n=0))
    assert not diff, "\n".join(diff[:40]) + f"\nrun `{docs.WRITE_COMMAND}`"
