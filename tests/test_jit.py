"""gpusim.jit: a damaged numba cache file is dropped and compiled again, with a notice; the cache is
stamped by content; the shipped compiled copy is current and serves a fresh process."""
import json
import os
import subprocess
import sys
import textwrap

import pytest


def test_a_truncated_cache_entry_is_compiled_again_with_a_notice(tmp_path):
    (tmp_path / "jitmod.py").write_text(textwrap.dedent("""
        from numba import njit
        from gpusim.jit import guard_cache

        @njit(cache=True)
        def twice(x):
            return 2 * x

        guard_cache(globals())
    """))
    env_code = "import jitmod, gpusim.jit; print(jitmod.twice(21)); print(len(gpusim.jit.NOTICES))"

    def run():
        out = subprocess.run([sys.executable, "-c", env_code], cwd=tmp_path, capture_output=True, text=True,
                             env={"PATH": "/usr/bin:/bin", "NUMBA_CACHE_DIR": str(tmp_path / "nb"),
                                  "PYTHONPATH": str(tmp_path) + ":" + ":".join(sys.path)})
        assert out.returncode == 0, out.stderr[-1500:]
        return out.stdout.split(), out.stderr

    assert run() == (["42", "0"], "")               # compiled and saved
    assert run() == (["42", "0"], "")               # loaded from the cache
    (entry,) = (tmp_path / "nb").rglob("*.nbc")
    entry.write_bytes(entry.read_bytes()[:40])      # truncated, as by a full disk
    (res, notices), err = run()
    assert (res, notices) == ("42", "1") and "notice: numba's cache of jitmod.twice was damaged" in err
    assert run() == (["42", "0"], "")               # the fresh entry loads again


def _jit_run(tmp_path, code, **env):
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin", "NUMBA_CACHE_DIR": str(tmp_path / "nb"),
                              "PYTHONPATH": str(tmp_path) + ":" + ":".join(sys.path), **env})
    assert out.returncode == 0, out.stderr[-1500:]
    return out.stdout.split()


def test_the_cache_is_stamped_by_content_not_mtime(tmp_path):
    """An edit to a source the function names (not its own file) compiles it anew; a new mtime with the
    same bytes (a fresh checkout) does not."""
    (tmp_path / "consts.py").write_text("K = 2\n")
    (tmp_path / "jitmod.py").write_text(textwrap.dedent("""
        import os
        from numba import njit
        from gpusim.jit import guard_cache
        from consts import K

        @njit(cache=True)
        def times(x):
            return K * x

        guard_cache(globals(), (os.path.join(os.path.dirname(__file__), "consts.py"),))
    """))
    code = "import jitmod; print(jitmod.times(21), sum(jitmod.times.stats.cache_hits.values()))"
    assert _jit_run(tmp_path, code) == ["42", "0"]          # compiled
    assert _jit_run(tmp_path, code) == ["42", "1"]          # loaded
    for f in ("consts.py", "jitmod.py"):
        os.utime(tmp_path / f, (1e9, 1e9))                  # new mtimes, same bytes
    assert _jit_run(tmp_path, code) == ["42", "1"]          # still loaded
    (tmp_path / "consts.py").write_text("K = 3\n")           # the named source edited
    assert _jit_run(tmp_path, code) == ["63", "0"]          # compiled anew


def test_the_shipped_copy_is_current():
    """gpusim/jit_cache/ holds every function a run needs, stamped with today's sources: after an edit
    to a compiled module, `python -m gpusim.report.jit_build` makes it again (else a fresh install compiles)."""
    import gpusim.memory.cache  # noqa: F401
    import gpusim.timing.engine  # noqa: F401
    import gpusim.timing.lower  # noqa: F401
    from gpusim import jit
    man = json.loads((jit.SHIPPED_DIR / jit.MANIFEST).read_text())
    assert set(jit.REQUIRED) <= set(man["functions"])
    stamps = jit.shipped_stamps()
    stale = [name for name in man["functions"] if stamps[name][0] != stamps[name][1]]
    assert not stale, f"the shipped copy is stale for {stale}: run python -m gpusim.report.jit_build"


def test_a_fresh_process_loads_the_engine_from_the_shipped_copy(tmp_path):
    """With an empty numba cache the cycle loop is loaded, not compiled; GPUSIM_NO_SHIPPED leaves the copy
    unused, and the progress bar's reason names it."""
    from gpusim import jit
    if jit.shipped_miss() is not None:
        pytest.skip(f"the shipped copy cannot serve here: {jit.shipped_miss()}")
    code = textwrap.dedent("""
        from gpusim.arch import get_arch
        from gpusim.estimate.simulate import simulate
        from gpusim.timing import engine_compiled, lower, run_lowered
        import gpusim.timing.engine as E
        print(engine_compiled())
        lw = lower(simulate("naive", 64, mode="full", keep_trace=True).trace, get_arch("h200"), [0])
        res = run_lowered(lw, get_arch("h200"), 0, False)
        print(res.cycles > 0, sum(E.run.stats.cache_hits.values()), sum(E.run.stats.cache_misses.values()))
    """)
    assert _jit_run(tmp_path, code) == ["True", "True", "1", "0"]
    code = "from gpusim.timing import engine_compiled; from gpusim.jit import shipped_miss; " \
           "print(engine_compiled(), shipped_miss() == 'GPUSIM_NO_SHIPPED is set')"
    assert _jit_run(tmp_path, code, GPUSIM_NO_SHIPPED="1") == ["False", "True"]
