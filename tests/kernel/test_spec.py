"""KernelSpec's arguments: the SGEMM signature by default, a kernel's own list checked as it is declared."""
import numpy as np
import pytest

from gpusim.errors import KernelConfigError
from gpusim.kernel import get_kernel
from gpusim.kernel.spec import Arg, KernelSpec


def test_an_sgemm_takes_the_sgemm_signature():
    spec = get_kernel("regtile2d")
    assert spec.is_gemm and spec.ladder() == "sgemm"
    assert [a.name for a in spec.arguments] == ["M", "N", "K", "alpha", "A", "B", "beta", "C"]
    assert spec.arrays(4, 3, 2) == [("A", 8, "in"), ("B", 6, "in"), ("C", 12, "inout")]
    assert spec.min_bytes(4, 3, 2) == 4 * (8 + 6 + 2 * 12)


def test_a_kernel_of_its_own_is_its_arguments_and_reference():
    spec = get_kernel("saxpy")
    assert not spec.is_gemm and spec.ladder() == "memory"
    x, y = np.arange(6, dtype=np.float32), np.ones(6, np.float32)
    out = spec.expected({"x": x, "y": y}, 2, 3, 2, 2.0, 0.0)
    assert np.array_equal(out["y"], 2.0 * x + 1.0)


@pytest.mark.parametrize("arg,match", [
    (lambda: Arg("n", "i32"), "named M, N or K"),
    (lambda: Arg("scale", "f32"), "named alpha or beta"),
    (lambda: Arg("x", "ptr"), "needs elems"),
    (lambda: Arg("x", "ptr", lambda M, N, K: M, "both"), "role"),
    (lambda: Arg("x", "u8"), "kind must be"),
])
def test_a_bad_argument_is_refused_as_declared(arg, match):
    with pytest.raises(KernelConfigError, match=match):
        arg()


def test_own_arguments_need_a_reference():
    spec = KernelSpec(name="noref", fn=None, params={}, launch=None, check=None, grid_period=None,
                      args=(Arg("M", "i32"), Arg("x", "ptr", lambda M, N, K: M, "out")))
    with pytest.raises(KernelConfigError, match="no reference"):
        spec.expected({"x": np.zeros(2, np.float32)}, 2, 1, 1, 1.0, 0.0)
