"""`gpusim check`: run a Python kernel over every CTA and every loop trip with the sanitizer
watching (gpusim.kernel.sanitizer), then check its outputs (C of an SGEMM) against numpy.

The kernel may be one of kernels_py/ by name, or any Python file that defines `SPEC` (a kernel of
the user's own, or the buggy kernels the tests keep). alpha and beta are both set, and to values
other than 1 and 0, so that a kernel leaving out either term of alpha * A @ B + beta * C is caught.
"""
from __future__ import annotations

import importlib.util
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from gpusim.errors import GpusimError, KernelConfigError, UnknownKernel
from gpusim.estimate.simulate import rel_errors, simulate
from gpusim.kernel.sanitizer import Finding, Sanitizer
from gpusim.kernel.spec import KernelSpec, get_kernel

# ||C - ref|| / ||ref|| above this is a wrong result. float32 accumulation over K terms errs by about
# sqrt(K) * 2^-24 relative (6e-7 at K = 1024); 1e-4 leaves two orders of magnitude for that.
DEFAULT_TOL = 1e-4
ALPHA, BETA = 1.25, -0.75           # exact in float32, neither 1 nor 0
SIZES_TRIED = (256, 512, 128, 1024, 64)


@dataclass
class CheckResult:
    kernel: str
    M: int
    N: int
    K: int
    params: dict
    findings: list = field(default_factory=list)
    max_rel_error: float | None = None
    tol: float = DEFAULT_TOL
    ctas: int = 0
    wall_s: float = 0.0
    dropped: int = 0                # findings past Sanitizer.MAX_KEPT, counted only
    notes: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.findings and not self.dropped

    def to_json(self) -> dict:
        return {"kernel": self.kernel, "M": self.M, "N": self.N, "K": self.K, "params": self.params,
                "alpha": ALPHA, "beta": BETA, "ok": self.ok,
                "findings": [f.to_json() for f in self.findings], "findings_not_kept": self.dropped,
                "max_rel_error": self.max_rel_error, "tolerance": self.tol, "ctas": self.ctas,
                "notes": self.notes}


def load_kernel(kernel: str | KernelSpec) -> KernelSpec:
    """A kernel of kernels_py/ by name, or the SPEC of a Python file given by its path."""
    if isinstance(kernel, KernelSpec):
        return kernel
    if kernel.endswith(".py"):
        path = Path(kernel)
        if not path.is_file():
            raise UnknownKernel(f"{kernel}: no such file")
        mod_spec = importlib.util.spec_from_file_location(f"gpusim_user_kernel_{path.stem}", path)
        mod = importlib.util.module_from_spec(mod_spec)
        sys.path.insert(0, str(path.resolve().parent))      # as for a script: its folder's modules import
        try:
            mod_spec.loader.exec_module(mod)
        except Exception as e:      # the user's file: its error, named, not a traceback of ours
            raise UnknownKernel(f"{kernel}: could not be imported: {type(e).__name__}: {e}") from None
        finally:
            sys.path.remove(str(path.resolve().parent))
        spec = getattr(mod, "SPEC", None)
        if not isinstance(spec, KernelSpec):
            raise UnknownKernel(f"{kernel}: defines no SPEC = KernelSpec(...)")
        return spec
    return get_kernel(kernel)


def default_size(spec: KernelSpec, params: dict | None) -> int:
    """The first of SIZES_TRIED the kernel takes at these parameters."""
    p = spec.resolve(params)
    for n in SIZES_TRIED:
        try:
            spec.check(n, n, n, **p)
            return n
        except KernelConfigError:
            continue
    raise KernelConfigError(f"{spec.name}: none of the sizes {', '.join(map(str, SIZES_TRIED))} fits its "
                            "parameters: give one with --size or --M/--N/--K")


def check(kernel: str | KernelSpec, M: int | None = None, N: int | None = None, K: int | None = None, *,
          params: dict | None = None, arch: str = "h200", tol: float | None = None, seed: int = 0,
          progress=None) -> CheckResult:
    """Sanitize `kernel` on an M x N x K problem (default: the first of SIZES_TRIED it takes)."""
    t0 = time.perf_counter()
    spec = load_kernel(kernel)
    if tol is None:      # the kernel's own where it has one (atomics sum in another order), else the default
        tol = spec.tolerance if spec.tolerance is not None else DEFAULT_TOL
    if isinstance(tol, bool) or not (isinstance(tol, (int, float)) and tol > 0):
        raise KernelConfigError(f"tolerance must be a positive number, got {tol!r}")
    M = default_size(spec, params) if M is None else M
    san = Sanitizer(spec.name, spec.fn.__code__.co_filename)
    r = simulate(spec, M, N, K, arch=arch, params=params, mode="full", frontend="python", alpha=ALPHA,
                 beta=BETA, seed=seed, sanitizer=san, progress=progress)
    M, N, K = r.M, r.N, r.K
    res = CheckResult(spec.name, M, N, K, r.params, tol=tol, ctas=r.ctas_simulated,
                      notes=["the Python kernel's own accesses, every CTA and every trip (frontend='python')"])
    outputs = [(nm, role) for nm, _, role in spec.arrays(M, N, K) if role != "in"]
    missing = [nm for nm, _ in outputs if nm not in san.globals]
    if missing or not outputs:
        raise GpusimError(f"{spec.name}: the kernel took no global array {', '.join(missing) or 'to write'}")
    inputs = {nm: san.initial.get(nm, a) for nm, a in san.globals.items()}
    ref = spec.expected(inputs, M, N, K, ALPHA, BETA)
    errs = rel_errors({nm: san.globals[nm] for nm, _ in outputs}, ref)
    res.max_rel_error = max(errs.values())
    for nm, role in outputs:
        # an SGEMM's C is written whole whatever its role; an inout array elsewhere may keep elements
        # (a stencil's boundary), so only "out" arrays are checked for elements never stored
        whole = role == "out" or (spec.is_gemm and nm == "C")
        _value_findings(san, nm, san.globals[nm].reshape(-1), ref[nm], errs[nm], res, N, whole)
    res.findings, res.dropped = san.ordered(), san.dropped
    res.wall_s = time.perf_counter() - t0
    return res


def _value_findings(san: Sanitizer, nm: str, out, ref, err: float, res: CheckResult, N: int, whole: bool):
    """Elements of an output never stored (whole: it must be written everywhere), and a result further
    from numpy's than the tolerance. Elements are named [row][column] of an N-column matrix."""
    def at(i):
        return f"{nm}[{i // N}][{i % N}]" if out.size % N == 0 and out.size > N else f"{nm}[{i}]"
    never = san.unwritten(nm) if whole else np.zeros(0, np.int64)
    if never.size:
        i = int(never[0])
        san.findings[("unwritten", nm, ())] = Finding(
            "unwritten", san.kernel, nm, i, None, [], [],
            f"{never.size} of {out.size} elements of {nm} (first {at(i)}) were never stored")
    if err > res.tol:
        diff = np.abs(out - ref)
        i = int(np.argmax(diff))
        w = san.writer_of(nm, i)
        cta = san.cta_names.get(w[0]) if w else None
        lines = [f"{Path(san.source_file).name}:{w[2]}"] if w else []
        san.findings[("values", nm, ())] = Finding(
            "values", san.kernel, nm, i, cta, [san.thread_name(w[1])] if w else [], lines,
            f"||{nm} - ref|| / ||ref|| = {err:.2e} over the tolerance {res.tol:.0e} "
            f"(alpha={ALPHA}, beta={BETA}); worst {at(i)} = {float(out[i]):.6g}, numpy {float(ref[i]):.6g}")
