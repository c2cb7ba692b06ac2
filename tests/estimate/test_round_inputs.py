"""The engine's inputs for a round (gpusim.estimate.round_inputs): window traces run once per CTA."""
import numpy as np

import gpusim
from gpusim.estimate import round_inputs as RI
from gpusim.sass import frontend as F


def _count_runs(monkeypatch) -> list:
    """The number of CTAs of each front-end run a window trace makes (CTAs joined in place or one trace
    each)."""
    ran = []
    for name in ("run_ctas", "run_ctas_joined"):
        real = getattr(F, name)
        monkeypatch.setattr(F, name, lambda *a, real=real, **k: ran.append(len(a[3])) or real(*a, **k))
    return ran


def test_window_traces_are_run_once_and_equal_a_fresh_run(monkeypatch):
    """A prediction asks for the same CTAs' windows several times (the first round, its chains of 2 and 4
    CTAs a slot, each re-timing under DRAM writes): the CTAs already run are taken from the result's memo,
    and the trace equals the one a fresh result runs in full."""
    r, other = gpusim.simulate("reduce_smem", 1024), gpusim.simulate("reduce_smem", 1024)
    gpu = gpusim.get_arch("h200")
    ran = _count_runs(monkeypatch)
    two, _, _ = RI.window_trace(r, RI._resident(r, gpu, 2), None)
    four, trips, rec = RI.window_trace(r, RI._resident(r, gpu, 4), None)
    again, _, _ = RI.window_trace(r, RI._resident(r, gpu, 4), None)
    assert ran == [2, 2]                       # the chain of 4 ran only the CTAs the chain of 2 had not
    fresh, trips_f, rec_f = RI.window_trace(other, RI._resident(r, gpu, 4), None)
    assert ran == [2, 2, 4] and (trips, rec) == (trips_f, rec_f)
    for t in (four, again):
        assert np.array_equal(t.rows, fresh.rows) and np.array_equal(t.addr, fresh.addr)
    assert len(two.rows) < len(four.rows)


def test_ctas_run_ahead_give_the_traces_a_later_call_would_run(monkeypatch):
    """time_round runs the CTAs its chains will want with the round's own (ahead): one run, and the
    traces equal those of runs made one list at a time."""
    r, other = gpusim.simulate("regtile2d", 512), gpusim.simulate("regtile2d", 512)
    gpu = gpusim.get_arch("h200")
    ran = _count_runs(monkeypatch)
    two, _, _ = RI.window_trace(r, RI._resident(r, gpu, 2), 4, ahead=RI._resident(r, gpu, 8))
    eight, trips, rec = RI.window_trace(r, RI._resident(r, gpu, 8), 4)
    assert ran == [8]
    two_f, _, _ = RI.window_trace(other, RI._resident(r, gpu, 2), 4)
    eight_f, trips_f, rec_f = RI.window_trace(other, RI._resident(r, gpu, 8), 4)
    assert ran == [8, 2, 6] and (trips, rec) == (trips_f, rec_f)
    for a, b in ((two, two_f), (eight, eight_f)):
        assert np.array_equal(a.rows, b.rows) and np.array_equal(a.addr, b.addr)
    # the round's two CTAs are the first rows and addresses of the eight's one join, not a copy
    assert np.shares_memory(two.rows, eight.rows) and np.shares_memory(two.addr, eight.addr)
    assert not np.shares_memory(two_f.rows, eight_f.rows)      # asked one list at a time: each joined


def test_a_job_still_queued_runs_on_the_thread_that_waits():
    """While the helper runs one job, a thread waiting for it runs the jobs queued behind it itself
    (the latest first), each once; results and errors come back as from the helper."""
    import threading
    import time

    import pytest
    gate = threading.Event()
    where = {}

    def job(name, fail=False):
        where[name] = threading.current_thread().name
        if name == "first":
            gate.wait(5)
        if fail:
            raise ValueError(name)
        return name * 2

    first = RI.in_background(job, "first")
    for _ in range(500):                              # until the helper has taken the first
        if "first" in where:
            break
        time.sleep(0.01)
    second, third = RI.in_background(job, "b"), RI.in_background(job, "c", fail=True)
    threading.Timer(0.3, gate.set).start()
    assert first.result() == "firstfirst"
    assert where["first"].startswith("gpusim-helper")
    assert where["b"] == where["c"] == threading.current_thread().name     # taken back from the queue
    assert second.result() == "bb" and second.result() == "bb"
    with pytest.raises(ValueError, match="c"):
        third.result()
    assert not RI._QUEUED


def test_jobs_the_helper_finished_leave_the_queue():
    """A job nobody asks for (a prediction that stopped half-way) is not kept once the helper ran it."""
    import time
    done = RI.in_background(lambda: 1)
    for _ in range(500):
        if done._queued.done():
            break
        time.sleep(0.01)
    later = RI.in_background(lambda: 2)
    assert done not in RI._QUEUED
    assert later.result() == 2 and done.result() == 1


def test_without_the_helper_jobs_run_here_and_now(monkeypatch):
    """GPUSIM_HELPER_THREAD=0: in_background calls the function on this thread at once and hands back a
    done Future, its error too."""
    import threading

    import pytest
    monkeypatch.setenv(RI.HELPER_ENV, "0")
    assert not RI.helper_thread()
    where = []
    ok = RI.in_background(lambda x: where.append(threading.get_ident()) or x * 2, 21)
    assert ok.done() and ok.result() == 42 and where == [threading.get_ident()]
    bad = RI.in_background(lambda: 1 / 0)
    assert bad.done()
    with pytest.raises(ZeroDivisionError):
        bad.result()
    monkeypatch.setenv(RI.HELPER_ENV, "1")
    assert RI.helper_thread()


def test_a_prediction_is_the_same_without_the_helper(monkeypatch):
    """The helper thread and the L2 model's two halves change where the work runs, not what it gives:
    regtile1d at 2048 (the chip-wide L2 model runs; its stream split in two for the threaded run)."""
    import gpusim.estimate.cache_model as CM
    from gpusim.estimate.kernel_time import predict
    r = gpusim.simulate("regtile1d", 2048, keep_trace=True)
    monkeypatch.setattr(CM, "L2_SPLIT_LINES", 0)
    split = []
    orig = CM._split_sets
    monkeypatch.setattr(CM, "_split_sets", lambda run_part, total: orig(
        lambda part, parts: split.append(parts) or run_part(part, parts), total))
    threaded = predict(r).to_json()
    assert 2 in split
    split.clear()
    monkeypatch.setenv(RI.HELPER_ENV, "0")
    alone = predict(r).to_json()
    assert split == [1]
    assert alone == threaded
