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
