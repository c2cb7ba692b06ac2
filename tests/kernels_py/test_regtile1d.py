"""regtile1d: values, fast-path exactness, agreement with the twin's SASS, refusals.

The SASS helpers (basic blocks of a cuobjdump listing, per-thread block trips
from kernels_cuda/build.py's SASS emulator) are in tests/kernels_py/sass_expect.py.
"""
import pytest

import gpusim
from kernels_py import regtile1d as mod
from tests.kernels_py.sass_expect import (HW_INST_KEYS, HW_KEYS, assert_refused, assert_sampled_equals_full,
                                          assert_values_close, check_hw, fresh_sass, launch_counts,
                                          static_params, static_sass, structural)


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
    assert_values_close("regtile1d", M, N, K, params=params)


@pytest.mark.parametrize("M,N,K,name", [(100, 64, 8, "M=100"), (64, 96, 8, "N=96"), (64, 64, 12, "K=12")])
def test_refuses_sizes_that_are_not_tile_multiples(M, N, K, name):
    """The twin has no bounds checks: M, N, K must be multiples of BM, BN, BK, and the error says which."""
    assert_refused("regtile1d", M, N, K, match=f"{name} must be a multiple of B[MNK]", mode="full")


# ---------------------------------------------------------------- fast path

@pytest.mark.parametrize("M,N,K,params", [
    (256, 256, 104, None),                                      # 4x4 CTAs, 13 slabs (period 4)
    (192, 192, 112, {"BM": 24, "BN": 24, "TM": 3}),             # grid period 4 along x, 14 slabs
])
def test_sampled_equals_full(M, N, K, params, monkeypatch):
    """The sampled fast path (CTA classes, K-loop residues) gives exactly the full enumeration's counters."""
    monkeypatch.setattr("gpusim.estimate.simulate.ptxas_info", lambda *a: (None, None))  # no compile
    assert_sampled_equals_full("regtile1d", M, N, K, params=params)


# ---------------------------------------------------------------- SASS agreement

@pytest.mark.parametrize("tag", ["regtile1d", "regtile1d__TM4_BK16"])
def test_per_opcode_counts_equal_the_committed_sass(tag):
    """Every opcode's executed count equals static-opcodes-per-block x trips of the committed SASS."""
    params = static_params(tag)
    sass = static_sass(tag)
    M, N, K = 2 * params["BM"], 3 * params["BN"], 5 * params["BK"]
    want, _ = launch_counts("regtile1d", params, sass, M, N, K)
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
    want, _ = launch_counts("regtile1d", p, sass, M, N, K)
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
    assert_refused("regtile1d", 256, 256, 64, match=msg, params=params, mode="full")


# ---------------------------------------------------------------- hardware

@pytest.mark.parametrize("size", [1024, 4096])
def test_matches_recorded_hardware_counts(size):
    """Sampled counts equal Nsight Compute's on the H200 (traces/hw/h200), where recorded."""
    check_hw("regtile1d", size, keys=HW_KEYS + HW_INST_KEYS)
