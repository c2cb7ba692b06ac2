"""ptxas's stall counts, read from the control codes of the recorded SASS.

Every sm_90 instruction carries, in bits 41-44 of its second 64-bit word, the number of
cycles the warp must wait before it may issue its next instruction (the "stall count"; bits
45-48 hold the yield flag and the dependency barriers, which we do not use). ptxas sets it
from what it knows at compile time: fixed-latency dependencies (an IMAD read 4-5 cycles
later), back-to-back memory instructions (4), the cycles a branch needs. Nsight Compute
reports the cycles a warp spends in these counts as `wait` ("waiting on a fixed latency
execution dependency"); over the ladder at 4096 the dynamic sum of (stall count - 1) per
instruction is within 0.1 of ncu's wait per issue for seven of the eight kernels.

The trace does not know which SASS instruction each row is (a kernel issues its integer
and control instructions as per-block counts, `k.ops`, and its loads and FFMAs in an order
close to, not equal to, ptxas's), so a row gets the mean stall count of the SASS instructions
with its opcode, each weighted by how often one thread executes it at the launch's M, N, K
(the outline's trip formulas). A warp's total of stall-count cycles is then the SASS's, and
no row's count depends on where the trace put it. (Keying by the successor's kind as well
was tried: a row grouped with others of its opcode then takes the count of a rare SASS
context, e.g. naive's IMAD.WIDE followed by an integer op, 10 cycles, where the loop's are 3-5;
the engine's wait for naive and coalesced rose to 4.2 per issue against ncu's 1.5 and 2.2.)
"""
from __future__ import annotations

import functools
import json
import re

import numpy as np
from numba import njit

from gpusim.jit import guard_cache
from gpusim.paths import STATIC_DIR
from gpusim.kernel.opcodes import mem_opcode

_LINE = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;\s*/\*\s*0x[0-9a-f]+\s*\*/")
_HI = re.compile(r"^\s*/\*\s*(0x[0-9a-f]+)\s*\*/\s*$")


def stall_count(hi_word: int) -> int:
    """The stall count of an instruction from the second 64-bit word of its encoding."""
    return (hi_word >> 41) & 0xF


def _instructions(text: str):
    """(offset, opcode with modifiers, second 64-bit word) of each instruction of a cuobjdump -sass
    listing (a predicate guard dropped), NOPs kept."""
    lines = text.splitlines()
    for i, ln in enumerate(lines):
        m = _LINE.match(ln)
        if not m or i + 1 >= len(lines):
            continue
        hi = _HI.match(lines[i + 1])
        if not hi:
            continue
        body = re.sub(r"^@!?U?P[T\d]+\s+", "", m.group(2))
        yield int(m.group(1), 16), body.split()[0], int(hi.group(1), 16)


def parse_sass(text: str) -> list[tuple[int, str, int]]:
    """[(offset, opcode with modifiers, stall count)] of a cuobjdump -sass listing, NOPs kept."""
    return [(off, op, stall_count(w)) for off, op, w in _instructions(text)]


def barriers(text: str) -> list[tuple[int, str, int, int, int]]:
    """[(offset, opcode, write barrier, read barrier, wait mask)] of a cuobjdump -sass listing: bits
    46-48 / 49-51 of the second word name the dependency barrier (0-5; 7 none) that an instruction's
    result / source-register read sets, bits 52-57 the barriers it waits on."""
    return [(off, op, (w >> 46) & 7, (w >> 49) & 7, (w >> 52) & 0x3F) for off, op, w in _instructions(text)]


def _record_barriers(kernel: str, params_items: tuple):
    """(record json, barriers() of its SASS) for the kernel, None without a record."""
    got = _record(kernel, params_items)
    return None if got is None else (got[0], barriers(got[1]))


