"""The sanitizer's rules on one CTA, access by access: which pairs of accesses are hazards."""
import numpy as np

from gpusim.kernel.context import Ctx, Sampler
from gpusim.kernel.sanitizer import Sanitizer


def _cta(threads=64):
    san = Sanitizer("t", __file__)
    k = Ctx("t", (1, 1, 1), (threads, 1, 1), (0, 0, 0), Sampler(False), 48 * 1024, san)
    return k, san


def _kinds(san):
    return sorted(f.kind for f in san.ordered())


def test_a_thread_reading_its_own_store_is_no_hazard():
    k, san = _cta()
    s = k.shared("s", 64)
    s.st(k.tid, k.tid.astype(np.float32))
    s.ld(k.tid)
    s.st(k.tid, k.tid.astype(np.float32))
    assert _kinds(san) == []


def test_raw_across_warps_without_a_barrier_and_none_with_one():
    k, san = _cta()
    s = k.shared("s", 64)
    s.st(k.tid, 1.0)
    k.syncthreads()
    s.ld(63 - k.tid)                 # after the barrier: fine
    assert _kinds(san) == []
    s.st(k.tid, 2.0)                 # overwrites what other threads read in this epoch
    assert _kinds(san) == ["race-war"]
    s.ld(63 - k.tid)                 # reads what others wrote in this epoch
    assert _kinds(san) == ["race-raw", "race-war"]
    (raw,) = [f for f in san.ordered() if f.kind == "race-raw"]
    assert raw.threads == ["(63,0,0)", "(0,0,0)"] and raw.index == 63


def test_a_broadcast_read_then_one_writer_is_a_war_hazard():
    """Many readers of one element: the writer conflicts with a reader other than itself."""
    k, san = _cta()
    s = k.shared("s", 64)
    s.st(k.tid, 1.0)
    k.syncthreads()
    s.ld(np.zeros(64, np.int64))     # every thread reads s[0]
    with k.where(k.tid == 0):
        s.st(k.tid, 5.0)             # thread 0 writes s[0]: threads 1..63 read it
    (f,) = san.ordered()
    assert f.kind == "race-war" and f.index == 0 and f.threads[1] == "(0,0,0)" and f.threads[0] != "(0,0,0)"


def test_two_lanes_of_one_store_on_one_element_is_waw():
    k, san = _cta()
    s = k.shared("s", 64)
    s.st(k.tid // 2, 1.0)
    assert _kinds(san) == ["race-waw"]


def test_vector_accesses_cover_every_element():
    k, san = _cta(16)
    s = k.shared("s", 64)
    s.st(4 * k.tid, (1.0, 1.0, 1.0, 1.0), vec=4)
    s.ld(4 * ((k.tid + 1) % 16) + 3)     # element 3 of the next thread's float4
    assert _kinds(san) == ["race-raw"]


def test_uninitialised_read_and_divergent_barrier():
    k, san = _cta()
    s = k.shared("s", 64)
    with k.where(k.tid < 32):
        s.st(k.tid, 1.0)
        k.syncthreads()
    s.ld(k.tid)
    assert _kinds(san) == ["barrier-divergent", "uninit-shared"]
    (u,) = [f for f in san.ordered() if f.kind == "uninit-shared"]
    assert u.index == 32


def test_out_of_bounds_lanes_are_reported_and_turned_off():
    k, san = _cta()
    g = k.global_array("A", np.zeros(40, np.float32), 0)
    v = g.ld(k.tid)
    (f,) = san.ordered()
    assert f.kind == "oob" and f.array == "A" and f.index == 40 and "24 lanes" in f.detail
    assert v.v.shape == (64,)


def test_two_ctas_storing_one_global_element_race():
    san = Sanitizer("t", __file__)
    C = np.zeros(8, np.float32)
    for b in range(2):
        k = Ctx("t", (2, 1, 1), (8, 1, 1), (b, 0, 0), Sampler(False), 48 * 1024, san)
        k.global_array("C", C, 0).st(k.tid, 1.0)
    (f,) = san.ordered()
    assert f.kind == "global-race" and f.cta == "(1,0,0)" and "another CTA" in f.detail


def test_elements_no_thread_stored_are_unwritten():
    san = Sanitizer("t", __file__)
    C = np.zeros(8, np.float32)
    k = Ctx("t", (1, 1, 1), (8, 1, 1), (0, 0, 0), Sampler(False), 48 * 1024, san)
    with k.where(k.tid % 2 == 0):
        k.global_array("C", C, 0).st(k.tid, 1.0)
    assert san.unwritten("C").tolist() == [1, 3, 5, 7]
