"""The engine's inputs for a round (gpusim.estimate.round_inputs): window traces run once per CTA."""
import numpy as np

import gpusim
from gpusim.estimate import round_inputs as RI
from gpusim.sass import frontend as F


def test_window_traces_are_run_once_and_equal_a_fresh_run(monkeypatch):
    """A prediction asks for the same CTAs' windows several times (the first round, its chains of 2 and 4
    CTAs a slot, each re-timing under DRAM writes): the CTAs already run are taken from the result's memo,
    and the trace equals the one a fresh result runs in full."""
    r, other = gpusim.simulate("reduce_smem", 1024), gpusim.simulate("reduce_smem", 1024)
    gpu = gpusim.get_arch("h200")
    ran = []
    real = F.run_ctas
    monkeypatch.setattr(F, "run_ctas", lambda *a, **k: ran.append(len(a[3])) or real(*a, **k))
    two, _, _ = RI.window_trace(r, RI._resident(r, gpu, 2), None)
    four, trips, rec = RI.window_trace(r, RI._resident(r, gpu, 4), None)
    again, _, _ = RI.window_trace(r, RI._resident(r, gpu, 4), None)
    assert ran == [2, 2]                       # the chain of 4 ran only the CTAs the chain of 2 had not
    fresh, trips_f, rec_f = RI.window_trace(other, RI._resident(r, gpu, 4), None)
    assert ran == [2, 2, 4] and (trips, rec) == (trips_f, rec_f)
    for t in (four, again):
        assert np.array_equal(t.rows, fresh.rows) and np.array_equal(t.addr, fresh.addr)
    assert len(two.rows) < len(four.rows)
