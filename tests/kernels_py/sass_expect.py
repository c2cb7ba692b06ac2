"""What the kernel tests share: the twins' SASS, what it says each kernel must execute, and
the checks every kernel's test file runs.

SASS side: the cuobjdump listing of a twin (traces/static/<tag>.sass, or compiled on the spot
when nvcc is present) is cut into basic blocks (kernels_cuda/build.py's parser: leaders are the
entry, branch targets and the instruction after a branch or EXIT; the `BRA .` / NOP padding
after the last EXIT is dropped). The executed instructions of a launch are the static opcodes
of each block x the times a thread runs it x warps per CTA x CTAs; the trips come either from
hand formulas read off the SASS (`outline_counts`, `kloop_outline_counts`) or from
kernels_cuda/build.py's SASS emulator (`launch_counts`, `every_warp_counts`).

Scaffolding: values against numpy, sampled == full, refusals, hardware records.
"""
import functools
import importlib.util
import json
import subprocess
from collections import Counter
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest

import gpusim
from gpusim.errors import KernelConfigError
from gpusim.memory.counters import per_base_opcode

REPO = Path(__file__).resolve().parents[2]
STATIC = REPO / "traces" / "static"
HW = REPO / "traces" / "hw" / "h200"


# ---------------------------------------------------------------- the twin's SASS

@functools.lru_cache(maxsize=None)
def twin_build():
    """kernels_cuda/build.py as a module (stdlib only): SASS parser, emulator, nvcc wrappers."""
    spec = importlib.util.spec_from_file_location("twin_build_for_tests", REPO / "kernels_cuda" / "build.py")
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def twin_emulator():
    """twin_build(), or skip the test where its emulator cannot be loaded."""
    try:
        b = twin_build()
        b.parse_sass, b.emulate, b.launch_shape  # noqa: B018 - the API the callers use
    except Exception as e:   # noqa: BLE001 - no emulator, no cross-check
        pytest.skip(f"kernels_cuda/build.py emulator unavailable: {e}")
    return b


def static_sass(tag: str) -> str:
    """The committed listing traces/static/<tag>.sass (`tag` with or without the .sass)."""
    return (STATIC / tag).with_suffix(".sass").read_text()


def static_params(tag: str) -> dict:
    """The parameters traces/static/<tag>.sass was compiled with (its .json record)."""
    return json.loads((STATIC / f"{tag}.json").read_text())["params"]


def _compile(kernel: str, params: dict, tmp: Path, tag: str) -> str:
    b = twin_build()
    cubin = Path(tmp) / f"{tag}.cubin"
    b.build_cubin(kernel, params, cubin)
    return b.function_sass(b.sass_text(cubin), kernel)


def fresh_sass(kernel: str, params: dict, tmp: Path) -> str:
    """Compile the twin with these parameters and return its SASS (skip without nvcc/cuobjdump)."""
    b = twin_build()
    try:
        b._find_tool("nvcc")
        b._find_tool("cuobjdump")
    except FileNotFoundError as e:
        pytest.skip(str(e))
    return _compile(kernel, params, tmp, kernel + "_" + "_".join(f"{k}{v}" for k, v in params.items()))


def twin_sass(kernel: str, params: dict, defaults: dict, tmp: Path) -> str:
    """cuobjdump -sass of the twin at `params`: the committed listing (tagged by the parameters
    that differ from `defaults`), else compiled here (skip where that is not possible)."""
    over = {k: v for k, v in params.items() if defaults[k] != v}
    tag = kernel + ("__" + "_".join(f"{k}{v}" for k, v in over.items()) if over else "")
    f = STATIC / f"{tag}.sass"
    if f.exists():
        return f.read_text()
    try:
        return _compile(kernel, params, tmp, tag)
    except (FileNotFoundError, subprocess.CalledProcessError) as e:
        pytest.skip(f"no SASS listing for {tag} and no working nvcc/cuobjdump ({e})")


# ---------------------------------------------------------------- basic blocks

class Block(NamedTuple):
    start: int              # offset of the leader
    first: int              # index of the leader in the parsed listing
    ops: Counter            # static opcodes, full cuobjdump names (predicate stripped)
    back: int | None        # target of the backward branch that ends the block, if any


def sass_blocks(text: str) -> list[Block]:
    """The reachable basic blocks of a cuobjdump -sass listing, in address order."""
    b = twin_build()
    insns = b.parse_sass(text)
    blocks = []
    for s, e in b.basic_blocks(insns):
        last = insns[e]
        t = b._branch_target(last)
        blocks.append(Block(insns[s].off, s, Counter(i.op for i in insns[s:e + 1]),
                            t if t is not None and t <= last.off else None))
    return blocks


