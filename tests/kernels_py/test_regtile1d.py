"""regtile1d: values, fast-path exactness, agreement with the twin's SASS, refusals.

The SASS helpers here (basic blocks of a cuobjdump listing, per-thread block
trips from kernels_cuda/build.py's SASS emulator) are also used by
test_regtile2d.py.
"""
import functools
import importlib.util
import json
import re
from collections import Counter
from pathlib import Path

import pytest

import gpusim
from gpusim.errors import KernelConfigError
from kernels_py import regtile1d as mod

REPO = Path(__file__).resolve().parents[2]
STATIC = REPO / "traces" / "static"
HW = REPO / "traces" / "hw" / "h200"

# opcodes that are not integer/control: their counts follow from the kernel's
# memory and FP structure, whatever the integer bookkeeping around them
STRUCT_BASES = {"LDG", "STG", "LDS", "STS", "FFMA", "FMUL", "BAR"}


# ---------------------------------------------------------------- SASS helpers

@functools.lru_cache(maxsize=None)
def twin_build():
    """kernels_cuda/build.py as a module (stdlib only): emulator and nvcc wrappers."""
    spec = importlib.util.spec_from_file_location("twin_build_for_tests", REPO / "kernels_cuda" / "build.py")
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


_LINE = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")


def sass_blocks(text: str) -> dict:
    """{start offset: Counter(opcode)} for the basic blocks of a cuobjdump -sass listing.

    Leaders: the entry, every branch target, the instruction after a branch or
    an EXIT. Opcodes are named as cuobjdump prints them (modifiers included).
    """
    insns = []
    for ln in text.splitlines():
        m = _LINE.match(ln)
        if not m:
            continue
        body = m.group(2)
        if body.startswith("@"):
            body = body.split(None, 1)[1]
        op, _, rest = body.partition(" ")
        target = int(rest.split()[-1], 16) if op.startswith("BRA") else None
        insns.append((int(m.group(1), 16), op, target))
    leaders = {insns[0][0]} | {t for _, _, t in insns if t is not None}
    for (off, op, t), nxt in zip(insns, insns[1:]):
        if t is not None or op == "EXIT":
            leaders.add(nxt[0])
    blocks, cur = {}, None
    for off, op, _ in insns:
        if off in leaders:
            cur = blocks.setdefault(off, Counter())
        cur[op] += 1
    return blocks


def fold_name(op: str) -> str:
    """cuobjdump's name -> the name the simulator gives the same instruction."""
    return "BAR.SYNC" if op.startswith("BAR.SYNC") else op


