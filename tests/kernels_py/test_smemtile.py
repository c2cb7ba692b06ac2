"""smemtile (seed 004's shared-memory tiling): values, fast path, SASS agreement, bad input.

The SASS tests read the committed cuobjdump output of the CUDA twin
(traces/static/smemtile*.sass), cut it into basic blocks, and multiply each block's static
opcodes by how many times a warp runs it (trip formulas read off the SASS, below; the
machinery is in tests/kernels_py/sass_expect.py). The Python kernel must execute exactly
that, opcode by opcode.
"""
import pytest

import gpusim
from tests.kernels_py.sass_expect import (assert_refused, assert_sampled_equals_full, assert_values_close,
                                          every_warp_counts, outline_counts, static_sass)


def test_values_match_numpy():
    """C = alpha*A*B + beta*C within 1e-5 of numpy at several sizes, default and BLOCKSIZE=16."""
    for M, N, K in [(32, 32, 32), (64, 96, 64), (96, 32, 160)]:
        assert_values_close("smemtile", M, N, K)
    for M, N, K in [(16, 48, 16), (48, 32, 112)]:      # 1 and 7 tiles: x4, x2 and x1 stages
        assert_values_close("smemtile", M, N, K, params={"BLOCKSIZE": 16})


def test_sizes_without_bounds_checks_are_refused():
    """The twin has no bounds checks: M, N, K not multiples of BLOCKSIZE stop with an error
    naming that constraint."""
    for M, N, K in [(100, 64, 64), (64, 48, 64), (64, 64, 40)]:
        assert_refused("smemtile", M, N, K, match="multiples of BLOCKSIZE=32", mode="full")


@pytest.mark.parametrize("M,N,K,params", [
    (128, 128, 160, None),                  # 4 CTAs per dim, 5 K tiles: CTA and loop sampling
    (48, 96, 304, {"BLOCKSIZE": 16}),       # CTA y period 2 (64-B tiles); 4 x4 trips + x2 + x1
])
def test_sampled_equals_full(M, N, K, params):
    """The fast path (CTA classes, periodic K loop) gives exactly the full enumeration's
    metrics and per-opcode counts, at sizes where it really samples."""
    assert_sampled_equals_full("smemtile", M, N, K, params=params)


def test_sass_outline_defaults():
    """Per-opcode executed counts at BLOCKSIZE=32 equal the SASS's basic blocks x trips:
    entry, setup, the rolled K loop (2 LDG, 2 STS, 2 BAR, 32 LDS + 8 LDS.128, 32 FFMA,
    6 integer/control) K/32 times, epilogue."""
    M, N, K = 64, 96, 160
    T = K // 32
    trips = {0x0000: 1, 0x00D0: int(K >= 1), 0x02C0: T, 0x0800: 1}
    exp = outline_counts(static_sass("smemtile"), trips, warps=32, ctas=(M // 32) * (N // 32))
    r = gpusim.simulate("smemtile", M, N, K, mode="full")
    assert r.inst_executed_per_opcode == exp
    # the departure from the textbook: the As row is read as LDS.128, the Bs column as LDS
    assert exp["LDS.128"] * 4 == exp["LDS"] == exp["FFMA"] - exp["FMUL"]


@pytest.mark.parametrize("K", [16, 48, 64, 112, 160])
def test_sass_outline_blocksize16(K):
    """At BLOCKSIZE=16 ptxas unrolls the K loop 4x with 2- and 1-tile stages: per-opcode
    counts equal the recorded SASS's blocks x trips for K/16 = 1, 3, 4, 7, 10 tiles."""
    M, N = 32, 48
    T = K // 16
    trips = {0x0000: 1, 0x00D0: 1, 0x02F0: int(T >= 4), 0x0310: T // 4, 0x0E20: 1,
             0x0E50: int(T % 4 >= 2), 0x13F0: 1, 0x1410: T % 2, 0x16B0: 1}
    exp = outline_counts(static_sass("smemtile__BLOCKSIZE16"), trips, warps=8,
                         ctas=(M // 16) * (N // 16))
    r = gpusim.simulate("smemtile", M, N, K, mode="full", params={"BLOCKSIZE": 16})
    assert r.inst_executed_per_opcode == exp


@pytest.mark.parametrize("sass,params,size", [
    ("smemtile.sass", {"BLOCKSIZE": 32}, (64, 32, 96)),
    ("smemtile__BLOCKSIZE16.sass", {"BLOCKSIZE": 16}, (32, 16, 112)),
])
def test_sass_emulator_cross_check(sass, params, size):
    """Independent of the trip formulas: kernels_cuda/build.py's SASS emulator walks lane 0
    of every warp of every CTA through the real instruction stream; the sum equals the
    Python kernel's per-opcode counts (every warp of these kernels is uniform)."""
    M, N, K = size
    exp = every_warp_counts("smemtile", params, static_sass(sass), M, N, K)
    r = gpusim.simulate("smemtile", M, N, K, mode="full", params=params)
    assert r.inst_executed_per_opcode == exp


@pytest.mark.parametrize("params,match", [
    ({"BLOCKSIZE": 33}, "1089 threads per block exceeds 1024"),
    ({"BLOCKSIZE": 0}, "must be positive"),
    ({"BM": 32}, "unknown parameter 'BM'"),
])
def test_bad_parameters_are_refused(params, match):
    """Parameters the twin cannot take stop with a KernelConfigError naming the constraint."""
    assert_refused("smemtile", 64, 64, 64, match=match, params=params)


def test_other_blocksize_memory_structure():
    """BLOCKSIZE=6: the As row (6 floats, 8-B aligned) is read as 3 LDS.64 per tile, Bs as 6
    LDS, as ptxas does for sizes that are even but not multiples of 4."""
    M = N = K = 12
    r = gpusim.simulate("smemtile", M, N, K, mode="full", params={"BLOCKSIZE": 6})
    assert r.max_rel_error < 1e-5
    warps, ctas, tiles = 2, 4, 2                   # 36 threads -> 2 warps
    c = r.inst_executed_per_opcode
    assert c["LDS.64"] == 3 * tiles * warps * ctas
    assert c["LDS"] == 6 * tiles * warps * ctas
    assert "LDS.128" not in c
