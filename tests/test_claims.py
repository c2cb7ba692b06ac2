"""The seeds' countable claims, one test each, citing the seed.

Two kinds of claim are kept apart:
  * about the ALGORITHM (values a thread reads per FMA, accesses per result): counted in 32-bit
    values moved by threads (`gpusim__values_mem_*`), independent of how ptxas packs them;
  * about what the HARDWARE executes (instructions, requests, sectors, wavefronts): counted per
    warp-level SASS instruction, as Nsight Compute counts them.
Seeds: 000 (tiled / register-blocked kernels), 003 (2-D register tiling), 004 (shared-memory tiling).
"""
import pytest

import gpusim
from gpusim.testing import array_counters, assert_sectors_per_request


def sim(kernel, size, **params):
    return gpusim.simulate(kernel, size, params=params or None)


def ffma(r):
    """FFMAs of the dot product: the epilogue's alpha*acc + beta*C issues one FMUL and one FFMA
    per output, so those FFMAs are as many as the FMULs."""
    per_op = r.inst_executed_per_opcode
    return per_op.get("FFMA", 0) - per_op.get("FMUL", 0)


def ab_loads_per_output(r):
    """Global values of A and B read per output (the seeds count those; C is read apart)."""
    return sum(array_counters(r, nm)["values"] for nm in ("A", "B")) / (r.M * r.N)


def test_coalesced_b_is_4_sectors_a_is_broadcast_seed004():
    """Seed 004: a warp's 32 consecutive floats of B are 4 sectors; A's one shared float is 1."""
    r = gpusim.simulate("coalesced", 256)
    assert_sectors_per_request(r, "B", 4)
    assert_sectors_per_request(r, "A", 1)


def test_naive_walks_down_a_column_of_a_seed004():
    """Seed 004's premise: in the naive kernel a warp's A load is 32 rows apart: 32 sectors,
    and its B load is one float for all lanes: 1 sector."""
    r = gpusim.simulate("naive", 256)
    assert_sectors_per_request(r, "A", 32)
    assert_sectors_per_request(r, "B", 1)


@pytest.mark.parametrize("size", [256, 1024])
def test_smemtile_global_loads_per_output_seed004(size):
    """Seed 004: shared-memory tiling cuts global loads per output from 2K to 2K/32."""
    assert ab_loads_per_output(sim("naive", size)) == 2 * size
    assert ab_loads_per_output(sim("smemtile", size)) == 2 * size / 32


def test_smemtile_two_shared_values_per_fma_seed004():
    """Seed 004: one output per thread means two shared-memory values read per FMA."""
    r = sim("smemtile", 256)
    assert r.metrics["gpusim__values_mem_shared_op_ld.sum"] / (32 * ffma(r)) == 2


def test_regtile1d_nine_values_feed_eight_fmas_seed003():
    """Seed 003: kernel 5 (1-D tiling, TM=8): 1 + TM shared values feed TM FMAs."""
    r = sim("regtile1d", 256)
    assert r.metrics["gpusim__values_mem_shared_op_ld.sum"] / (32 * ffma(r)) == pytest.approx(9 / 8)


@pytest.mark.parametrize("kernel", ["regtile2d", "vectorized"])
def test_regtile2d_sixteen_values_feed_64_fmas_seed003(kernel):
    """Seed 003: with TM = TN = 8, TM + TN = 16 shared values feed TM * TN = 64 FMAs."""
    r = sim(kernel, 256)
    assert r.metrics["gpusim__values_mem_shared_op_ld.sum"] / (32 * ffma(r)) == pytest.approx(16 / 64)


@pytest.mark.parametrize("BM,BN", [(128, 128), (64, 128), (128, 64)])
def test_regtile2d_global_accesses_per_result_seed003(BM, BN):
    """Seed 003: global accesses per result = K (1/BM + 1/BN); BK cancels."""
    size = 512
    r = sim("regtile2d", size, BM=BM, BN=BN)
    assert ab_loads_per_output(r) == pytest.approx(size * (1 / BM + 1 / BN))


def test_regtile2d_4096_traffic_and_memory_floor_seed003():
    """Seed 003: at 4096, K/64 = 64 loads per output, 4.29 GB in all; at 960 GB/s the memory
    floor is 4.47 ms, and 2*4096^3 FLOP at the RTX 5080's FP32 peak is 2.44 ms."""
    r = sim("regtile2d", 4096)
    assert ab_loads_per_output(r) == 64
    ab_values = 64 * 4096**2
    gbytes = 4 * ab_values / 1e9
    assert gbytes == pytest.approx(4.29, abs=0.005)
    assert gbytes / 960 * 1e3 == pytest.approx(4.47, abs=0.005)
    flops = 2 * ffma(r) * 32
    assert flops == 2 * 4096**3
    assert flops / 56.3e12 * 1e3 == pytest.approx(2.44, abs=0.005)


def test_regblock_microtile_values_per_fma_seed000():
    """Seed 000: with an 8x8 microtile each value read from shared memory feeds eight multiply-adds
    (each FMA takes two operands: 2 x FMAs / values read = 8)."""
    r = sim("regblock", 256)
    assert 2 * 32 * ffma(r) / r.metrics["gpusim__values_mem_shared_op_ld.sum"] == pytest.approx(8.0)


def test_tiled32_two_shared_values_per_fma_seed000():
    """Seed 000: with one output per thread every multiply-add consumes two fresh shared reads."""
    r = sim("tiled32", 256)
    assert r.metrics["gpusim__values_mem_shared_op_ld.sum"] / (32 * ffma(r)) == 2


def test_smemtile_occupancy_on_rtx5080_seed004():
    """Seed 004: 1024-thread blocks cap residency at one block on the RTX 5080 (66.7 %);
    the block size binds, not registers or shared memory."""
    r = gpusim.simulate("smemtile", 256, arch="rtx5080")
    m = r.metrics
    assert m["launch__occupancy_limit_warps"] == 1
    assert m["sm__maximum_warps_per_active_cycle_pct"] == pytest.approx(66.67, abs=0.01)


def test_regtile2d_shared_instructions_per_dotidx_hardware():
    """Seed 003 says the inner loop issues 16 separate 32-bit LDS per dotIdx to feed 64 FMAs.
    That is the algorithm (16 values, checked above); the SASS ptxas emits for sm_90 merges the
    Bs row into 2 LDS.128, so the hardware executes 8 LDS + 2 LDS.128 = 10 shared-load
    instructions per 64 FFMA (traces/static/regtile2d.sass)."""
    r = sim("regtile2d", 256)
    per_op = r.inst_executed_per_opcode
    assert per_op["LDS"] / ffma(r) == 8 / 64
    assert per_op["LDS.128"] / ffma(r) == 2 / 64
    assert r.metrics["smsp__sass_inst_executed_op_shared_ld.sum"] / ffma(r) == 10 / 64


@pytest.mark.parametrize("kernel", ["smemtile", "tiled32"])
def test_one_output_per_thread_shared_instructions_hardware(kernel):
    """Seeds 004/000: two shared loads per FMA is the algorithm's count; on sm_90 the As row
    (warp-uniform, contiguous) becomes 8 LDS.128, so the hardware executes 40 shared-load
    instructions per 32 FFMA: 1.25 per FFMA."""
    r = sim(kernel, 256)
    assert r.metrics["smsp__sass_inst_executed_op_shared_ld.sum"] / ffma(r) == 1.25