@functools.lru_cache(maxsize=None)
def _scoreboards(kernel: str, params_items: tuple):
    got = _record_barriers(kernel, params_items)
    if got is None:
        return None
    rec, insns = got
    best: dict = {}          # class -> (dynamic loads of the block, barriers its loads use)
    for b in rec["outline"]:
        w = _trips(b, 4096, 4096, 4096)      # (only to pick the block where most loads run)
        lo, hi = int(b["start"], 16), int(b["end"], 16)
        used: dict = {"global": set(), "shared": set()}
        n: dict = {"global": 0, "shared": 0}
        for off, op, wr, _, _ in insns:
            cls = "global" if op.startswith("LDG") else "shared" if op.startswith("LDS") else None
            if cls and lo <= off <= hi:
                n[cls] += 1
                if wr != 7:
                    used[cls].add(wr)
        for cls in used:
            if used[cls] and w * n[cls] > best.get(cls, (0, 0))[0]:
                best[cls] = (w * n[cls], len(used[cls]))
    return {cls: k for cls, (_, k) in best.items()}


def scoreboard_table(kernel: str, params: dict) -> dict | None:
    """{"global": k, "shared": k}: how many distinct dependency barriers ptxas gives the global /
    shared loads of the kernel's block where most of them run (its SASS record and outline; None
    without one). A warp has six; when more loads are in flight than the class has barriers, ptxas
    puts the rest on one, whose consumer then waits for all of them:
    * regblock's 12 tile loads sit on SB2, SB3, SB4 and nine on SB5, and ncu's PC samples show its
      4th STS waiting 2.2x as long as its 1st and the 5th-12th not at all (traces/hw/h200/pcsamp/);
    * a burst of 16 LDS.128 sits on SB0-SB4 and eleven on SB5 (traces/hw/h200/micro/
      stamp_lds128cf_16.sass): the IADD3 that reads the 6th waits for the whole burst, and only
      with that does the engine time lds_bursts_cf.json's bursts as the H200 ran them
      (tests/timing/test_shared_return.py).
    ptxas also leaves a shared load without a barrier when a later one's wait covers it (in-order
    return, micro/lds_wide_return.json's SASS); joining the latest barrier has the same effect."""
    return _scoreboards(kernel, tuple(sorted(params.items())))


def global_scoreboards(kernel: str, params: dict) -> dict | None:
    """{"global": k} of scoreboard_table: the global loads' barriers only (a diagnosis: every shared
    load then waits for its own data alone, as the engine had it before the shared loads' barriers
    were read; bench/bench_timing.py --scoreboards global)."""
    got = _scoreboards(kernel, tuple(sorted(params.items())))
    return {"global": got["global"]} if got and "global" in got else None


_MEM_BASES = ("LDG", "STG", "LDS", "STS")
_RB_SCAN = 256           # instructions searched past a producer for the one that waits on its read barrier


@functools.lru_cache(maxsize=None)
def _read_barriers(kernel: str, params_items: tuple):
    got = _record_barriers(kernel, params_items)
    if got is None:
        return None
    rec, insns = got
    is_mem = [op.split(".", 1)[0] in _MEM_BASES for _, op, _, _, _ in insns]
    out = []
    for b in rec["outline"]:
        lo, hi = int(b["start"], 16), int(b["end"], 16)
        idx = [i for i, x in enumerate(insns) if lo <= x[0] <= hi]
        mem = [i for i in idx if is_mem[i]]
        if not mem:
            continue
        pairs = []
        for n, i in enumerate(mem):
            rd = insns[i][3]
            if rd == 7:
                continue
            waiter = next((j for j in range(i + 1, min(i + 1 + _RB_SCAN, len(insns)))
                           if insns[j][4] >> rd & 1), None)
            if waiter is None:
                continue
            later = sum(is_mem[i + 1:waiter])          # memory instructions before the waiter
            pairs.append((n, later + 1))
        if pairs:
            out.append((tuple(trace_name(insns[i][1]) for i in mem), tuple(pairs)))
    out.sort(key=lambda x: -len(x[0]))
    return tuple(out)


