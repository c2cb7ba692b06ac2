"""Build the CUDA twins for sm_90 and record their static facts.

Stdlib only; no gpusim imports. Needs nvcc (13.0 was used for the committed
records) and cuobjdump (nvcc's own, or the PyPI wheel nvidia-cuda-cuobjdump,
which installs it under site-packages/nvidia/cu13/bin/).

    python kernels_cuda/build.py --all --out traces/static

writes, for every kernel at its default parameters, traces/static/<name>.json
(ptxas -v facts, static SASS opcode histogram, control-flow outline with trip
formulas) and traces/static/<name>.sass (cuobjdump -sass of that function),
plus traces/static/<name>@<variant>.json/.sass for one non-default parameter
set per kernel.

The outline's trip formulas are written by hand (KNOWN_OUTLINES below) from
reading the SASS, and checked at build time against a small emulator of the
SASS integer/predicate/branch semantics (`emulate`), which walks the real
instruction stream of one thread for given M, N, K and counts executed
instructions. If a different nvcc produces different SASS, the hand formulas
no longer match and the build says so (and records emulated counts only).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import functools
import importlib.util
import json
import re
import shutil
import struct
import subprocess
import sys
from collections import Counter
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
KERNEL_DIR = "kernels_cuda"
BUILD_DIR = "kernels_cuda/.build"  # ignored (kernels_cuda/.gitignore)

NVCC_FLAGS = ["-arch=sm_90", "-O3", "-cubin", "-Xptxas", "-v"]

# Default tile parameters of each kernel (the P_<NAME> macros' defaults) and
# the launch shape as functions of (M, N, params): block and grid dims.
KERNELS: dict[str, dict] = {
    "naive": {"params": {"BLOCK": 32}},
    "coalesced": {"params": {"BLOCKSIZE": 32}},
    "smemtile": {"params": {"BLOCKSIZE": 32}},
    "regtile1d": {"params": {"BM": 64, "BN": 64, "BK": 8, "TM": 8}},
    "regtile2d": {"params": {"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8}},
    "vectorized": {"params": {"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8}},
    "tiled32": {"params": {"BM": 32, "BN": 32, "BK": 32}},
    "regblock": {"params": {"BM": 128, "BN": 64, "BK": 8, "TM": 8, "TN": 8}},
}

# One non-default parameter set per kernel (only overrides are listed).
VARIANTS: dict[str, dict] = {
    "naive": {"BLOCK": 16},
    "coalesced": {"BLOCKSIZE": 16},
    "smemtile": {"BLOCKSIZE": 16},
    "regtile1d": {"TM": 4, "BK": 16},  # TM=4 alone breaks BM*BK == threads
    "regtile2d": {"BN": 64, "TM": 4},
    "vectorized": {"BM": 64},
    "tiled32": {"BM": 16, "BN": 64, "BK": 16},
    "regblock": {"BN": 128},
}


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def launch_shape(name: str, params: dict, M: int, N: int) -> tuple[tuple, tuple]:
    """(block, grid) as 3-tuples for the standard launch of each kernel."""
    p = params
    if name == "naive":
        return (p["BLOCK"], p["BLOCK"], 1), (cdiv(M, p["BLOCK"]), cdiv(N, p["BLOCK"]), 1)
    if name in ("coalesced", "smemtile"):
        b = p["BLOCKSIZE"]
        return (b * b, 1, 1), (cdiv(M, b), cdiv(N, b), 1)
    if name == "regtile1d":
        return ((p["BM"] * p["BN"]) // p["TM"], 1, 1), (cdiv(N, p["BN"]), cdiv(M, p["BM"]), 1)
    if name in ("regtile2d", "vectorized"):
        t = (p["BM"] * p["BN"]) // (p["TM"] * p["TN"])
        return (t, 1, 1), (cdiv(N, p["BN"]), cdiv(M, p["BM"]), 1)
    if name == "tiled32":
        return (p["BN"], p["BM"], 1), (cdiv(N, p["BN"]), cdiv(M, p["BM"]), 1)
    if name == "regblock":
        t = (p["BM"] // p["TM"]) * (p["BN"] // p["TN"])
        return (t, 1, 1), (cdiv(N, p["BN"]), cdiv(M, p["BM"]), 1)
    raise KeyError(name)


# --------------------------------------------------------------------------
# tools


def _find_tool(tool: str) -> str:
    p = shutil.which(tool)
    if p:
        return p
    spec = importlib.util.find_spec("nvidia")
    if spec is not None and spec.submodule_search_locations:
        for root in spec.submodule_search_locations:
            for sub in ("cu13", "cu12", "cuda_cuobjdump", "cuda_nvdisasm"):
                cand = Path(root) / sub / "bin" / tool
                if cand.exists():
                    return str(cand)
    raise FileNotFoundError(
        f"{tool} not found: put it on PATH or `pip install nvidia-cuda-cuobjdump`")


def nvcc_version() -> str:
    out = subprocess.run([_find_tool("nvcc"), "--version"], capture_output=True,
                         text=True, check=True).stdout
    m = re.search(r"release [\d.]+, V([\d.]+)", out)
    return m.group(1) if m else out.strip().splitlines()[-1]


def nvcc_args(name: str, params: dict, out_path: str) -> list[str]:
    """The nvcc argument list, with paths as given (relative to the repo root)."""
    defines = [f"-DP_{k}={v}" for k, v in params.items()]
    return ["nvcc", *NVCC_FLAGS, *defines, "-o", str(out_path), f"{KERNEL_DIR}/{name}.cu"]


_PTXAS_RE = {
    "registers": re.compile(r"Used (\d+) registers"),
    "shared_bytes": re.compile(r"(\d+) bytes smem"),
    "spill_stores": re.compile(r"(\d+) bytes spill stores"),
    "spill_loads": re.compile(r"(\d+) bytes spill loads"),
    "stack_bytes": re.compile(r"(\d+) bytes stack frame"),
}


def parse_ptxas(text: str) -> dict:
    out = {}
    for key, rx in _PTXAS_RE.items():
        m = rx.search(text)
        out[key] = int(m.group(1)) if m else 0
    return out


def build_cubin(name: str, params: dict, out_path) -> dict:
    """Compile kernels_cuda/<name>.cu with NVCC_FLAGS and -DP_<K>=<V>.

    out_path is taken relative to the repository root when it is relative.
    Returns the ptxas -v facts {registers, shared_bytes, spill_stores,
    spill_loads, stack_bytes}. Raises CalledProcessError on a compile error
    (a failing static_assert included) and RuntimeError on any warning.
    """
    out_path = Path(out_path)
    full = out_path if out_path.is_absolute() else REPO_ROOT / out_path
    full.parent.mkdir(parents=True, exist_ok=True)
    args = nvcc_args(name, params, str(out_path))
    args[0] = _find_tool("nvcc")
    res = subprocess.run(args, cwd=REPO_ROOT, capture_output=True, text=True)
    text = res.stdout + res.stderr
    if res.returncode != 0:
        raise subprocess.CalledProcessError(res.returncode, args, res.stdout, res.stderr)
    if re.search(r"warning", text, re.IGNORECASE):
        raise RuntimeError(f"nvcc warnings for {name} {params}:\n{text}")
    return parse_ptxas(text)


def sass_text(cubin_path) -> str:
    """cuobjdump -sass of a cubin (all functions in it)."""
    return subprocess.run([_find_tool("cuobjdump"), "-sass", str(cubin_path)],
                          capture_output=True, text=True, check=True).stdout


def function_sass(text: str, func: str) -> str:
    """The part of cuobjdump output that belongs to one function."""
    lines = text.splitlines()
    start = None
    for i, ln in enumerate(lines):
        if re.match(rf"\s*Function : {re.escape(func)}\s*$", ln):
            start = i
            break
    if start is None:
        raise ValueError(f"function {func} not in SASS")
    end = len(lines)
    for j in range(start + 1, len(lines)):
        if re.match(r"\s*Function : ", lines[j]) or lines[j].strip().startswith(".........."):
            end = j + 1 if lines[j].strip().startswith("..........") else j
            break
    return "\n".join(lines[start:end]) + "\n"


# --------------------------------------------------------------------------
# SASS parsing

_INSN_RE = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;\s*(?:/\*\s*(0x[0-9a-f]+)\s*\*/)?")


class Insn:
    __slots__ = ("off", "pred", "op", "ops", "text")

    def __init__(self, off: int, text: str):
        self.off = off
        self.text = text
        self.pred = None
        t = text
        m = re.match(r"@(!?)(U?P\d|U?PT)\s+", t)
        if m:
            self.pred = (m.group(1) == "!", m.group(2))
            t = t[m.end():]
        parts = t.split(None, 1)
        self.op = parts[0]
        self.ops = [o.strip() for o in parts[1].split(",")] if len(parts) > 1 else []

    def __repr__(self):
        return f"{self.off:04x} {self.text}"


def parse_sass(text: str) -> list[Insn]:
    out = []
    for ln in text.splitlines():
        m = _INSN_RE.match(ln)
        if m:
            out.append(Insn(int(m.group(1), 16), m.group(2)))
    return out


def opcode_histogram(insns: list[Insn]) -> dict:
    c = Counter(i.op for i in insns)
    return dict(sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))


def _branch_target(i: Insn) -> int | None:
    if i.op.startswith("BRA") and i.ops:
        try:
            return int(i.ops[-1], 16)
        except ValueError:
            return None
    return None


def basic_blocks(insns: list[Insn]) -> list[tuple[int, int]]:
    """[(first_index, last_index_inclusive)] of the reachable code.

    Leaders: entry, branch targets, instruction after a branch or EXIT.
    The padding after the final `EXIT; BRA self` is dropped.
    """
    idx = {i.off: n for n, i in enumerate(insns)}
    leaders = {0}
    last_real = 0
    for n, i in enumerate(insns):
        t = _branch_target(i)
        if t is not None:
            if t in idx:
                leaders.add(idx[t])
            leaders.add(n + 1)
        if i.op == "EXIT":
            leaders.add(n + 1)
        if i.op != "NOP":
            last_real = n
    # the trailing self-branch `BRA .` is unreachable padding
    if _branch_target(insns[last_real]) == insns[last_real].off:
        last_real -= 1
    starts = sorted(x for x in leaders if x <= last_real)
    blocks = []
    for k, s in enumerate(starts):
        e = (starts[k + 1] - 1) if k + 1 < len(starts) else last_real
        blocks.append((s, e))
    return blocks


# --------------------------------------------------------------------------
# a tiny SASS emulator for control flow

M32 = 0xFFFFFFFF
M64 = (1 << 64) - 1


def _s32(x: int) -> int:
    x &= M32
    return x - (1 << 32) if x & 0x80000000 else x


def _lut3(a: int, b: int, c: int, lut: int, mask: int) -> int:
    r = 0
    for k in range(8):
        if lut >> k & 1:
            ta = a if k & 4 else ~a
            tb = b if k & 2 else ~b
            tc = c if k & 1 else ~c
            r |= ta & tb & tc
    return r & mask


@functools.lru_cache(maxsize=None)
def _parse_operand(s: str):
    """(kind, payload, negate, invert) of a source operand."""
    s = s.replace(".reuse", "")
    neg = inv = False
    if s.startswith("-"):
        neg, s = True, s[1:]
    if s.startswith("~"):
        inv, s = True, s[1:]
    if s.startswith("|") and s.endswith("|"):
        s = s[1:-1]
    m = re.fullmatch(r"c\[0x0\]\[(0x[0-9a-f]+)\]", s)
    if m:
        return ("c", int(m.group(1), 16), neg, inv)
    if s in ("RZ", "URZ", "SRZ"):
        return ("Z", 0, neg, inv)
    m = re.fullmatch(r"(U?R)(\d+)", s)
    if m:
        return (m.group(1), int(m.group(2)), neg, inv)
    if s.startswith("SR_"):
        return ("SR", s, neg, inv)
    if re.fullmatch(r"0x[0-9a-f]+", s):
        return ("imm", int(s, 16), neg, inv)
    if re.fullmatch(r"\d+", s):
        return ("imm", int(s), neg, inv)
    raise ValueError(f"operand {s!r}")


class _Exit(Exception):
    pass


class Emulator:
    """Executes one thread's integer, predicate and branch instructions.

    Floating-point results and memory contents are not modelled (loads write
    0): control flow in these kernels depends only on M, N, K, the thread and
    block indices and the launch shape. Every fetched instruction is counted,
    predicated-off ones included (as ncu's inst_executed does).
    """

    def __init__(self, insns, *, M, N, K, tid, ctaid, ntid, nctaid):
        self.insns = insns
        self.idx = {i.off: n for n, i in enumerate(insns)}
        self.R = [0] * 256
        self.UR = [0] * 64
        self.P = [False] * 8
        self.UP = [False] * 8
        self.sr = {
            "SR_TID.X": tid[0], "SR_TID.Y": tid[1], "SR_TID.Z": tid[2],
            "SR_CTAID.X": ctaid[0], "SR_CTAID.Y": ctaid[1], "SR_CTAID.Z": ctaid[2],
            "SR_CgaCtaId": 0, "SR_LANEID": (tid[0] + ntid[0] * (tid[1] + ntid[1] * tid[2])) % 32,
        }
        cb = {}

        def put32(off, v):
            cb[off] = v & M32

        def put64(off, v):
            cb[off] = v & M32
            cb[off + 4] = (v >> 32) & M32

        for k in range(3):
            put32(0x0 + 4 * k, ntid[k])
            put32(0xC + 4 * k, nctaid[k])
        put32(0x28, 0xFFFC00)  # local stack pointer
        put64(0x208, 0)  # global memory descriptor
        put32(0x210, M)
        put32(0x214, N)
        put32(0x218, K)
        put32(0x21C, struct.unpack("<I", struct.pack("<f", 1.0))[0])
        put64(0x220, 0x7F0000000000)
        put64(0x228, 0x7F1000000000)
        put32(0x230, 0)
        put64(0x238, 0x7F2000000000)
        self.cbank = cb
        self.counts = Counter()
        self.visits = Counter()

    # operand access
    def _reg(self, s):
        if s in ("RZ", "URZ", "SRZ"):
            return 0
        if s[0] == "U":
            return self.UR[int(s[2:])]
        return self.R[int(s[1:])]

    def val(self, s: str) -> int:
        kind, x, neg, inv = _parse_operand(s)
        if kind == "c":
            v = self.cbank.get(x, 0)
        elif kind == "R":
            v = self.R[x]
        elif kind == "UR":
            v = self.UR[x]
        elif kind == "Z":
            v = 0
        elif kind == "SR":
            v = self.sr[x]
        else:
            v = x
        if inv:
            v = ~v
        if neg:
            v = -v
        return v & M32

    def val64(self, s: str) -> int:
        s = s.replace(".reuse", "")
        if s in ("RZ", "URZ"):
            return 0
        m = re.fullmatch(r"(U?R)(\d+)(?:\.64)?", s)
        if m:
            f = self.UR if m.group(1) == "UR" else self.R
            n = int(m.group(2))
            return f[n] | (f[n + 1] << 32)
        m = re.fullmatch(r"c\[0x0\]\[(0x[0-9a-f]+)\]", s)
        if m:
            o = int(m.group(1), 16)
            return self.cbank.get(o, 0) | (self.cbank.get(o + 4, 0) << 32)
        return self.val(s)

    def pred(self, s: str) -> bool:
        neg = s.startswith("!")
        s = s.lstrip("!")
        if s in ("PT", "UPT"):
            v = True
        elif s.startswith("UP"):
            v = self.UP[int(s[2:])]
        else:
            v = self.P[int(s[1:])]
        return v != neg

    def setp(self, s: str, v: bool):
        if s in ("PT", "UPT"):
            return
        if s.startswith("UP"):
            self.UP[int(s[2:])] = bool(v)
        else:
            self.P[int(s[1:])] = bool(v)

    def setr(self, s: str, v: int, width: int = 1):
        if s in ("RZ", "URZ"):
            return
        f = self.UR if s.startswith("UR") else self.R
        n = int(s[2:] if s.startswith("UR") else s[1:])
        for k in range(width):
            f[n + k] = (v >> (32 * k)) & M32

    @staticmethod
    def _is_pred(s):
        return re.fullmatch(r"!?U?P(\d|T)", s) is not None

    # execution
    def run(self, leaders=None, max_steps=50_000_000):
        n = 0
        steps = 0
        leaders = leaders or set()
        insns = self.insns
        try:
            while True:
                steps += 1
                if steps > max_steps:
                    raise RuntimeError("emulation did not terminate")
                i = insns[n]
                if n in leaders:
                    self.visits[n] += 1
                self.counts[i.op] += 1
                on = True if i.pred is None else self.pred(("!" if i.pred[0] else "") + i.pred[1])
                nxt = n + 1
                if on:
                    t = self.step(i)
                    if t is not None:
                        nxt = self.idx[t]
                n = nxt
        except _Exit:
            pass
        return self.counts

    def step(self, i: Insn):
        op = i.op
        base = op.split(".")[0]
        mods = op.split(".")[1:]
        o = i.ops
        if base == "EXIT":
            raise _Exit
        if base == "BRA":
            return int(o[-1], 16)
        if base in ("NOP", "BAR", "BSSY", "BSYNC", "DEPBAR", "MEMBAR", "WARPSYNC"):
            return None
        if base in ("FFMA", "FMUL", "FADD", "FMNMX", "FSETP", "MUFU"):
            if o and re.fullmatch(r"R\d+", o[0]):
                self.setr(o[0], 0)
            return None
        if base in ("LDG", "LDS", "LD", "LDL"):
            w = {"64": 2, "128": 4}.get(mods[-1], 1) if mods else 1
            self.setr(o[0], 0, w)
            return None
        if base in ("STG", "STS", "ST", "STL"):
            return None
        if base in ("LDC", "ULDC"):
            w = 2 if "64" in mods else 1
            v = self.val64(o[1]) if w == 2 else self.val(o[1])
            self.setr(o[0], v, w)
            return None
        if base in ("MOV", "UMOV"):
            self.setr(o[0], self.val(o[1]))
            return None
        if base in ("S2R", "S2UR"):
            self.setr(o[0], self.val(o[1]))
            return None
        if base == "CS2R":
            self.setr(o[0], 0 if o[1] == "SRZ" else self.val(o[1]), 2)
            return None
        if base == "HFMA2":
            # only used here to materialise constants: -RZ*RZ + (h_hi, h_lo)
            if o[1].lstrip("-") == "RZ" and o[2] == "RZ" and len(o) == 5:
                hi = struct.unpack("<H", struct.pack("<e", float(o[3])))[0]
                lo = struct.unpack("<H", struct.pack("<e", float(o[4])))[0]
                self.setr(o[0], (hi << 16) | lo)
                return None
            self.setr(o[0], 0)
            return None
        if base in ("IADD3", "UIADD3"):
            dst = o[0]
            rest = o[1:]
            couts = []
            while rest and self._is_pred(rest[0]):
                couts.append(rest.pop(0))
            srcs = rest[:3]
            total = sum(self.val(s) for s in srcs)
            if "X" in mods:
                total += sum(1 for s in rest[3:5] if self.pred(s))
            self.setr(dst, total)
            if couts:
                # carry out of the unsigned 32-bit sum (negated operands taken as 2^32 - x)
                self.setp(couts[0], total >> 32 != 0)
            return None
        if base in ("LEA", "ULEA"):
            dst = o[0]
            rest = o[1:]
            couts = []
            while rest and self._is_pred(rest[0]):
                couts.append(rest.pop(0))
            if "HI" in mods:
                if "SX32" in mods:
                    a, b, s = rest[0], rest[1], int(rest[2], 16)
                    av = _s32(self.val(a)) & M64
                    hi = ((av << s) >> 32) & M32
                    cin = self.pred(rest[3]) if ("X" in mods and len(rest) > 3) else False
                    self.setr(dst, hi + self.val(b) + cin)
                else:
                    a, b, c, s = rest[0], rest[1], rest[2], int(rest[3], 16)
                    wide = (self.val(c) << 32) | self.val(a)
                    hi = ((wide << s) >> 32) & M32
                    cin = self.pred(rest[4]) if ("X" in mods and len(rest) > 4) else False
                    self.setr(dst, hi + self.val(b) + cin)
            else:
                a, b, s = rest[0], rest[1], int(rest[2], 16)
                total = ((self.val(a) << s) & M32) + self.val(b)
                self.setr(dst, total)
                if couts:
                    self.setp(couts[0], total >> 32 != 0)
            return None
        if base in ("IMAD", "UIMAD"):
            dst = o[0]
            if "WIDE" in mods:
                a, b = self.val(o[1]), self.val(o[2])
                if "U32" not in mods:
                    a, b = _s32(a), _s32(b)
                self.setr(dst, (a * b + self.val64(o[3])) & M64, 2)
            elif "MOV" in mods:
                self.setr(dst, self.val(o[3]))
            elif "HI" in mods:
                a, b = self.val(o[1]), self.val(o[2])
                if "U32" not in mods:
                    a, b = _s32(a), _s32(b)
                self.setr(dst, ((a * b) >> 32) + self.val(o[3]))
            else:  # IMAD, IMAD.IADD, IMAD.SHL.U32 all compute a*b+c (low 32 bits)
                self.setr(dst, self.val(o[1]) * self.val(o[2]) + self.val(o[3]))
            return None
        if base == "VIADD":
            self.setr(o[0], self.val(o[1]) + self.val(o[2]))
            return None
        if base in ("VIMNMX", "IMNMX"):
            a, b = self.val(o[1]), self.val(o[2])
            if "U32" not in mods:
                a, b = _s32(a), _s32(b)
            self.setr(o[0], min(a, b) if self.pred(o[3]) else max(a, b))
            return None
        if base in ("SHF", "USHF"):
            dst, lo, s, hi = o[0], self.val(o[1]), self.val(o[2]) & 63, self.val(o[3])
            if "L" in mods:
                wide = ((hi << 32) | lo) << s
                self.setr(dst, (wide >> 32) if "HI" in mods else wide)
            else:  # R
                if "S32" in mods:
                    wide = (_s32(hi) << 32) | lo
                else:
                    wide = (hi << 32) | lo
                r = wide >> s
                self.setr(dst, (r >> 32) if "HI" in mods else r)
            return None
        if base in ("LOP3", "ULOP3"):
            dst = o[0]
            rest = o[1:]
            pout = None
            if self._is_pred(rest[0]):
                pout = rest.pop(0)
            r = _lut3(self.val(rest[0]), self.val(rest[1]), self.val(rest[2]), int(rest[3], 16), M32)
            self.setr(dst, r)
            if pout:
                self.setp(pout, r != 0)
            return None
        if base in ("PLOP3", "UPLOP3"):
            a, b, c = (1 if self.pred(x) else 0 for x in o[2:5])
            k = a << 2 | b << 1 | c
            self.setp(o[0], int(o[5], 16) >> k & 1)
            self.setp(o[1], int(o[6], 16) >> k & 1)
            return None
        if base in ("ISETP", "UISETP"):
            cmp = mods[0]
            unsigned = "U32" in mods
            bop = mods[-1]
            a, b = self.val(o[2]), self.val(o[3])
            if not unsigned:
                a, b = _s32(a), _s32(b)
            r = {"LT": a < b, "LE": a <= b, "GT": a > b, "GE": a >= b,
                 "EQ": a == b, "NE": a != b}[cmp]
            c = self.pred(o[4])
            comb = {"AND": lambda x, y: x and y, "OR": lambda x, y: x or y,
                    "XOR": lambda x, y: x != y}[bop]
            self.setp(o[0], comb(r, c))
            self.setp(o[1], comb(not r, c))
            return None
        raise NotImplementedError(f"emulator: {i}")


def emulate(insns, name, params, M, N, K, tid=(0, 0, 0), ctaid=(0, 0, 0)):
    """Executed-instruction counts (by opcode) and per-block visits of one thread."""
    block, grid = launch_shape(name, params, M, N)
    leaders = {s for s, _ in basic_blocks(insns)}
    em = Emulator(insns, M=M, N=N, K=K, tid=tid, ctaid=ctaid, ntid=block, nctaid=grid)
    em.run(leaders)
    return em.counts, em.visits


# --------------------------------------------------------------------------
# hand-written outlines (nvcc 13.0.88, -arch=sm_90 -O3, default parameters)
#
# Each entry: block start offset -> (name, trips). trips is a Python
# expression in the ints M, N, K (// and % are floor ops), giving how many
# times one thread executes that basic block. For naive/coalesced the
# formulas are for a thread inside C (x < M and y < N); a thread outside C
# runs only the "entry" block. Kernels without bounds checks require M, N, K
# to be multiples of their tiles; the formulas assume it.

KNOWN_OUTLINES: dict[str, dict[int, tuple[str, str]]] = {
    "naive": {
        0x0000: ("entry: indices, bounds check, @P0 EXIT", "1"),
        0x00B0: ("K<1 guard", "1"),
        0x0100: ("K<4 guard (K%4 remainder count)", "int(K>=1)"),
        0x0160: ("x4-loop setup", "int(K>=4)"),
        0x01F0: ("x16 guard", "int(K>=4)"),
        0x0220: ("x16 preheader", "int(K>=16)"),
        0x0230: ("K loop unrolled x16 (body)", "K//16"),
        0x06C0: ("x8 guard", "int(K>=4)"),
        0x06E0: ("x8 step", "int((K//4)%4>=2)"),
        0x0960: ("x4 guard", "int(K>=4)"),
        0x0980: ("K loop x4 step", "(K//4)%2"),
        0x0B10: ("remainder guard", "int(K>=1)"),
        0x0B30: ("remainder setup", "int(K%4>0)"),
        0x0BA0: ("remainder loop x1 (body)", "K%4"),
        0x0C30: ("epilogue: C = alpha*acc + beta*C", "1"),
    },
    "coalesced": {
        0x0000: ("entry: indices, bounds check, @P0 EXIT", "1"),
        0x00D0: ("K<1 guard", "1"),
        0x0120: ("K<4 guard (K%4 remainder count)", "int(K>=1)"),
        0x0190: ("x4-loop setup", "int(K>=4)"),
        0x0220: ("x16 guard", "int(K>=4)"),
        0x0250: ("x16 preheader", "int(K>=16)"),
        0x0260: ("K loop unrolled x16 (body)", "K//16"),
        0x06F0: ("x8 guard", "int(K>=4)"),
        0x0710: ("x8 step", "int((K//4)%4>=2)"),
        0x0990: ("x4 guard", "int(K>=4)"),
        0x09B0: ("K loop x4 step", "(K//4)%2"),
        0x0B40: ("remainder guard", "int(K>=1)"),
        0x0B60: ("remainder setup", "int(K%4>0)"),
        0x0BD0: ("remainder loop x1 (body)", "K%4"),
        0x0C60: ("epilogue: C = alpha*acc + beta*C", "1"),
    },
    "smemtile": {
        0x0000: ("entry, K<1 guard", "1"),
        0x00D0: ("K-loop setup", "int(K>=1)"),
        0x02C0: ("K loop (one BLOCKSIZE=32 tile): 2 LDG, 2 STS, BAR, 32-step dot fully unrolled, BAR", "K//32"),
        0x0800: ("epilogue", "1"),
    },
    "regtile1d": {
        0x0000: ("entry, K<1 guard", "1"),
        0x0140: ("K-loop setup", "int(K>=1)"),
        0x0320: ("K loop (one BK=8 slab): 2 LDG, 2 STS, BAR, dotIdx x resIdx fully unrolled, BAR", "K//8"),
        0x09C0: ("epilogue: 8 x (LDG, FMUL, FFMA, STG)", "1"),
    },
    "regtile2d": {
        0x0000: ("entry, K<1 guard", "1"),
        0x0050: ("K<1 path: zero accumulators", "int(K<1)"),
        0x0270: ("K>=1 path: zero accumulators, pointers", "int(K>=1)"),
        0x0530: ("K loop head (one BK=8 slab): 8 LDG, 8 STS, BAR", "K//8"),
        0x0A80: ("dotIdx loop (not unrolled): 8 LDS + 2 LDS.128 + 64 FFMA", "8*(K//8)"),
        0x0FB0: ("K loop tail: BAR, advance A/B", "K//8"),
        0x1010: ("epilogue: 8 rows x (8 LDG, 8 FMUL, 8 FFMA, 8 STG)", "1"),
    },
    "vectorized": {
        0x0000: ("entry, K<1 guard", "1"),
        0x0050: ("K<1 path: zero accumulators", "int(K<1)"),
        0x0290: ("K>=1 path: zero accumulators, pointers", "int(K>=1)"),
        0x0590: ("K loop head (one BK=8 slab): 2 LDG.128, 4 STS + 1 STS.128, BAR", "K//8"),
        0x07E0: ("dotIdx loop (not unrolled): 4 LDS.128 + 64 FFMA", "8*(K//8)"),
        0x0CA0: ("K loop tail: BAR, advance A/B", "K//8"),
        0x0D00: ("epilogue: 8 rows x (2 LDG.128, 8 FMUL, 8 FFMA, 2 STG.128)", "1"),
    },
    "tiled32": {
        0x0000: ("entry: brow<M guard, @P0 EXIT", "1"),
        0x0060: ("prologue: staging-loop trip counts", "1"),
        0x0390: ("brow loop head: bcol<N guard", "1"),
        0x03C0: ("bcol loop head: C/B column offsets", "1"),
        0x0420: ("acc = 0, K<1 guard", "1"),
        0x0460: ("K-loop setup", "int(K>=1)"),
        0x04B0: ("K loop head: tid>=BM*BK guard", "K//32"),
        0x0500: ("A staging: trip%4 dispatch", "K//32"),
        0x0570: ("A staging remainder, 1st element (LDG, STS)", "K//32"),
        0x0610: ("A staging remainder, elements 2-3", "0"),
        0x06E0: ("A staging: x4-loop guard", "K//32"),
        0x0710: ("A staging loop x4 (unused at BM*BK == threads)", "0"),
        0x0AC0: ("B staging: trip%4 dispatch", "K//32"),
        0x0B00: ("B staging remainder, 1st element (LDG, STS)", "K//32"),
        0x0BA0: ("B staging remainder, elements 2-3", "0"),
        0x0C70: ("B staging: x4-loop guard", "K//32"),
        0x0C90: ("B staging loop x4 (unused at BK*BN == threads)", "0"),
        0x1040: ("BAR, 32-step dot fully unrolled, BAR, K-loop branch", "K//32"),
        0x1530: ("store C, bcol += gridDim.x*BN", "1"),
        0x15B0: ("brow += gridDim.y*BM", "1"),
        0x15F0: ("EXIT", "1"),
    },
    "regblock": {
        0x0000: ("entry: bRow<M guard, @P0 EXIT", "1"),
        0x0070: ("prologue: thread/tile indices, shared addresses", "1"),
        0x0250: ("bCol<N guard", "1"),
        0x0280: ("bCol loop head", "1"),
        0x0290: ("zero acc[8][8], K<1 guard", "1"),
        0x0500: ("K-loop setup", "int(K>=1)"),
        0x0530: ("K loop (one BK=8 slab): 12 LDG, 12 STS, BAR, 8 k-steps fully unrolled, BAR", "K//8"),
        0x2A40: ("store C (64 STG), bCol += gridDim.x*BN, loop test", "1"),
        0x2F40: ("bRow += gridDim.y*BM, loop test", "1"),
        0x2F80: ("EXIT", "1"),
    },
}


def check_sizes(name: str, params: dict) -> list[tuple[int, int, int]]:
    """Sizes the emulator checks the hand formulas on (valid for the kernel)."""
    if name in ("naive", "coalesced"):
        return [(m, n, k) for k in list(range(0, 41)) + [63, 64, 100, 255, 256, 4096]
                for (m, n) in [(37, 45)]]
    if name in ("smemtile", "tiled32"):
        ks = [0, 32, 64, 96, 128, 160, 4096]
        return [(64, 96, k) for k in ks]
    if name == "regtile1d":
        return [(128, 192, k) for k in (0, 8, 16, 24, 64, 4096)]
    if name in ("regtile2d", "vectorized"):
        return [(256, 384, k) for k in (0, 8, 16, 24, 64, 4096)]
    if name == "regblock":
        return [(256, 192, k) for k in (0, 8, 16, 24, 64, 4096)]
    raise KeyError(name)


def sample_threads(name: str, params: dict, M: int, N: int):
    """A few (tid, ctaid) pairs whose paths must all equal the outline."""
    block, grid = launch_shape(name, params, M, N)
    nt = block[0] * block[1] * block[2]
    picks = [0, 1, 31, nt // 2, nt - 1]
    out = []
    for t in picks:
        tid = (t % block[0], (t // block[0]) % block[1], t // (block[0] * block[1]))
        for c in [(0, 0, 0), (grid[0] - 1, grid[1] - 1, 0)]:
            out.append((tid, c))
    if name == "naive":  # keep only threads inside C
        b = params["BLOCK"]
        out = [(t, c) for t, c in out if c[0] * b + t[0] < M and c[1] * b + t[1] < N]
    if name == "coalesced":
        b = params["BLOCKSIZE"]
        out = [(t, c) for t, c in out
               if c[0] * b + t[0] // b < M and c[1] * b + t[0] % b < N]
    return out


def eval_trips(expr: str, M: int, N: int, K: int) -> int:
    return int(eval(expr, {"__builtins__": {}, "int": int, "max": max, "min": min},
                    {"M": M, "N": N, "K": K}))


def dynamic_histogram(outline: list[dict], M: int, N: int, K: int) -> dict:
    """Executed instructions per opcode for one thread, from an outline."""
    c = Counter()
    for b in outline:
        t = eval_trips(b["trips"], M, N, K)
        for op, n in b["opcodes"].items():
            c[op] += n * t
    return dict(c)


def make_outline(name: str, params: dict, insns: list[Insn], default: bool) -> tuple[list, list]:
    """(outline, problems). Blocks in address order with opcodes and trips."""
    blocks = basic_blocks(insns)
    known = KNOWN_OUTLINES.get(name) if default else None
    problems: list[str] = []
    if known is not None and {insns[s].off for s, _ in blocks} != set(known):
        problems.append(
            f"{name}: basic blocks {sorted(hex(insns[s].off) for s, _ in blocks)} differ from "
            f"the hand outline {sorted(hex(k) for k in known)}; SASS changed?")
        known = None
    outline = []
    for s, e in blocks:
        off = insns[s].off
        ent = {
            "name": known[off][0] if known else f"block_{off:04x}",
            "start": f"0x{off:04x}",
            "end": f"0x{insns[e].off:04x}",
            "opcodes": opcode_histogram(insns[s:e + 1]),
        }
        if known:
            ent["trips"] = known[off][1]
        outline.append(ent)
    # check against the emulator
    sizes = check_sizes(name, params) if default else [check_sizes(name, KERNELS[name]["params"])[-1]]
    if not default:
        # variant: fit the sizes to the variant's tiles
        M, N, K = sizes[0]
        p = params
        tm = p.get("BM", p.get("BLOCK", p.get("BLOCKSIZE", 1)))
        tn = p.get("BN", p.get("BLOCK", p.get("BLOCKSIZE", 1)))
        sizes = [(2 * tm, 3 * tn, 4096)]
    for (M, N, K) in sizes:
        threads = sample_threads(name, params, M, N)
        if K > 256:  # long runs: one thread is enough (paths were compared on small K)
            threads = threads[:1]
        for tid, ctaid in threads:
            counts, visits = emulate(insns, name, params, M, N, K, tid, ctaid)
            if known:
                for (s, _e), ent in zip(blocks, outline):
                    want = eval_trips(ent["trips"], M, N, K)
                    if visits.get(s, 0) != want:
                        problems.append(
                            f"{name} M={M} N={N} K={K} tid={tid} ctaid={ctaid}: block {ent['start']} "
                            f"({ent['name']}) ran {visits.get(s, 0)}x, formula says {want}")
                hist = dynamic_histogram(outline, M, N, K)
                if {k: v for k, v in hist.items() if v} != dict(counts):
                    problems.append(f"{name} M={M} N={N} K={K}: histogram mismatch")
            else:
                for (s, _e), ent in zip(blocks, outline):
                    ent.setdefault("emulated_trips", {})[f"M={M},N={N},K={K}"] = visits.get(s, 0)
            if not default:
                break
    return outline, problems


# --------------------------------------------------------------------------


def record(name: str, params: dict, out_dir: Path, tag: str, default: bool) -> list[str]:
    cubin_rel = f"{BUILD_DIR}/{tag}.cubin"
    ptxas = build_cubin(name, params, cubin_rel)
    sass_all = sass_text(REPO_ROOT / cubin_rel)
    sass = function_sass(sass_all, name)
    insns = parse_sass(sass)
    outline, problems = make_outline(name, params, insns, default)
    rec = {
        "schema": "gpusim.static/1",
        "kernel": name,
        "params": params,
        "nvcc_version": nvcc_version(),
        "command": " ".join(nvcc_args(name, params, cubin_rel)),
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d"),
        "ptxas": ptxas,
        "launch": None,  # filled below
        "sass_opcode_histogram": opcode_histogram(insns),
        "outline_trips_meaning": (
            "trips: Python expression in ints M, N, K = times one thread executes the "
            "basic block (predicated-off instructions count, as in ncu inst_executed); "
            "naive/coalesced: for a thread inside C, one outside runs only the first block; "
            "tiled kernels assume M, N, K multiples of the tile and the standard launch"
            if any("trips" in b for b in outline) else
            "emulated_trips: block visit counts of one thread from the SASS emulator at the "
            "given size (no hand formulas for this parameter set)"),
        "outline": outline,
    }
    bs, gs = launch_shape(name, params, 4096, 4096)
    rec["launch"] = {"block": list(bs), "grid_at_4096": list(gs)}
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{tag}.json").write_text(json.dumps(rec, indent=1) + "\n")
    (out_dir / f"{tag}.sass").write_text(sass)
    return problems


def outline_markdown(rec: dict) -> str:
    """The outline of a record as a markdown table (for the README)."""
    lines = ["| block | trips (per thread) | instrs | opcodes |", "|---|---|---:|---|"]
    for b in rec["outline"]:
        t = b.get("trips", b.get("emulated_trips"))
        ops = ", ".join(f"{k} {v}" for k, v in b["opcodes"].items())
        lines.append(f"| `{b['start']}` {b['name']} | `{t}` | {sum(b['opcodes'].values())} | {ops} |")
    return "\n".join(lines)


def load_record(name: str, out_dir="traces/static") -> dict:
    d = Path(out_dir)
    if not d.is_absolute():
        d = REPO_ROOT / d
    return json.loads((d / f"{name}.json").read_text())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="kernels to build (default: --all)")
    ap.add_argument("--all", action="store_true", help="all eight kernels")
    ap.add_argument("--out", default="traces/static", help="output folder (relative to the repo root)")
    ap.add_argument("--no-variants", action="store_true", help="skip the non-default parameter sets")
    ap.add_argument("--markdown", action="store_true",
                    help="print the committed outlines as markdown tables; build nothing")
    ap.add_argument("--dynamic", nargs=3, type=int, metavar=("M", "N", "K"),
                    help="print each kernel's executed instructions per thread at M, N, K "
                         "from the committed outlines; build nothing")
    a = ap.parse_args(argv)
    if a.markdown or a.dynamic:
        for name in (a.names or list(KERNELS)):
            rec = load_record(name, a.out)
            if a.markdown:
                print(f"### {name}\n\n{outline_markdown(rec)}\n")
            else:
                h = dynamic_histogram(rec["outline"], *a.dynamic)
                h = {k: v for k, v in sorted(h.items(), key=lambda kv: -kv[1]) if v}
                print(name, sum(h.values()), h)
        return 0
    names = list(KERNELS) if (a.all or not a.names) else a.names
    out_dir = Path(a.out)
    if not out_dir.is_absolute():
        out_dir = REPO_ROOT / out_dir
    problems = []
    for name in names:
        params = dict(KERNELS[name]["params"])
        problems += record(name, params, out_dir, name, True)
        if not a.no_variants:
            var = {**params, **VARIANTS[name]}
            tag = name + "__" + "_".join(f"{k}{v}" for k, v in VARIANTS[name].items())
            problems += record(name, var, out_dir, tag, False)
        print(f"{name}: ok" if not problems else f"{name}: {len(problems)} problem(s) so far")
    for p in problems[:50]:
        print("PROBLEM:", p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