def fold_name(op: str) -> str:
    """cuobjdump's name -> the name the simulator gives the same instruction."""
    return "BAR.SYNC" if op.startswith("BAR.SYNC") else op


def base_name(op: str) -> str:
    return op.split(".")[0]


def _nonzero(c: Counter) -> dict:
    return {k: v for k, v in c.items() if v}


# ---------------------------------------------------------------- expectations

def outline_counts(text: str, trips, warps: int, ctas: int) -> dict:
    """Executed instructions per opcode from hand trip formulas: static opcodes of each block
    x trips, summed over the warps of a CTA and the CTAs. `trips` is {block offset: trips}
    (the same for every warp) or a function warp -> that."""
    blocks = sass_blocks(text)
    trips_of_warp = trips if callable(trips) else (lambda w: trips)
    total = Counter()
    for w in range(warps):
        t = trips_of_warp(w)
        assert {b.start for b in blocks} == set(t), "every basic block of the SASS needs a trip formula"
        for b in blocks:
            for op, n in b.ops.items():
                total[fold_name(op)] += n * t[b.start] * ctas
    return _nonzero(total)


def launch_counts(kernel: str, params: dict, text: str, M: int, N: int, K: int, name=fold_name):
    """(executed instructions per opcode of the whole launch, per-block trips of one thread).

    Trips from the SASS emulator of kernels_cuda/build.py for the first thread of the first
    CTA and the last thread of the last CTA (they must agree: every thread of these kernels
    takes the same path), times warps per CTA and CTAs. `name` maps cuobjdump's opcode names
    (fold_name: the simulator's full names; base_name: ncu's base opcodes)."""
    b = twin_build()
    insns = b.parse_sass(text)
    blocks = sass_blocks(text)
    block, grid = b.launch_shape(kernel, params, M, N)
    nthreads = block[0] * block[1] * block[2]
    trips = None
    for tid, cta in [(0, (0, 0, 0)), (nthreads - 1, (grid[0] - 1, grid[1] - 1, 0))]:
        _, visits = b.emulate(insns, kernel, params, M, N, K, (tid, 0, 0), cta)
        t = [visits.get(blk.first, 0) for blk in blocks]
        assert trips is None or t == trips, "threads of the launch take different paths"
        trips = t
    warps = -(-nthreads // 32) * grid[0] * grid[1] * grid[2]
    total = Counter()
    for blk, n in zip(blocks, trips):
        for op, c in blk.ops.items():
            total[name(op)] += c * n * warps
    return _nonzero(total), trips


def every_warp_counts(kernel: str, params: dict, text: str, M: int, N: int, K: int) -> dict:
    """Independent of trip formulas: the emulator walks lane 0 of every warp of every CTA
    through the instruction stream; the executed instructions per opcode, summed."""
    b = twin_emulator()
    insns = b.parse_sass(text)
    block, grid = b.launch_shape(kernel, params, M, N)
    total = Counter()
    for cx in range(grid[0]):
        for cy in range(grid[1]):
            for w in range(block[0] * block[1] // 32):
                t = 32 * w
                counts, _ = b.emulate(insns, kernel, params, M, N, K,
                                      tid=(t % block[0], t // block[0], 0), ctaid=(cx, cy, 0))
                for op, n in counts.items():
                    total[fold_name(op)] += n
    return dict(total)


# opcodes that are not integer/control: their counts follow from the kernel's
# memory and FP structure, whatever the integer bookkeeping around them
STRUCT_BASES = {"LDG", "STG", "LDS", "STS", "FFMA", "FMUL", "BAR"}


def structural(per_op: dict) -> dict:
    return {op: n for op, n in per_op.items() if base_name(op) in STRUCT_BASES}


# ------------------------------------------- the one-thread-per-output K loop (naive, coalesced)

# The 15 basic blocks of the one-thread-per-output kernels, in address order.
KLOOP_ROLES = ("entry", "k_guard", "k4_guard", "x4_setup", "x16_guard", "x16_pre", "x16",
               "x8_guard", "x8", "x4_guard", "x4", "rem_guard", "rem_setup", "x1", "epilogue")
KLOOP_LOOPS = ("x16", "x4", "x1")          # blocks that end in a backward branch to themselves


def kloop_trips(K):
    """Times a thread inside C executes each block, from the SASS control flow:
    x16 loop while more than 12 of the K-K%4 iterations are left, one x8 step if
    8 or 12 are left, x4 loop for the rest, K%4 single steps."""
    k4 = int(K >= 4)
    return {"entry": 1, "k_guard": 1, "k4_guard": int(K >= 1), "x4_setup": k4,
            "x16_guard": k4, "x16_pre": int(K >= 16), "x16": K // 16, "x8_guard": k4,
            "x8": int((K // 4) % 4 >= 2), "x4_guard": k4, "x4": (K // 4) % 2,
            "rem_guard": int(K >= 1), "rem_setup": int(K % 4 > 0), "x1": K % 4, "epilogue": 1}


def kloop_outline_counts(text, K, warps_all, warps_in):
    """Per-opcode executed counts: every warp runs the entry block (its @P0 EXIT
    included); warps with a lane inside C run the rest with kloop_trips(K)."""
    blocks = sass_blocks(text)
    assert len(blocks) == len(KLOOP_ROLES), f"{len(blocks)} basic blocks, expected the 15-block outline"
    for blk, role in zip(blocks, KLOOP_ROLES):
        assert blk.back == (blk.start if role in KLOOP_LOOPS else None), (hex(blk.start), role)
    trips = kloop_trips(K)
    total = Counter()
    for blk, role in zip(blocks, KLOOP_ROLES):
        w = warps_all if role == "entry" else warps_in * trips[role]
        for op, n in blk.ops.items():
            total[op] += n * w
    return _nonzero(total)


def warps_in_c(M, N, B, rows_along_x: bool):
    """(all warps, warps with a lane inside C) of a one-thread-per-output launch of
    ceil(M/B) x ceil(N/B) CTAs of B*B threads. rows_along_x: thread t's row is t % B and its
    column t // B (naive's (B, B) blocks, x = row); else row t // B, column t % B
    (coalesced's 1-D blocks)."""
    gx, gy = -(-M // B), -(-N // B)
    tid = np.arange(B * B)
    r, c = (tid % B, tid // B) if rows_along_x else (tid // B, tid % B)
    bx, by = np.meshgrid(np.arange(gx), np.arange(gy), indexing="ij")
    row = bx.reshape(-1, 1) * B + r
    col = by.reshape(-1, 1) * B + c
    inside = (row < M) & (col < N)
    nw = -(-B * B // 32)
    pad = np.zeros((inside.shape[0], nw * 32), bool)
    pad[:, :B * B] = inside
    per_warp = pad.reshape(inside.shape[0], nw, 32).any(axis=2)
    return per_warp.size, int(per_warp.sum())


# ---------------------------------------------------------------- scaffolding

def assert_values_close(kernel, M, N, K, params=None, tol=1e-5):
    """Simulate in full mode (C checked against numpy's float64 product) and require the
    largest relative error below tol."""
    r = gpusim.simulate(kernel, M, N, K, params=params, mode="full")
    assert r.max_rel_error < tol, (kernel, params, (M, N, K), r.max_rel_error)
    return r


def assert_sampled_equals_full(kernel, M, N, K, params=None):
    """The sampled fast path really samples (fewer CTAs) and gives exactly the full
    enumeration's metrics and per-opcode counts."""
    full = gpusim.simulate(kernel, M, N, K, params=params, mode="full")
    fast = gpusim.simulate(kernel, M, N, K, params=params, mode="sampled")
    assert fast.ctas_simulated < full.ctas_simulated
    assert fast.metrics == full.metrics
    assert fast.inst_executed_per_opcode == full.inst_executed_per_opcode


def assert_refused(kernel, *size, match, error=KernelConfigError, **kw):
    """gpusim.simulate(kernel, *size, **kw) stops with `error`, its message matching `match`."""
    with pytest.raises(error, match=match):
        gpusim.simulate(kernel, *size, **kw)


# metrics compared with Nsight Compute's; HW_INST_KEYS only where a test file asks for them
HW_KEYS = ("smsp__inst_executed.sum",
           "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
           "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
           "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
           "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
           "smsp__sass_inst_executed_op_shared_ld.sum", "smsp__sass_inst_executed_op_shared_st.sum")
HW_INST_KEYS = ("smsp__sass_inst_executed_op_global_ld.sum", "smsp__sass_inst_executed_op_global_st.sum")


def check_hw(kernel: str, size: int, keys=HW_KEYS):
    """Where Nsight Compute counts are recorded (traces/hw/h200/<kernel>_<size>.json), the
    sampled run's executed instructions per (base) opcode and the `keys` metrics equal them."""
    f = HW / f"{kernel}_{size}.json"
    if not f.exists():
        pytest.skip(f"no hardware record {f.relative_to(REPO)}")
    ncu = json.loads(f.read_text())["ncu"]
    r = gpusim.simulate(kernel, size, mode="sampled")
    hw_ops = {k: int(v) for k, v in per_base_opcode(ncu["inst_executed_per_opcode"]).items() if int(v)}
    assert per_base_opcode(r.inst_executed_per_opcode) == hw_ops
    for key in keys:
        if ncu["metrics"].get(key) is not None:
            assert r.metrics[key] == int(ncu["metrics"][key]), key
