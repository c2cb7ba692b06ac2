"""docs/validation.md: predicted against measured H200 time for every committed record, through
`gpusim compare`'s own functions, and README.md's small accuracy table taken from its summary."""
from __future__ import annotations

import math
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from gpusim.paths import SOURCE_ROOT
from gpusim.report.docs.blocks import VALIDATION_MD, WRITE_COMMAND

# ----------------------------------------------------------------------------------------------------
# validation: the committed records, and the prediction of each through gpusim compare's functions

SETS = {   # key -> (title, the records' folder)
    "ladder": ("ladders", "traces/hw/h200/"),
    "variants": ("held out: tile parameters", "traces/hw/h200/variants/"),
    "shapes": ("held out: shapes", "traces/hw/h200/shapes/"),
    "sweep": ("parameter sweep", "traces/hw/h200/sweep/"),
}
NOT_PREDICTED = "not predicted"


@dataclass
class Point:
    set: str                    # a key of SETS
    ladder: str                 # "sgemm", "memory" (compare.ladder_of)
    label: str                  # the kernel, or "KERNEL-PARAMS" for a parameter set
    kernel: str
    size: str                   # "4096", or "MxNxK" for a non-square launch
    measured_ms: float          # the record's median CUDA-event time
    path: Path
    shape: tuple = ()           # (M, N, K)
    skip: str = ""              # why it is not predicted ("" when it is)
    predicted_ms: float | None = None
    counts_equal: int | None = None
    counts: int | None = None
    counts_differ: list = field(default_factory=list)
    top_stall: str | None = None
    h200_top_stall: str | None = None

    @property
    def key(self) -> tuple:
        return self.set, self.label, self.size

    @property
    def error_pct(self) -> float | None:
        return None if self.predicted_ms is None else 100.0 * (self.predicted_ms / self.measured_ms - 1.0)


def _ladder_rank(kernel: str) -> tuple:
    from gpusim.kernel.spec import LADDERS
    for i, ks in enumerate(LADDERS.values()):
        if kernel in ks:
            return i, ks.index(kernel)
    return len(LADDERS), 0


def validation_points(device: str = "h200") -> list[Point]:
    """One Point per committed record, measured time only (cheap: no simulation), in the tables' order."""
    from gpusim.hw.records import device_dir, load_record
    from gpusim.report.compare import REFERENCE_KERNELS, ladder_of
    d = device_dir(device)
    pts = []

    def point(set_, f, rec, label, size, skip=""):
        pts.append(Point(set_, ladder_of(label), label, rec["kernel"], size, float(rec["time_ms_median"]), f,
                         (rec["M"], rec["N"], rec["K"]), skip))
    for f in sorted(d.glob("*_*.json")):
        rec = load_record(f)
        if rec["kernel"] in REFERENCE_KERNELS or rec.size is None:
            continue
        point("ladder", f, rec, f.stem.rsplit("_", 1)[0], str(rec.size))
    for f in sorted((d / "variants").glob("*_*.json")):
        rec = load_record(f)
        point("variants", f, rec, f.stem.rsplit("_", 1)[0], str(rec.size))
    for f in sorted((d / "shapes").glob("*.json")):
        rec = load_record(f)
        point("shapes", f, rec, rec["kernel"], f"{rec['M']}x{rec['N']}x{rec['K']}")
    for f in sorted((d / "sweep").glob("*_*.json")):
        rec = load_record(f)
        spills = (rec.get("ptxas") or {}).get("spill_stores")
        point("sweep", f, rec, f.stem.rsplit("_", 1)[0], str(rec.size),
              f"{NOT_PREDICTED}: ptxas spills, and the spilling loop is timed in full (minutes)" if spills else "")
    order = list(SETS)

    def sort_key(p):
        dims = tuple(int(x) for x in p.size.split("x"))
        return order.index(p.set), p.ladder != "sgemm", p.ladder, _ladder_rank(p.kernel), p.label, dims
    return sorted(pts, key=sort_key)


def predict_point(p: Point) -> Point:
    """p with its prediction, counts and top stalls, by gpusim compare's functions (compare_records and
    timed_sim: gpusim.simulate, then gpusim.estimate.kernel_time.predict; point_summary)."""
    from gpusim.hw.records import load_record
    from gpusim.report.compare import compare_records, point_summary, timed_sim
    if p.skip:
        return p
    if p.set == "shapes":
        p.predicted_ms = timed_sim(p.kernel, None, shape=p.shape)["time_ms"]
        return p
    rows = compare_records([load_record(p.path)], sim_fn=timed_sim)
    s = point_summary(rows)[0]
    p.predicted_ms = s["time_ms"]
    p.counts_equal, p.counts, p.counts_differ = s["counts_equal"], s["counts"], list(s["counts_differ"])
    p.top_stall, p.h200_top_stall = s["top_stall"], s["h200_top_stall"]
    return p


