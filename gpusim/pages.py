"""Ordinary pages for numpy's large arrays, and glibc's malloc set to keep freed ones for the next.

On Linux numpy marks every array of 4 MB or more MADV_HUGEPAGE. The kernel then faults such memory in
2 MB at a time, zeroing each huge page whole, and where its transparent huge page defrag setting is
"madvise" (a common default) it may compact memory first to find one (numpy/numpy#31590). A prediction
allocates, writes once and frees gigabytes of short-lived arrays (traces, lowered rows, the engine's
rows). Measured on a 2-core machine, `gpusim run regtile2d --size 4096` in a fresh process, runs with and
without the hint alternated: 1.5-2.2 s of system time with it, 0.9-1.2 s without, the run 0.2-0.7 s
shorter (less in one long process, whose freed huge pages are faulted in again cheaply: the 36-point
ladder of bench/bench_ladder.py 1.04x). So gpusim turns the hint off when it is imported, unless
NUMPY_MADVISE_HUGEPAGE is set (numpy's choice then stands). The setting is numpy's, process-wide: no
number gpusim computes changes, only how the arrays' memory is faulted in.

MALLOC: glibc's malloc takes blocks of more than 128 KB-32 MB (its threshold moves) from mmap and gives them
back at once, and trims the heap past 128 KB free, so each of a prediction's large temporaries is faulted in
and zeroed page by page anew. The `gpusim` command (large_block_malloc) and the sweep's local workers (their
environment) set it to serve blocks up to 256 MB from the heap and keep up to 1 GB free there."""
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


# glibc's malloc settings, as the environment variables it reads at a process's start (sweep's workers:
# `gpusim run regtile2d` and `naive --size 4096` without the helper thread, two runs each, system CPU
# 0.88-0.99 -> 0.34-0.52 s, wall time 0.1-0.6 s less); large_block_malloc sets the same through mallopt
# (`gpusim run --size 4096` alternated with and without, three runs of each, 2 CPUs: naive 3.92-4.08 ->
# 3.78-3.88 s, coalesced 3.20-3.32 -> 3.11-3.20 s, regtile2d 4.28-4.33 -> 4.11-4.21 s; system CPU
# 0.64-0.90 -> 0.44-0.65 s; peak memory 30-130 MB more)
MALLOC = {"MALLOC_MMAP_THRESHOLD_": 256 << 20, "MALLOC_TRIM_THRESHOLD_": 1 << 30, "MALLOC_TOP_PAD_": 64 << 20}
_MALLOPT = {"MALLOC_TRIM_THRESHOLD_": -1, "MALLOC_TOP_PAD_": -2, "MALLOC_MMAP_THRESHOLD_": -3}  # glibc's M_*


def large_block_malloc() -> list[str]:
    """Set MALLOC in this process through glibc's mallopt, each setting the environment does not already
    choose; the names of those set (none where the C library is not glibc). For a process that is gpusim's
    own (the command): it changes how the whole process allocates, no number gpusim computes."""
    import ctypes
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return []
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return [name for name, value in MALLOC.items()
            if name not in os.environ and mallopt(_MALLOPT[name], value) == 1]
