"""The CUDA twins as the runner sees them: parameters, launch shape, build (no GPU needed).

Launch shapes and parameter defaults come from the Python kernel's KernelSpec
when kernels_py/<name>.py exists; otherwise from kernels_cuda/build.py's
table (`launch_shape`), which the twins' own header comments also state.
Every twin is built with build.py's `build_cubin`, i.e. exactly its
NVCC_FLAGS plus -DP_<PARAM>=<value>, so all records share one build recipe.
"""
from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

from gpusim.errors import KernelConfigError, UnknownKernel

REPO = Path(__file__).resolve().parents[2]
BUILD_PY = REPO / "kernels_cuda" / "build.py"

# kernels computing C = A*B (alpha and beta ignored), per their twins' headers
AB_ONLY = frozenset({"tiled32", "regblock"})


@functools.lru_cache(maxsize=1)
def build_module():
    """kernels_cuda/build.py as a module (stdlib only)."""
    if not BUILD_PY.exists():
        raise KernelConfigError(f"{BUILD_PY.relative_to(REPO)} is missing: cannot build the CUDA twins")
    spec = importlib.util.spec_from_file_location("gpusim_twin_build", BUILD_PY)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _spec(name: str):
    """The KernelSpec of kernels_py/<name>.py, or None where that module does not exist."""
    try:
        from gpusim.kernel.spec import get_kernel
        return get_kernel(name)
    except UnknownKernel:
        return None


def twin_names() -> list[str]:
    return list(build_module().KERNELS)


def default_params(name: str) -> dict:
    spec = _spec(name)
    if spec is not None:
        return dict(spec.params)
    table = build_module().KERNELS
    if name not in table:
        raise UnknownKernel(f"unknown kernel {name!r}; CUDA twins: {', '.join(table)}")
    return dict(table[name]["params"])


def resolve_params(name: str, overrides: dict | None) -> dict:
    spec = _spec(name)
    if spec is not None:
        return spec.resolve(overrides)
    p = default_params(name)
    for k, v in (overrides or {}).items():
        if k not in p:
            raise KernelConfigError(f"{name}: unknown parameter {k!r}; its parameters are {', '.join(p)}")
        p[k] = int(v)
    return p


def geometry(name: str, params: dict, M: int, N: int, K: int) -> tuple[tuple, tuple, str]:
    """(grid, block, source) as 3-tuples."""
    spec = _spec(name)
    if spec is not None:
        spec.check(M, N, K, **params)
        grid, block = spec.launch(M, N, K, **params)
        src = f"kernels_py/{name}.py"
    else:
        block, grid = build_module().launch_shape(name, params, M, N)
        src = "kernels_cuda/build.py launch_shape"
    pad = lambda t: tuple(int(x) for x in t) + (1,) * (3 - len(t))   # noqa: E731
    return pad(grid), pad(block), src


def uses_alpha_beta(name: str) -> bool:
    spec = _spec(name)
    if spec is not None:
        return bool(spec.uses_alpha_beta)
    return name not in AB_ONLY


def build_flags() -> list[str]:
    return list(build_module().NVCC_FLAGS)


def cubin_tag(name: str, params: dict) -> str:
    defaults = default_params(name)
    extra = {k: v for k, v in params.items() if defaults.get(k) != v}
    return name + ("-" + "".join(f"{k}{v}" for k, v in sorted(extra.items())) if extra else "")


def build(name: str, params: dict, build_dir) -> tuple[Path, dict, str]:
    """(cubin path, ptxas facts, nvcc command as run, relative paths) of one twin instance."""
    b = build_module()
    out = Path(build_dir) / f"{cubin_tag(name, params)}.cubin"
    ptxas = b.build_cubin(name, params, out)
    try:
        rel = out.resolve().relative_to(REPO)
    except ValueError:
        rel = Path("<build>") / out.name
    cmd = " ".join(b.nvcc_args(name, params, str(rel)))
    return out, ptxas, cmd