def predict_points(points: list[Point], log=sys.stderr) -> list[Point]:
    t_all = time.perf_counter()
    for i, p in enumerate(points, 1):
        t0 = time.perf_counter()
        predict_point(p)
        said = p.skip or f"{p.predicted_ms:.5g} ms predicted, {p.measured_ms:.5g} measured"
        print(f"[{i}/{len(points)}] {p.set} {p.label} {p.size}: {said} ({time.perf_counter() - t0:.1f} s)",
              file=log, flush=True)
    print(f"{len(points)} points in {time.perf_counter() - t_all:.0f} s", file=log, flush=True)
    return points


def ms(x: float) -> str:
    return f"{x:.5g}"


def pct(x: float, sign: bool = True) -> str:
    return f"{x:+.1f} %" if sign else f"{x:.1f} %"


def _groups(points: list[Point]) -> dict[tuple, list[Point]]:
    out: dict = {}
    for p in points:
        out.setdefault((p.set, p.ladder), []).append(p)
    return out


def group_stats(pts: list[Point]) -> dict:
    """kernels, points, MAPE and max |error| (with its point) of the predicted points, top-stall and
    count agreement."""
    timed = [p for p in pts if p.predicted_ms is not None]
    errs = [abs(p.error_pct) for p in timed]
    worst = max(timed, key=lambda p: abs(p.error_pct)) if timed else None
    stalls = [p for p in timed if p.top_stall and p.h200_top_stall]
    counted = [p for p in timed if p.counts]
    return {"kernels": len({p.kernel for p in pts}), "points": len(timed),
            "mape": sum(errs) / len(errs) if errs else math.nan, "max": max(errs) if errs else math.nan,
            "worst": f"{worst.label}@{worst.size}" if worst else "-",
            "stall_agree": sum(p.top_stall == p.h200_top_stall for p in stalls), "stall_of": len(stalls),
            "counts_equal": sum(p.counts_equal for p in counted), "counts": sum(p.counts for p in counted)}


def _order_line(pts: list[Point]) -> str:
    from gpusim.report.compare import _rank_agreement
    said = []
    for size in dict.fromkeys(p.size for p in pts):
        at = [p for p in pts if p.size == size and p.predicted_ms is not None]
        same, tau = _rank_agreement({p.label: p.predicted_ms for p in at}, {p.label: p.measured_ms for p in at})
        if tau is not None:
            said.append(f"{size} {'the same' if same else f'differs (Kendall tau {tau:.2f})'}")
    return "Order of the kernels by time, predicted against the H200's: " + "; ".join(said) + "." if said else ""


POINT_HEADER = "| kernel | size | H200 ms | predicted ms | error | top stall, H200 / predicted | counts equal |"
SUMMARY_HEADER = ("| set | ladder | kernels | points | MAPE | max error | worst point | top stall agrees | "
                  "counts equal |")


def _point_row(p: Point) -> str:
    pred = ms(p.predicted_ms) if p.predicted_ms is not None else (p.skip.split(":")[0] or "-")
    err = pct(p.error_pct) if p.predicted_ms is not None else "-"
    stall = f"{p.h200_top_stall} / {p.top_stall}" if p.top_stall and p.h200_top_stall else "-"
    counts = f"{p.counts_equal}/{p.counts}" if p.counts else "-"
    return f"| {p.label} | {p.size} | {ms(p.measured_ms)} | {pred} | {err} | {stall} | {counts} |"


def render_validation(points: list[Point], date: str, commit: str) -> str:
    groups = _groups(points)
    out = ["# Validation: predicted against measured H200 time", "",
           f"Generated on {date} from commit {commit} by `{WRITE_COMMAND}` (gpusim/report/docs/); "
           "do not edit by hand.", "",
           "*Measured*: the median CUDA-event time of each committed record under traces/hw/h200/ (each record "
           "says how, when and on what it was made). *Predicted*: what `gpusim run` predicts for the same launch "
           "(gpusim.simulate, then gpusim.estimate.kernel_time.predict, through gpusim.report.compare.timed_sim, "
           "as `gpusim compare` runs it); *error* = predicted / measured - 1. *Top stall*: the largest warp "
           "state other than selected, the H200's and the prediction's, where the record has stall ratios: with "
           "the caches warm, as the timed launches find them, from ncu's PC samples where a warm-cache sample "
           "record exists (traces/hw/h200/pcsamp/, the whole memory ladder), else from the kernel record's ncu "
           "counters, whose run flushes the caches first (gpusim.report.compare.warm_stall_ratios). "
           "*Counts equal*: of the exact counts both sides have (instructions per opcode, requests, sectors, "
           "wavefronts, launch figures), those equal to ncu's to the record's digits "
           "(gpusim.report.compare.point_summary); `gpusim compare --detail` prints every one. MAPE and the "
           "maximum are over the predicted points of a line. The held-out sets (tile parameters, shapes) were "
           "recorded after the model's parameters were set; the sweep's SASS was compiled on demand.", "",
           "## Summary", "", "<!-- summary -->", SUMMARY_HEADER, "|---|---|---|---|---|---|---|---|---|"]
    for (set_, ladder), pts in groups.items():
        s = group_stats(pts)
        stall = f"{s['stall_agree']}/{s['stall_of']}" if s["stall_of"] else "-"
        counts = f"{s['counts_equal']}/{s['counts']}" if s["counts"] else "-"
        out.append(f"| {SETS[set_][0]} | {ladder} | {s['kernels']} | {s['points']} | {pct(s['mape'], False)} | "
                   f"{pct(s['max'], False)} | {s['worst']} | {stall} | {counts} |")
    out.append("")
    for set_, (title, folder) in SETS.items():
        mine = {k: v for k, v in groups.items() if k[0] == set_}
        if not mine:
            continue
        out += [f"## {'The ladders' if set_ == 'ladder' else title[0].upper() + title[1:]} ({folder})", ""]
        for (_, ladder), pts in mine.items():
            out += [f"### {ladder}", "", f"<!-- set:{set_}:{ladder} -->", POINT_HEADER,
                    "|---|---|---|---|---|---|---|"]
            out += [_point_row(p) for p in pts]
            out.append("")
            order = _order_line(pts)
            if order:
                out += [order, ""]
            skipped = [p for p in pts if p.skip]
            for p in skipped:
                out.append(f"{p.label} at {p.size}: {p.skip}.")
            if skipped:
                out.append("")
            differ = [p for p in pts if p.counts_differ]
            if differ:
                out += ["Counts that differ from ncu's (the H200's excess over the simulation):", ""]
                for p in differ:
                    said = ", ".join(f"{m} ({'n/a' if d is None else pct(d)})" for m, d in p.counts_differ)
                    out.append(f"- {p.label}@{p.size}: {said}")
                out.append("")
    return "\n".join(out).rstrip() + "\n"