def sass_dynamic_counts(kernel: str, params: dict, sass: str, M: int, N: int, K: int) -> dict:
    """Executed instructions per opcode of the whole launch, from the SASS.

    Static opcodes per basic block (sass_blocks) times the block's trips, which
    the SASS emulator of kernels_cuda/build.py measures for one thread; every
    thread of these kernels takes the same path (checked on a few threads), so
    the launch total is that times warps per CTA times CTAs.
    """
    b = twin_build()
    insns = b.parse_sass(sass)
    blocks = sass_blocks(sass)
    block, grid = b.launch_shape(kernel, params, M, N)
    nthreads = block[0] * block[1] * block[2]
    paths = []
    for tid, cta in (((0, 0, 0), (0, 0, 0)), ((nthreads - 1, 0, 0), (grid[0] - 1, grid[1] - 1, 0))):
        _, visits = b.emulate(insns, kernel, params, M, N, K, tid, cta)
        paths.append({insns[i].off: n for i, n in visits.items()})
    assert paths[0] == paths[1], "threads take different paths through the SASS"
    per_thread = Counter()
    for off, ops in blocks.items():
        for op, n in ops.items():
            per_thread[fold_name(op)] += n * paths[0].get(off, 0)
    warps = -(-nthreads // 32) * grid[0] * grid[1] * grid[2]
    return {op: n * warps for op, n in per_thread.items() if n}


def fresh_sass(kernel: str, params: dict, tmp: Path) -> str:
    """Compile the twin with these parameters and return its SASS (skip without nvcc)."""
    b = twin_build()
    try:
        b._find_tool("nvcc")
        b._find_tool("cuobjdump")
    except FileNotFoundError as e:
        pytest.skip(str(e))
    cubin = tmp / ("_".join(f"{k}{v}" for k, v in params.items()) + ".cubin")
    b.build_cubin(kernel, params, cubin)
    return b.function_sass(b.sass_text(cubin), kernel)


def structural(per_op: dict) -> dict:
    return {op: n for op, n in per_op.items() if op.split(".")[0] in STRUCT_BASES}


def check_hw(kernel: str, size: int):
    """Compare sampled counts with a recorded Nsight Compute run, if one exists."""
    f = HW / f"{kernel}_{size}.json"
    if not f.exists():
        pytest.skip(f"no hardware record {f.relative_to(REPO)}")
    rec = json.loads(f.read_text())
    ncu = rec["ncu"]
    r = gpusim.simulate(kernel, size, mode="sampled")
    from gpusim.memory.counters import per_base_opcode
    assert per_base_opcode(r.inst_executed_per_opcode) == {
        k: int(v) for k, v in ncu["inst_executed_per_opcode"].items() if int(v)}
    for key in ("smsp__inst_executed.sum",
                "smsp__sass_inst_executed_op_global_ld.sum", "smsp__sass_inst_executed_op_global_st.sum",
                "smsp__sass_inst_executed_op_shared_ld.sum", "smsp__sass_inst_executed_op_shared_st.sum",
                "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
                "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"):
        if key in ncu["metrics"]:
            assert r.metrics[key] == int(ncu["metrics"][key]), key


# ---------------------------------------------------------------- values

@pytest.mark.parametrize("M,N,K,params", [
    (64, 64, 8, None),
    (128, 192, 24, None),
    (192, 64, 40, None),
    (128, 128, 32, {"TM": 4, "BK": 16}),
    (64, 96, 16, {"BM": 32, "BN": 32, "TM": 4}),
    (128, 128, 8, {"BM": 128, "BN": 128, "BK": 4, "TM": 32}),   # rolled dotIdx loop
])
def test_values_match_numpy(M, N, K, params):
    """C = alpha*A*B + beta*C agrees with numpy (float64) to 1e-5 relative, for several sizes and tilings."""
    r = gpusim.simulate("regtile1d", M, N, K, params=params, mode="full")
    assert r.max_rel_error < 1e-5


@pytest.mark.parametrize("M,N,K,name", [(100, 64, 8, "M=100"), (64, 96, 8, "N=96"), (64, 64, 12, "K=12")])
def test_refuses_sizes_that_are_not_tile_multiples(M, N, K, name):
    """The twin has no bounds checks: M, N, K must be multiples of BM, BN, BK, and the error says which."""
    with pytest.raises(KernelConfigError, match=f"{name} must be a multiple of B[MNK]"):
        gpusim.simulate("regtile1d", M, N, K, mode="full")


# ---------------------------------------------------------------- fast path

@pytest.mark.parametrize("M,N,K,params", [
    (256, 256, 104, None),                                      # 4x4 CTAs, 13 slabs (period 4)
    (192, 192, 112, {"BM": 24, "BN": 24, "TM": 3}),             # grid period 4 along x, 14 slabs
])
def test_sampled_equals_full(M, N, K, params, monkeypatch):
    """The sampled fast path (CTA classes, K-loop residues) gives exactly the full enumeration's counters."""
    monkeypatch.setattr("gpusim.estimate.simulate.ptxas_info", lambda *a: (None, None))  # no compile
    full = gpusim.simulate("regtile1d", M, N, K, params=params, mode="full")
    samp = gpusim.simulate("regtile1d", M, N, K, params=params, mode="sampled")
    assert samp.ctas_simulated < full.ctas_simulated
    assert samp.inst_executed_per_opcode == full.inst_executed_per_opcode
    assert samp.metrics == full.metrics


# ---------------------------------------------------------------- SASS agreement

@pytest.mark.parametrize("tag", ["regtile1d", "regtile1d__TM4_BK16"])
def test_per_opcode_counts_equal_the_committed_sass(tag):
    """Every opcode's executed count equals static-opcodes-per-block x trips of the committed SASS."""
    params = json.loads((STATIC / f"{tag}.json").read_text())["params"]
    sass = (STATIC / f"{tag}.sass").read_text()
    M, N, K = 2 * params["BM"], 3 * params["BN"], 5 * params["BK"]
    want = sass_dynamic_counts("regtile1d", params, sass, M, N, K)
    r = gpusim.simulate("regtile1d", M, N, K, params=params, mode="full")
    assert r.inst_executed_per_opcode == want
    assert r.metrics["smsp__inst_executed.sum"] == sum(want.values())


@pytest.mark.parametrize("p", [
    {"BM": 32, "BN": 32, "BK": 8, "TM": 4},          # integer counts in the table
    {"BM": 128, "BN": 128, "BK": 4, "TM": 32},       # in the table; dotIdx loop rolled, scalar As reads
    {"BM": 48, "BN": 48, "BK": 8, "TM": 6},          # not in the table: 12 LDS.128 per slab
    {"BM": 16, "BN": 16, "BK": 4, "TM": 4},          # not in the table; SASS unrolls the K loop by 4
], ids=lambda p: "BM{BM}_BK{BK}_TM{TM}".format(**p))
def test_follows_fresh_sass_for_other_tilings(p, tmp_path, monkeypatch):
    """For tilings compiled on the spot (skipped without nvcc): memory, FP and barrier counts
    follow the SASS for every tiling, and the integer counts too where the module carries the
    tiling's block table."""
    monkeypatch.setattr("gpusim.estimate.simulate.ptxas_info", lambda *a: (None, None))  # no 2nd compile
    sass = fresh_sass("regtile1d", p, tmp_path)
    M, N, K = p["BM"], p["BN"], 6 * p["BK"]
    want = sass_dynamic_counts("regtile1d", p, sass, M, N, K)
    got = gpusim.simulate("regtile1d", M, N, K, params=p, mode="full").inst_executed_per_opcode
    _, exact = mod.int_counts(**p)
    if exact:
        assert got == want
    else:
        assert structural(got) == structural(want)


def test_default_structure_departs_from_textbook_as_sass_does():
    """Per slab and thread at the defaults: 16 LDS.128 (As, merged) + 8 LDS (Bs), not 64 + 8 scalar
    LDS; 64 FFMA; 1 LDG + 1 STS for each of A and B; 2 BAR."""
    r = gpusim.simulate("regtile1d", 64, 64, 8, mode="full")   # one CTA of 16 warps, one slab
    per = {op: n // 16 for op, n in r.inst_executed_per_opcode.items()}
    assert per["LDS.128"] == 16 and per["LDS"] == 8
    assert per["FFMA"] == 64 + 8 and per["FMUL"] == 8            # + epilogue alpha/beta
    assert per["LDG.E"] == 2 + 8 and per["STS"] == 2 and per["STG.E"] == 8
    assert per["BAR.SYNC"] == 2


def test_shared_vectors_cuts_runs_into_aligned_pieces():
    """shared_vectors: contiguous runs become the widest naturally aligned LDS.128/LDS.64/LDS."""
    assert mod.shared_vectors(range(8), 4) == [(0, 4), (4, 4)]
    assert mod.shared_vectors(range(6), 2) == [(0, 2), (2, 2), (4, 2)]
    assert mod.shared_vectors([1, 2, 3, 4, 5, 6], 4) == [(1, 1), (2, 2), (4, 2), (6, 1)]
    assert mod.shared_vectors([0, 8, 16], 4) == [(0, 1), (8, 1), (16, 1)]


# ---------------------------------------------------------------- bad parameters

@pytest.mark.parametrize("params,msg", [
    ({"TM": 3}, "BM=64 must be a multiple of TM=3"),
    ({"BM": 128, "BN": 128}, "2048 threads per block exceeds 1024"),
    ({"BK": 16}, "BM\\*BK = 1024 must equal"),
    ({"BN": 32, "TM": 4}, "BN\\*BK = 256 must equal"),
    ({"BQ": 4}, "unknown parameter 'BQ'"),
])
def test_bad_parameters_are_refused(params, msg):
    """Tilings that break the kernel's assumptions are refused with the constraint named."""
    with pytest.raises(KernelConfigError, match=msg):
        gpusim.simulate("regtile1d", 256, 256, 64, params=params, mode="full")


# ---------------------------------------------------------------- hardware

@pytest.mark.parametrize("size", [1024, 4096])
def test_matches_recorded_hardware_counts(size):
    """Sampled counts equal Nsight Compute's on the H200 (traces/hw/h200), where recorded."""
    check_hw("regtile1d", size)
