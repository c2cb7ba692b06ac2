"""Register-file reads of the FP32 instructions, from the recorded SASS: what limits a warp's FFMA stream.

An SMSP's register file has two banks (register number mod 2), each reading one register for the warp a
cycle. An FFMA reads its three source registers, less those the operand reuse cache holds: ptxas's
`.reuse` flag on an operand keeps it for the next instruction, which then reads it from the cache if it
names the same register in the same operand slot and is of the same warp (another warp's issue in between
empties the cache). When a warp's FFMAs ask the banks for more than two reads a cycle, their reads queue,
and the warp stalls at dispatch (ncu: dispatch_stall) once its reads would come more than a cycle after
its issue. micro/ffma_dispatch.json measures it with one warp per SM running 64 independent FFMAs in eight
operand patterns (calibrate/ffma_dispatch.cu): with a reused operand a trip takes 84-92 cycles,
without reuse 115-122. The engine with this rule, whose one parameter is the one-cycle lead, gives the
patterns' stalled FFMAs as 7/8/16/36/43/28/10/8 against 7/9/11/36/42/19/10/6 and their trips' differences
from pattern 0 within 2.1 cycles but pattern 5's (+9) (tests/timing/test_register_banks.py).

A row of the engine carries two read counts per bank: "hot" when the same warp issued the SMSP's previous
instruction (the SASS's reuse applies) and "cold" otherwise (every source register read). The trace does
not know which SASS instruction a row is, so a kernel's FP32 rows take, in order and cyclically per warp,
the reads of the FP32 instructions of the SASS block where most of them run (bank_profile): the mix of
bank pressure is the loop's, not tied to one instruction.
"""
from __future__ import annotations

import functools
import re

import numpy as np

from gpusim.timing.control_codes import _record, _trips

FP32_BASES = ("FFMA", "FMUL", "FADD")
_INSN = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
_REG = re.compile(r"\bR(\d+)(\.reuse)?")
BANKS = 2      # [M] micro/ffma_dispatch.json: the FFMAs stall as two reads a cycle (register number mod 2) allow


def _operands(text: str) -> tuple[str, list[str]]:
    """(opcode with modifiers, operand strings) of one SASS instruction, its predicate guard dropped."""
    body = re.sub(r"^@!?U?P[T\d]+\s+", "", text.strip())
    op, _, rest = body.partition(" ")
    return op, [o.strip() for o in re.split(r",(?![^\[]*\])", rest)] if rest.strip() else []


def fp32_reads(listing: list[tuple[int, str]]) -> list[tuple[int, int, int, int]]:
    """Per FP32 instruction of `listing` ([(offset, instruction text)] in program order): its register
    reads on bank 0 and bank 1 issued right after the previous instruction of its warp (reuse-cache hits
    not read), then the same with every source register read. RZ reads nothing."""
    out = []
    cache: dict = {}                 # operand slot -> register the previous instruction kept (.reuse)
    for _, text in listing:
        op, ops = _operands(text)
        srcs = []
        for slot, o in enumerate(ops[1:]):
            m = _REG.search(o)
            if m:
                srcs.append((slot, int(m.group(1)), bool(m.group(2))))
        if op.split(".", 1)[0] in FP32_BASES:
            hot, cold = [0] * BANKS, [0] * BANKS
            for slot, reg, _ in srcs:
                cold[reg % BANKS] += 1
                if cache.get(slot) != reg:
                    hot[reg % BANKS] += 1
            out.append((min(hot[0], 3), min(hot[1], 3), min(cold[0], 3), min(cold[1], 3)))
        cache = {slot: reg for slot, reg, reuse in srcs if reuse}
    return out


def pack(reads: tuple[int, int, int, int]) -> int:
    """A row's reads as the engine keeps them above its pipe bits: hot bank 0, hot bank 1, cold bank 0,
    cold bank 1, two bits each, plus bit 8 set (the row has register reads at all)."""
    h0, h1, c0, c1 = reads
    return h0 | h1 << 2 | c0 << 4 | c1 << 6 | 1 << 8


@functools.lru_cache(maxsize=None)
def _profile(kernel: str, params_items: tuple):
    got = _record(kernel, params_items)
    if got is None:
        return None
    rec, text, _ = got
    listing = [(int(m.group(1), 16), m.group(2)) for m in _INSN.finditer(text)]
    best = None
    for b in rec["outline"]:
        lo, hi = int(b["start"], 16), int(b["end"], 16)
        block = [x for x in listing if lo <= x[0] <= hi]
        n_fp32 = len(fp32_reads(block))
        reads = fp32_reads(block + block)[n_fp32:]     # the block's second pass: reuse across the loop's back edge
        n = _trips(b, 4096, 4096, 4096) * n_fp32
        if reads and (best is None or n > best[0]):
            best = (n, tuple(pack(x) for x in reads))
    return None if best is None else best[1]


def bank_profile(kernel: str, params: dict) -> tuple | None:
    """The packed reads (pack) of the FP32 instructions of the kernel's SASS block where most of them run
    (its outline's trip counts at 4096), in program order; None without a SASS record or FP32 code."""
    return _profile(kernel, tuple(sorted(params.items())))


def row_banks(op, warp_start, opcodes: list, profile) -> np.ndarray:
    """Per lowered row (grouped by warp, program order): the packed reads of its FP32 instruction, 0 for
    other rows or without a profile. A warp's j-th FP32 row takes profile[j % len(profile)]."""
    n = len(op)
    out = np.zeros(n, np.int64)
    if not profile or n == 0:
        return out
    is_fp32 = np.array([name.split(".", 1)[0] in FP32_BASES for name in opcodes], bool)
    rows = np.flatnonzero(is_fp32[op])
    if rows.size == 0:
        return out
    warp = np.searchsorted(warp_start, rows, side="right") - 1
    first = np.r_[True, warp[1:] != warp[:-1]]
    j = np.arange(rows.size) - np.maximum.accumulate(np.where(first, np.arange(rows.size), 0))
    prof = np.asarray(profile, np.int64)
    out[rows] = prof[j % len(prof)]
    return out


__all__ = ["fp32_reads", "pack", "bank_profile", "row_banks", "BANKS"]
