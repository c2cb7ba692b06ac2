"""What the memory stage's row-wise counts share: the sort key of an inactive lane, each address
row's first active byte (the array a row reads), a row's chunks cut to their distinct values, and the
rows that are alike up to whole lines (counted once)."""
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


def line_patterns(addr: np.ndarray, line_bytes: int = 128):
    """(first, inverse): the address rows of addr (rows, lanes; -1 inactive) that are alike up to a move by
    whole lines (each active lane by the same multiple of line_bytes, the same lanes inactive), as the
    first row of each kind (first) and each row's kind (inverse). Sectors, lines and shared-memory
    wavefronts are the same for rows alike (a line is 32 banks and four sectors), so they are counted on
    addr[first] only: a timing window repeats its trips' patterns, 330 k shared loads of regtile2d's
    at 4096 in 864 kinds."""
    addr = np.ascontiguousarray(addr, np.int64)
    n = addr.shape[0]
    first = np.empty(n, np.int64)
    inverse = np.empty(n, np.int64)
    if n == 0:
        return first, inverse
    size = 1 << int(2 * n - 1).bit_length()      # a hash table at most half full
    kinds = _line_patterns(addr, np.int64(line_bytes), np.int64(size), first, inverse)
    return first[:kinds], inverse


@njit(cache=True, nogil=True)
def _line_patterns(addr, line_bytes, size, first, inverse):
    """line_patterns' table: each row hashed on its addresses less its first active byte's line start; a
    row joins the kind of an earlier row only if every lane is equal so (a hash alone decides nothing)."""
    lanes = addr.shape[1]
    slot_row = np.full(size, -1, np.int64)       # the first row of the kind in each slot
    slot_hash = np.zeros(size, np.int64)
    base = np.empty(addr.shape[0], np.int64)
    kinds = 0
    for r in range(addr.shape[0]):
        lo = EMPTY
        for j in range(lanes):
            a = addr[r, j]
            if 0 <= a < lo:
                lo = a
        b = (lo // line_bytes) * line_bytes if lo != EMPTY else 0
        base[r] = b
        h = np.int64(1469598103934665603)
        for j in range(lanes):
            a = addr[r, j]
            v = a - b if a >= 0 else np.int64(-1)
            h = (h ^ v) * np.int64(1099511628211)      # FNV-1a on whole words, wrapping
        s = h & (size - 1)
        while True:
            q = slot_row[s]
            if q < 0:
                slot_row[s] = r
                slot_hash[s] = h
                first[kinds] = r
                inverse[r] = kinds
                kinds += 1
                break
            if slot_hash[s] == h:
                same = True
                bq = base[q]
                for j in range(lanes):
                    a = addr[r, j]
                    c = addr[q, j]
                    if (a - b if a >= 0 else np.int64(-1)) != (c - bq if c >= 0 else np.int64(-1)):
                        same = False
                        break
                if same:
                    inverse[r] = inverse[q]
                    break
            s = (s + 1) & (size - 1)
    return kinds


guard_cache(globals())     # stamped by its source, guarded, seeded from the shipped copy (gpusim.jit)
