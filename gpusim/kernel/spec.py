"""What a kernel module declares: its parameters, launch shape and constraints."""
from __future__ import annotations

import difflib
import importlib
import pkgutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from gpusim.errors import KernelConfigError, KernelImportError, UnknownKernel

LADDER = ("naive", "coalesced", "smemtile", "regtile1d", "regtile2d", "vectorized",
          "tiled32", "regblock")


@dataclass(frozen=True)
class KernelSpec:
    name: str
    fn: Callable                      # fn(k, M, N, K, alpha, A, B, beta, C, **params)
    params: dict                      # tile parameters and their defaults (template arguments)
    launch: Callable                  # launch(M, N, K, **p) -> (grid3, block3)
    check: Callable                   # check(M, N, K, **p): raise KernelConfigError
    grid_period: Callable             # grid_period(M, N, K, **p) -> (px, py): CTA alignment period
    uses_alpha_beta: bool = True      # False: computes C = A*B (seed 000's kernels)
    summary: str = ""
    source: str = ""                  # the CUDA twin under kernels_cuda/
    notes: tuple = field(default_factory=tuple)

    def resolve(self, overrides: dict | None) -> dict:
        p = dict(self.params)
        if overrides is not None and not isinstance(overrides, Mapping):
            raise KernelConfigError(f"{self.name}: params must be a dict of NAME: value, "
                                    f"got {type(overrides).__name__} {overrides!r}")
        for key, val in (overrides or {}).items():
            if key not in p:
                raise KernelConfigError(f"{self.name}: unknown parameter {key!r}; "
                                        f"its parameters are {', '.join(p)}")
            if isinstance(val, str) and val.strip().lstrip("-").isdigit():
                val = int(val)
            if isinstance(val, bool) or not isinstance(val, (int, np.integer)):
                raise KernelConfigError(f"{self.name}: parameter {key} must be an integer, got {val!r}")
            p[key] = int(val)
            if p[key] <= 0:
                raise KernelConfigError(f"{self.name}: parameter {key} must be positive, got {val}")
        return p


def require(cond: bool, kernel: str, what: str):
    """Refuse a configuration, naming the constraint it breaks."""
    if not cond:
        raise KernelConfigError(f"{kernel}: {what}")


_CACHE: dict[str, KernelSpec] = {}
_BROKEN: dict[str, str] = {}        # module name -> its import error, one line


def get_kernel(name: str) -> KernelSpec:
    if isinstance(name, KernelSpec):
        return name
    if not isinstance(name, str):
        raise UnknownKernel(f"a kernel is named by a string or given as a KernelSpec, got {name!r}")
    if name in _CACHE:
        return _CACHE[name]
    known = list_kernels()
    if name in _BROKEN:
        raise KernelImportError(f"{name}: kernels_py/{name}.py does not import: {_BROKEN[name]}")
    if name not in known:
        close = difflib.get_close_matches(str(name), known + list(_BROKEN), n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise UnknownKernel(f"unknown kernel {name!r}{hint}; known kernels: {', '.join(known)}")
    return _CACHE[name]


def broken_kernels() -> dict[str, str]:
    """The modules of kernels_py that failed to import, with their one-line errors (after list_kernels)."""
    return dict(sorted(_BROKEN.items()))


def list_kernels() -> list[str]:
    """Ladder kernels first, in ladder order, then any other module of kernels_py."""
    import kernels_py
    names = [m.name for m in pkgutil.iter_modules(kernels_py.__path__) if not m.name.startswith("_")]
    for n in names:
        if n not in _CACHE and n not in _BROKEN:
            try:
                mod = importlib.import_module(f"kernels_py.{n}")
            except Exception as e:  # noqa: BLE001 - one broken module must not hide the other kernels
                first = str(e).splitlines()[0] if str(e) else ""
                _BROKEN[n] = f"{type(e).__name__}: {first}" if first else type(e).__name__
                continue
            spec = getattr(mod, "SPEC", None)
            if isinstance(spec, KernelSpec):
                _CACHE[n] = spec
    ordered = [n for n in LADDER if n in _CACHE]
    return ordered + sorted(n for n in _CACHE if n not in LADDER)
