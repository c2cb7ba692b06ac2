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
# the second ladder: memory-bound, shuffle, atomic and reduction kernels (M x N problems; K unused)
LADDER2 = ("copy4", "saxpy", "transpose_naive", "transpose_smem", "transpose_pad", "reduce_smem",
           "reduce_shfl", "reduce_atomic", "softmax", "stencil5", "sgemv")
LADDERS = {"sgemm": LADDER, "memory": LADDER2}

ARG_KINDS = ("i32", "f32", "ptr")
ARG_ROLES = ("in", "out", "inout")


# alpha and beta of the recorded launches (gpusim.hw.gpu), and simulate()'s defaults: non-zero and not one,
# so that a kernel that drops either term computes a wrong result the checks see
LAUNCH_ALPHA, LAUNCH_BETA = 1.5, 0.5


@dataclass(frozen=True)
class Arg:
    """One argument of a kernel, in the order of the CUDA twin's parameter list.

    i32 arguments are named M, N or K and take the problem's size; f32 ones are named alpha or
    beta and take the run's scalars; ptr arguments are float32 arrays of elems(M, N, K) elements,
    read only ("in"), written only ("out") or both ("inout")."""
    name: str
    kind: str
    elems: Callable | None = None
    role: str = "in"

    def __post_init__(self):
        if self.kind not in ARG_KINDS:
            raise KernelConfigError(f"argument {self.name}: kind must be one of {ARG_KINDS}, got {self.kind!r}")
        if self.kind == "ptr" and (self.elems is None or self.role not in ARG_ROLES):
            raise KernelConfigError(f"argument {self.name}: a ptr needs elems(M, N, K) and a role in {ARG_ROLES}")
        if self.kind == "i32" and self.name not in ("M", "N", "K"):
            raise KernelConfigError(f"argument {self.name}: an i32 argument is named M, N or K")
        if self.kind == "f32" and self.name not in ("alpha", "beta"):
            raise KernelConfigError(f"argument {self.name}: an f32 argument is named alpha or beta")


def gemm_args(uses_alpha_beta: bool = True) -> tuple:
    """The SGEMM signature every kernel of the first ladder takes: (M, N, K, alpha, A, B, beta, C)."""
    return (Arg("M", "i32"), Arg("N", "i32"), Arg("K", "i32"), Arg("alpha", "f32"),
            Arg("A", "ptr", lambda M, N, K: M * K), Arg("B", "ptr", lambda M, N, K: K * N),
            Arg("beta", "f32"), Arg("C", "ptr", lambda M, N, K: M * N, "inout" if uses_alpha_beta else "out"))


def gemm_reference(inputs: dict, M: int, N: int, K: int, alpha: float, beta: float,
                   uses_alpha_beta: bool = True) -> dict:
    """alpha * A @ B + beta * C (or A @ B, seed 000's kernels), in float64."""
    AB = inputs["A"].reshape(M, K).astype(np.float64) @ inputs["B"].reshape(K, N).astype(np.float64)
    if not uses_alpha_beta:
        return {"C": AB.reshape(-1)}
    return {"C": (np.float64(alpha) * AB + np.float64(beta) * inputs["C"].reshape(M, N)).reshape(-1)}


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
    # the arguments in the twin's order (None: the SGEMM signature, gemm_args)
    args: tuple | None = None
    # reference(inputs, M, N, K, alpha, beta) -> {output name: float64 values}: what the kernel must
    # compute from its arrays' initial contents (None: the SGEMM's, gemm_reference)
    reference: Callable | None = None
    # relative error (Frobenius, per output) a correct run stays under; None: the default (1e-5)
    tolerance: float | None = None
    flops: Callable | None = None     # flops(M, N, K); None: 2*M*N*K
    computes: str = ""                # what it computes, one formula ("B = A^T"); "" for an SGEMM's

    @property
    def arguments(self) -> tuple:
        return self.args if self.args is not None else gemm_args(self.uses_alpha_beta)

    def launch_scalars(self) -> tuple[float, float]:
        """(alpha, beta) as the recorded CUDA launches pass them (gpusim.hw.gpu): 1.5 and 0.5, or 1 and 0
        for an SGEMM that computes C = A*B (its alpha and beta are unused)."""
        return (1.0, 0.0) if self.is_gemm and not self.uses_alpha_beta else (LAUNCH_ALPHA, LAUNCH_BETA)

    @property
    def is_gemm(self) -> bool:
        return self.args is None

    def arrays(self, M: int, N: int, K: int) -> list:
        """[(name, elements, role)] of the pointer arguments, in order."""
        return [(a.name, int(a.elems(M, N, K)), a.role) for a in self.arguments if a.kind == "ptr"]

    def expected(self, inputs: dict, M: int, N: int, K: int, alpha: float, beta: float) -> dict:
        """What the kernel must leave in its output arrays, float64, flat."""
        if self.reference is None:
            if not self.is_gemm:
                raise KernelConfigError(f"{self.name}: declares its own arguments (args) but no reference: "
                                        "give KernelSpec(reference=...) what the kernel must compute")
            return gemm_reference(inputs, M, N, K, alpha, beta, self.uses_alpha_beta)
        return {k: np.asarray(v, np.float64).reshape(-1)
                for k, v in self.reference(inputs, M, N, K, alpha, beta).items()}

    def flop_count(self, M: int, N: int, K: int) -> float:
        return float(self.flops(M, N, K)) if self.flops is not None else 2.0 * M * N * K

    def min_bytes(self, M: int, N: int, K: int) -> int:
        """The DRAM bytes a launch moves at least: every input read once, every output written once."""
        return sum(4 * n * (2 if role == "inout" else 1) for _, n, role in self.arrays(M, N, K))

    def ladder(self) -> str:
        """"sgemm" or "memory": the ladder it is a rung of, or the one its signature belongs to."""
        return next((k for k, v in LADDERS.items() if self.name in v), "sgemm" if self.is_gemm else "")

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
    ladders = LADDER + LADDER2
    ordered = [n for n in ladders if n in _CACHE]
    return ordered + sorted(n for n in _CACHE if n not in ladders)
