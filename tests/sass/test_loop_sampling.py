"""The loop sampler's timing-window synthesis: trips written from the last period's records equal the
trips run, and a synthesized stretch the next period contradicts makes the window run in full."""
import numpy as np
import pytest

from gpusim.sass import frontend as F
from gpusim.sass import loop_sampling as LS
from tests.sass.test_cta import _traces


def _window(kernel, size, window, monkeypatch, synthesize):
    monkeypatch.setattr(F, "SYNTHESIZE", synthesize)
    M, N, K = size
    return _traces(kernel, M, N, K, [((0, 0, 0), 1), ((1, 0, 0), 1)], monkeypatch, 4096,
                   sample_loops=False, window=window)


# regtile2d: an inner loop per K trip (its trips are synthesized too); dbuf: a double buffer's
# alternating shared addresses (period 2 in the addresses, 1 in the instructions)
@pytest.mark.parametrize("kernel", ["regtile2d", "dbuf", "smemtile"])
def test_synthesized_window_equals_the_window_run(kernel, monkeypatch):
    size = (512, 512, 2048)
    calls = []
    orig = LS.LoopSampling._synthesize

    def counting(self, loop, header, bra_pc):
        n = len(self.r_op)
        orig(self, loop, header, bra_pc)
        calls.append(len(self.r_op) - n)
    monkeypatch.setattr(LS.LoopSampling, "_synthesize", counting)
    syn = _window(kernel, size, 24, monkeypatch, True)
    assert max(calls) > 0, "nothing was synthesized"
    run = _window(kernel, size, 24, monkeypatch, False)
    for (a, na, la), (b, nb, lb) in zip(syn, run):
        assert a.rows.tobytes() == b.rows.tobytes()
        assert np.array_equal(a.addr, b.addr)
        assert (na, la) == (nb, lb)


def test_a_contradicted_stretch_is_run_instead(monkeypatch):
    """Steps that are wrong (every address moved one line too far) fail the next period's check:
    SynthesisMismatch, and run_ctas runs the window in full: the same trace as without synthesis."""
    orig = LS.LoopSampling._steps
    seen = []

    def wrong(self, e0, e1, e2, L):
        got = orig(self, e0, e1, e2, L)
        if got is None:
            return None
        d, sh = got
        return [None if x is None else x + 128 for x in d], sh
    monkeypatch.setattr(LS.LoopSampling, "_steps", wrong)
    orig_check = LS.LoopSampling._check_synthesized

    def check(self, loop):
        try:
            orig_check(self, loop)
        except LS.SynthesisMismatch:
            seen.append(1)
            raise
    monkeypatch.setattr(LS.LoopSampling, "_check_synthesized", check)
    bad = _window("regtile2d", (512, 512, 2048), 24, monkeypatch, True)
    assert seen
    monkeypatch.setattr(LS.LoopSampling, "_steps", orig)
    run = _window("regtile2d", (512, 512, 2048), 24, monkeypatch, False)
    for (a, _, _), (b, _, _) in zip(bad, run):
        assert a.rows.tobytes() == b.rows.tobytes()
        assert np.array_equal(a.addr, b.addr)
