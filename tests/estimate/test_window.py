"""The --trace window (gpusim.estimate.window): the prediction's own first round, warp by warp."""
import numpy as np
import pytest

import gpusim
from gpusim.errors import GpusimError
from gpusim.estimate.kernel_time import predict
from gpusim.timing.states import STATES
from gpusim.estimate.window import time_window


@pytest.fixture(scope="module")
def regtile2d():
    r = gpusim.simulate("regtile2d", 512, keep_trace=True)
    return r, predict(r)


def test_the_timeline_window_is_the_predictions_first_window(regtile2d):
    """At the prediction's W1 trips the window is timed with the same CTAs, memory levels and ptxas facts:
    the same run, cycle for cycle."""
    r, p = regtile2d
    w = time_window(r, p)
    r0 = p.rounds[0]
    assert w.iterations == p.windows[0] and w.ctas == r0.block_idx
    assert w.timing.cycles == r0.timing.cycles
    assert (w.timing.warp_state_cycles == r0.timing.warp_state_cycles).all()
    assert w.log_complete and len(w.timing.state_log) > 0


def test_per_warp_steady_state_sums_to_the_rounds(regtile2d):
    """The per-warp table is each warp's share of the steady state the prediction extrapolates: summed over
    the warps, its state cycles and issued instructions are the two windows' difference."""
    r, p = regtile2d
    w = time_window(r, p)
    t1, t2 = p.rounds[0].timing, p.rounds[0].timing2
    assert w.steady
    assert w.warp_issued.sum() == t2.inst_issued - t1.inst_issued
    for k, s in enumerate(STATES):
        diff = t2.state_cycles[s] - t1.state_cycles[s]
        # a warp's state that shrinks between the windows (an end effect: drain, or the loop's last trip,
        # which both SASS windows hold, landing otherwise) counts 0 per warp, as the prediction clamps it
        per_warp = t2.warp_state_cycles[:, k] - t1.warp_state_cycles[:, k]
        assert w.warp_states[:, k].sum() == np.maximum(per_warp, 0).sum() >= max(diff, 0)
        if (per_warp >= 0).all():
            assert w.warp_states[:, k].sum() == diff
    m = w.warp_metrics(0)
    assert m["smsp__average_warp_latency_per_inst_issued.ratio"] == pytest.approx(
        w.warp_active[0] / w.warp_issued[0])


def test_window_options(regtile2d):
    r, p = regtile2d
    assert time_window(r, p, trips=2).iterations == 2
    with pytest.raises(GpusimError, match="positive"):
        time_window(r, p, trips=0)
    p2 = predict(gpusim.simulate("regtile2d", 128, keep_trace=True))
    assert p2.rounds[0].timing2 is None           # 16 trips: timed in full
    w = time_window(gpusim.simulate("regtile2d", 128, keep_trace=True), p2)
    assert not w.steady and w.iterations == p2.rounds[0].trips
    assert np.array_equal(w.warp_states, p2.rounds[0].timing.warp_state_cycles)
