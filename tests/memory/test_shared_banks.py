"""Shared-memory wavefront model against HARDWARE.md s.3's measured rows and a brute-force reference."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from gpusim.memory.shared_banks import shared_wavefronts
from gpusim.hw.records import load_record
from gpusim.sass.registers import REPO

L = np.arange(32)

# (pattern, bytes per lane, byte addresses of the 32 lanes, measured wavefronts, measured conflicts)
# measured on the H200, one warp, one instruction: shared/HARDWARE.md s.3 [M]
MEASURED = [
    ("LDS.32 linear", 4, 4 * L, 1, 0),
    ("LDS.32 broadcast", 4, 0 * L, 1, 0),
    ("LDS.32 stride 2 words", 4, 8 * L, 2, 1),
    ("LDS.32 stride 32 words", 4, 128 * L, 32, 31),
    ("LDS.64 linear", 8, 8 * L, 2, 0),
    ("LDS.64 16-B stride", 8, 16 * L, 4, 2),
    ("LDS.64 128-B stride", 8, 128 * L, 32, 30),
    ("LDS.64 lane pairs share", 8, 8 * (L // 2), 1, 0),
    ("LDS.128 linear", 16, 16 * L, 4, 0),
    ("LDS.128 32-B stride", 16, 32 * L, 8, 4),
    ("LDS.128 128-B stride", 16, 128 * L, 32, 28),
    ("LDS.128 broadcast", 16, 0 * L, 2, 0),
    ("LDS.128 lane pairs share", 16, 16 * (L // 2), 2, 0),
]


@pytest.mark.parametrize("name,nbytes,addr,wavefronts,conflicts", MEASURED, ids=[m[0] for m in MEASURED])
def test_measured_patterns(name, nbytes, addr, wavefronts, conflicts):
    """Each pattern measured on the H200 gives the measured wavefronts and conflicts."""
    wf, ideal = shared_wavefronts(addr[None, :], nbytes)
    assert int(wf[0]) == wavefronts
    assert int(wf[0] - ideal[0]) == conflicts


def brute_force(addr, nbytes):
    """Bank by bank with Python sets, following the group rule of gpusim/memory/shared_banks.py:
    each group (warp / half-warp / quarter-warp for 32/64/128-bit) reads a word once; 128-bit
    halves are served separately; a part whose lanes read one address (128-bit: at most two) is
    one group."""
    parts = [range(0, 16), range(16, 32)] if nbytes == 16 else [range(32)]
    group = {4: 32, 8: 16, 16: 8}[nbytes]
    wavefronts = ideal = 0
    for part in parts:
        lanes = [l for l in part if addr[l] >= 0]
        if not lanes:
            continue
        one_group = len({addr[l] for l in lanes}) <= (2 if nbytes == 16 else 1)
        pairs = {(0 if one_group else l // group, addr[l] // 4 + j) for l in lanes for j in range(nbytes // 4)}
        banks, readers = {}, {}
        for g, w in pairs:
            banks.setdefault(w % 32, set()).add((g, w))
            readers.setdefault(w, set()).add(g)
        wavefronts += max(len(v) for v in banks.values())
        ideal += max(-(-len(pairs) // 32), max(len(v) for v in readers.values()), 1)
    return wavefronts, ideal


@settings(max_examples=300, deadline=None)
@given(nbytes=st.sampled_from([4, 8, 16]),
       slots=st.lists(st.integers(min_value=-1, max_value=63), min_size=32, max_size=32))
def test_random_patterns_match_brute_force(nbytes, slots):
    """Random aligned addresses (some lanes inactive) agree with the per-bank set count."""
    addr = np.array([-1 if s < 0 else s * nbytes for s in slots], np.int64)
    wf, ideal = shared_wavefronts(addr[None, :], nbytes)
    assert (int(wf[0]), int(ideal[0])) == brute_force(addr, nbytes)


def _bank_patterns():
    rec = load_record(REPO / "traces/hw/h200/micro/bank_patterns.json")
    return [(n, p["bytes"], np.array(p["word_offsets"]), p["wavefronts"], p["bank_conflicts"])
            for n, p in rec["value"].items()]


@pytest.mark.parametrize("name,nbytes,offsets,wavefronts,conflicts", _bank_patterns(),
                         ids=[p[0] for p in _bank_patterns()])
def test_bank_pattern_microbenchmark(name, nbytes, offsets, wavefronts, conflicts):
    """Every lane-address pattern measured with ncu on the H200 (calibrate/bank_patterns.py):
    the ladder kernels' shared loads and diagnostic ones (lanes i and i+8 sharing, halves identical...)."""
    wf, ideal = shared_wavefronts(np.where(offsets >= 0, 4 * offsets, -1)[None, :], nbytes)
    assert int(wf[0]) == wavefronts
    assert int(wf[0] - ideal[0]) == conflicts


# the lane addresses of micro.cu's rate_lds* kernels (lane i reads 16-byte word i % K, ...), as measured in
# micro/lds_writeback_ncu.json: ncu's wavefronts over the kernel's shared loads
WB_PATTERNS = {"rate_lds32": (4, 4 * L), "rate_lds32_k1": (4, 0 * L), "rate_lds64": (8, 8 * L),
               "rate_lds64_k1": (8, 0 * L), "rate_lds128": (16, 16 * L),
               **{f"rate_lds128_k{k}": (16, 16 * (L % k)) for k in (1, 2, 4, 8, 16)}}


def _writeback_rows():
    rec = load_record(REPO / "traces/hw/h200/micro/lds_writeback_ncu.json")
    return [(r["kernel"].split()[0], r["l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"]
             / r["smsp__sass_inst_executed_op_shared_ld.sum"]) for r in rec["value"]]


@pytest.mark.parametrize("kernel,measured", _writeback_rows(), ids=[r[0] for r in _writeback_rows()])
def test_few_word_loads_match_ncu(kernel, measured):
    """Loads of 1-32 distinct words by all 32 warps of an SM, ncu's wavefronts per load on the H200: an
    LDS.128 whose half-warps read two distinct words costs one wavefront a half, like a broadcast (the
    group rule alone gave two); four or more words two a half."""
    nbytes, addr = WB_PATTERNS[kernel]
    wf, _ = shared_wavefronts(addr[None, :], nbytes)
    assert int(wf[0]) == pytest.approx(measured, abs=0.02)


def test_rows_are_independent():
    """Several rows in one call give the same answers as one row at a time."""
    rows = np.stack([m[2] for m in MEASURED if m[1] == 4])
    wf, _ = shared_wavefronts(rows, 4)
    assert list(wf) == [m[3] for m in MEASURED if m[1] == 4]
