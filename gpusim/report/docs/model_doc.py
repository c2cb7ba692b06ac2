"""docs/model.md's generated tables: each field of the GPU preset in one unit of the timing model, with
its value, unit and source read from gpusim/arch/presets.py (tokenize and ast), a few constants of the
code, and the warp states."""
from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass, field, fields as dc_fields
from pathlib import Path

from gpusim.paths import SOURCE_ROOT
from gpusim.report.docs.blocks import PRESET

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
        "imad_latency_cycles", "alu_latency_cycles", "xu_latency_cycles", "shfl_latency_cycles",
        "s2r_latency_cycles", "ldc_latency_cycles", "other_latency_cycles", "special_ops_through_mio",
        "shfl_shared_pipe_cycles")),
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
        "dram_write_latency_cycles_per_tbps", "dram_mix_latency_cycles_per_tbps2",
        "l2_write_gsectors_per_s", "l2_partial_sector_write_gsectors_per_s", "l2_partial_line_write_gsectors_per_s",
        "l2_filled_line_write_gsectors_per_s", "l2_writes_share_read_bandwidth", "l2_requests_in_order",
        "l2_write_buffer_sectors", "l2_stream_resident_bytes")),
    "barrier": ("Barrier unit", ("bar_sync_arrive_cycles", "bar_sync_release_cycles")),
    "kernel": ("Whole-kernel estimate", ("launch_overhead_us", "cta_dispatch_ns", "cta_slot_gap_ns",
                                               "cta_first_round_ns", "launch_end_ns", "sm_l2_latency_spread",
                                               "atomic_same_address_ns")),
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
                raise SystemExit(f"{path} has no constant {nm}: update CONSTANTS in gpusim/report/docs/model_doc.py")
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
                    f"gpusim/report/docs/model_doc.py ({', '.join(UNITS)}), where docs/model.md describes it")
    if twice:
        said.append(f"field(s) {', '.join(twice)} are in more than one unit of UNITS (gpusim/report/docs/model_doc.py)")
    if unknown:
        said.append(f"UNITS (gpusim/report/docs/model_doc.py) lists {', '.join(unknown)}, which gpusim.arch.GPU does not have")
    return "; ".join(said)
