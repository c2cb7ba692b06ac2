"""The GPU side of the runner: cupy, problems, launches, the cuBLAS check and event timing.

Only gpusim.hw imports this module, and cupy is imported inside `cupy()`, so
the rest of gpusim never needs a GPU. The reference is cuBLAS SGEMM through
cupy.matmul with CUPY_TF32=0 (plain FP32, no TF32), checked in turn against
FP64 DGEMM in the cuBLAS record.
"""
from __future__ import annotations

import math
import os
import statistics

import numpy as np

from gpusim.errors import GpusimError
from gpusim.kernel.spec import LAUNCH_ALPHA as ALPHA, LAUNCH_BETA as BETA   # C = alpha*A*B + beta*C

CHECK_TOL = 1e-5          # relative Frobenius error; FP32 sums over K=4096 land near 1e-6
GUARD = 4096              # floats of NaN after C, to catch writes past its end


class NoGpu(GpusimError):
    """No CUDA GPU (or no cupy) on this machine."""


def cupy():
    """Import cupy with TF32 off; refuse clearly where there is no GPU."""
    os.environ["CUPY_TF32"] = "0"
    try:
        import cupy as cp
    except ImportError as e:
        raise NoGpu(f"gpusim hw needs cupy and a CUDA GPU; cupy is not importable here ({e})") from None
    try:
        n = cp.cuda.runtime.getDeviceCount()
    except Exception as e:      # noqa: BLE001 - any CUDA error means no usable GPU
        raise NoGpu(f"gpusim hw needs a CUDA GPU; none is usable here ({e})") from None
    if n < 1:
        raise NoGpu("gpusim hw needs a CUDA GPU; none found")
    return cp


