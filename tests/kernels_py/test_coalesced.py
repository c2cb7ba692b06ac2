"""coalesced: values, refused configurations, sampled == full, and agreement with its SASS.

The SASS check parses traces/static/coalesced*.sass (and, where nvcc is
installed, freshly compiled SASS for other BLOCKSIZEs) into basic blocks and
multiplies each block's static opcodes by the times a warp executes it; the
loop schedule is the one naive shares (see tests/kernels_py/sass_expect.py).
"""
import re

import numpy as np
import pytest

import gpusim
from kernels_py.coalesced import _udiv_magic
from tests.kernels_py.sass_expect import (assert_refused, assert_sampled_equals_full, assert_values_close,
                                          fresh_sass, kloop_outline_counts, static_sass, warps_in_c)


def warps_1d(M, N, B):
    """(all warps, warps with a lane inside C) of coalesced's 1-D blocks of B*B threads."""
    return warps_in_c(M, N, B, rows_along_x=False)


@pytest.mark.parametrize("M,N,K,params", [
    (64, 64, 64, {}),                       # 2x2 CTAs, x16 stages only
    (100, 70, 47, {}),                      # partial CTAs; x16, x8, x4 and x1 stages
    (33, 65, 7, {"BLOCKSIZE": 16}),         # K < 16
    (21, 17, 3, {"BLOCKSIZE": 7}),          # K < 4; magic-number division with the add step
    (30, 29, 13, {"BLOCKSIZE": 28}),        # pre-shifted division; 784-thread blocks, partial warp
    (5, 7, 2, {"BLOCKSIZE": 1}),            # one-thread blocks
])
def test_values_match_numpy(M, N, K, params):
    """C = alpha*A*B + beta*C equals numpy, also at sizes that are not multiples of the block."""
    assert_values_close("coalesced", M, N, K, params=params)


@pytest.mark.parametrize("params,MNK,match", [
    ({"BLOCKSIZE": 33}, (64, 64, 64), "exceeds 1024 threads per block"),
    ({}, (32, 32 * 65536, 1), "gridDim.y"),
    ({}, (50000, 50000, 50000), "32-bit int"),
])
def test_bad_configurations_are_refused(params, MNK, match):
    """More than 1024 threads, a grid over the y limit and sizes past 32-bit
    indexing stop with a KernelConfigError naming the constraint."""
    assert_refused("coalesced", *MNK, match=match, params=params)


@pytest.mark.parametrize("M,N,K,params", [
    (130, 100, 119, {}),                    # 5x4 CTAs (partial last), 7 x16 trips + x4 + 3 x1
    (64, 136, 120, {"BLOCKSIZE": 12}),      # 48-B CTA stride along y: grid period 8; x16 + x8
])
def test_sampled_equals_full(M, N, K, params):
    """The fast path (CTA classes, sampled K loop) gives the same metrics and
    per-opcode counts as running every CTA and iteration."""
    assert_sampled_equals_full("coalesced", M, N, K, params=params)


@pytest.mark.parametrize("sass,params", [("coalesced.sass", {}),
                                         ("coalesced__BLOCKSIZE16.sass", {"BLOCKSIZE": 16})])
@pytest.mark.parametrize("M,N,K", [(70, 50, 47), (40, 33, 2), (64, 64, 32)])
def test_opcode_counts_equal_sass_outline(sass, params, M, N, K):
    """Per-opcode executed counts (full SASS names) = static opcodes per SASS
    basic block x the block's trips x the warps that run it."""
    B = params.get("BLOCKSIZE", 32)
    r = gpusim.simulate("coalesced", M, N, K, mode="full", params=params)
    expected = kloop_outline_counts(static_sass(sass), K, *warps_1d(M, N, B))
    assert r.inst_executed_per_opcode == expected
    assert r.metrics["smsp__inst_executed.sum"] == sum(expected.values())


@pytest.mark.parametrize("bs", [1, 7, 28])
def test_opcode_counts_follow_sass_of_other_blocksizes(bs, tmp_path):
    """BLOCKSIZE=1 (uniform-register indexing, vector loop counter), 7 (magic
    division with the add step) and 28 (pre-shifted division, post-shift 0):
    counts equal the outline of freshly compiled SASS, and the magic number
    ptxas multiplies by is the one `_udiv_magic` derives (needs nvcc)."""
    sass = fresh_sass("coalesced", {"BLOCKSIZE": bs}, tmp_path)
    M, N, K = bs + 3, 2 * bs + 1, 30
    r = gpusim.simulate("coalesced", M, N, K, mode="full", params={"BLOCKSIZE": bs})
    assert r.inst_executed_per_opcode == kloop_outline_counts(sass, K, *warps_1d(M, N, bs))
    if bs > 1:
        m = re.search(r"IMAD\.WIDE\.U32 R\d+, R\d+, (-?0x[0-9a-f]+)", sass)
        assert int(m.group(1), 16) & 0xFFFFFFFF == _udiv_magic(bs)[3]


def test_magic_division_is_exact():
    """The magic-number division the kernel mirrors computes x // d for every
    thread index (x < 1024) and at the 32-bit extremes."""
    xs = np.concatenate([np.arange(1024), [2**31 - 1, 2**31, 2**32 - 1]]).astype(object)
    for d in range(3, 33):
        if d & (d - 1) == 0:
            continue
        add, pre, post, magic = _udiv_magic(d)
        for x in xs:
            q = ((x >> pre) * magic) >> 32
            if add:
                q = (((x - q) >> 1) + q) >> post
            else:
                q >>= post
            assert q == x // d, (d, x)


def test_global_traffic_is_the_textbook_one():
    """A warp holds 32 consecutive columns of one row: per k step its A load is
    one address (1 sector), its B load 32 consecutive floats (4 sectors); C's
    load and store are 4 sectors each."""
    M = N = K = 64
    m = gpusim.simulate("coalesced", M, N, K, mode="full").metrics
    warps = M * N // 32
    assert m["smsp__sass_inst_executed_op_global_ld.sum"] == warps * (2 * K + 1)
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == warps * (K * (1 + 4) + 4)
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"] == warps * 4
