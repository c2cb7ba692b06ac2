"""The kernel context: lanes, masks, records, errors and the loop sampler."""
import numpy as np
import pytest

from gpusim.errors import KernelIndexError, UnsupportedOperation
from gpusim.kernel.context import Ctx, Sampler, align_period
from gpusim.memory import cost_trace
from gpusim.trace import trace as _trace


def trace_from_ctx(k, cta):
    """The CTA's trace with its memory rows costed, as the estimate hands it on."""
    return cost_trace(_trace.trace_from_ctx(k, cta))


def make_ctx(block=(64, 1, 1), sampled=False):
    return Ctx("t", (1, 1, 1), block, (0, 0, 0), Sampler(sampled), 49152)


def test_loads_record_one_row_per_active_warp():
    """A load under a mask covering only warp 1 is executed by warp 1 alone."""
    k = make_ctx()
    A = k.global_array("A", np.arange(64, dtype=np.float32), 1 << 20)
    with k.where(k.tid >= 32):
        v = A.ld(k.tid)
    t = trace_from_ctx(k, 0)
    assert list(t.rows["warp"]) == [1]
    assert t.rows["mask"][0] == 0xFFFFFFFF
    assert t.rows["sectors"][0] == 4
    assert np.array_equal(v.v[32:], np.arange(32, 64, dtype=np.float32))
    assert np.all(v.v[:32] == 0)


def test_ffma_records_dependencies():
    """FFMA's sources are the sequence numbers of the loads that produced them."""
    k = make_ctx((32, 1, 1))
    A = k.global_array("A", np.ones(32, np.float32), 1 << 20)
    a = A.ld(k.tid)
    b = A.ld(k.tid)
    c = k.ffma(a, b, 0.0)
    t = trace_from_ctx(k, 0)
    assert (t.rows["src0"][2], t.rows["src1"][2]) == (a.src, b.src)
    assert c.src == 2 and np.all(c.v == 1)


def test_out_of_bounds_names_cta_thread_and_index():
    """An out-of-bounds index stops with the kernel, CTA, thread and index in the message."""
    k = make_ctx((32, 1, 1))
    A = k.global_array("A", np.ones(16, np.float32), 1 << 20)
    with pytest.raises(KernelIndexError, match=r"A\[16\].*CTA \(0,0,0\), thread \(16,0,0\)"):
        A.ld(k.tid)


def test_misaligned_vector_access_is_refused():
    """A float4 load from an index not a multiple of 4 is an error, as in CUDA."""
    k = make_ctx((32, 1, 1))
    A = k.global_array("A", np.ones(256, np.float32), 1 << 20)
    with pytest.raises(KernelIndexError, match="misaligned"):
        A.ld(4 * k.tid + 1, vec=4)


def test_barrier_in_divergent_code_is_refused():
    k = make_ctx()
    with k.where(k.tid < 3), pytest.raises(UnsupportedOperation):
        k.syncthreads()


def test_atomics_are_refused():
    """Atomics would make addresses depend on timing: refused with a clear error."""
    k = make_ctx()
    with pytest.raises(UnsupportedOperation, match="atomics"):
        k.op("ATOMG.E.ADD")


def test_shared_vector_store_and_load_round_trip():
    k = make_ctx((32, 1, 1))
    S = k.shared("S", 128)
    S.st(4 * k.tid, (k.tid * 1.0, k.tid * 2.0, k.tid * 3.0, k.tid * 4.0), vec=4)
    x, y, z, w = S.ld(4 * k.tid, vec=4)
    assert np.array_equal(w.v, 4.0 * k.tid)
    t = trace_from_ctx(k, 0)
    assert list(t.rows["wavefronts"]) == [4, 4]


@pytest.mark.parametrize("n,period", [(0, 1), (5, 4), (40, 4), (41, 8), (100, 1)])
def test_sampler_weights_cover_every_iteration(n, period):
    """Sampled iterations' weights add up to the trip count and each residue keeps its count."""
    it = Sampler(True).iterations(n, period)
    assert sum(w for _, w in it) == n
    for r in range(period):
        assert sum(w for i, w in it if i % period == r) == len(range(r, n, period))


def test_align_period():
    """Iterations until every stride is back on a 128-B line."""
    assert align_period(32) == 1
    assert align_period(8) == 4
    assert align_period(1) == 32
    assert align_period(8, 8 * 4096) == 4
    assert align_period(4, 6) == 16
