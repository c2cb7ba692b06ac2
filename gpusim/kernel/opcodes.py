"""The SASS opcodes a Python kernel may issue: one table, used by every stage.

A kernel names an instruction as cuobjdump prints it for sm_90, modifiers
included where they matter ("LDS.128", "IMAD.WIDE", "ISETP.GE.AND"). The base
opcode (text before the first dot) decides the pipe; memory opcodes also carry
their space, direction and bytes per lane. Atomics and reductions (ATOMG/ATOM/
ATOMS: "atom", REDG/RED: "red") are memory opcodes too: they carry an address per
lane, which only the SASS emulator can give them (gpusim.sass), so a Python kernel
cannot issue one. Full names are interned into small integer ids so the trace
stays a flat numpy array.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpusim.errors import UnsupportedOperation

# pipes, named as ncu names them (sm__inst_executed_pipe_<name>)
PIPES = ("fma", "fmaheavy", "alu", "lsu", "cbu", "adu", "uniform", "xu")
PIPE_ID = {p: i for i, p in enumerate(PIPES)}

SPACE_NONE, SPACE_GLOBAL, SPACE_SHARED, SPACE_LOCAL = 0, 1, 2, 3
SPACE_NAMES = ("none", "global", "shared", "local")

# base opcode -> pipe. FFMA/FMUL/FADD issue to FMA-heavy or FMA-lite; IMAD only
# to FMA-heavy [F-302018]; the rest per the CUDA binary utilities' opcode list and
# [PG] (Nsight Compute Profiling Guide, metrics decoder: its pipeline descriptions).
# [H200-pipes]: measured with ncu on the H200 (tests/sass/snippets/pipes_micro.cu: one warp,
# 256 trips of 32 copies of the opcode; smsp__inst_executed_pipe_*.sum took them all; the counts are in
# traces/hw/h200/micro/pipes_atomics.json).
BASE_PIPE = {
    "FFMA": "fma", "FMUL": "fma", "FADD": "fma", "FSETP": "alu", "FMNMX": "alu",   # FSETP, FMNMX: [H200-pipes]
    "HFMA2": "fma", "HADD2": "fma", "HMUL2": "fma",
    "IMAD": "fmaheavy", "VIADD": "fmaheavy", "IDP": "fmaheavy",
    "IADD3": "alu", "ISETP": "alu", "LOP3": "alu", "SHF": "alu", "LEA": "alu",
    "MOV": "alu", "SEL": "alu", "FSEL": "alu", "IABS": "alu", "PLOP3": "alu",   # FSEL, IABS: [H200-pipes]
    "IMNMX": "alu", "VIMNMX": "alu", "CS2R": "alu", "P2R": "alu", "R2P": "alu", "PRMT": "alu",  # VIMNMX (sm_90 min/max): pipe unverified; PRMT [H200-pipes]
    "I2F": "xu", "F2I": "xu", "MUFU": "xu", "I2FP": "alu", "F2FP": "alu",
    # [PG] metrics decoder: "xu ... special functions such as sin, cos, and reciprocal square root ...
    # int-to-float and float-to-int type conversions"; MUFU, F2I, I2FP [H200-pipes]; F2F, FRND (unverified)
    "F2F": "xu", "FRND": "xu",
    "POPC": "xu", "FLO": "xu", "BREV": "xu",       # [H200-pipes]: the bit counts and reversal are XU's
    "FCHK": "alu",                                  # (unverified)
    "VOTE": "alu", "VOTEU": "uniform",              # [H200-pipes]
    # [PG] metrics decoder: "lsu ... also issues special register reads (S2R), shuffles"; SHFL [H200-pipes]
    "SHFL": "lsu",
    "S2R": "adu", "S2UR": "adu", "LDC": "adu",  # LDC's pipe: (unverified)
    "ULDC": "uniform", "UMOV": "uniform", "UIADD3": "uniform", "ULEA": "uniform",
    "USHF": "uniform", "UIMAD": "uniform", "ULOP3": "uniform", "UISETP": "uniform",
    "USEL": "uniform", "R2UR": "uniform", "UPRMT": "uniform", "UFLO": "uniform",
    "BRA": "cbu", "EXIT": "cbu", "BSSY": "cbu", "BSYNC": "cbu", "NOP": "cbu",
    "WARPSYNC": "cbu", "BAR": "cbu", "CALL": "cbu", "RET": "cbu",
    "LDG": "lsu", "STG": "lsu", "LDS": "lsu", "STS": "lsu", "LDL": "lsu", "STL": "lsu",
    # [PG] metrics decoder: "lsu ... issues load, store, atomic, and reduction instructions"; [H200-pipes]
    "ATOMG": "lsu", "ATOM": "lsu", "ATOMS": "lsu", "REDG": "lsu", "RED": "lsu",
}
REFUSED = {"YIELD", "NANOSLEEP", "CCTL", "MEMBAR"}

# atomics and reductions: base opcode -> (ncu's op: "atom" | "red", space). ATOM / RED take generic
# addresses; gpusim places every buffer they may reach in global memory (the emulator checks it).
ATOMIC = {"ATOMG": ("atom", SPACE_GLOBAL), "ATOM": ("atom", SPACE_GLOBAL), "ATOMS": ("atom", SPACE_SHARED),
          "REDG": ("red", SPACE_GLOBAL), "RED": ("red", SPACE_GLOBAL)}
ATOMIC_CODES = {"": 0, "red": 1, "atom": 2}


@dataclass(frozen=True)
class Opcode:
    name: str
    pipe: str
    space: int = SPACE_NONE
    is_store: bool = False
    bytes_per_lane: int = 0
    is_barrier: bool = False
    atomic: str = ""               # "" | "red" (no value returned) | "atom" (returns the old value)

    @property
    def base(self) -> str:
        return base_opcode(self.name)


def base_opcode(name: str) -> str:
    """The opcode as ncu's sass__inst_executed_per_opcode keys it (no modifiers)."""
    return name.split(".", 1)[0]


