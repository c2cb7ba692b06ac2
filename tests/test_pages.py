"""gpusim.pages: numpy's huge-page hint is off once gpusim is imported, unless NUMPY_MADVISE_HUGEPAGE
chooses (checked in fresh processes: the setting is process-wide and read when numpy is imported)."""
import os
import subprocess
import sys

CODE = ("import gpusim, gpusim.pages as P; from numpy._core import multiarray as m; "
        "print(m._get_madvise_hugepage(), P.SMALL_PAGES)")


def _hint(env_value):
    env = {k: v for k, v in os.environ.items() if k != "NUMPY_MADVISE_HUGEPAGE"}
    if env_value is not None:
        env["NUMPY_MADVISE_HUGEPAGE"] = env_value
    out = subprocess.run([sys.executable, "-c", CODE], env=env, capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_the_hint_is_off_after_import():
    assert _hint(None) == ["False", "True"]


def test_numpys_own_setting_is_left_alone_where_the_user_made_it():
    assert _hint("1") == ["True", "False"]
    assert _hint("0") == ["False", "True"]


MALLOC_CODE = """
import resource, sys
import numpy as np
from gpusim.pages import large_block_malloc
names = large_block_malloc() if sys.argv[1] == "set" else []
np.ones(8 << 20)                # 64 MB written, freed
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
np.ones(8 << 20)                # again: faulted in anew, or the freed memory
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before, *names)
"""


def _malloc(mode: str, **env):
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    out = subprocess.run([sys.executable, "-c", MALLOC_CODE, mode], env=dict(clean, **env), capture_output=True,
                         text=True, check=True)
    faults, *names = out.stdout.split()
    return names, int(faults)


def test_large_block_malloc_keeps_freed_arrays_for_the_next():
    """The command's malloc settings (glibc): a 64 MB array freed and made again reuses the memory, where
    glibc's defaults map it afresh (16 k pages faulted in again); a setting the environment makes stays."""
    import pytest
    names, faults = _malloc("set")
    if not names:
        pytest.skip("not glibc: no mallopt")
    assert names == ["MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_"]
    _, default_faults = _malloc("keep")
    assert faults < 1000 < 8000 < default_faults
    assert _malloc("set", MALLOC_TOP_PAD_="0")[0] == ["MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_"]
