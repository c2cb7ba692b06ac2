"""The memory stage's per-row counts (gpusim/memory/counters.py)."""
import numpy as np


def test_counts_by_kind_equal_counts_row_by_row():
    """cost_rows counts each kind of row once (line_patterns): the sectors, lines and wavefronts are
    those of counting every row, for global and shared loads of random and of moved rows."""
    from gpusim.kernel.opcodes import TABLE
    from gpusim.memory.coalescer import global_sectors_and_lines
    from gpusim.memory.counters import cost_rows
    from gpusim.memory.shared_banks import shared_wavefronts
    from gpusim.trace.trace import ROW_DTYPE
    rng = np.random.default_rng(4)
    base = rng.integers(0, 64, (30, 32)) * 4 * rng.integers(1, 9, (30, 1))
    a = base[rng.integers(0, 30, 3000)] + rng.integers(0, 512, 3000)[:, None] * 128
    a[rng.random(a.shape) < 0.05] = -1
    a[::11] = rng.integers(0, 1 << 16, (len(a[::11]), 32)) * 4
    for name, nb in (("LDG.E", 4), ("LDS", 4), ("LDS.64", 8), ("LDS.128", 16)):
        rows = np.zeros(len(a), ROW_DTYPE)
        rows["op"] = TABLE.id(name)
        rows["mem"] = np.arange(len(a))
        aa = a - a % nb
        aa[a < 0] = -1
        cost_rows(rows, aa)
        if name.startswith("LDG"):
            s, l = global_sectors_and_lines(aa, nb)
            assert np.array_equal(rows["sectors"], s) and np.array_equal(rows["lines"], l)
        else:
            wf, ideal = shared_wavefronts(aa, nb)
            assert np.array_equal(rows["wavefronts"], wf) and np.array_equal(rows["ideal_wavefronts"], ideal)