def _parse(name: str) -> Opcode:
    base = base_opcode(name)
    if base in REFUSED:
        raise UnsupportedOperation(
            f"{name}: fences and timing-dependent waits are refused; the trace model "
            "needs addresses that do not depend on timing")
    if base not in BASE_PIPE:
        raise UnsupportedOperation(f"unknown SASS opcode {name!r} (add it to gpusim/kernel/opcodes.py)")
    pipe = BASE_PIPE[base]
    if base in ("LDG", "STG", "LDS", "STS", "LDL", "STL"):
        space = {"G": SPACE_GLOBAL, "S": SPACE_SHARED, "L": SPACE_LOCAL}[base[2]]
        mods = name.split(".")[1:]
        nbytes = {"64": 8, "128": 16}.get(next((m for m in mods if m in ("64", "128")), ""), 4)
        return Opcode(name, pipe, space, base in ("STG", "STS", "STL"), nbytes)
    if base in ATOMIC:
        op, space = ATOMIC[base]
        mods = name.split(".")[1:]
        nbytes = 8 if any(m in ("64", "F64", "S64", "U64") for m in mods) else 4
        # is_store: an atomic goes through L1TEX to L2 as a store does (no L1 line is allocated), and
        # the callers that split loads from stores (caches, timing) take it as one (unverified for timing)
        return Opcode(name, pipe, space, True, nbytes, atomic=op)
    return Opcode(name, pipe, is_barrier=(base == "BAR"))


class OpcodeTable:
    """Interns full opcode names to ids; per-id properties as numpy arrays."""

    def __init__(self):
        self.ops: list[Opcode] = []
        self.ids: dict[str, int] = {}

    def id(self, name: str, atomic_ok: bool = False) -> int:
        """The id of an opcode name, interned on first use. A new atomic name needs atomic_ok (the SASS
        emulator, which gives it addresses): a Python kernel's `k.op` has none to give it."""
        i = self.ids.get(name)
        if i is None:
            op = _parse(name)
            if op.atomic and not atomic_ok:
                raise UnsupportedOperation(
                    f"{name}: atomics need an address per lane, which only the SASS front-end gives them "
                    "(frontend='sass'); a Python kernel cannot issue one")
            i = self.ids[name] = len(self.ops)
            self.ops.append(op)
        return i

    def __getitem__(self, i: int) -> Opcode:
        return self.ops[i]

    def arrays(self):
        """(space, is_store, bytes_per_lane, pipe_id, is_barrier) indexed by opcode id."""
        return (np.array([o.space for o in self.ops], np.int8),
                np.array([o.is_store for o in self.ops], bool),
                np.array([o.bytes_per_lane for o in self.ops], np.int16),
                np.array([PIPE_ID[o.pipe] for o in self.ops], np.int8),
                np.array([o.is_barrier for o in self.ops], bool))

    def atomics(self) -> np.ndarray:
        """Per opcode id: 0 not atomic, 1 reduction (RED), 2 atomic (ATOM), as ATOMIC_CODES."""
        return np.array([ATOMIC_CODES[o.atomic] for o in self.ops], np.int8)


# one process-wide table: ids are stable within a run and saved by name in trace files
TABLE = OpcodeTable()


def mem_opcode(space: int, store: bool, nbytes: int) -> str:
    width = {4: "", 8: ".64", 16: ".128"}[nbytes]
    if space == SPACE_GLOBAL:
        return ("STG.E" if store else "LDG.E") + width
    return ("STS" if store else "LDS") + width
