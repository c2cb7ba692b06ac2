"""regtile2d: values, fast-path exactness, agreement with the twin's SASS, refusals."""
import pytest

import gpusim
from kernels_py import regtile2d as mod
from tests.kernels_py.sass_expect import (HW_INST_KEYS, HW_KEYS, assert_refused, assert_sampled_equals_full,
                                          assert_values_close, check_hw, fresh_sass, launch_counts,
                                          static_params, static_sass, structural)


# ---------------------------------------------------------------- values

@pytest.mark.parametrize("M,N,K,params", [
    (128, 128, 8, None),
    (256, 384, 24, None),
    (384, 128, 16, None),
    (256, 128, 16, {"BN": 64, "TM": 4}),                            # dotIdx unrolled by 4
    (128, 192, 16, {"BM": 64, "BN": 64, "TM": 4, "TN": 4}),         # dotIdx fully unrolled
    (256, 128, 8, {"BN": 64, "TN": 4}),                             # Bs read as LDS.64 pairs
])
def test_values_match_numpy(M, N, K, params):
    """C = alpha*A*B + beta*C agrees with numpy (float64) to 1e-5 relative, for several sizes and tilings."""
    assert_values_close("regtile2d", M, N, K, params=params)


@pytest.mark.parametrize("M,N,K,name", [(200, 128, 8, "M=200"), (128, 64, 8, "N=64"), (128, 128, 4, "K=4")])
def test_refuses_sizes_that_are_not_tile_multiples(M, N, K, name):
    """The twin has no bounds checks: M, N, K must be multiples of BM, BN, BK, and the error says which."""
    assert_refused("regtile2d", M, N, K, match=f"{name} must be a multiple of B[MNK]", mode="full")


# ---------------------------------------------------------------- fast path

@pytest.mark.parametrize("M,N,K,params", [
    (128, 512, 112, None),                                          # 4 CTAs along x, 14 slabs (period 4)
    (256, 256, 120, {"BM": 64, "BN": 64, "TM": 4, "TN": 4}),        # 4x4 CTAs, 15 slabs
])
def test_sampled_equals_full(M, N, K, params, monkeypatch):
    """The sampled fast path (CTA classes, K-loop residues) gives exactly the full enumeration's counters."""
    monkeypatch.setattr("gpusim.estimate.simulate.ptxas_info", lambda *a: (None, None))  # no compile
    assert_sampled_equals_full("regtile2d", M, N, K, params=params)


# ---------------------------------------------------------------- SASS agreement

@pytest.mark.parametrize("tag", ["regtile2d", "regtile2d__BN64_TM4"])
def test_per_opcode_counts_equal_the_committed_sass(tag):
    """Every opcode's executed count equals static-opcodes-per-block x trips of the committed SASS."""
    params = static_params(tag)
    sass = static_sass(tag)
    M, N, K = 2 * params["BM"], 1 * params["BN"], 3 * params["BK"]
    want, _ = launch_counts("regtile2d", params, sass, M, N, K)
    r = gpusim.simulate("regtile2d", M, N, K, params=params, mode="full")
    assert r.inst_executed_per_opcode == want
    assert r.metrics["smsp__inst_executed.sum"] == sum(want.values())


