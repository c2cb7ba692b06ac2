"""A small launch each kernel of kernels_py takes at its defaults, for the tests that run every kernel:
hand-picked ones where they exercise something (uneven tiles, a short K), and for a kernel added later
the first size of FALLBACK its own check accepts, so adding a kernel needs no edit here."""
from gpusim.errors import KernelConfigError
from gpusim.kernel import get_kernel, list_kernels

PICKED = {"naive": (96, 64, 40), "coalesced": (64, 96, 40), "smemtile": (64, 64, 96),
          "regtile1d": (128, 128, 64), "regtile2d": (256, 256, 32), "vectorized": (256, 256, 32),
          "tiled32": (64, 64, 96), "regblock": (256, 128, 32), "dbuf": (256, 256, 32)}
# M, N large enough for a few CTAs a side once a test doubles them (CTA classes then stand for others),
# K short: a test multiplies it by 8 where it wants the loops sampled
FALLBACK = ((256, 256, 32), (128, 128, 32), (64, 64, 32), (256, 256, 64), (512, 512, 64), (256, 256, 256))


def small_size(kernel: str) -> tuple:
    if kernel in PICKED:
        return PICKED[kernel]
    spec = get_kernel(kernel)
    for size in FALLBACK:
        try:
            spec.check(*size, **spec.params)
            return size
        except KernelConfigError:
            continue
    raise AssertionError(f"{kernel}: none of {FALLBACK} fits its defaults; add it to PICKED")


def every_kernel() -> list[str]:
    return list_kernels()
