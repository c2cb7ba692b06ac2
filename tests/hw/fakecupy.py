"""A numpy stand-in for the few cupy calls gpusim.hw makes, so the runner's logic
runs in CI without a GPU. Kernels are run by name: the SGEMM twins compute
alpha*A@B + beta*C (or A@B) in float32 with numpy; nothing here models timing.
"""
from __future__ import annotations

import time
import types

import numpy as np

__version__ = "0.0-fake"
float32, float64, int32, int64, uint32, uint64 = (np.float32, np.float64, np.int32, np.int64,
                                                  np.uint32, np.uint64)
nan = np.nan
AB_ONLY = {"tiled32", "regblock"}


class _Data:
    def __init__(self, arr):
        self.ptr = arr.ctypes.data


class ndarray(np.ndarray):
    def get(self):
        return np.array(self)

    @property
    def data(self):          # cupy's .data.ptr
        return _Data(np.asarray(self))


def _wrap(a):
    return np.asarray(a).view(ndarray)


def full(n, v, dtype=np.float32):
    return _wrap(np.full(n, v, dtype=dtype))


def zeros(n, dtype=np.float32):
    return _wrap(np.zeros(n, dtype=dtype))


def ones(n, dtype=np.float32):
    return _wrap(np.ones(n, dtype=dtype))


def empty(n, dtype=np.float32):
    return _wrap(np.empty(n, dtype=dtype))


def isnan(a):
    return _wrap(np.isnan(a))


def isfinite(a):
    return _wrap(np.isfinite(a))


def where(c, a, b):
    return _wrap(np.where(c, a, b).astype(np.asarray(a).dtype))


def matmul(a, b, out=None):
    r = np.matmul(np.asarray(a), np.asarray(b))
    if out is not None:
        out[...] = r
        return out
    return _wrap(r)


linalg = types.SimpleNamespace(norm=lambda a: np.float64(np.linalg.norm(np.asarray(a))))


class RandomState:
    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)

    def uniform(self, low=0.0, high=1.0, size=None, dtype=np.float64):
        return _wrap(self.rng.uniform(low, high, size).astype(dtype))

    def permutation(self, n):
        return _wrap(self.rng.permutation(n))


random = types.SimpleNamespace(RandomState=RandomState)


class _Pool:
    def free_all_blocks(self):
        pass


def get_default_memory_pool():
    return _Pool()


class _Fn:
    def __init__(self, name):
        self.name = name

    def __call__(self, grid, block, args, shared_mem=0):
        M, N, K, alpha, A, B, beta, C = args
        M, N, K = int(M), int(N), int(K)
        ab = np.asarray(A).reshape(M, K) @ np.asarray(B).reshape(K, N)
        if self.name in AB_ONLY:
            C[...] = ab.reshape(-1).astype(np.float32)
        else:
            C[...] = (np.float32(alpha) * ab + np.float32(beta) * np.asarray(C).reshape(M, N)).reshape(-1)


class RawModule:
    def __init__(self, path=None, code=None):
        self.path = path

    def get_function(self, name):
        return _Fn(name)


class RawKernel:
    """cupy.RawKernel from source: here only the runner's spin kernel, which does nothing."""
    def __init__(self, code, name):
        self.name = name
        self.calls = 0

    def __call__(self, grid, block, args, shared_mem=0):
        self.calls += 1


def int64(x):
    return np.int64(x)


class Event:
    def record(self):
        self.t = time.perf_counter()

    def synchronize(self):
        pass


def _elapsed(a, b):
    return max((b.t - a.t) * 1e3, 1e-4)


_runtime = types.SimpleNamespace(
    getDeviceCount=lambda: 1, deviceSynchronize=lambda: None,
    runtimeGetVersion=lambda: 13000, driverGetVersion=lambda: 13000,
    getDeviceProperties=lambda i: {"name": b"Fake GPU", "multiProcessorCount": 132})
cuda = types.SimpleNamespace(runtime=_runtime, Event=Event, get_elapsed_time=_elapsed)


def arange(n, dtype=None):
    return _wrap(np.arange(n, dtype=dtype))


def unique(a):
    return _wrap(np.unique(np.asarray(a)))


def roll(a, k):
    return _wrap(np.roll(np.asarray(a), k))


def empty_like(a):
    return _wrap(np.empty_like(np.asarray(a)))


def copyto(dst, src):
    np.copyto(dst, src)


def _randint(self, lo, hi, size=None, dtype=np.int64):
    return _wrap(self.rng.integers(lo, hi, size).astype(dtype))


RandomState.randint = _randint