@pytest.mark.parametrize("p", [
    {"BM": 64, "BN": 64, "BK": 8, "TM": 4, "TN": 4},       # in the table; dotIdx fully unrolled
    {"BM": 128, "BN": 128, "BK": 8, "TM": 4, "TN": 8},     # in the table; dotIdx unrolled by 4
    {"BM": 128, "BN": 64, "BK": 8, "TM": 8, "TN": 4},      # not in the table; Bs as 2 LDS.64 per dotIdx
    {"BM": 128, "BN": 128, "BK": 16, "TM": 8, "TN": 4},    # not in the table; dotIdx 0 peeled, 3 x 5
], ids=lambda p: "BM{BM}_BN{BN}_BK{BK}_TM{TM}_TN{TN}".format(**p))
def test_follows_fresh_sass_for_other_tilings(p, tmp_path, monkeypatch):
    """For tilings compiled on the spot (skipped without nvcc): memory, FP and barrier counts
    follow the SASS (dotIdx unroll factor, merged LDS.128/LDS.64 reads), and the integer counts
    too where the module carries the tiling's block table."""
    monkeypatch.setattr("gpusim.estimate.simulate.ptxas_info", lambda *a: (None, None))  # no 2nd compile
    sass = fresh_sass("regtile2d", p, tmp_path)
    M, N, K = p["BM"], p["BN"], 2 * p["BK"]
    want, _ = launch_counts("regtile2d", p, sass, M, N, K)
    got = gpusim.simulate("regtile2d", M, N, K, params=p, mode="full").inst_executed_per_opcode
    _, exact = mod.int_counts(**p)
    if exact:
        assert got == want
    else:
        assert structural(got) == structural(want)


def test_default_structure_departs_from_textbook_as_sass_does():
    """Per slab and thread at the defaults: per dotIdx 8 LDS (As column) + 2 LDS.128 (Bs row),
    not 16 LDS; 64 FFMA per dotIdx; 8 LDG + 8 STS staging; 2 BAR."""
    r = gpusim.simulate("regtile2d", 128, 128, 8, mode="full")   # one CTA of 8 warps, one slab
    per = {op: n // 8 for op, n in r.inst_executed_per_opcode.items()}
    assert per["LDS"] == 8 * 8 and per["LDS.128"] == 2 * 8
    assert per["FFMA"] == 64 * 8 + 64 and per["FMUL"] == 64     # + epilogue alpha/beta
    assert per["LDG.E"] == 8 + 64 and per["STS"] == 8 and per["STG.E"] == 64
    assert per["BAR.SYNC"] == 2


def test_dot_plan_follows_the_observed_unrolling():
    """dot_plan: rolled at TM*TN >= 64; by 4 at 32 (BK=16: dotIdx 0 peeled, then by 5);
    by min(BK, 128/(TM*TN)) below, fully unrolled (not a loop) when that reaches BK."""
    assert mod.dot_plan(8, 8, 8) == [((d,), True) for d in range(8)]
    assert mod.dot_plan(8, 4, 8) == [((0, 1, 2, 3), True), ((4, 5, 6, 7), True)]
    assert mod.dot_plan(16, 8, 4) == [((0,), False)] + [(tuple(range(d, d + 5)), True) for d in (1, 6, 11)]
    assert mod.dot_plan(8, 4, 4) == [(tuple(range(8)), False)]
    assert mod.dot_plan(32, 4, 4) == [(tuple(range(d, d + 8)), True) for d in range(0, 32, 8)]


# ---------------------------------------------------------------- bad parameters

@pytest.mark.parametrize("params,msg", [
    ({"TM": 3}, "BM=128 must be a multiple of TM=3"),
    ({"TN": 3}, "BN=128 must be a multiple of TN=3"),
    ({"TM": 4, "TN": 2}, "2048 threads per block exceeds 1024"),
    ({"BK": 3}, "A staging loop must cover BM=128 rows"),
    ({"BM": 256, "BN": 64, "BK": 2}, "B staging loop must cover BK=2 rows"),
    ({"BQ": 4}, "unknown parameter 'BQ'"),
])
def test_bad_parameters_are_refused(params, msg):
    """Tilings that break the kernel's assumptions are refused with the constraint named."""
    assert_refused("regtile2d", 256, 256, 64, match=msg, params=params, mode="full")


# ---------------------------------------------------------------- hardware

@pytest.mark.parametrize("size", [1024, 4096])
def test_matches_recorded_hardware_counts(size):
    """Sampled counts equal Nsight Compute's on the H200 (traces/hw/h200), where recorded."""
    check_hw("regtile2d", size, keys=HW_KEYS + HW_INST_KEYS)
