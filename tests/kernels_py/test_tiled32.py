"""tiled32 (seed 000's sgemm_tiled<32,32,32>): values, fast path, SASS agreement, bad input.

The SASS tests read the committed cuobjdump output of the CUDA twin
(traces/static/tiled32*.sass), cut it into basic blocks, and multiply each block's static
opcodes by how many times each warp runs it (trip formulas read off the SASS, below; the
machinery is in tests/kernels_py/sass_expect.py). The Python kernel must execute exactly
that, opcode by opcode.
"""
import pytest

import gpusim
from gpusim.errors import KernelConfigError, LaunchError
from tests.kernels_py.sass_expect import (assert_refused, assert_sampled_equals_full, assert_values_close,
                                          every_warp_counts, outline_counts, static_sass)


def test_values_match_numpy():
    """C = A*B (alpha, beta ignored, as in the seed) within 1e-5 of numpy at several sizes,
    for the defaults and for tilings whose copy loops take 0, 2 or 16 elements per thread."""
    for M, N, K in [(32, 32, 32), (64, 96, 64), (96, 32, 160)]:
        assert_values_close("tiled32", M, N, K)
    for params, (M, N, K) in [({"BM": 16, "BN": 64, "BK": 16}, (32, 128, 48)),
                              ({"BM": 4, "BN": 4, "BK": 64}, (8, 12, 128))]:
        assert_values_close("tiled32", M, N, K, params=params)


def test_sizes_without_bounds_checks_are_refused():
    """The twin has no bounds checks: M, N, K not multiples of BM, BN, BK stop with an error
    naming that constraint."""
    for M, N, K in [(100, 64, 64), (64, 48, 64), (64, 64, 40)]:
        assert_refused("tiled32", M, N, K, match="multiples of BM=32, BN=32, BK=32", mode="full")


@pytest.mark.parametrize("M,N,K,params", [
    (128, 128, 160, None),                          # 4 CTAs per dim, 5 K tiles
    (64, 320, 112, {"BM": 16, "BN": 64, "BK": 16}),  # K-loop period 2 (64-B steps), 7 trips
    (96, 96, 128, {"BM": 16, "BN": 16, "BK": 32}),   # CTA x period 2; 2 elements per thread
])
def test_sampled_equals_full(M, N, K, params):
    """The fast path (CTA classes, periodic K loop) gives exactly the full enumeration's
    metrics and per-opcode counts, at sizes where it really samples."""
    assert_sampled_equals_full("tiled32", M, N, K, params=params)


