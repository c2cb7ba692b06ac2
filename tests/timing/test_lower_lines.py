"""lower's compiled line bookkeeping against plain numpy statements of what it computes: each global load's
distinct lines with dense ids (_load_lines), and the miss each L1 hit waits for (fill_providers)."""
import importlib

import numpy as np
import pytest

from gpusim.kernel.opcodes import TABLE
from gpusim.trace.trace import ROW_DTYPE, Trace

L = importlib.import_module("gpusim.timing.lower")     # (gpusim.timing.lower is also the function's name)


def _random_trace(rng, n_rows=400):
    ops = [TABLE.id(x) for x in ("LDG.E", "LDG.E.128", "STG.E", "FFMA", "LDS")]
    rows = np.zeros(n_rows, ROW_DTYPE)
    rows["op"] = rng.choice(ops, n_rows)
    addr = []
    for i in range(n_rows):
        a = rng.integers(0, 1 << 20, 32) * rng.choice([4, 128, 4096])
        a[rng.random(32) < 0.2] = -1                     # lanes off
        rows["mem"][i] = len(addr)
        addr.append(a)
    rows["mem"][rows["op"] == TABLE.id("FFMA")] = -1
    return Trace(rows, np.array(addr, np.int64), list(TABLE.ids))


def _reference_lines(trace, line_bytes):
    space, is_store, _, _, _ = TABLE.arrays()
    ptr, flat = [0], []
    for r in trace.rows:
        op = int(r["op"])
        if space[op] in (L.SPACE_GLOBAL, L.SPACE_LOCAL) and not is_store[op] and r["mem"] >= 0:
            a = trace.addr[r["mem"]]
            flat += sorted({int(x) // line_bytes for x in a if x >= 0})
        ptr.append(len(flat))
    uniq = sorted(set(flat))
    rank = {v: i for i, v in enumerate(uniq)}
    return np.array(ptr), np.array([rank[v] for v in flat], np.int64)


@pytest.mark.parametrize("table_max", (L.DENSE_TABLE_MAX, 1))       # the table's path and np.unique's
def test_each_load_gets_its_distinct_lines_ranked(monkeypatch, table_max):
    monkeypatch.setattr(L, "DENSE_TABLE_MAX", table_max)
    tr = _random_trace(np.random.default_rng(7))
    ptr, ids = L._load_lines(tr, np.arange(len(tr.rows)), 128)
    ref_ptr, ref_ids = _reference_lines(tr, 128)
    assert ptr.tolist() == ref_ptr.tolist() and ids.tolist() == ref_ids.tolist()


@pytest.mark.parametrize("n, span", [(5000, 3000), (5000, 200_000), (1, 1)])
def test_dense_ids_are_np_uniques_ranks(n, span):
    """Lines ranked through the table (many for their range) and by np.unique (few) alike."""
    lines = np.random.default_rng(n + span).integers(10**9, 10**9 + span, n)
    assert L._dense_ids(lines).tolist() == np.unique(lines, return_inverse=True)[1].tolist()


def test_a_hit_waits_for_the_latest_earlier_miss_on_its_lines():
    rng = np.random.default_rng(3)
    n, n_lines = 300, 12
    counts = rng.integers(0, 4, n)
    ptr = np.r_[0, np.cumsum(counts)]
    line_id = np.concatenate([rng.choice(n_lines, c, replace=False) for c in counts]).astype(np.int64)
    level = rng.integers(0, 3, n).astype(np.int8)
    order_key = rng.permutation(n).astype(np.int64)
    got = L.fill_providers(level, ptr, line_id, order_key)
    for r in range(n):
        want = -1
        if level[r] == 0 and counts[r]:
            mine = set(line_id[ptr[r]:ptr[r + 1]].tolist())
            earlier = [m for m in range(n) if level[m] > 0 and order_key[m] < order_key[r]
                       and mine & set(line_id[ptr[m]:ptr[m + 1]].tolist())]
            want = max(earlier, key=lambda m: order_key[m]) if earlier else -1
        assert got[r] == want, r
