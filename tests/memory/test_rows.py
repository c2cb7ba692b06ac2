"""memory/rows: first_active against the numpy statement of what it computes; distinct, and the caches
of the loops that inline it."""
import numpy as np
import pytest

from gpusim.memory.rows import EMPTY, first_active


def test_first_active_is_the_lowest_active_address_of_each_row_picked():
    rng = np.random.default_rng(3)
    addr = rng.integers(0, 1 << 40, (50, 32))
    addr[rng.random((50, 32)) < 0.5] = -1
    addr[7] = -1                                        # no lane active
    rows = rng.integers(0, 50, 80)
    want = np.where(addr >= 0, addr, EMPTY).min(axis=1)[rows]
    assert np.array_equal(first_active(addr, rows), want)
    assert first_active(addr, np.array([7]))[0] == EMPTY
    assert first_active(addr, np.zeros(0, np.int64)).size == 0


def test_distinct_keeps_first_comers_in_order_and_its_callers_go_stale_with_it():
    """distinct cuts a list to its distinct values in first-come order; the coalescer's and the L1's
    compiled loops inline it, so their caches are stamped with rows.py as well as their own file."""
    from gpusim.memory import cache, coalescer
    from gpusim.memory.rows import distinct
    buf = np.array([5, 3, 5, 9, 3, 1, 9], np.int64)
    assert distinct(buf, 7) == 4 and buf[:4].tolist() == [5, 3, 9, 1]
    for fn in (coalescer._count_chunks, cache._l1_run):
        cache_file = getattr(getattr(fn, "_cache", None), "_cache_file", None)
        if cache_file is None or not hasattr(cache_file, "_source_stamp"):
            pytest.skip("this numba keeps its cache otherwise")
        assert {name for name, _ in cache_file._source_stamp} >= {"rows.py"}


def _canonical(a):
    lo = np.where(a >= 0, a, EMPTY).min(axis=1)
    base = np.where(lo == EMPTY, 0, lo // 128 * 128)
    return np.where(a >= 0, a - base[:, None], -1)


def test_line_patterns_groups_rows_alike_up_to_whole_lines_and_nothing_else():
    """Rows moved by whole lines (the same lanes off) are one kind, the first such row standing for it;
    a move by part of a line, another lane off or another address is another kind."""
    from gpusim.memory.rows import line_patterns
    rng = np.random.default_rng(3)
    kinds = rng.integers(0, 4096, (40, 32)) * 4
    kinds[5] = kinds[4] + 4                      # a move by a word: another kind
    kinds[6] = kinds[4]
    kinds[6, 7] = -1                             # a lane off: another kind
    kinds[7] = -1                                # no lane on
    pick = rng.integers(0, 40, 5000)
    a = np.where(kinds[pick] >= 0, kinds[pick] + rng.integers(0, 1 << 20, 5000)[:, None] * 128, -1)
    first, kind = line_patterns(a)
    c = _canonical(a)
    assert np.array_equal(c[first][kind], c)                       # each row is its kind's first, moved
    assert len(first) == np.unique(c, axis=0).shape[0] == len(np.unique(pick))   # and no two kinds alike
    assert np.array_equal(np.sort(first), first) and np.array_equal(kind[first], np.arange(len(first)))

