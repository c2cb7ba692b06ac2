"""kernels_py/regblock.py against numpy, against itself (sampled vs full) and against its SASS.

The SASS side is derived (tests/kernels_py/sass_expect.py) from the twin's cuobjdump listing
(traces/static/regblock*.sass, or compiled on the spot when nvcc is present): basic blocks
parsed, the static opcodes of each block multiplied by the times one thread runs it (from
kernels_cuda/build.py's SASS emulator, cross-checked against hand-written trip formulas), times
warps per CTA and CTAs.
"""
import pytest

import gpusim
from gpusim.memory.counters import per_base_opcode
from tests.kernels_py.sass_expect import (assert_refused, assert_sampled_equals_full, assert_values_close,
                                          base_name, check_hw, launch_counts, twin_sass)

NAME = "regblock"
DEFAULTS = {"BM": 128, "BN": 64, "BK": 8, "TM": 8, "TN": 8}


def sass_counts(params: dict, M: int, N: int, K: int, tmp_path):
    """(executed instructions per base opcode for the whole launch, per-block trips of one thread)."""
    return launch_counts(NAME, params, twin_sass(NAME, params, DEFAULTS, tmp_path), M, N, K, name=base_name)


@pytest.mark.parametrize("M,N,K", [(128, 64, 8), (256, 128, 24), (128, 192, 40)])
def test_values_default(M, N, K):
    """C = A*B (seed 000's kernel ignores alpha and beta) matches numpy at several small sizes."""
    assert_values_close(NAME, M, N, K)


@pytest.mark.parametrize("params,size", [({"BN": 128}, (128, 256, 16)),
                                         ({"BM": 64, "BN": 64, "TM": 4, "TN": 4}, (128, 64, 16)),
                                         ({"TN": 4}, (128, 128, 16)),
                                         ({"TM": 2, "TN": 2, "BM": 32, "BN": 32}, (64, 64, 16))])
def test_values_other_tilings(params, size):
    """Other parameter sets (other staging passes, LDS.128 / LDS.64 widths) compute C right."""
    assert_values_close(NAME, *size, params=params)


@pytest.mark.parametrize("M,N,K,what", [(100, 64, 8, "multiple of BM"), (128, 96, 8, "N of BN"),
                                        (128, 64, 12, "K of BK")])
def test_refuses_sizes_without_bounds_checks(M, N, K, what):
    """The twin has no bounds checks: M, N, K must be multiples of BM, BN, BK, and the error says so."""
    assert_refused(NAME, M, N, K, match=what)


@pytest.mark.parametrize("params", [DEFAULTS, {"BM": 64, "BN": 64, "TM": 4, "TN": 4}])
def test_sampled_equals_full(params):
    """The fast path is exact: 4x4 CTAs (first, last and middle classes) and a K loop of 14 slabs
    (alignment period 4: 12 run, two of them standing for 2 slabs each) give the same metrics and
    per-opcode counts as running every CTA and every slab."""
    p = {**DEFAULTS, **params}
    M, N, K = 4 * p["BM"], 4 * p["BN"], 14 * p["BK"]
    assert_sampled_equals_full(NAME, M, N, K, params=params)


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
    assert_refused(NAME, 1024, params=params, match=what)


@pytest.mark.parametrize("size", [1024, 4096])
def test_matches_hardware_record(size):
    """Where Nsight Compute counts are recorded (traces/hw/h200/regblock_<size>.json), the
    simulated executed instructions (total and per opcode) and global requests and sectors equal them."""
    check_hw(NAME, size)
