"""What the buggy kernels share: a 16x16-tile SGEMM's launch shape (not a kernel: no SPEC)."""
from gpusim.kernel import KernelSpec, require

BS = 16


def spec(name, fn, summary):
    def _check(M, N, K):
        require(M % BS == 0 and N % BS == 0 and K % BS == 0, name, f"M, N, K must be multiples of {BS}")
    return KernelSpec(name=name, fn=fn, params={},
                      launch=lambda M, N, K: ((M // BS, N // BS, 1), (BS * BS, 1, 1)),
                      check=_check, grid_period=lambda M, N, K: (1, 1), summary=summary)