def device_name(cp) -> str:
    props = cp.cuda.runtime.getDeviceProperties(0)
    name = props["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


class Problem:
    """A, B random in [-1, 1) (never zeros), C with a NaN guard zone after it."""

    def __init__(self, cp, M, N, K, seed=0, ab_only=False):
        self.cp, self.M, self.N, self.K = cp, M, N, K
        self.ab_only = ab_only
        rs = cp.random.RandomState(seed)
        self.A = rs.uniform(-1.0, 1.0, M * K, dtype=cp.float32)
        self.B = rs.uniform(-1.0, 1.0, K * N, dtype=cp.float32)
        self.C0 = rs.uniform(-1.0, 1.0, M * N, dtype=cp.float32)
        self.Cfull = cp.full(M * N + GUARD, cp.nan, dtype=cp.float32)
        self.C = self.Cfull[:M * N]
        self.alpha, self.beta = (1.0, 0.0) if ab_only else (ALPHA, BETA)

    def reset_c(self):
        """NaN for kernels that only write C; the random C0 for those that read it (beta*C)."""
        if self.ab_only:
            self.C.fill(self.cp.nan)
        else:
            self.C[...] = self.C0
        self.Cfull[self.M * self.N:] = self.cp.nan

    def args(self):
        return (np.int32(self.M), np.int32(self.N), np.int32(self.K), np.float32(self.alpha),
                self.A, self.B, np.float32(self.beta), self.C)

    def reference(self):
        """alpha*A@B + beta*C0 through cuBLAS SGEMM (TF32 off), or A@B."""
        cp = self.cp
        AB = cp.matmul(self.A.reshape(self.M, self.K), self.B.reshape(self.K, self.N))
        if self.ab_only:
            return AB
        return cp.float32(self.alpha) * AB + cp.float32(self.beta) * self.C0.reshape(self.M, self.N)

    def check(self) -> dict:
        """Compare C (after one launch from reset_c) with the reference."""
        cp = self.cp
        C = self.C.reshape(self.M, self.N)
        ref = self.reference()
        finite = cp.isfinite(C)
        if self.ab_only:
            unwritten = int(cp.isnan(C).sum())
            poison = "C filled with NaN before the launch; unwritten = elements still NaN"
        else:
            C0 = self.C0.reshape(self.M, self.N)
            same = (C.view(cp.int32) == C0.view(cp.int32)) & (ref != C0)
            unwritten = int(same.sum())
            poison = ("C reads beta*C, so it starts as random C0 (NaN would poison every output); "
                      "unwritten = elements bitwise equal to C0 where the reference differs")
        nonfinite = int((~finite).sum())
        guard = self.Cfull[self.M * self.N:]
        oob = int((~cp.isnan(guard)).sum())
        d = cp.where(finite, C, 0).astype(cp.float64) - ref.astype(cp.float64)
        den = float(cp.linalg.norm(ref.astype(cp.float64)))
        rel = float(cp.linalg.norm(d)) / den if den else float("inf")
        rel = rel if nonfinite == 0 else None
        passed = (unwritten == 0 and nonfinite == 0 and oob == 0 and rel is not None and rel <= CHECK_TOL)
        return {"reference": "cuBLAS SGEMM (cupy.matmul, CUPY_TF32=0: plain FP32)",
                "rel_err": rel, "tolerance": CHECK_TOL, "unwritten": unwritten,
                "nonfinite": nonfinite, "writes_past_end": oob, "poison": poison,
                "alpha": self.alpha, "beta": self.beta, "passed": bool(passed)}


    reset = reset_c


class ArgsProblem:
    """The arrays of a kernel that is not an SGEMM, as its spec declares them (`KernelSpec.arguments`):
    every array random in [-1, 1), an output ("out") NaN before each launch so that unwritten elements
    show, an "inout" array reset to its random start, and a NaN guard zone after each array the kernel
    writes. The reference is the spec's, in float64 on the host."""

    def __init__(self, cp, spec, M, N, K, seed=0):
        self.cp, self.spec, self.M, self.N, self.K = cp, spec, M, N, K
        self.alpha, self.beta = ALPHA, BETA
        rs = cp.random.RandomState(seed)
        self.arrays, self.full, self.initial, self.roles = {}, {}, {}, {}
        for nm, n, role in spec.arrays(M, N, K):
            init = rs.uniform(-1.0, 1.0, n, dtype=cp.float32)
            if role == "in":
                self.arrays[nm] = init
            else:
                self.full[nm] = cp.full(n + GUARD, cp.nan, dtype=cp.float32)
                self.arrays[nm] = self.full[nm][:n]
            self.initial[nm], self.roles[nm] = init, role

    def reset(self):
        for nm, full in self.full.items():
            full.fill(self.cp.nan)
            if self.roles[nm] == "inout":
                self.arrays[nm][...] = self.initial[nm]

    def args(self):
        vals = {"M": np.int32(self.M), "N": np.int32(self.N), "K": np.int32(self.K),
                "alpha": np.float32(self.alpha), "beta": np.float32(self.beta)}
        return tuple(self.arrays[a.name] if a.kind == "ptr" else vals[a.name] for a in self.spec.arguments)

    def check(self) -> dict:
        """Compare the outputs (after one launch from reset) with the spec's reference."""
        from gpusim.estimate.simulate import rel_errors
        cp = self.cp
        ref = self.spec.expected({nm: cp.asnumpy(a) for nm, a in self.initial.items()},
                                 self.M, self.N, self.K, self.alpha, self.beta)
        tol = self.spec.tolerance or CHECK_TOL
        got = {nm: cp.asnumpy(self.arrays[nm]).astype(np.float64) for nm in ref}
        nonfinite = sum(int((~np.isfinite(g)).sum()) for g in got.values())
        unwritten = sum(int(np.isnan(g).sum()) for nm, g in got.items() if self.roles[nm] == "out")
        oob = sum(int((~cp.isnan(self.full[nm][len(g):])).sum()) for nm, g in got.items())
        rel = max(rel_errors(got, ref).values()) if nonfinite == 0 else None
        passed = unwritten == 0 and nonfinite == 0 and oob == 0 and rel is not None and rel <= tol
        return {"reference": "the kernel spec's reference (numpy, float64) of the same inputs",
                "rel_err": rel, "tolerance": tol, "unwritten": unwritten, "nonfinite": nonfinite,
                "writes_past_end": oob,
                "poison": "outputs filled with NaN before the launch, in-out arrays reset to their random "
                          "start; unwritten = output elements still NaN",
                "alpha": self.alpha, "beta": self.beta, "passed": bool(passed)}


def problem(cp, spec, M, N, K, seed=0):
    """The launch's inputs: an SGEMM's A, B, C (Problem) or the arrays the spec declares (ArgsProblem)."""
    if spec.is_gemm:
        return Problem(cp, M, N, K, seed=seed, ab_only=not spec.uses_alpha_beta)
    return ArgsProblem(cp, spec, M, N, K, seed=seed)


def launcher(fn, grid, block, prob):
    args = prob.args()

    def launch():
        fn(grid, block, args)
    return launch


_SPIN_SRC = r"""
extern "C" __global__ void gpusim_spin(long long cycles) {
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
}
"""
QUEUE_BELOW_MS = 0.5      # launches shorter than this are timed queued behind a spin kernel
QUEUE_CHUNK, SPIN_MS = 400, 20.0


def _spin(cp):
    """One thread busy for a time: launched first, it holds the stream while the host queues the timed
    launches behind it, so that the GPU then runs them back to back (micro/launch_overhead.json's
    "queued" method, whose 3.55 us per empty launch the prediction adds)."""
    fn = cp.RawKernel(_SPIN_SRC, "gpusim_spin")
    cycles = cp.int64(int(SPIN_MS * 1e-3 * 2.0e9))      # ~20 ms at the H200's 1.98 GHz, longer if slower
    return lambda: fn((1,), (1,), (cycles,))


def time_launches(cp, launch, target_s=1.0, min_n=10, max_n=10000, warmup=3) -> dict:
    """Warm up, then time `n` launches one by one with CUDA events (n >= min_n, ~target_s).

    A launch shorter than QUEUE_BELOW_MS is timed queued: QUEUE_CHUNK launches at a time behind a spin
    kernel, so the host's launch path (5-8 us a launch through cupy) does not pace the GPU; a longer one
    is timed as it comes (the host queues the next launch before the GPU is done with it)."""
    for _ in range(warmup):
        launch()
    cp.cuda.runtime.deviceSynchronize()
    s, e = cp.cuda.Event(), cp.cuda.Event()
    s.record()
    launch()
    e.record()
    e.synchronize()
    one = max(cp.cuda.get_elapsed_time(s, e), 1e-3)
    n = int(min(max_n, max(min_n, math.ceil(target_s * 1000.0 / one))))
    queued = one < QUEUE_BELOW_MS
    spin = _spin(cp) if queued else None
    t = []
    for start in range(0, n, QUEUE_CHUNK if queued else n):
        evs = [(cp.cuda.Event(), cp.cuda.Event()) for _ in range(min(n - start, QUEUE_CHUNK) if queued else n)]
        if spin:
            spin()
        for a, b in evs:
            a.record()
            launch()
            b.record()
        evs[-1][1].synchronize()
        t += [cp.cuda.get_elapsed_time(a, b) for a, b in evs]
    out = summarize_times(sorted(t), warmup)
    if queued:
        out["timing"]["method"] = (f"CUDA events around each launch, queued {QUEUE_CHUNK} at a time behind a "
                                   f"{SPIN_MS:.0f} ms spin kernel (the host's launch path does not pace them), same "
                                   "buffers every launch (inputs stay in L2 where they fit)")
    return out


def quantile(sorted_t, q):
    if not sorted_t:
        return None
    pos = q * (len(sorted_t) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(sorted_t) - 1)
    return sorted_t[lo] + (sorted_t[hi] - sorted_t[lo]) * (pos - lo)


def summarize_times(t, warmup) -> dict:
    t = sorted(t)
    r = lambda x: float(f"{x:.6g}")        # noqa: E731
    out = {
        "time_ms_median": r(statistics.median(t)),
        "time_ms_quantiles": {k: r(quantile(t, q)) for k, q in
                              (("min", 0.0), ("p10", 0.1), ("p25", 0.25), ("p50", 0.5),
                               ("p75", 0.75), ("p90", 0.9), ("max", 1.0))},
        "time_ms_mean": r(statistics.fmean(t)),
        "timing": {"launches": len(t), "warmup": warmup, "total_ms": r(sum(t)),
                   "method": "CUDA events around each launch, same buffers every launch "
                             "(inputs stay in L2 where they fit)"},
    }
    if len(t) <= 100:
        out["time_ms_all"] = [r(x) for x in t]
    return out
