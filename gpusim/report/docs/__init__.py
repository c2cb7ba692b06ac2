"""The generated parts of the project's documentation, so that they follow the code and the records.

* docs/model.md: one parameter table per unit of the timing model, made from the GPU preset
  (gpusim/arch/presets.py: the GPU dataclass's fields, the H200 preset's values and the comments beside
  each field, read with tokenize and ast), a few constants of the code, and the warp states
  (gpusim/timing/states.py). Each table sits between `<!-- generated:params:UNIT -->` and
  `<!-- end generated -->`; the prose around the tables is written by hand and kept as it is.
* docs/validation.md: predicted against measured H200 time for every committed record (the ladders at
  1024, 2048 and 4096, the held-out tile parameters and shapes, the parameter sweep), through `gpusim
  compare`'s own functions (gpusim.report.compare), with MAPE per ladder and the exact counts' agreement.
  The whole file is generated.
* README.md: a small accuracy table, one line per ladder and held-out set, taken from docs/validation.md's
  summary, between `<!-- generated:accuracy -->` and `<!-- end generated -->` (nothing is written where
  README.md has no such block).
* docs/img/validation.png: the README's figure, predicted against measured time at every point of
  docs/validation.md (gpusim.report.plots.plot_validation); its PNG text chunk names the table it was
  drawn from, so --check tells a stale figure without comparing pixels.

    python3 -m gpusim.report.docs --write                 # model.md's tables, README's accuracy block and figure
    python3 -m gpusim.report.docs --write --validation    # also every prediction again (tens of minutes)
    python3 -m gpusim.report.docs --check                 # exit 1 naming every stale block

The predictions are not cached anywhere (`gpusim compare` runs them afresh too), which is why
--validation is a separate switch; --check compares docs/validation.md's points and measured times with
the records (cheap) but not its predictions (tests/report/test_docs.py's slow test does).
"""
from __future__ import annotations

import argparse
import datetime
import sys
from pathlib import Path

from gpusim.paths import SOURCE_ROOT, write_atomic
from gpusim.report.docs.blocks import (  # noqa: F401  (the public names, here for callers and tests)
    MODEL_MD, README_MD, VALIDATION_MD, VALIDATION_PNG, WRITE_COMMAND, read_blocks, replace_blocks, stale_blocks)
from gpusim.report.docs.validation_doc import (  # noqa: F401  (the public names, here for callers and tests)
    NOT_PREDICTED, accuracy_table, git_commit, parse_validation, predict_points, render_validation, stale_validation, validation_points)
from gpusim.report.docs.model_doc import (  # noqa: F401  (the public names, here for callers and tests)
    NO_SOURCE, _unit_complaint, class_fields, model_blocks, source_text, unassigned_fields, unit_of)

# the command

def write(root: Path = SOURCE_ROOT, validation: bool = False, commit: str | None = None, log=sys.stdout) -> None:
    model = root / MODEL_MD
    text = model.read_text()
    bodies = model_blocks(root)
    missing = [k for k in bodies if k not in read_blocks(text)]
    if missing:
        raise SystemExit(f"{MODEL_MD} has no block(s) {', '.join(missing)}: add `<!-- generated:KEY -->` and "
                         "`<!-- end generated -->` where each belongs")
    new = replace_blocks(text, bodies)
    if new != text:
        write_atomic(model, lambda f: f.write(new.encode()))
        print(f"{MODEL_MD}: tables rewritten", file=log)
    else:
        print(f"{MODEL_MD}: up to date", file=log)
    vpath = root / VALIDATION_MD
    if validation:
        pts = predict_points(validation_points())
        vtext = render_validation(pts, datetime.date.today().isoformat(), commit or git_commit(root))
        write_atomic(vpath, lambda f: f.write(vtext.encode()))
        print(f"{VALIDATION_MD}: written ({len(pts)} points)", file=log)
    _write_readme(root, log)
    _write_figure(root, log)


def figure_source(validation_text: str) -> str:
    """What the figure drawn from this docs/validation.md carries in its PNG text chunk."""
    v = parse_validation(validation_text)
    return f"{VALIDATION_MD} generated on {v['date']} from commit {v['commit']}"


