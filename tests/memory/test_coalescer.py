"""Global coalescing into 32-B sectors and 128-B lines: measured rows and a brute-force reference."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from gpusim.memory.coalescer import global_sectors_and_lines

L = np.arange(32)

# shared/HARDWARE.md s.3 [M]: one request each; sectors per request
MEASURED = [
    ("LDG.32 coalesced", 4, 4 * L, 4),
    ("LDG.64", 8, 8 * L, 8),
    ("LDG.128", 16, 16 * L, 16),
    ("128-B stride", 4, 128 * L, 32),
    ("broadcast", 4, 0 * L, 1),
    ("misaligned by 4 B", 4, 4 * L + 4, 5),
]


@pytest.mark.parametrize("name,nbytes,addr,sectors", MEASURED, ids=[m[0] for m in MEASURED])
def test_measured_patterns(name, nbytes, addr, sectors):
    """Each global pattern measured on the H200 gives the measured sectors per request."""
    s, _ = global_sectors_and_lines(addr[None, :], nbytes)
    assert int(s[0]) == sectors


def brute_force(addr, nbytes):
    sec, lines = set(), set()
    for a in addr:
        if a < 0:
            continue
        for b in range(a, a + nbytes):
            sec.add(b // 32)
            lines.add(b // 128)
    return len(sec), len(lines)


@settings(max_examples=300, deadline=None)
@given(nbytes=st.sampled_from([4, 8, 16]),
       slots=st.lists(st.integers(min_value=-1, max_value=4096), min_size=32, max_size=32))
def test_random_patterns_match_brute_force(nbytes, slots):
    """Random aligned addresses agree with counting every byte's sector and line."""
    addr = np.array([-1 if s < 0 else s * nbytes for s in slots], np.int64)
    s, l = global_sectors_and_lines(addr[None, :], nbytes)
    assert (int(s[0]), int(l[0])) == brute_force(addr, nbytes)


def test_all_inactive_row_costs_nothing():
    """A row with no active lane touches no sector."""
    s, l = global_sectors_and_lines(np.full((1, 32), -1), 4)
    assert int(s[0]) == 0 and int(l[0]) == 0
