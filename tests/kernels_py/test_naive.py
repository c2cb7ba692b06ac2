"""naive: values, refused configurations, sampled == full, and agreement with its SASS.

The SASS check parses traces/static/naive*.sass into basic blocks (static
opcode counts per block, full SASS names) and multiplies each block by the
times a warp executes it, from the loop schedule ptxas emitted (read off the
SASS, see kernels_py/naive.py): the Python kernel's per-opcode executed
counts must equal that sum exactly.
"""
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import gpusim
from gpusim.errors import KernelConfigError

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "traces" / "static"

# The 15 basic blocks of the one-thread-per-output kernels, in address order.
ROLES = ("entry", "k_guard", "k4_guard", "x4_setup", "x16_guard", "x16_pre", "x16",
         "x8_guard", "x8", "x4_guard", "x4", "rem_guard", "rem_setup", "x1", "epilogue")
LOOPS = ("x16", "x4", "x1")          # blocks that end in a backward branch to themselves

_INSN = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")


def sass_blocks(path):
    """[(start_offset, Counter of full opcode names, backward branch target or None)].

    Leaders are the entry, branch targets and the instruction after a branch
    or EXIT; the trailing `BRA .` self-loop and NOP padding are dropped."""
    insns = []
    for line in Path(path).read_text().splitlines():
        m = _INSN.match(line)
        if m:
            text = re.sub(r"^@!?U?P\w+\s+", "", m.group(2))
            op, _, args = text.partition(" ")
            insns.append((int(m.group(1), 16), op, args))
    while insns and (insns[-1][1] == "NOP" or
                     (insns[-1][1] == "BRA" and int(insns[-1][2], 16) == insns[-1][0])):
        insns.pop()
    offs = [o for o, _, _ in insns]
    leaders = {0}
    for n, (off, op, args) in enumerate(insns):
        if op.startswith("BRA"):
            leaders.add(int(args.split(",")[-1], 16))
            if n + 1 < len(insns):
                leaders.add(offs[n + 1])
        if op == "EXIT" and n + 1 < len(insns):
            leaders.add(offs[n + 1])
    starts = sorted(leaders)
    blocks = []
    for b, s in enumerate(starts):
        e = starts[b + 1] if b + 1 < len(starts) else offs[-1] + 1
        body = [(o, op, a) for o, op, a in insns if s <= o < e]
        last = body[-1]
        back = int(last[2].split(",")[-1], 16) if last[1].startswith("BRA") else None
        blocks.append((s, Counter(op for _, op, _ in body), back if back is not None and back <= last[0] else None))
    return blocks


def compile_sass(kernel, params, out_dir):
    """SASS of kernels_cuda/<kernel>.cu for other parameters (nvcc 13 and
    cuobjdump); skips the test where they are not installed."""
    nvcc = shutil.which("nvcc")
    cuobjdump = shutil.which("cuobjdump")
    if cuobjdump is None:
        try:
            import nvidia
            for root in nvidia.__path__:
                cand = Path(root) / "cu13" / "bin" / "cuobjdump"
                if cand.exists():
                    cuobjdump = str(cand)
        except ImportError:
            pass
    if nvcc is None or cuobjdump is None:
        pytest.skip("needs nvcc and cuobjdump to compile the CUDA twin")
    tag = "_".join(f"{k}{v}" for k, v in params.items())
    cubin = Path(out_dir) / f"{kernel}_{tag}.cubin"
    subprocess.run([nvcc, "-arch=sm_90", "-O3", "-cubin", *(f"-DP_{k}={v}" for k, v in params.items()),
                    "-o", str(cubin), str(ROOT / "kernels_cuda" / f"{kernel}.cu")], check=True,
                   capture_output=True)
    sass = cubin.with_suffix(".sass")
    sass.write_text(subprocess.run([cuobjdump, "-sass", str(cubin)], check=True,
                                   capture_output=True, text=True).stdout)
    return sass