def _table_rows(lines: list[str]) -> list[list[str]]:
    rows = []
    for ln in lines:
        if not ln.startswith("|"):
            break
        cells = [c.strip() for c in ln.strip().strip("|").split("|")]
        if cells and not set(cells[0]) <= {"-"}:
            rows.append(cells)
    return rows[1:]                               # less the header


def parse_validation(text: str) -> dict:
    """docs/validation.md read back: {"date", "commit", "summary": [row dicts], "points": [row dicts]}."""
    head = re.search(r"Generated on (\S+) from commit (\S+) ", text)
    lines = text.splitlines()
    out = {"date": head.group(1) if head else None, "commit": head.group(2) if head else None,
           "summary": [], "points": []}
    for i, ln in enumerate(lines):
        if ln.strip() == "<!-- summary -->":
            for c in _table_rows(lines[i + 1:]):
                out["summary"].append(dict(zip(("set", "ladder", "kernels", "points", "mape", "max", "worst",
                                                "stall", "counts"), c)))
        m = re.fullmatch(r"<!-- set:(\w+):(\w+) -->", ln.strip())
        if m:
            for c in _table_rows(lines[i + 1:]):
                out["points"].append(dict(zip(("label", "size", "measured", "predicted", "error", "stall", "counts"),
                                              c), set=m.group(1), ladder=m.group(2)))
    return out


def accuracy_table(validation_text: str) -> str:
    """README.md's accuracy block: one line per ladder and held-out set, from docs/validation.md's summary."""
    v = parse_validation(validation_text)
    lines = ["| ladder | kernels | points | MAPE | max error |", "|---|---|---|---|---|"]
    for r in v["summary"]:
        name = r["ladder"] if r["set"] == SETS["ladder"][0] else f"{r['ladder']}, {r['set']}"
        lines.append(f"| {name} | {r['kernels']} | {r['points']} | {r['mape']} | {r['max']} ({r['worst']}) |")
    lines += ["", f"Predicted against measured H200 time; every point in docs/validation.md (generated on {v['date']} "
                  f"from commit {v['commit']} by `{WRITE_COMMAND}`)."]
    return "\n".join(lines) + "\n"


def stale_validation(text: str, points: list[Point] | None = None) -> list[str]:
    """Where docs/validation.md's points or measured times differ from the committed records (cheap)."""
    points = validation_points() if points is None else points
    have = {(r["set"], r["label"], r["size"]): r["measured"] for r in parse_validation(text)["points"]}
    want = {p.key: ms(p.measured_ms) for p in points}
    out = []
    for k in sorted(set(want) - set(have)):
        out.append(f"{VALIDATION_MD}: no row for {k[1]} at {k[2]} ({k[0]}), which has a record")
    for k in sorted(set(have) - set(want)):
        out.append(f"{VALIDATION_MD}: a row for {k[1]} at {k[2]} ({k[0]}), which has no record")
    for k in sorted(set(have) & set(want)):
        if have[k] != want[k]:
            out.append(f"{VALIDATION_MD}: {k[1]} at {k[2]} ({k[0]}) measured {have[k]} ms, the record {want[k]}")
    return out


def git_commit(root: Path = SOURCE_ROOT) -> str:
    try:
        r = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True,
                           timeout=20)
        return r.stdout.strip() if r.returncode == 0 and r.stdout.strip() else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"
