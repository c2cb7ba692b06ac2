"""Functional front-end: Python kernels run a CTA at a time over numpy lanes."""
from gpusim.kernel.context import Ctx, Val, Sampler, align_period
from gpusim.kernel.spec import (Arg, KernelSpec, get_kernel, list_kernels, require, LADDER, LADDER2,
                                 LADDERS)

__all__ = ["Ctx", "Val", "Sampler", "align_period", "KernelSpec", "get_kernel", "list_kernels",
           "require", "LADDER", "LADDER2", "LADDERS", "Arg"]
