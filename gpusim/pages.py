"""Ordinary pages for numpy's large arrays.

On Linux numpy marks every array of 4 MB or more MADV_HUGEPAGE. The kernel then faults such memory in
2 MB at a time, zeroing each huge page whole, and where its transparent huge page defrag setting is
"madvise" (a common default) it may compact memory first to find one (numpy/numpy#31590). A prediction
allocates, writes once and frees gigabytes of short-lived arrays (traces, lowered rows, the engine's
rows). Measured on a 2-core machine, `gpusim run regtile2d --size 4096` in a fresh process, runs with and
without the hint alternated: 1.5-2.2 s of system time with it, 0.9-1.2 s without, the run 0.2-0.7 s
shorter (less in one long process, whose freed huge pages are faulted in again cheaply: the 36-point
ladder of bench/bench_ladder.py 1.04x). So gpusim turns the hint off when it is imported, unless
NUMPY_MADVISE_HUGEPAGE is set (numpy's choice then stands). The setting is numpy's, process-wide: no
number gpusim computes changes, only how the arrays' memory is faulted in."""
from __future__ import annotations

import os


def small_pages() -> bool:
    """Turn numpy's huge-page hint off unless NUMPY_MADVISE_HUGEPAGE chooses; whether it is off now (False
    where this numpy has no such switch)."""
    from numpy._core import multiarray as m
    setter, getter = getattr(m, "_set_madvise_hugepage", None), getattr(m, "_get_madvise_hugepage", None)
    if setter is None or getter is None:
        return False
    if "NUMPY_MADVISE_HUGEPAGE" not in os.environ:
        setter(False)
    return not getter()


SMALL_PAGES = small_pages()
