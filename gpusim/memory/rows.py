"""What the memory stage's row-wise counts share: the sort key of an inactive lane, each address
row's first active byte (the array a row reads), and a row's chunks cut to their distinct values."""
import numpy as np
from numba import njit

from gpusim.jit import guard_cache

EMPTY = np.iinfo(np.int64).max      # a sort key past every address: an inactive lane's place


def first_active(addr: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The lowest active (>= 0) byte address of each address row addr[rows[i]], EMPTY where no lane is
    active; read in place (no copy of the rows it picks)."""
    out = np.empty(len(rows), np.int64)
    if len(rows):
        _first_active(np.ascontiguousarray(addr, np.int64), np.ascontiguousarray(rows, np.int64), out)
    return out


@njit(cache=True, nogil=True)
def _first_active(addr, rows, out):
    for i in range(rows.shape[0]):
        m = EMPTY
        for lane in range(addr.shape[1]):
            a = addr[rows[i], lane]
            if 0 <= a < m:
                m = a
        out[i] = m


@njit(cache=True, inline="always")
def distinct(buf, n):
    """buf[:n] cut to its distinct values, each where it first came (in place); their number. (The
    coalescer's and the L1's per-row chunk lists, which inline it: their caches are stamped with this file.)"""
    m = 0
    for i in range(n):
        v = buf[i]
        new = True
        for q in range(m):
            if buf[q] == v:
                new = False
                break
        if new:
            buf[m] = v
            m += 1
    return m


guard_cache(globals())     # stamped by its source, guarded, seeded from the shipped copy (gpusim.jit)
