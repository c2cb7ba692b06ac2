"""The second ladder's claims (memory-bound, shuffle, atomic and reduction kernels), one test each.

Each test asserts the claim of its kernel's docstring on counts from gpusim.simulate, for the
Python kernel and for the compiled twin's SASS. The expected figures are worked out here from the
kernel's parameters and the access pattern its code makes (lanes, bytes per lane, strides), never
typed in as the number the simulator happens to print. The Ctx API the kernels use (shuffles,
atomics, __expf) is tested first.
"""
import math
from collections import Counter

import numpy as np
import pytest

import gpusim
from gpusim.errors import KernelConfigError
from gpusim.estimate.check import check
from gpusim.kernel import LADDER2, get_kernel
from gpusim.kernel.context import Ctx, Sampler
from gpusim.kernel.opcodes import TABLE, SPACE_GLOBAL
from gpusim.estimate.cache_model import hit_rates
from gpusim.memory.counters import per_base_opcode

FRONTENDS = ["python", "sass"]
WARP = 32           # lanes
SECTOR = 32         # bytes
BANKS = 32          # 4-byte shared-memory banks
SIZE = 256          # M = N: a few CTAs a side, every kernel's full run within a few seconds


def sim(kernel, size=SIZE, frontend="sass", **kw):
    kw.setdefault("mode", "full")
    return gpusim.simulate(kernel, size, frontend=frontend, **kw)


def per_request(r, what):
    """Global sectors per request of the loads (what="ld") or stores ("st")."""
    m = r.metrics
    return (m[f"l1tex__t_sectors_pipe_lsu_mem_global_op_{what}.sum"]
            / m[f"l1tex__t_requests_pipe_lsu_mem_global_op_{what}.sum"])


def span(lanes, nbytes, offset=0):
    """Sectors a warp touches reading `lanes` consecutive elements of `nbytes` each, starting
    `offset` bytes from a sector boundary."""
    return (offset + lanes * nbytes - 1) // SECTOR - offset // SECTOR + 1


