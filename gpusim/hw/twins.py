"""The CUDA twins as the runner sees them: parameters, launch shape, build (no GPU needed).

A twin is kernels_cuda/<name>.cu beside a Python kernel kernels_py/<name>.py, whose KernelSpec
declares its parameters, their defaults and its launch shape (the one place they are declared).
Every twin is built with gpusim.sass.compile's flags plus -DP_<PARAM>=<value>, so all records
share one build recipe.
"""
from __future__ import annotations

from pathlib import Path

from gpusim.errors import UnknownKernel
from gpusim.paths import CUDA_DIR
from gpusim.sass import compile as _compile

REPO = Path(__file__).resolve().parents[2]


def build_module():
    """The build recipe (gpusim.sass.compile: NVCC_FLAGS, build_cubin, nvcc_args, parse_ptxas, sass_text)."""
    return _compile


def spec(name: str):
    from gpusim.kernel.spec import get_kernel
    return get_kernel(name)


_spec = spec


def twin_names() -> list[str]:
    """Kernels with both a Python version and a CUDA twin, in the kernel list's order."""
    from gpusim.kernel.spec import list_kernels
    return [n for n in list_kernels() if (CUDA_DIR / f"{n}.cu").is_file()]


def default_params(name: str) -> dict:
    return dict(_spec(name).params)


def resolve_params(name: str, overrides: dict | None) -> dict:
    return _spec(name).resolve(overrides)


def geometry(name: str, params: dict, M: int, N: int, K: int) -> tuple[tuple, tuple, str]:
    """(grid, block, source) as 3-tuples."""
    spec = _spec(name)
    if not (CUDA_DIR / f"{name}.cu").is_file():
        raise UnknownKernel(f"{name}: no CUDA twin kernels_cuda/{name}.cu")
    spec.check(M, N, K, **params)
    grid, block = spec.launch(M, N, K, **params)
    pad = lambda t: tuple(int(x) for x in t) + (1,) * (3 - len(t))   # noqa: E731
    return pad(grid), pad(block), f"kernels_py/{name}.py"


def uses_alpha_beta(name: str) -> bool:
    return bool(_spec(name).uses_alpha_beta)


def build_flags() -> list[str]:
    return list(_compile.NVCC_FLAGS)


def cubin_tag(name: str, params: dict) -> str:
    defaults = default_params(name)
    extra = {k: v for k, v in params.items() if defaults.get(k) != v}
    return name + ("-" + "".join(f"{k}{v}" for k, v in sorted(extra.items())) if extra else "")


def build(name: str, params: dict, build_dir) -> tuple[Path, dict, str]:
    """(cubin path, ptxas facts, nvcc command as run, relative paths) of one twin instance."""
    out = Path(build_dir) / f"{cubin_tag(name, params)}.cubin"
    ptxas = _compile.build_cubin(name, params, out)
    try:
        rel = out.resolve().relative_to(REPO)
    except ValueError:
        rel = Path("<build>") / out.name
    cmd = " ".join(_compile.nvcc_args(name, params, str(rel)))
    return out, ptxas, cmd