def test_sass_outline_defaults():
    """Per-opcode executed counts at the defaults equal the SASS's basic blocks x trips.
    Every K tile runs the shared staging guard, A's trip-count dispatch, A's 1-element block
    (1 LDG + 1 STS), A's x4 guard, B's dispatch, B's 1-element block, B's x4 guard and the
    compute block (BSYNC, 2 BAR, 32 LDS + 8 LDS.128, 32 FFMA); the 2-element blocks and the
    x4 loops never run (T = 1 element per thread)."""
    M, N, K = 64, 96, 96
    T = K // 32
    trips = {0x0000: 1, 0x0060: 1, 0x0390: 1, 0x03C0: 1, 0x0420: 1, 0x0460: int(K >= 1),
             0x04B0: T, 0x0500: T, 0x0570: T, 0x0610: 0, 0x06E0: T, 0x0710: 0,
             0x0AC0: T, 0x0B00: T, 0x0BA0: 0, 0x0C70: T, 0x0C90: 0,
             0x1040: T, 0x1530: 1, 0x15B0: 1, 0x15F0: 1}
    exp = outline_counts(static_sass("tiled32"), trips, warps=32, ctas=(M // 32) * (N // 32))
    r = gpusim.simulate("tiled32", M, N, K, mode="full")
    assert r.inst_executed_per_opcode == exp
    # the departure from the textbook: the As row is read as LDS.128, the Bs column as LDS
    assert exp["LDS.128"] * 4 == exp["LDS"] == exp["FFMA"]


def test_sass_outline_variant():
    """BM=16, BN=64, BK=16 (1024 threads): A's tile is only 256 floats, so warps 0-7 copy one
    element each and warps 8-31 skip A's loop; B's 1024 floats take one element per thread.
    Separate guards for the two loops (BM != BN). Counts equal the recorded SASS x trips."""
    M, N, K = 32, 128, 64
    T = K // 16

    def trips(w):
        a = T if w < 8 else 0                       # tid < BM*BK = 256
        return {0x0000: 1, 0x0060: 1, 0x04A0: 1, 0x04D0: 1, 0x05A0: 1, 0x05E0: 1,
                0x06C0: T, 0x0700: a, 0x0750: a, 0x07F0: 0, 0x08C0: a, 0x08E0: 0,
                0x0C90: T, 0x0CE0: T, 0x0D30: T, 0x0DD0: 0, 0x0EA0: T, 0x0EC0: 0,
                0x1270: T, 0x1520: 1, 0x15E0: 1, 0x1620: 1}

    exp = outline_counts(static_sass("tiled32__BM16_BN64_BK16"), trips, warps=32,
                         ctas=(M // 16) * (N // 64))
    r = gpusim.simulate("tiled32", M, N, K, mode="full", params={"BM": 16, "BN": 64, "BK": 16})
    assert r.inst_executed_per_opcode == exp


@pytest.mark.parametrize("sass,params,size", [
    ("tiled32.sass", {"BM": 32, "BN": 32, "BK": 32}, (64, 32, 96)),
    ("tiled32__BM16_BN64_BK16.sass", {"BM": 16, "BN": 64, "BK": 16}, (32, 64, 48)),
])
def test_sass_emulator_cross_check(sass, params, size):
    """Independent of the trip formulas: kernels_cuda/build.py's SASS emulator walks lane 0
    of every warp of every CTA through the real instruction stream; the sum equals the
    Python kernel's per-opcode counts (every warp of these launches is uniform)."""
    M, N, K = size
    exp = every_warp_counts("tiled32", params, static_sass(sass), M, N, K)
    r = gpusim.simulate("tiled32", M, N, K, mode="full", params=params)
    assert r.inst_executed_per_opcode == exp


def test_two_elements_per_thread_predicated_third():
    """BM=BN=16, BK=32: 512 floats per tile for 256 threads, T = 2: every tile runs the
    1-element and the 2-element blocks of both copy loops; the 2-element block's @P3 LDG/STS
    (third element) are predicated off for every lane but still issue. Per warp, tile and
    copy loop: 3 LDG executed, of which 2 move data (only those carry sectors)."""
    M = N = 32
    K = 64
    r = gpusim.simulate("tiled32", M, N, K, mode="full", params={"BM": 16, "BN": 16, "BK": 32})
    assert r.max_rel_error < 1e-5
    warps, ctas, tiles = 8, 4, 2
    c = r.inst_executed_per_opcode
    assert c["LDG.E"] == 2 * 3 * warps * ctas * tiles    # A and B: rem1 + 2 in rem23
    assert c["STS"] == c["LDG.E"]
    # sectors come only from the 2 real loads per loop: 2 x (32 lanes x 4 B = 4 sectors)
    assert r.metrics["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == \
        2 * 2 * 4 * warps * ctas * tiles


def test_predicated_off_loads_are_not_requests():
    """Measured with ncu on an H200 (tiled32 BM=BN=16, BK=32 at 256^3): the predicated-off
    @P3 LDG/STS count in smsp__inst_executed and in the per-opcode table (LDG 98,304), but
    not in smsp__sass_inst_executed_op_global_ld / l1tex__t_requests (65,536 = the loads with
    a lane on) nor in op_shared_st: the kernel issues them under k.where(..., predicate=True)."""
    M = N = K = 256
    r = gpusim.simulate("tiled32", M, N, K, params={"BM": 16, "BN": 16, "BK": 32})
    warps, ctas, tiles = 8, (M // 16) * (N // 16), K // 32
    assert r.inst_executed_per_opcode["LDG.E"] == 2 * 3 * warps * ctas * tiles      # 98,304
    assert r.metrics["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] == \
        2 * 2 * warps * ctas * tiles                                                  # 65,536


@pytest.mark.parametrize("params,err,match", [
    ({"BM": 64, "BN": 32}, KernelConfigError, "2048 threads, more than 1024"),
    ({"BK": 0}, KernelConfigError, "must be positive"),
    ({"TM": 8}, KernelConfigError, "unknown parameter 'TM'"),
    ({"BK": 256}, LaunchError, "shared memory"),
])
def test_bad_parameters_are_refused(params, err, match):
    """Parameters the twin cannot take stop with an error naming the constraint (threads per
    block, positive tiles, known names, static shared memory per block)."""
    assert_refused("tiled32", 256, 256, 256, match=match, error=err, params=params)