def read_barrier_table(kernel: str, params: dict) -> tuple | None:
    """ptxas's read barriers on memory instructions, as ((block's memory instructions by trace
    name), ((i, d), ...)) per outline block, longest first; None without a SASS record.

    A memory instruction reads its address (and a store its data) registers when its pipe takes
    it from the MIO / LG queue, not when it issues, so when a later instruction overwrites one of
    those registers ptxas puts a read barrier on the memory instruction (bits 49-51) and the
    overwriting one waits on it. The trace has no register names and puts a block's integer work
    elsewhere, so the wait is carried to the first memory instruction at or after the waiter: (i, d)
    says the block's memory instruction i + d (counted on in program order, into the next block if
    the waiter lies there) may not issue before the pipe has taken memory instruction i. regblock's
    tile loop: the 5th of its 12 LDG sets one and the IMAD.WIDE before the 7th waits on it; ncu's PC
    samples put long_scoreboard stalls on such instructions (traces/hw/h200/micro/tile_loads.json)."""
    return _read_barriers(kernel, tuple(sorted(params.items())))


def trace_name(sass_op: str) -> str:
    """The name the kernels' trace uses for a SASS opcode (memory widths and BAR folded)."""
    base = sass_op.split(".", 1)[0]
    if base in ("LDG", "STG", "LDS", "STS"):
        mods = sass_op.split(".")[1:]
        nbytes = {"64": 8, "128": 16}.get(next((x for x in mods if x in ("64", "128")), ""), 4)
        return mem_opcode(1 if base in ("LDG", "STG") else 2, base in ("STG", "STS"), nbytes)
    if base == "BAR":
        return "BAR.SYNC"
    return sass_op


def _trips(block: dict, M: int, N: int, K: int) -> float:
    if "visits" in block:              # counted by the SASS front-end (use_listing); other sizes rank blocks only
        v = block["visits"]
        return float(v.get((int(M), int(N), int(K)), next(iter(v.values()))))
    if "trips" in block:
        return float(eval(block["trips"], {"__builtins__": {}, "int": int, "max": max, "min": min},
                          {"M": M, "N": N, "K": K}))
    emulated = block.get("emulated_trips") or {}
    return float(next(iter(emulated.values()), 0))


_LISTINGS: dict = {}      # (kernel, params_items) -> (record with its outline, sass text): use_listing


def use_listing(kernel: str, params: dict, sass: str, source: str, visits: dict, size: tuple):
    """Take the kernel's ptxas facts from this SASS (the listing the SASS front-end ran) with each
    basic block's executed count at `size` (M, N, K) as its weight: the exact source for any
    parameter set, in place of the committed record's hand outline. visits: {block start pc: count}."""
    from gpusim.sass.listing import basic_blocks, parse_listing
    key = (kernel, tuple(sorted(params.items())))
    rec, _ = _LISTINGS.get(key, ({"kernel": kernel, "params": dict(params), "source": source, "outline": None}, sass))
    if rec["outline"] is None:
        rec["outline"] = [{"start": f"0x{lo:04x}", "end": f"0x{hi:04x}", "visits": {}}
                          for lo, hi in basic_blocks(parse_listing(sass, kernel))]
    for b in rec["outline"]:
        b["visits"][tuple(int(x) for x in size)] = float(visits.get(int(b["start"], 16), 0))
    _LISTINGS[key] = (rec, sass)
    for f in (_record, _table, _scoreboards, _read_barriers):
        f.cache_clear()
    from gpusim.timing import register_banks
    register_banks._profile.cache_clear()


