"""Errors a user can cause. The CLI prints these as one line, never a traceback."""


class GpusimError(Exception):
    """Base of every error gpusim reports to a user."""


class UnknownKernel(GpusimError):
    pass


class KernelConfigError(GpusimError):
    """A tile parameter or problem size the kernel cannot take."""


class LaunchError(GpusimError):
    """A launch over the preset's limits (threads, shared memory, registers)."""


class KernelIndexError(GpusimError):
    """An out-of-bounds index inside a Python kernel."""


class UnsupportedOperation(GpusimError):
    """An operation the trace model refuses (atomics, timing-dependent loops)."""


class RecordError(GpusimError):
    """A malformed or wrong-version record under traces/."""


class KernelImportError(GpusimError):
    """A module under kernels_py/ that fails to import (the other kernels still run)."""