def strided_sectors(lanes, stride_bytes):
    """Sectors of `lanes` 4-byte accesses `stride_bytes` apart."""
    return len({(lane * stride_bytes) // SECTOR for lane in range(lanes)})


def ways(row_floats):
    """Wavefronts of a warp reading a column of a shared tile whose rows are row_floats apart:
    the most lanes that fall in one bank."""
    return max(Counter((lane * row_floats) % BANKS for lane in range(WARP)).values())


def base_ops(r):
    return per_base_opcode(r.inst_executed_per_opcode)


def distinct_sectors_per_cta(r):
    """Sum over CTAs of the distinct sectors the CTA's global loads touch (what an L1 that keeps
    the CTA's footprint fetches from L2)."""
    t = r.trace
    space, is_store, _, _, _ = TABLE.arrays()
    op = t.rows["op"].astype(np.int64)
    sel = (space[op] == SPACE_GLOBAL) & ~is_store[op] & (t.rows["mem"] >= 0) & (t.rows["mask"] != 0)
    out = 0
    for c in np.unique(t.rows["cta"][sel]):
        a = t.addr[t.rows["mem"][sel & (t.rows["cta"] == c)]]
        out += len(np.unique(a[a >= 0] // SECTOR))
    return out


def l1_hits(r):
    """(sectors the global loads request, of them L1 hits) from the cache model."""
    h = hit_rates(r)
    sectors = r.metrics["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"]
    return sectors, sectors - h["lts__t_sectors_srcunit_tex_op_read.sum"]


# ---------------------------------------------------------------- the Ctx API

def _ctx(threads=64):
    return Ctx("t", (1, 1, 1), (threads, 1, 1), (0, 0, 0), Sampler(False), 49152)


def _names(k):
    return [TABLE[i].name for i in k.r_op]


def test_shuffles_read_other_lanes_of_the_warp_only():
    k = _ctx(64)
    v = k.tid.astype(np.float32) * 10
    lane = k.tid % WARP
    want_down = np.where(lane + 5 < WARP, v + 50, v)        # past lane 31: its own value
    assert np.array_equal(k.shfl_down(v, 5).v, want_down)
    assert np.array_equal(k.shfl_xor(v, 3).v, (k.tid - lane + (lane ^ 3)) * 10)
    assert np.array_equal(k.shfl_idx(v, 7).v, (k.tid - lane + 7) * 10)
    assert _names(k) == ["SHFL.DOWN", "SHFL.BFLY", "SHFL.IDX"]


def test_a_warp_sum_by_shfl_down_lands_in_lane_0():
    k = _ctx(96)
    v = np.random.default_rng(1).random(96).astype(np.float32)
    s = v
    for off in (16, 8, 4, 2, 1):
        s = k.fadd(s, k.shfl_down(s, off))
    assert np.allclose(s.v[::WARP], v.reshape(-1, WARP).sum(axis=1), rtol=1e-6)


def test_atomic_add_sums_every_lane_and_records_its_addresses():
    k = _ctx(64)
    out = k.global_array("out", np.zeros(2, np.float32), 1 << 20)
    with k.where(k.tid % 2 == 0):
        k.atomic_add(out, k.tid // 32, np.float32(1.5))
    assert out.data.tolist() == [1.5 * 16, 1.5 * 16]
    assert _names(k) == [Ctx.ATOMIC_ADD]
    assert TABLE[k.r_op[0]].atomic == "red"
    addr = k.r_addr[0]
    assert set(addr[addr >= 0].tolist()) == {1 << 20, (1 << 20) + 4}


def test_expf_issues_what_ptxas_makes_of_expf():
    """__expf = FMUL by log2(e), FSETP against -126, the predicated halving, MUFU.EX2, the predicated
    squaring (the fix-ups only on lanes whose x*log2(e) < -126)."""
    k = _ctx(64)
    x = np.linspace(-100, 3, 64).astype(np.float32)
    e = k.expf(x)
    assert np.array_equal(e.v, np.exp(x.astype(np.float64)).astype(np.float32))
    assert _names(k) == ["FMUL", "FSETP.GEU.AND", "FMUL", "MUFU.EX2", "FMUL"]
    small = x * np.float32(Ctx.LOG2E) < -126
    assert small.any() and not small.all()
    for i in (2, 4):
        assert np.array_equal(k.r_mask[i], small) and k.r_exec[i].all()


def test_the_sanitizer_takes_atomics_for_no_race():
    """Every CTA's thread 0 adds to out[0]: no race, and out[0] counts as written (by the last one)."""
    r = check("reduce_atomic", 128)
    assert r.ok, [f.describe() for f in r.findings]
    from gpusim.kernel.sanitizer import Sanitizer
    san = Sanitizer("reduce_atomic", get_kernel("reduce_atomic").fn.__code__.co_filename)
    gpusim.simulate("reduce_atomic", 128, mode="full", frontend="python", sanitizer=san)
    assert san.unwritten("out").size == 0 and san.writer_of("out", 0)[1] == 0 and not san.findings


# ---------------------------------------------------------------- sizes

@pytest.mark.parametrize("kernel", LADDER2)
def test_every_kernel_takes_the_run_sizes(kernel):
    """`gpusim run --size S` uses M = N = K = S."""
    spec = get_kernel(kernel)
    for s in (64, 128, 256, 512, 1024, 2048, 4096):
        spec.check(s, s, s, **spec.params)


@pytest.mark.parametrize("kernel,size,match", [
    ("transpose_naive", (96, 80, 1), "N=80 must be a multiple of TILE=32"),
    ("softmax", (64, 48, 1), "N=48 must be a multiple of the warp width"),
    ("sgemv", (60, 64, 1), "M=60 must be a multiple of ROWS=8"),
    ("reduce_shfl", (528, 528, 1), "multiple of G\\*BLOCK"),
    ("reduce_shfl", (100, 100, 1), "M\\*N=10000 must be a multiple of BLOCK=256"),
    ("copy4", (3, 5, 1), "multiple of the float4 width"),
    ("stencil5", (64, 40, 1), "N=40 must be a multiple of BX=32"),
])
def test_sizes_the_twin_cannot_take_are_refused(kernel, size, match):
    with pytest.raises(KernelConfigError, match=match):
        gpusim.simulate(kernel, *size, frontend="python")


# ---------------------------------------------------------------- the claims

@pytest.mark.parametrize("frontend", FRONTENDS)
def test_copy4_16_sectors_per_request_each_byte_once(frontend):
    """copy4: a warp's LDG.128 / STG.128 covers 32 x 16 contiguous bytes = 16 sectors per request,
    and the copy fetches and writes each byte exactly once (the DRAM minimum)."""
    r = sim("copy4", frontend=frontend)
    n_bytes = 4 * r.M * r.N
    for what, opcode in (("ld", "LDG.E.128"), ("st", "STG.E.128")):
        assert per_request(r, what) == span(WARP, 16)
        assert r.inst_executed_per_opcode[opcode] == r.metrics[f"l1tex__t_requests_pipe_lsu_mem_global_op_{what}.sum"]
        assert r.metrics[f"l1tex__t_sectors_pipe_lsu_mem_global_op_{what}.sum"] * SECTOR == n_bytes


@pytest.mark.parametrize("frontend", FRONTENDS)
def test_saxpy_4_sectors_per_request_two_reads_one_write(frontend):
    r = sim("saxpy", frontend=frontend)
    n = r.M * r.N
    m = r.metrics
    assert per_request(r, "ld") == per_request(r, "st") == span(WARP, 4)
    assert m["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] == 2 * m["l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"]
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] * SECTOR == 2 * 4 * n
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"] * SECTOR == 4 * n


@pytest.mark.parametrize("frontend", FRONTENDS)
def test_transpose_naive_stores_32_sectors_per_request(frontend):
    """A warp stores down a column of B: 32 floats M apart, one sector each."""
    r = sim("transpose_naive", frontend=frontend)
    assert per_request(r, "ld") == span(WARP, 4)
    assert per_request(r, "st") == strided_sectors(WARP, 4 * r.M) == WARP


@pytest.mark.parametrize("frontend", FRONTENDS)
@pytest.mark.parametrize("kernel,pad", [("transpose_smem", 0), ("transpose_pad", 1)])
def test_transpose_tile_bank_conflicts(kernel, pad, frontend):
    """Through the tile, both global accesses are row segments (4 sectors per request). The tile's
    column reads are TILE (+pad) floats apart: 32-way conflicts without padding, none with it; its
    row writes are conflict-free either way."""
    r = sim(kernel, frontend=frontend)
    m = r.metrics
    TILE = r.params["TILE"]
    assert per_request(r, "ld") == per_request(r, "st") == span(WARP, 4)
    assert (m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"]
            == ways(TILE + pad) * m["smsp__sass_inst_executed_op_shared_ld.sum"])
    assert (m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"]
            == ways(1) * m["smsp__sass_inst_executed_op_shared_st.sum"])
    assert ways(TILE) == WARP and ways(TILE + 1) == 1
    assert (m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] == 0) == (pad == 1)


@pytest.mark.parametrize("frontend", FRONTENDS)
def test_reduce_smem_divergent_tail_barriers_dominate(frontend):
    """Below s = 32 only warp 0 has lanes at work: the shared requests follow ceil(s/32) warps per
    level, while every warp issues every level's body (predicated off) and takes every barrier."""
    r = sim("reduce_smem", frontend=frontend)
    BLOCK = r.params["BLOCK"]
    G = r.grid[0]
    warps = BLOCK // WARP
    levels = [BLOCK >> i for i in range(1, int(math.log2(BLOCK)) + 1)]        # s = BLOCK/2 .. 1
    busy = sum(-(-s // WARP) for s in levels)                                   # warps with a lane < s
    m, ops = r.metrics, base_ops(r)
    assert m["smsp__sass_inst_executed_op_shared_ld.sum"] == G * (2 * busy + 1)   # + sdata[0]
    assert m["smsp__sass_inst_executed_op_shared_st.sum"] == G * (warps + busy)
    assert ops["LDS"] == G * (2 * len(levels) * warps + 1)
    assert ops["BAR"] == G * warps * (len(levels) + 1)
    assert ops["BAR"] > m["smsp__sass_inst_executed_op_shared_ld.sum"] + m["smsp__sass_inst_executed_op_shared_st.sum"]


def _shfl_reduction_counts(r):
    BLOCK = r.params["BLOCK"]
    G = r.grid[0]
    warps = BLOCK // WARP
    return G, warps, G * (warps * int(math.log2(WARP)) + int(math.log2(warps)))


@pytest.mark.parametrize("frontend", FRONTENDS)
def test_reduce_shfl_no_shared_loads_in_the_warp_phase(frontend):
    """Warps reduce with shuffles; shared memory only carries the BLOCK/32 warp sums: one store per
    warp and one load (by the first warp) per block, one barrier."""
    r = sim("reduce_shfl", 1024, frontend=frontend, mode="sampled")
    G, warps, shfl = _shfl_reduction_counts(r)
    m, ops = r.metrics, base_ops(r)
    assert G == r.params["GRID"] and r.M * r.N // (G * r.params["BLOCK"]) > 1     # several trips
    assert m["smsp__sass_inst_executed_op_shared_ld.sum"] == G
    assert m["smsp__sass_inst_executed_op_shared_st.sum"] == G * warps
    assert ops["BAR"] == G * warps
    assert ops["SHFL"] == shfl
    assert m["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] == r.M * r.N // WARP
    assert m["l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"] == G


@pytest.mark.parametrize("frontend", FRONTENDS)
def test_reduce_atomic_one_request_per_block(frontend):
    """One atomicAdd per block, by one lane: G reductions (REDG), one request and one sector each,
    and no store; the rest is reduce_shfl's."""
    r = sim("reduce_atomic", 1024, frontend=frontend, mode="sampled")
    G, warps, shfl = _shfl_reduction_counts(r)
    m, ops = r.metrics, base_ops(r)
    assert ops["REDG"] == G
    assert m["l1tex__t_requests_pipe_lsu_mem_global_op_red.sum"] == G
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum"] == G * span(1, 4)
    assert m["smsp__sass_inst_executed_op_global_st.sum"] == 0
    assert ops["SHFL"] == shfl and m["smsp__sass_inst_executed_op_shared_ld.sum"] == G


@pytest.mark.parametrize("frontend", FRONTENDS)
def test_softmax_three_reads_per_row_shuffle_reductions(frontend):
    r = sim("softmax", frontend=frontend, keep_trace=True)
    M, N = r.M, r.N
    m, ops = r.metrics, base_ops(r)
    passes = 3
    assert m["gpusim__values_mem_global_op_ld.sum"] == passes * M * N
    assert m["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] == passes * M * N // WARP
    assert per_request(r, "ld") == per_request(r, "st") == span(WARP, 4)
    assert m["gpusim__values_mem_global_op_st.sum"] == M * N
    assert ops["SHFL"] == 2 * M * int(math.log2(WARP))          # two butterflies per row (one warp)
    assert ops.get("BAR", 0) == 0 and m["smsp__sass_inst_executed_op_shared_ld.sum"] == 0
    # at this size a block's rows stay in L1: the second and third reads hit
    sectors, hits = l1_hits(r)
    assert sectors - hits == distinct_sectors_per_cta(r) == sectors // passes


@pytest.mark.parametrize("frontend", FRONTENDS)
def test_stencil5_shifted_loads_straddle_a_sector_neighbours_hit_l1(frontend):
    """A full warp's centre, upper and lower loads are aligned (4 sectors); the left and right
    ones are one float off (5 sectors). Every sector a CTA reads again hits in L1."""
    r = sim("stencil5", frontend=frontend, keep_trace=True)
    t = r.trace
    space, is_store, _, _, _ = TABLE.arrays()
    op = t.rows["op"].astype(np.int64)
    full = (space[op] == SPACE_GLOBAL) & ~is_store[op] & (t.rows["mask"] == 0xFFFFFFFF)
    seen = Counter(t.rows["sectors"][full].tolist())
    aligned, shifted = span(WARP, 4), span(WARP, 4, -4)
    assert span(WARP, 4, 4) == shifted
    assert set(seen) == {aligned, shifted}
    assert 2 * seen[aligned] == 3 * seen[shifted]               # 3 aligned and 2 shifted loads a point
    sectors, hits = l1_hits(r)
    assert sectors - hits == distinct_sectors_per_cta(r)
    assert hits > sectors / 2


@pytest.mark.parametrize("frontend", FRONTENDS)
def test_sgemv_coalesced_rows_x_reused_from_l1(frontend):
    """A's and x's loads are 32 consecutive floats (4 sectors per request); x is read by each of a
    block's ROWS warps, and all but the first read hit in L1; A never does."""
    r = sim("sgemv", frontend=frontend, keep_trace=True)
    M, N, ROWS = r.M, r.N, r.params["ROWS"]
    m, ops = r.metrics, base_ops(r)
    assert per_request(r, "ld") == span(WARP, 4)
    assert m["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] == 2 * M * N // WARP
    assert m["l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"] == M       # lane 0 of each row's warp
    assert ops["SHFL"] == M * int(math.log2(WARP))
    sectors, hits = l1_hits(r)
    x_sectors = span(N, 4)
    assert hits == (M // ROWS) * (ROWS - 1) * x_sectors
    assert sectors - hits == distinct_sectors_per_cta(r)


def test_copy4_reaches_the_dram_roof_in_the_simulation_and_on_the_h200():
    """copy4 at 4096 (128 MB moved: 64 MB read, 64 MB written, far past the L2) reaches at least 85 % of the
    H200's measured device-to-device copy bandwidth (micro/bandwidth_dram.json, read + write bytes), both
    predicted and as recorded. The bandwidth counts the launch's whole time, overhead included."""
    from gpusim.hw.records import hw_record
    from gpusim.estimate.kernel_time import predict
    r = gpusim.simulate("copy4", 4096, keep_trace=True)
    roof = r.gpu.dram_copy_bandwidth_gbps
    moved = get_kernel("copy4").min_bytes(4096, 4096, 4096)
    assert moved == 2 * 4 * 4096 * 4096
    sim_gbps = moved / (predict(r).time_ms * 1e-3) / 1e9
    hw_gbps = moved / (hw_record("copy4", 4096)["time_ms_median"] * 1e-3) / 1e9
    assert sim_gbps >= 0.85 * roof and hw_gbps >= 0.85 * roof
