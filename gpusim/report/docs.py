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

    python3 -m gpusim.report.docs --write                 # model.md's tables, README's accuracy block
    python3 -m gpusim.report.docs --write --validation    # also every prediction again (tens of minutes)
    python3 -m gpusim.report.docs --check                 # exit 1 naming every stale block

The predictions are not cached anywhere (`gpusim compare` runs them afresh too), which is why
--validation is a separate switch; --check compares docs/validation.md's points and measured times with
the records (cheap) but not its predictions (tests/report/test_docs.py's slow test does).
"""
from __future__ import annotations

import argparse
import ast
import datetime
import io
import math
import re
import subprocess
import sys
import time
import tokenize
from dataclasses import dataclass, field, fields as dc_fields
from pathlib import Path

from gpusim.paths import SOURCE_ROOT, write_atomic

PRESET = "H200"                                   # the preset whose values the tables give
MODEL_MD = Path("docs/model.md")
VALIDATION_MD = Path("docs/validation.md")
README_MD = Path("README.md")
WRITE_COMMAND = "python3 -m gpusim.report.docs --write --validation"

BLOCK = re.compile(r"<!-- generated:(?P<key>[\w:.-]+) -->\n(?P<body>.*?)<!-- end generated -->", re.S)

# Every field of gpusim.arch.GPU in exactly one unit of docs/model.md (tests/report/test_docs.py holds it):
# unit key -> (its section's title in docs/model.md, the fields its table lists, in that order).
UNITS = {
    "sm": ("SM, clocks and occupancy", (
        "name", "sm_version", "sm_count", "smsp_per_sm", "warp_size_threads", "max_warps_per_sm",
        "max_threads_per_sm", "max_blocks_per_sm", "max_threads_per_block", "regs_per_sm", "max_regs_per_thread",
        "reg_alloc_unit_per_warp", "min_regs_per_thread", "shared_per_sm_bytes", "shared_per_block_optin_bytes",
        "shared_per_block_static_bytes", "shared_reserved_per_block_bytes", "shared_alloc_unit_bytes",
        "sm_clock_max_mhz")),
    "scheduler": ("Warp scheduler", ("issue_per_smsp_per_cycle",)),
    "scoreboard": ("Scoreboard, dependency barriers and ptxas's control codes", ("mem_issue_interval_cycles",)),
    "math": ("Math pipes", (
        "fp32_lanes_per_smsp", "fma_pipe_warp_inst_per_smsp_cycle", "fma_subpipe_issue_interval_cycles",
        "alu_issue_interval_cycles", "xu_issue_interval_cycles", "ffma_dependent_latency_cycles",
        "imad_latency_cycles", "alu_latency_cycles", "xu_latency_cycles", "other_latency_cycles")),
    "registers": ("Register banks and dispatch", (
        "fma_warp_switch_bubble", "register_read_lead_cycles")),
    "lsu": ("LSU: the MIO and LG queues", (
        "mio_queue_depth", "mio_sm_queue_depth", "lg_queue_depth", "lg_sm_queue_depth", "lg_sm_untaken_depth",
        "lsu_queue_in_order", "lsu_queue_read_ahead", "queue_entry_until_return")),
    "shared": ("Shared-memory pipe", (
        "shared_banks", "shared_wavefronts_per_sm_cycle", "lds_latency_cycles", "warp_shared_cycles_per_wavefront",
        "shared_writeback_regs_per_sm_cycle", "shared_and_global_share_data_pipe", "data_pipe_clients_take_turns")),
    "l1tex": ("L1TEX", (
        "l1_shared_total_bytes", "sector_bytes", "line_bytes", "l1_hit_latency_cycles", "l1_requests_per_sm_cycle",
        "l1_sectors_per_sm_cycle", "l1_data_lines_per_cycle", "l1_data_wavefronts_per_sm_cycle",
        "smsp_l1_cycles_per_line", "lg_sm_miss_depth", "lg_sm_miss_sectors", "pending_hit_entry_until_fill")),
    "memory": ("L2 and DRAM", (
        "l2_bytes", "l2_hit_latency_cycles", "dram_latency_ns", "l2_to_l1_bytes_per_sm_cycle", "l2_bandwidth_gbps",
        "dram_bandwidth_gbps", "dram_achieved_bandwidth_gbps", "dram_copy_bandwidth_gbps",
        "l2_write_gsectors_per_s", "l2_partial_sector_write_gsectors_per_s", "l2_partial_line_write_gsectors_per_s",
        "l2_stream_resident_bytes")),
    "barrier": ("Barrier unit", ("bar_sync_arrive_cycles", "bar_sync_release_cycles")),
    "kernel": ("Whole-kernel estimate", ("launch_overhead_us",)),
}

# Constants of the code that are parameters of the model too (not preset fields: `--set` cannot change
# them): unit -> [(file, name, unit of the value)], listed under the unit's preset fields.
CONSTANTS = {
    "registers": [("gpusim/timing/register_banks.py", "BANKS", "banks per SMSP")],
    "memory": [("gpusim/memory/cache.py", "CARVEOUTS_KB", "KB"),
               ("gpusim/memory/cache.py", "L1_WAYS", "ways"),
               ("gpusim/memory/cache.py", "L2_WAYS", "ways"),
               ("gpusim/memory/cache.py", "L2_EFFECTIVE_FRACTION", "of l2_bytes"),
               ("gpusim/memory/cache.py", "WINDOW_LINES", "line accesses"),
               ("gpusim/memory/cache.py", "WINDOW_BUDGET", "line accesses"),
               ("gpusim/memory/cache.py", "COUNTED_WINDOWS", "windows"),
               ("gpusim/memory/cache.py", "WARM_CAPACITIES", "L2 capacities")],
    "kernel": [("gpusim/estimate/kernel_time.py", "W0", "trips"),
               ("gpusim/estimate/kernel_time.py", "W1", "trips"),
               ("gpusim/estimate/kernel_time.py", "W2", "trips"),
               ("gpusim/estimate/kernel_time.py", "SAMPLING_TOLERANCE", "of the cycles")],
}

NO_SOURCE = "(no source)"


# ----------------------------------------------------------------------------------------------------
# comments beside assignments, read with tokenize (the text) and ast (where each assignment is)

@dataclass
class Item:
    """One assignment of a source file: a dataclass field, a keyword of a call or a module constant."""
    name: str
    first: int                  # its first and last line (1-based)
    last: int
    value: object = None        # the literal value where ast can evaluate it
    trailing: str = ""          # the comment on its own line(s), and full-line comments continuing it
    block: list = field(default_factory=list)   # the full-line comments right above it (section headers left out)


def _comment_lines(source: str) -> tuple[dict, set]:
    """({line: comment text without '#'}, lines that hold nothing but a comment)."""
    comments, alone = {}, set()
    lines = source.splitlines()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            row = tok.start[0]
            comments[row] = tok.string.lstrip("#").strip()
            if lines[row - 1].lstrip().startswith("#"):
                alone.add(row)
    return comments, alone


def _drop_headers(block: list) -> list:
    """A comment block less its section headers (`# --- SM structure ---`, possibly over two lines)."""
    out, inside = [], False
    for text in block:
        if text.startswith("---"):
            inside = True
        if not inside:
            out.append(text)
        if inside and text.endswith("---"):
            inside = False
    return out


def _attach_comments(items: list, source: str) -> list:
    comments, alone = _comment_lines(source)
    starts = {it.first for it in items}
    for i, it in enumerate(items):
        it.trailing = " ".join(comments[r] for r in range(it.first, it.last + 1)
                               if r in comments and r not in alone)
        above, r = [], it.first - 1
        while r in alone:
            above.insert(0, comments[r])
            r -= 1
        it.block = _drop_headers(above)
        # full-line comments right below a commented item that lead to no other item continue its comment
        below, r = [], it.last + 1
        while r in alone:
            below.append(comments[r])
            r += 1
        if it.trailing and below and r not in starts:
            it.trailing = " ".join([it.trailing] + below)
    # an uncommented item right below another (no blank line between) shares the block above that one
    for prev, it in zip(items, items[1:]):
        if not it.trailing and not it.block and it.first == prev.last + 1:
            it.block = prev.block
    return items


def _literal(node):
    try:
        return ast.literal_eval(node)
    except ValueError:
        return None


def class_fields(source: str, cls: str = "GPU") -> dict[str, Item]:
    """The annotated fields of dataclass `cls` in `source`, with their comments."""
    tree = ast.parse(source)
    node = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)
    items = [Item(n.target.id, n.lineno, n.end_lineno, _literal(n.value) if n.value is not None else None)
             for n in node.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)]
    return {it.name: it for it in _attach_comments(items, source)}


def call_keywords(source: str, target: str) -> dict[str, Item]:
    """The keyword arguments of the call assigned to `target` at module level (`H200 = GPU(...)`)."""
    tree = ast.parse(source)
    node = next(n for n in tree.body if isinstance(n, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == target for t in n.targets))
    items = [Item(k.arg, k.lineno, k.end_lineno, _literal(k.value)) for k in node.value.keywords]
    return {it.name: it for it in _attach_comments(items, source)}


def module_constants(source: str) -> dict[str, Item]:
    """Module-level `NAME = value` and `A, B = a, b` assignments, with their comments."""
    items = []
    for n in ast.parse(source).body:
        if not isinstance(n, ast.Assign) or len(n.targets) != 1:
            continue
        t = n.targets[0]
        if isinstance(t, ast.Name):
            items.append(Item(t.id, n.lineno, n.end_lineno, _literal(n.value)))
        elif isinstance(t, ast.Tuple) and isinstance(n.value, ast.Tuple) and len(t.elts) == len(n.value.elts):
            items += [Item(e.id, n.lineno, n.end_lineno, _literal(v))
                      for e, v in zip(t.elts, n.value.elts) if isinstance(e, ast.Name)]
    return {it.name: it for it in _attach_comments(items, source)}


TAG = re.compile(r"\[[A-Z]+(?:-\d+)?\]|\((?:unverified|not measured)[^)]*\)")
RECORD = re.compile(r"(?<![\w/.*-])(?:[\w*-]+/)*[\w*-]+\.(?:json|sass)\b|traces/hw/h200/\w+/|HARDWARE\.md s\.\d+")


def _first_sentence(text: str) -> str:
    m = re.search(r"\.\s|:\s", text)
    return text[:m.start() + (1 if text[m.start()] == "." else 0)] if m else text


def source_text(*items: Item | None) -> str:
    """What the comments of these items (a field in the class, then in the preset) say of its source: their
    own comments in full, then the tags and record names of the blocks above them that those leave out; a
    block with neither gives its first sentence; no comment at all gives NO_SOURCE."""
    items = [it for it in items if it is not None]
    parts = []
    for it in items:
        if it.trailing and it.trailing not in " ; ".join(parts):
            parts.append(it.trailing)
    said = " ".join(parts)
    extra = []
    for it in items:
        text = " ".join(it.block)
        for m in list(TAG.finditer(text)) + list(RECORD.finditer(text)):
            if m.group(0) not in said and m.group(0) not in extra:
                extra.append(m.group(0))
    tags = [e for e in extra if TAG.fullmatch(e)]
    records = [e for e in extra if not TAG.fullmatch(e)]
    more = " ".join(tags + ([", ".join(records)] if records else []))
    if parts and more:
        return "; ".join(parts) + "; also " + more
    if parts or more:
        return "; ".join(parts) or more
    blocks = [" ".join(it.block) for it in items if it.block]
    return _first_sentence(blocks[0]) if blocks else NO_SOURCE


# ----------------------------------------------------------------------------------------------------
# units and values

_SUFFIX_UNITS = (("_gsectors_per_s", "10^9 sectors/s"), ("_gbps", "GB/s"), ("_mhz", "MHz"), ("_ns", "ns"),
                 ("_us", "µs"), ("_bytes", "bytes"), ("_cycles", "cycles"), ("_threads", "threads"),
                 ("_depth", "entries"), ("_sectors", "sector entries"), ("_issues", "issues"),
                 ("_ahead", "entries"), ("_banks", "4-byte banks"), ("_count", "SMs"), ("_version", "CC x 10"))
_NUMERATOR = {"issue": "warp-inst", "inst": "warp-inst", "regs": "registers", "unit": "registers",
              "smsp": "SMSPs", "blocks": "CTAs"}
_DENOMINATOR = {"sm": "SM", "smsp": "SMSP", "sm_cycle": "SM cycle", "smsp_cycle": "SMSP cycle", "block": "CTA"}


def unit_of(name: str, kind: str = "int") -> str:
    """A field's unit, from its name (the preset's convention: `_cycles`, `_bytes`, `_ns`, `X_per_Y`...)."""
    if kind == "bool":
        return "switch"
    if kind == "str":
        return "choice" if name != "name" else "-"
    for suffix, unit in _SUFFIX_UNITS:
        if name.endswith(suffix):
            return unit
    if "_per_" in name:
        head, *rest = name.split("_per_")
        word = head.split("_")[-1]
        return " / ".join([_NUMERATOR.get(word, word)] + [_DENOMINATOR.get(r, r) for r in rest])
    return "-"


def format_value(value, name: str = "") -> str:
    if isinstance(value, bool):
        return "true" if value else "false"       # as `--set NAME=true` takes it
    if isinstance(value, int):
        text = f"{value:,}"
        if name.endswith("_bytes") and value >= 2 ** 20 and value % 2 ** 20 == 0:
            text += f" ({value // 2 ** 20} MiB)"
        elif name.endswith("_bytes") and value >= 2 ** 10 and value % 2 ** 10 == 0:
            text += f" ({value // 2 ** 10} KiB)"
        return text
    if isinstance(value, float):
        return f"{value:.10g}"
    return str(value)


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _read(rel: str, root: Path) -> str:
    return (root / rel).read_text()


def params_table(unit: str, root: Path = SOURCE_ROOT) -> str:
    """The generated block of `unit`: its preset fields (name, the preset's value, unit, source), then the
    code's constants that belong to it."""
    from gpusim.arch import presets
    presets_src = _read("gpusim/arch/presets.py", root)
    in_class, in_preset = class_fields(presets_src), call_keywords(presets_src, PRESET)
    gpu = getattr(presets, PRESET)
    kinds = {f.name: f.type if isinstance(f.type, str) else f.type.__name__ for f in dc_fields(presets.GPU)}
    title, names = UNITS[unit]
    lines = [f"| field | {PRESET} | unit | source |", "|---|---|---|---|"]
    for nm in names:
        lines.append(f"| `{nm}` | {_cell(format_value(getattr(gpu, nm), nm))} | {unit_of(nm, kinds[nm])} | "
                     f"{_cell(source_text(in_class.get(nm), in_preset.get(nm)))} |")
    consts = CONSTANTS.get(unit, [])
    if consts:
        lines += ["", "Constants of the code (not preset fields):", "",
                  "| constant | value | unit | source |", "|---|---|---|---|"]
        parsed = {}
        for path, nm, u in consts:
            items = parsed.setdefault(path, module_constants(_read(path, root)))
            if nm not in items:
                raise SystemExit(f"{path} has no constant {nm}: update CONSTANTS in gpusim/report/docs.py")
            it = items[nm]
            module = path[:-3].replace("/", ".")
            lines.append(f"| `{module}.{nm}` | {_cell(format_value(it.value, nm))} | {u} | "
                         f"{_cell(source_text(it))} |")
    return "\n".join(lines) + "\n"


def states_table(root: Path = SOURCE_ROOT) -> str:
    """The warp states (gpusim/timing/states.py: STATES and the comment beside each) and their ncu metric."""
    src = _read("gpusim/timing/states.py", root)
    comments, _ = _comment_lines(src)
    node = next(n for n in ast.parse(src).body if isinstance(n, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "STATES" for t in n.targets))
    lines = ["| state | what the warp is doing | ncu metric (per issued instruction) |", "|---|---|---|"]
    for elt in node.value.elts:
        metric = f"`smsp__average_warps_issue_stalled_{elt.value}_per_issue_active.ratio`"
        lines.append(f"| `{elt.value}` | {_cell(comments.get(elt.lineno, NO_SOURCE))} | {metric} |")
    return "\n".join(lines) + "\n"


def unassigned_fields() -> tuple[list, list, list]:
    """(GPU fields in no unit, fields in more than one, names in UNITS that are no GPU field)."""
    from gpusim.arch import GPU
    names = [f.name for f in dc_fields(GPU)]
    listed = [nm for _, fs in UNITS.values() for nm in fs]
    return ([nm for nm in names if nm not in listed],
            sorted({nm for nm in listed if listed.count(nm) > 1}),
            [nm for nm in listed if nm not in names])


def model_blocks(root: Path = SOURCE_ROOT) -> dict[str, str]:
    """Every generated block of docs/model.md: key -> body."""
    missing, twice, unknown = unassigned_fields()
    if missing or twice or unknown:
        raise SystemExit(_unit_complaint(missing, twice, unknown))
    out = {f"params:{u}": params_table(u, root) for u in UNITS}
    out["states"] = states_table(root)
    return out


def _unit_complaint(missing, twice, unknown) -> str:
    said = []
    if missing:
        said.append(f"GPU field(s) {', '.join(missing)} are in no unit's table: add each to one unit of UNITS in "
                    f"gpusim/report/docs.py ({', '.join(UNITS)}), where docs/model.md describes it")
    if twice:
        said.append(f"field(s) {', '.join(twice)} are in more than one unit of UNITS (gpusim/report/docs.py)")
    if unknown:
        said.append(f"UNITS (gpusim/report/docs.py) lists {', '.join(unknown)}, which gpusim.arch.GPU does not have")
    return "; ".join(said)


# ----------------------------------------------------------------------------------------------------
# blocks in a markdown file

def read_blocks(text: str) -> dict[str, str]:
    return {m.group("key"): m.group("body") for m in BLOCK.finditer(text)}


def replace_blocks(text: str, bodies: dict[str, str]) -> str:
    """`text` with the body of every block named in `bodies` replaced (the others kept as they are)."""
    def sub(m):
        key = m.group("key")
        body = bodies.get(key, m.group("body"))
        return f"<!-- generated:{key} -->\n{body}<!-- end generated -->"
    return BLOCK.sub(sub, text)


def stale_blocks(text: str, bodies: dict[str, str], where: str) -> list[str]:
    """Why the generated blocks of `text` (file `where`) differ from `bodies`: one line each."""
    have = read_blocks(text)
    out = [f"{where}: block {k} is stale" for k in bodies if k in have and have[k] != bodies[k]]
    out += [f"{where}: no block {k} (add `<!-- generated:{k} -->` and `<!-- end generated -->` where it belongs)"
            for k in bodies if k not in have]
    out += [f"{where}: block {k} has no generator" for k in have if k not in bodies]
    counts = {k: len(re.findall(rf"<!-- generated:{re.escape(k)} -->", text)) for k in bodies}
    out += [f"{where}: block {k} appears {n} times" for k, n in counts.items() if n > 1]
    return out


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
           f"Generated on {date} from commit {commit} by `{WRITE_COMMAND}` (gpusim/report/docs.py); "
           "do not edit by hand.", "",
           "*Measured*: the median CUDA-event time of each committed record under traces/hw/h200/ (each record "
           "says how, when and on what it was made). *Predicted*: what `gpusim run` predicts for the same launch "
           "(gpusim.simulate, then gpusim.estimate.kernel_time.predict, through gpusim.report.compare.timed_sim, "
           "as `gpusim compare` runs it); *error* = predicted / measured - 1. *Top stall*: the largest warp "
           "state other than selected, ncu's and the prediction's, where the record has ncu's stall ratios. "
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


# ----------------------------------------------------------------------------------------------------
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
    print("docs/model.md, docs/validation.md and README.md's accuracy block are current")
    return 0


if __name__ == "__main__":
    sys.exit(main())