def _write_figure(root: Path, log) -> None:
    from gpusim.errors import GpusimError
    from gpusim.report.plots import PLOT_EXTRA, plot_validation, png_source
    vpath, png = root / VALIDATION_MD, root / VALIDATION_PNG
    if not vpath.exists():
        print(f"{VALIDATION_MD} does not exist yet: {VALIDATION_PNG} not drawn", file=log)
        return
    vtext = vpath.read_text()
    if png_source(png) == figure_source(vtext):
        print(f"{VALIDATION_PNG}: up to date", file=log)
        return
    png.parent.mkdir(parents=True, exist_ok=True)
    try:
        plot_validation(png, parse_validation(vtext)["points"], figure_source(vtext))
    except GpusimError as e:
        print(f"{VALIDATION_PNG} not drawn: {e} ({PLOT_EXTRA})", file=log)
        return
    print(f"{VALIDATION_PNG}: drawn", file=log)


def _write_readme(root: Path, log) -> None:
    readme, vpath = root / README_MD, root / VALIDATION_MD
    text = readme.read_text() if readme.exists() else ""
    if "accuracy" not in read_blocks(text):
        print(f"{README_MD} has no `<!-- generated:accuracy -->` ... `<!-- end generated -->` block: "
              "nothing written there", file=log)
        return
    if not vpath.exists():
        print(f"{VALIDATION_MD} does not exist yet ({WRITE_COMMAND} makes it): {README_MD} left as it is", file=log)
        return
    new = replace_blocks(text, {"accuracy": accuracy_table(vpath.read_text())})
    if new != text:
        write_atomic(readme, lambda f: f.write(new.encode()))
        print(f"{README_MD}: accuracy table rewritten", file=log)
    else:
        print(f"{README_MD}: accuracy table up to date", file=log)


def check(root: Path = SOURCE_ROOT) -> list[str]:
    """Every stale generated block, one line each ([] when all are current). Predictions are not re-run."""
    missing, twice, unknown = unassigned_fields()
    if missing or twice or unknown:
        return [_unit_complaint(missing, twice, unknown)]
    out = stale_blocks((root / MODEL_MD).read_text(), model_blocks(root), str(MODEL_MD))
    vpath = root / VALIDATION_MD
    if vpath.exists():
        vtext = vpath.read_text()
        out += stale_validation(vtext)
        readme = root / README_MD
        rtext = readme.read_text() if readme.exists() else ""
        if "accuracy" in read_blocks(rtext):
            out += stale_blocks(rtext, {"accuracy": accuracy_table(vtext)}, str(README_MD))
        from gpusim.report.plots import png_source
        got = png_source(root / VALIDATION_PNG)
        if got != figure_source(vtext):
            out.append(f"{VALIDATION_PNG}: " + ("missing" if got is None else f"drawn from {got}, not from the "
                                               f"{VALIDATION_MD} there is"))
    else:
        out.append(f"{VALIDATION_MD} does not exist ({WRITE_COMMAND} makes it)")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m gpusim.report.docs", description=__doc__.split("\n\n")[0])
    what = ap.add_mutually_exclusive_group(required=True)
    what.add_argument("--write", action="store_true", help="rewrite docs/model.md's tables and README.md's "
                      "accuracy block (from docs/validation.md)")
    what.add_argument("--check", action="store_true", help="exit 1 naming every stale block (no prediction is run)")
    ap.add_argument("--validation", action="store_true", help="with --write: run every prediction again and "
                    "rewrite docs/validation.md (tens of minutes)")
    ap.add_argument("--commit", help="the commit to name in docs/validation.md's header (default: git rev-parse "
                    "--short HEAD, or unknown)")
    a = ap.parse_args(argv)
    if a.validation and not a.write:
        ap.error("--validation goes with --write")
    if a.write:
        write(validation=a.validation, commit=a.commit)
        return 0
    stale = check()
    for line in stale:
        print(line)
    if stale:
        print(f"run `python3 -m gpusim.report.docs --write` ({WRITE_COMMAND} for docs/validation.md)")
        return 1
    print("docs/model.md, docs/validation.md, README.md's accuracy block and docs/img/validation.png are current")
    return 0

