"""The runner's inputs for a kernel that is not an SGEMM (gpusim.hw.gpu.ArgsProblem), on numpy standing in
for cupy: arguments in the twin's order, outputs poisoned, the spec's reference as the check."""
import types

import numpy as np

from gpusim.hw import gpu
from gpusim.kernel.spec import Arg, KernelSpec


class _RandomState:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def uniform(self, lo, hi, n, dtype):
        return (self.rng.random(n) * (hi - lo) + lo).astype(dtype)


def _fake_cupy():
    cp = types.SimpleNamespace(**{k: getattr(np, k) for k in ("float32", "nan", "full", "isnan", "asarray")})
    cp.random = types.SimpleNamespace(RandomState=_RandomState)
    cp.asnumpy = np.asarray
    return cp


SPEC = KernelSpec(
    name="scale2", fn=None, params={}, launch=None, check=None, grid_period=None,
    args=(Arg("M", "i32"), Arg("N", "i32"), Arg("alpha", "f32"), Arg("x", "ptr", lambda M, N, K: M * N),
          Arg("y", "ptr", lambda M, N, K: M * N, "out"), Arg("acc", "ptr", lambda M, N, K: 1, "inout")),
    reference=lambda a, M, N, K, alpha, beta: {"y": alpha * a["x"], "acc": a["acc"] + a["x"].sum()},
    tolerance=1e-4)


def _launch(p):
    """What a correct twin does, on the arrays in argument order."""
    M, N, alpha, x, y, acc = p.args()
    assert (int(M), int(N)) == (8, 4) and isinstance(alpha, np.float32)
    y[...] = alpha * x
    acc[0] += x.sum()


def test_args_in_order_and_a_correct_launch_passes():
    p = gpu.problem(_fake_cupy(), SPEC, 8, 4, 8, seed=3)
    p.reset()
    assert np.isnan(p.arrays["y"]).all()                   # an output starts poisoned
    _launch(p)
    c = p.check()
    assert c["passed"] and c["unwritten"] == 0 and c["writes_past_end"] == 0 and c["rel_err"] < 1e-6


def test_unwritten_and_wrong_values_fail():
    p = gpu.problem(_fake_cupy(), SPEC, 8, 4, 8, seed=3)
    p.reset()
    _launch(p)
    p.arrays["y"][5] = np.nan
    c = p.check()
    assert not c["passed"] and c["unwritten"] == 1
    p.reset()
    _launch(p)
    p.arrays["acc"][0] += 1.0                             # an atomic lost or doubled
    c = p.check()
    assert not c["passed"] and c["rel_err"] > c["tolerance"]
    p.reset()
    _launch(p)
    p.full["y"][40] = 1.0                                  # a write past y's end
    assert p.check()["writes_past_end"] == 1


def test_reset_restores_inout_start():
    p = gpu.problem(_fake_cupy(), SPEC, 8, 4, 8, seed=3)
    p.reset()
    start = p.arrays["acc"].copy()
    _launch(p)
    p.reset()
    assert np.array_equal(p.arrays["acc"], start)
