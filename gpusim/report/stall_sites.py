"""Where warps wait: warp-cycles by (instruction, state), simulated against ncu's PC samples.

ncu's PC sampling (records `traces/hw/<device>/pcsamp/pcsamp_<kernel>_<size>.json`, made by
`gpusim.hw.pcsamp`) samples one warp per SMSP every few thousand cycles and notes the
instruction it is at and its state; summed, the samples are proportional to warp-cycles spent
in each state at each instruction. The engine keeps the same sum exactly (TimingResult
.op_state_cycles: the state's cycles go to the instruction the warp issues next, or to the one
it issued when selected). Both sides are grouped by opcode (the base mnemonic; memory
instructions keep their width, LDS vs LDS.128) and shown as shares of all warp-cycles, so a
window of a few K-trips compares with a whole launch.
"""
from __future__ import annotations

import json

from gpusim.hw.records import device_dir
from gpusim.timing.control_codes import trace_name

PREFIX = "smsp__pcsamp_warps_issue_stalled_"


def group(op: str) -> str:
    """The opcode group both sides are summed into."""
    name = trace_name(op)
    base = name.split(".", 1)[0]
    return name if base in ("LDG", "STG", "LDS", "STS") else base


def pcsamp_path(kernel: str, size: int, device: str = "h200"):
    return device_dir(device) / "pcsamp" / f"pcsamp_{kernel}_{size}.json"


def load_pcsamp(kernel: str, size: int, device: str = "h200") -> dict | None:
    """{opcode group: {state: samples}} from the record, None when there is none (load_pcsamp_by_pc's
    samples summed by the opcode of each PC's SASS)."""
    got = load_pcsamp_by_pc(kernel, size, device)
    if got is None:
        return None
    per_pc, sass, _ = got
    out: dict = {}
    for pc, states in per_pc.items():
        words = sass.get(pc, "?").split()
        op = words[1] if words and words[0].startswith("@") and len(words) > 1 else (words[0] if words else "?")
        g = out.setdefault(group(op), {})
        for state, v in states.items():
            g[state] = g.get(state, 0.0) + v
    return out


def regroup(op_state_cycles: dict) -> dict:
    """The engine's {trace opcode: {state: cycles}} summed into opcode groups."""
    out: dict = {}
    for op, states in op_state_cycles.items():
        g = out.setdefault(group(op), {})
        for s, v in states.items():
            g[s] = g.get(s, 0.0) + float(v)
    return out


def shares(by_group: dict) -> dict:
    """{(group, state): % of all warp-cycles}."""
    total = sum(v for states in by_group.values() for v in states.values())
    if total <= 0:
        return {}
    return {(g, s): 100.0 * v / total for g, states in by_group.items() for s, v in states.items()}


def site_rows(sim: dict, hw: dict, top: int = 12) -> list:
    """[(group, state, sim %, hw %)] for the sites with the largest share on either side."""
    a, b = shares(sim), shares(hw)
    keys = sorted(set(a) | set(b), key=lambda k: (-max(a.get(k, 0.0), b.get(k, 0.0)), k))
    return [(g, s, a.get((g, s), 0.0), b.get((g, s), 0.0)) for g, s in keys[:top]]


def not_issued_split(kernel: str, size: int, device: str = "h200") -> dict | None:
    """{state: (share of all samples %, share of the state's samples taken in a cycle where the warp's
    scheduler issued nothing %)} from the record's totals (CUPTI: such "latency samples" are taken when
    no instruction was issued from the sampled warp's scheduler), None when there is no record."""
    p = pcsamp_path(kernel, size, device)
    if not p.exists():
        return None
    tot = json.loads(p.read_text())["totals"]
    allv = tot["smsp__pcsamp_sample_count"]
    out = {}
    for metric, v in tot.items():
        if not metric.startswith(PREFIX) or metric.endswith("_not_issued") or v <= 0:
            continue
        state = metric[len(PREFIX):]
        ni = tot.get(metric + "_not_issued", 0.0)
        out["no_instruction" if state == "no_instructions" else state] = (100.0 * v / allv, 100.0 * ni / v)
    return out


# ---------------------------------------------------------------- per instruction (the --trace window)

def window_pc_cycles(window) -> dict:
    """The engine's {PC: {state: warp cycles}} of a --trace window (gpusim.estimate.window): each stall
    interval of its state log at the instruction the warp waited at, and one selected cycle per issued
    instruction. Empty for a trace without PCs (the Python front-end's) or an incomplete log."""
    import numpy as np
    from gpusim.timing.states import STATES
    t, rows = window.timing, window.trace.rows
    if not window.log_complete or "pc" not in rows.dtype.names or not len(rows) or (rows["pc"] < 0).all():
        return {}
    pcs = rows["pc"][t.trace_row]           # each lowered row's PC
    log = t.state_log
    out: dict = {}
    for k, name in enumerate(STATES):
        sel = log[:, 1] == k
        if not sel.any():
            continue
        pc, cyc = pcs[log[sel, 4]], log[sel, 3] - log[sel, 2]
        u, inv = np.unique(pc, return_inverse=True)
        for p, v in zip(u, np.bincount(inv, weights=cyc)):
            out.setdefault(int(p), {})[name] = float(v)
    u, n = np.unique(pcs[t.issue_cycle >= 0], return_counts=True)
    for p, v in zip(u, n):
        d = out.setdefault(int(p), {})
        d["selected"] = d.get("selected", 0.0) + float(v)
    return out


def load_pcsamp_by_pc(kernel: str, size: int, device: str = "h200"):
    """({PC: {state: samples}}, {PC: SASS text}, the record's cache control) from the PC-sample record,
    None when there is none. Samples that ncu takes in a cycle where the warp issued nothing
    (`..._not_issued`) are a subset of their state's and are not added again."""
    p = pcsamp_path(kernel, size, device)
    if not p.exists():
        return None
    rec = json.loads(p.read_text())
    out: dict = {}
    for metric, per_pc in rec["samples_per_pc"].items():
        if not metric.startswith(PREFIX) or metric.endswith("_not_issued"):
            continue
        state = metric[len(PREFIX):]
        state = "no_instruction" if state == "no_instructions" else state
        for pc, v in per_pc.items():
            d = out.setdefault(int(pc, 16), {})
            d[state] = d.get(state, 0.0) + float(v)
    return out, {int(pc, 16): text for pc, text in rec["sass"].items()}, rec.get("cache_control", "all")


def pc_rows(sim: dict, hw: dict | None, top: int = 12) -> list:
    """[(PC, sim % of all warp cycles, hw % of all samples or None, sim's top state, hw's top state or
    None)] for the instructions with the largest share on either side."""
    def pct(d):
        tot = sum(sum(s.values()) for s in d.values())
        return {pc: 100.0 * sum(s.values()) / tot for pc, s in d.items()} if tot > 0 else {}

    def top_state(d, pc):
        s = d.get(pc)
        return max(s, key=s.get) if s else None
    a, b = pct(sim), pct(hw or {})
    keys = sorted(set(a) | set(b), key=lambda pc: (-max(a.get(pc, 0.0), b.get(pc, 0.0)), pc))[:top]
    return [(pc, a.get(pc, 0.0), b.get(pc, 0.0) if hw else None, top_state(sim, pc),
             top_state(hw, pc) if hw else None) for pc in sorted(keys)]
