"""naive: values, refused configurations, sampled == full, and agreement with its SASS.

The SASS check parses traces/static/naive*.sass into basic blocks (static
opcode counts per block, full SASS names) and multiplies each block by the
times a warp executes it, from the loop schedule ptxas emitted (read off the
SASS, see kernels_py/naive.py): the Python kernel's per-opcode executed
counts must equal that sum exactly. The machinery is in
tests/kernels_py/sass_expect.py (shared with test_coalesced.py).
"""
import pytest

import gpusim
from tests.kernels_py.sass_expect import (assert_refused, assert_sampled_equals_full, assert_values_close,
                                          fresh_sass, kloop_outline_counts, static_sass, warps_in_c)


def warps_2d(M, N, B):
    """(all warps, warps with a lane inside C) of naive's (B, B) blocks; x = row."""
    return warps_in_c(M, N, B, rows_along_x=True)


@pytest.mark.parametrize("M,N,K,params", [
    (64, 64, 64, {}),                   # two CTAs per dim, K = 4 x16 trips
    (100, 70, 47, {}),                  # partial CTAs both ways; x16, x8, x4 and x1 stages
    (33, 65, 7, {"BLOCK": 16}),         # K < 16: x4 + 3 single steps
    (21, 17, 3, {"BLOCK": 5}),          # K < 4: remainder only; non-power-of-two block
    (5, 7, 1, {"BLOCK": 1}),            # one-thread blocks, K = 1
])
def test_values_match_numpy(M, N, K, params):
    """C = alpha*A*B + beta*C equals numpy at sizes that are not multiples of the block."""
    assert_values_close("naive", M, N, K, params=params)


@pytest.mark.parametrize("params,size,match", [
    ({"BLOCK": 33}, 64, "exceeds 1024 threads per block"),
    ({}, 32 * 65536, "gridDim.y"),
    ({}, 50000, "32-bit int"),
])
def test_bad_configurations_are_refused(params, size, match):
    """More than 1024 threads, a grid over the y limit and sizes past 32-bit
    indexing stop with a KernelConfigError naming the constraint."""
    M, N, K = (size, size, size) if size != 32 * 65536 else (32, size, 1)
    assert_refused("naive", M, N, K, match=match, params=params)


@pytest.mark.parametrize("M,N,K,params", [
    (130, 100, 119, {}),                # 5x4 CTAs (partial last ones), 7 x16 trips + x4 + 3 x1
    (64, 136, 120, {"BLOCK": 12}),      # 48-B CTA stride along y: grid period 8; x16 + x8
])
def test_sampled_equals_full(M, N, K, params):
    """The fast path (CTA classes, sampled K loop) gives the same metrics and
    per-opcode counts as running every CTA and iteration."""
    assert_sampled_equals_full("naive", M, N, K, params=params)


@pytest.mark.parametrize("sass,params", [("naive.sass", {}), ("naive__BLOCK16.sass", {"BLOCK": 16})])
@pytest.mark.parametrize("M,N,K", [(70, 50, 47), (40, 33, 2), (64, 64, 32)])
def test_opcode_counts_equal_sass_outline(sass, params, M, N, K):
    """Per-opcode executed counts (full SASS names) = static opcodes per SASS
    basic block x the block's trips x the warps that run it."""
    B = params.get("BLOCK", 32)
    r = gpusim.simulate("naive", M, N, K, mode="full", params=params)
    expected = kloop_outline_counts(static_sass(sass), K, *warps_2d(M, N, B))
    assert r.inst_executed_per_opcode == expected
    assert r.metrics["smsp__inst_executed.sum"] == sum(expected.values())


@pytest.mark.parametrize("block", [1, 7])
def test_opcode_counts_follow_sass_of_other_blocks(block, tmp_path):
    """For BLOCK=1 (S2UR/IADD3 indexing) and BLOCK=7 (IMAD instead of LEA) the
    counts still equal the outline of freshly compiled SASS (needs nvcc)."""
    sass = fresh_sass("naive", {"BLOCK": block}, tmp_path)
    M, N, K = 2 * block + 3, 2 * block + 5, 30
    r = gpusim.simulate("naive", M, N, K, mode="full", params={"BLOCK": block})
    assert r.inst_executed_per_opcode == kloop_outline_counts(sass, K, *warps_2d(M, N, block))


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
