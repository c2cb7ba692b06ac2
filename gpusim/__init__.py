"""gpusim: a cycle-approximate, warp-level GPU simulator for SGEMM-style kernels."""
import gpusim.pages  # noqa: F401  (numpy's large arrays on ordinary pages: see the module)
from gpusim.arch import get_arch, PRESETS
from gpusim.errors import GpusimError
from gpusim.estimate.simulate import simulate, SimResult
from gpusim.kernel import get_kernel, list_kernels

__all__ = ["simulate", "SimResult", "get_arch", "PRESETS", "get_kernel", "list_kernels", "GpusimError"]
__version__ = "0.1.0"
