"""gpusim.jit: a damaged numba cache file is dropped and compiled again, with a notice."""
import subprocess
import sys
import textwrap


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
