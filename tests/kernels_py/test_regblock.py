"""kernels_py/regblock.py against numpy, against itself (sampled vs full) and against its SASS.

The SASS side is derived here from the twin's cuobjdump listing (traces/static/regblock*.sass,
or compiled on the spot when nvcc is present): basic blocks parsed, the static opcodes of each
block multiplied by the times one thread runs it (from kernels_cuda/build.py's SASS emulator,
cross-checked against hand-written trip formulas), times warps per CTA and CTAs.
"""
import importlib.util
import json
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

import gpusim
from gpusim.errors import KernelConfigError
from gpusim.memory.counters import per_base_opcode

REPO = Path(__file__).resolve().parents[2]
NAME = "regblock"
DEFAULTS = {"BM": 128, "BN": 64, "BK": 8, "TM": 8, "TN": 8}


def _build_module():
    spec = importlib.util.spec_from_file_location("twin_build_regblock", REPO / "kernels_cuda" / "build.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


BUILD = _build_module()


def sass_listing(params: dict, tmp_path) -> str:
    """cuobjdump -sass of the twin at `params`: the committed listing, else compiled here."""
    over = {k: v for k, v in params.items() if DEFAULTS[k] != v}
    tag = NAME + ("__" + "_".join(f"{k}{v}" for k, v in over.items()) if over else "")
    f = REPO / "traces" / "static" / f"{tag}.sass"
    if f.exists():
        return f.read_text()
    try:
        cubin = tmp_path / f"{tag}.cubin"
        BUILD.build_cubin(NAME, params, cubin)
        return BUILD.function_sass(BUILD.sass_text(cubin), NAME)
    except (FileNotFoundError, subprocess.CalledProcessError) as e:
        pytest.skip(f"no SASS listing for {tag} and no working nvcc/cuobjdump ({e})")


def sass_counts(params: dict, M: int, N: int, K: int, tmp_path):
    """(executed instructions per base opcode for the whole launch, per-block trips of one thread)."""
    insns = BUILD.parse_sass(sass_listing(params, tmp_path))
    blocks = BUILD.basic_blocks(insns)
    block, grid = BUILD.launch_shape(NAME, params, M, N)
    nthreads = block[0] * block[1] * block[2]
    trips = None
    for tid, cta in [(0, (0, 0, 0)), (nthreads - 1, (grid[0] - 1, grid[1] - 1, 0))]:
        _, visits = BUILD.emulate(insns, NAME, params, M, N, K, (tid, 0, 0), cta)
        t = [visits.get(s, 0) for s, _ in blocks]
        assert trips is None or t == trips, "threads of the launch take different paths"
        trips = t
    warps = -(-nthreads // 32) * grid[0] * grid[1] * grid[2]
    total = Counter()
    for (s, e), n in zip(blocks, trips):
        for i in insns[s:e + 1]:
            total[i.op.split(".")[0]] += n * warps
    return {k: v for k, v in total.items() if v}, trips


@pytest.mark.parametrize("M,N,K", [(128, 64, 8), (256, 128, 24), (128, 192, 40)])
def test_values_default(M, N, K):
    """C = A*B (seed 000's kernel ignores alpha and beta) matches numpy at several small sizes."""
    r = gpusim.simulate(NAME, M, N, K, mode="full")
    assert r.max_rel_error < 1e-5


@pytest.mark.parametrize("params,size", [({"BN": 128}, (128, 256, 16)),
                                         ({"BM": 64, "BN": 64, "TM": 4, "TN": 4}, (128, 64, 16)),
                                         ({"TN": 4}, (128, 128, 16)),
                                         ({"TM": 2, "TN": 2, "BM": 32, "BN": 32}, (64, 64, 16))])
def test_values_other_tilings(params, size):
    """Other parameter sets (other staging passes, LDS.128 / LDS.64 widths) compute C right."""
    r = gpusim.simulate(NAME, *size, params=params, mode="full")
    assert r.max_rel_error < 1e-5


@pytest.mark.parametrize("M,N,K,what", [(100, 64, 8, "multiple of BM"), (128, 96, 8, "N of BN"),
                                        (128, 64, 12, "K of BK")])
def test_refuses_sizes_without_bounds_checks(M, N, K, what):
    """The twin has no bounds checks: M, N, K must be multiples of BM, BN, BK, and the error says so."""
    with pytest.raises(KernelConfigError, match=what):
        gpusim.simulate(NAME, M, N, K)


@pytest.mark.parametrize("params", [DEFAULTS, {"BM": 64, "BN": 64, "TM": 4, "TN": 4}])
def test_sampled_equals_full(params):
    """The fast path is exact: 4x4 CTAs (first, last and middle classes) and a K loop of 14 slabs
    (alignment period 4: 12 run, two of them standing for 2 slabs each) give the same metrics and
    per-opcode counts as running every CTA and every slab."""
    p = {**DEFAULTS, **params}
    M, N, K = 4 * p["BM"], 4 * p["BN"], 14 * p["BK"]
    full = gpusim.simulate(NAME, M, N, K, params=params, mode="full")
    fast = gpusim.simulate(NAME, M, N, K, params=params, mode="sampled")
    assert fast.ctas_simulated < full.ctas_simulated
    assert fast.metrics == full.metrics
    assert fast.inst_executed_per_opcode == full.inst_executed_per_opcode


def test_sass_agreement_default(tmp_path):
    """Per-opcode executed counts at 256x192x32 equal the SASS outline (static opcodes per basic
    block x trips) of the default build; the trips follow the hand formulas (grid-stride loops
    run once with the standard launch, the K loop K/BK times)."""
    M, N, K = 256, 192, 32
    want, trips = sass_counts(DEFAULTS, M, N, K, tmp_path)
    # entry, prologue, bRow head, bCol entry, bCol head, K setup, K loop, store, bRow tail, EXIT
    assert trips == [1, 1, 1, 1, 1, 1, K // 8, 1, 1, 1]
    r = gpusim.simulate(NAME, M, N, K, mode="full")
    assert per_base_opcode(r.inst_executed_per_opcode) == want
    assert r.metrics["smsp__inst_executed.sum"] == sum(want.values())


def test_sass_agreement_k_step_structure():
    """The textbook's 8 rA + 8 rB scalar loads per k are 4 LDS.128 in the default SASS, feeding
    64 FFMA; the staging is scalar: per thread and K slab 12 LDG.E, 12 STS, 32 LDS.128,
    512 FFMA, 2 BAR; the store is 64 scalar STG.E and two EXIT run (one predicated off)."""
    M, N, K = 256, 128, 16
    r = gpusim.simulate(NAME, M, N, K, mode="full")
    warps = (M // 128) * (N // 64) * 128 // 32
    slabs = K // 8
    ops = r.inst_executed_per_opcode
    assert {op: ops.get(op, 0) / (warps * slabs) for op in ("LDG.E", "STS", "LDS.128", "LDS", "FFMA", "BAR.SYNC")} == \
        {"LDG.E": 12, "STS": 12, "LDS.128": 32, "LDS": 0, "FFMA": 512, "BAR.SYNC": 2}
    assert ops["STG.E"] == 64 * warps
    assert ops["EXIT"] == 2 * warps


@pytest.mark.parametrize("params", [{"BN": 128},                              # the recorded variant
                                    {"BM": 64, "BN": 64, "TM": 4, "TN": 4},
                                    {"TN": 4}])
def test_sass_agreement_other_tilings(params, tmp_path):
    """The kernel follows the SASS of other parameter sets too: staging passes, LDS.128 per k,
    scalar stores and the integer instructions of each block."""
    p = {**DEFAULTS, **params}
    M, N, K = p["BM"], 2 * p["BN"], 2 * p["BK"]
    want, _ = sass_counts(p, M, N, K, tmp_path)
    r = gpusim.simulate(NAME, M, N, K, params=params, mode="full")
    assert per_base_opcode(r.inst_executed_per_opcode) == want


@pytest.mark.parametrize("params,what", [
    ({"BM": 100}, "BM must be a multiple of TM"),
    ({"BM": 256, "BN": 256, "TM": 4, "TN": 4}, "exceeds 1024"),
    ({"BK": 12}, "A staging loop"),
    ({"BN": 128, "TN": 32}, "B staging loop"),
    ({"BQ": 3}, "unknown parameter"),
])
def test_bad_parameters_refused(params, what):
    """Tilings that break the twin's static_asserts are refused, naming the constraint."""
    with pytest.raises(KernelConfigError, match=what):
        gpusim.simulate(NAME, 1024, params=params)


@pytest.mark.parametrize("size", [1024, 4096])
def test_matches_hardware_record(size):
    """Where Nsight Compute counts are recorded (traces/hw/h200/regblock_<size>.json), the
    simulated executed instructions (total and per opcode) and global requests and sectors equal them."""
    f = REPO / "traces" / "hw" / "h200" / f"{NAME}_{size}.json"
    if not f.exists():
        pytest.skip(f"no hardware record {f.name}")
    rec = json.loads(f.read_text())
    ncu = rec.get("ncu") or {}
    if not ncu.get("metrics"):
        pytest.skip(f"{f.name} holds no ncu metrics")
    r = gpusim.simulate(NAME, size, mode="sampled")
    for key in ("smsp__inst_executed.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
                "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
                "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
                "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
                "smsp__sass_inst_executed_op_shared_ld.sum", "smsp__sass_inst_executed_op_shared_st.sum"):
        if ncu["metrics"].get(key) is not None:
            assert r.metrics[key] == ncu["metrics"][key], key
    hw_ops = ncu.get("inst_executed_per_opcode")
    if hw_ops:
        hw = {k: v for k, v in per_base_opcode(hw_ops).items() if v}
        assert per_base_opcode(r.inst_executed_per_opcode) == hw