@functools.lru_cache(maxsize=None)
def _record(kernel: str, params_items: tuple, size: tuple | None = None):
    """(record json, sass text, exact) for the kernel: the listing the SASS front-end ran
    (use_listing; with `size`, only if it was counted at that M, N, K), else the committed record of
    these parameters, else the kernel's first recorded set (its defaults); None when the kernel has
    no record."""
    got = _LISTINGS.get((kernel, params_items))
    if got is not None and (size is None or size in got[0]["outline"][0]["visits"]):
        return got[0], got[1], True
    want = dict(params_items)
    fallback = None
    if not STATIC_DIR.is_dir():
        return None
    for f in sorted(STATIC_DIR.glob("*.json")):
        try:
            rec = json.loads(f.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:     # refused by name, never skipped
            from gpusim.errors import RecordError
            raise RecordError(f"traces/static/{f.name}: not a readable JSON record ({e})") from None
        if rec.get("kernel") != kernel or not f.with_suffix(".sass").exists() or not rec.get("outline"):
            continue
        if rec.get("params") == want:
            return rec, f.with_suffix(".sass").read_text(), True
        if f.stem == kernel:
            fallback = (rec, f.with_suffix(".sass").read_text(), False)
    return fallback


@functools.lru_cache(maxsize=None)
def _table(kernel: str, params_items: tuple, M: int, N: int, K: int):
    got = _record(kernel, params_items, (M, N, K))
    if got is None:
        return None
    rec, text, exact = got
    insns = [x for x in parse_sass(text) if x[1] != "NOP"]
    sums: dict = {}
    full: dict = {}
    for b in rec["outline"]:
        w = _trips(b, M, N, K)
        if w <= 0:
            continue
        lo, hi = int(b["start"], 16), int(b["end"], 16)
        for off, op, stall in insns:
            if lo <= off <= hi:
                s, c = sums.get(trace_name(op), (0.0, 0.0))
                sums[trace_name(op)] = (s + w * max(stall, 1), c + w)
                if op != trace_name(op):               # the SASS front-end's rows keep the full name
                    s, c = full.get(op, (0.0, 0.0))
                    full[op] = (s + w * max(stall, 1), c + w)
    means = {k: s / c for k, (s, c) in {**full, **sums}.items() if c > 0}
    counts = {k: c for k, (s, c) in sums.items() if c > 0}
    source = rec.get("source") or (f"traces/static/{rec['kernel']}.sass" + ("" if exact else
                                                                            " (the kernel's default parameters)"))
    return means, source, counts


def sass_wait_per_inst(kernel: str, params: dict, M: int, N: int, K: int) -> float | None:
    """Mean (stall count - 1) over the instructions one thread executes: the `wait` per issued
    instruction the SASS alone implies (what ncu's smsp__average_warps_issue_stalled_wait_per_
    issue_active.ratio measures, before any dynamic effect). None without a record."""
    got = _table(kernel, tuple(sorted(params.items())), int(M), int(N), int(K))
    if got is None:
        return None
    means, counts = got[0], got[2]
    total = sum(counts.values())
    return sum(counts[k] * (means[k] - 1.0) for k in counts) / total if total else 0.0


def stall_table(kernel: str, params: dict, M: int, N: int, K: int):
    """({trace opcode name: mean stall count}, source) or None when the kernel has no record."""
    got = _table(kernel, tuple(sorted(params.items())), int(M), int(N), int(K))
    return None if got is None else got[:2]


def row_gaps(op: np.ndarray, warp_start: np.ndarray, opcodes: list, means: dict) -> np.ndarray:
    """Per lowered row (grouped by warp, program order): cycles before its warp may issue again.

    A row takes the mean stall count of its opcode (1 for an opcode the SASS lacks). Fractional
    means are spread by error diffusion over a warp's rows of the same opcode: the j-th gets
    round((j+1)m) - round(jm), so each warp's total is its count times m, rounded."""
    n = len(op)
    if n == 0:
        return np.ones(0, np.int64)
    mean = np.array([means.get(name, 1.0) for name in opcodes], np.float64)
    return _gaps(np.ascontiguousarray(op, np.int64), np.ascontiguousarray(warp_start, np.int64), mean)


@njit(cache=True, nogil=True)
def _gaps(op, warp_start, mean):
    """row_gaps warp by warp, a counter per opcode (a lexsort of every row by (warp, opcode) before: about
    3 % of the SGEMM ladder's prediction time)."""
    out = np.empty(op.shape[0], np.int64)
    seen = np.zeros(mean.shape[0], np.int64)
    for w in range(warp_start.shape[0] - 1):
        for i in range(warp_start[w], warp_start[w + 1]):
            seen[op[i]] = 0
        for i in range(warp_start[w], warp_start[w + 1]):
            o = op[i]
            j = seen[o]
            g = np.floor((j + 1) * mean[o] + 0.5) - np.floor(j * mean[o] + 0.5)
            out[i] = max(np.int64(g), np.int64(1))
            seen[o] = j + 1
    return out


__all__ = ["stall_count", "parse_sass", "barriers", "trace_name", "stall_table", "scoreboard_table", "global_scoreboards",
           "sass_wait_per_inst", "row_gaps", "read_barrier_table"]


guard_cache(globals())     # stamped by its source, guarded, seeded from the shipped copy (gpusim.jit)