def block_trips(K):
    """Times a thread inside C executes each block, from the SASS control flow:
    x16 loop while more than 12 of the K-K%4 iterations are left, one x8 step if
    8 or 12 are left, x4 loop for the rest, K%4 single steps."""
    k4 = int(K >= 4)
    return {"entry": 1, "k_guard": 1, "k4_guard": int(K >= 1), "x4_setup": k4,
            "x16_guard": k4, "x16_pre": int(K >= 16), "x16": K // 16, "x8_guard": k4,
            "x8": int((K // 4) % 4 >= 2), "x4_guard": k4, "x4": (K // 4) % 2,
            "rem_guard": int(K >= 1), "rem_setup": int(K % 4 > 0), "x1": K % 4, "epilogue": 1}


def sass_expected(path, K, warps_all, warps_in):
    """Per-opcode executed counts: every warp runs the entry block (its @P0 EXIT
    included); warps with a lane inside C run the rest with block_trips(K)."""
    blocks = sass_blocks(path)
    assert len(blocks) == len(ROLES), f"{path}: {len(blocks)} basic blocks, expected the 15-block outline"
    for (start, _, back), role in zip(blocks, ROLES):
        assert back == (start if role in LOOPS else None), (path, hex(start), role)
    trips = block_trips(K)
    total = Counter()
    for (_, ops, _), role in zip(blocks, ROLES):
        w = warps_all if role == "entry" else warps_in * trips[role]
        for op, n in ops.items():
            total[op] += n * w
    return {op: c for op, c in total.items() if c}


def warps_2d(M, N, B):
    """(all warps, warps with a lane inside C) of naive's (B, B) blocks; x = row."""
    gx, gy = -(-M // B), -(-N // B)
    tid = np.arange(B * B)
    tx, ty = tid % B, tid // B
    bx, by = np.meshgrid(np.arange(gx), np.arange(gy), indexing="ij")
    x = bx.reshape(-1, 1) * B + tx
    y = by.reshape(-1, 1) * B + ty
    inside = (x < M) & (y < N)
    nw = -(-B * B // 32)
    pad = np.zeros((inside.shape[0], nw * 32), bool)
    pad[:, :B * B] = inside
    per_warp = pad.reshape(inside.shape[0], nw, 32).any(axis=2)
    return per_warp.size, int(per_warp.sum())


@pytest.mark.parametrize("M,N,K,params", [
    (64, 64, 64, {}),                   # two CTAs per dim, K = 4 x16 trips
    (100, 70, 47, {}),                  # partial CTAs both ways; x16, x8, x4 and x1 stages
    (33, 65, 7, {"BLOCK": 16}),         # K < 16: x4 + 3 single steps
    (21, 17, 3, {"BLOCK": 5}),          # K < 4: remainder only; non-power-of-two block
    (5, 7, 1, {"BLOCK": 1}),            # one-thread blocks, K = 1
])
def test_values_match_numpy(M, N, K, params):
    """C = alpha*A*B + beta*C equals numpy at sizes that are not multiples of the block."""
    r = gpusim.simulate("naive", M, N, K, mode="full", params=params)
    assert r.max_rel_error < 1e-5


@pytest.mark.parametrize("params,size,match", [
    ({"BLOCK": 33}, 64, "exceeds 1024 threads per block"),
    ({}, 32 * 65536, "gridDim.y"),
    ({}, 50000, "32-bit int"),
])
def test_bad_configurations_are_refused(params, size, match):
    """More than 1024 threads, a grid over the y limit and sizes past 32-bit
    indexing stop with a KernelConfigError naming the constraint."""
    M, N, K = (size, size, size) if size != 32 * 65536 else (32, size, 1)
    with pytest.raises(KernelConfigError, match=match):
        gpusim.simulate("naive", M, N, K, params=params)


@pytest.mark.parametrize("M,N,K,params", [
    (130, 100, 119, {}),                # 5x4 CTAs (partial last ones), 7 x16 trips + x4 + 3 x1
    (64, 136, 120, {"BLOCK": 12}),      # 48-B CTA stride along y: grid period 8; x16 + x8
])
def test_sampled_equals_full(M, N, K, params):
    """The fast path (CTA classes, sampled K loop) gives the same metrics and
    per-opcode counts as running every CTA and iteration."""
    full = gpusim.simulate("naive", M, N, K, mode="full", params=params)
    fast = gpusim.simulate("naive", M, N, K, mode="sampled", params=params)
    assert fast.ctas_simulated < full.ctas_simulated
    assert fast.metrics == full.metrics
    assert fast.inst_executed_per_opcode == full.inst_executed_per_opcode


@pytest.mark.parametrize("sass,params", [("naive.sass", {}), ("naive__BLOCK16.sass", {"BLOCK": 16})])
@pytest.mark.parametrize("M,N,K", [(70, 50, 47), (40, 33, 2), (64, 64, 32)])
def test_opcode_counts_equal_sass_outline(sass, params, M, N, K):
    """Per-opcode executed counts (full SASS names) = static opcodes per SASS
    basic block x the block's trips x the warps that run it."""
    B = params.get("BLOCK", 32)
    r = gpusim.simulate("naive", M, N, K, mode="full", params=params)
    expected = sass_expected(STATIC / sass, K, *warps_2d(M, N, B))
    assert r.inst_executed_per_opcode == expected
    assert r.metrics["smsp__inst_executed.sum"] == sum(expected.values())


@pytest.mark.parametrize("block", [1, 7])
def test_opcode_counts_follow_sass_of_other_blocks(block, tmp_path):
    """For BLOCK=1 (S2UR/IADD3 indexing) and BLOCK=7 (IMAD instead of LEA) the
    counts still equal the outline of freshly compiled SASS (needs nvcc)."""
    sass = compile_sass("naive", {"BLOCK": block}, tmp_path)
    M, N, K = 2 * block + 3, 2 * block + 5, 30
    r = gpusim.simulate("naive", M, N, K, mode="full", params={"BLOCK": block})
    assert r.inst_executed_per_opcode == sass_expected(sass, K, *warps_2d(M, N, block))


def test_global_traffic_is_the_textbook_one():
    """2K+1 4-byte loads per warp and one store: a warp holds 32 rows of one
    column, so its A load touches 32 rows (32 sectors), its B load is one
    address (1 sector) and C's load and store are 32 rows (32 sectors)."""
    M = N = K = 64
    r = gpusim.simulate("naive", M, N, K, mode="full")
    m = r.metrics
    warps = M * N // 32
    assert m["smsp__sass_inst_executed_op_global_ld.sum"] == warps * (2 * K + 1)
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == warps * (K * (32 + 1) + 32)
    assert m["smsp__sass_inst_executed_op_global_st.sum"] == warps
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"] == warps * 32
