"""memory/rows.first_active against the numpy statement of what it computes."""
import numpy as np

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
