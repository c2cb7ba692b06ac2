"""numba's on-disk cache of gpusim's compiled functions: stamped by content, guarded, and seeded from a
compiled copy shipped with the package.

- Stamps. numba stamps a cache entry with its source file's mtime and size. gpusim stamps it with a hash
  of the source files' bytes instead: the function's own file, and for the cycle loop every unit module
  inlined into it (numba would see an edit to engine.py alone). An edit to any of them compiles anew,
  and a fresh checkout, whose files all have new mtimes, can still use the shipped copy.
- Guard. A damaged cache file (truncated by a full disk or a killed run) is dropped and the function
  compiled again, with a notice, instead of failing every later run until someone deletes it by hand.
- Shipped copy. `gpusim/jit_cache/` holds the compiled functions for one platform (its MANIFEST.json:
  numba's version, CPython's, the target triple; code for the generic CPU of that triple, so any CPU of
  it runs it). A process whose own cache lacks a function loads it from there when numba, CPython, the
  triple and the stamp match; otherwise numba compiles it (the cycle loop: 30-50 s a variant) and
  `shipped_miss()` says why, which the progress bar shows. `python -m gpusim.report.jit_build` makes the copy
  again after an edit to a compiled module (tests/test_jit.py fails while it is stale).
  GPUSIM_NO_SHIPPED=1 in the environment leaves the copy unused (to time a compile).
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
from functools import lru_cache
from pathlib import Path

SHIPPED_DIR = Path(__file__).resolve().with_name("jit_cache")
MANIFEST = "MANIFEST.json"
SHIPPED_CPU = "generic"     # (measured: as fast as the host's CPU name on the cycle loop; bench/bench_run.py)

# the notices of this process's rebuilds, for the output's warnings
NOTICES: list[str] = []
# every cached dispatcher of gpusim, by "module.name" (the shipped copy's builder compiles and copies them)
CACHED: dict = {}


def guard_cache(namespace: dict, sources=()):
    """Stamp, guard and seed the cache of every cached numba function defined in a module (call it at the
    end of the module with globals()). sources: other files whose edits must also compile the module's
    functions anew (the units inlined into them)."""
    module = namespace.get("__name__", "?")
    files = tuple(dict.fromkeys([namespace["__file__"], *sources]))     # (its own file first, once)
    for name, obj in list(namespace.items()):
        cache = getattr(obj, "_cache", None)
        load = getattr(cache, "load_overload", None)
        if load is None or getattr(load, "_gpusim_guarded", False) \
                or getattr(getattr(obj, "py_func", None), "__module__", None) != module:
            continue    # not a cached dispatcher of this module (or a numba that lays its cache out otherwise)
        cache_file = getattr(cache, "_cache_file", None)
        if cache_file is not None and hasattr(cache_file, "_source_stamp"):
            cache_file._source_stamp = content_stamp(files)
        CACHED[f"{module}.{name}"] = obj
        cache.load_overload = _guarded(load, cache, f"{module}.{name}")


@lru_cache(maxsize=None)
def _file_hash(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def content_stamp(files: tuple) -> tuple:
    """The stamp numba keeps beside a function's cache entries: the files' names and contents' hashes."""
    return tuple((os.path.basename(p), _file_hash(p)) for p in files)


def _guarded(load, cache, name: str):
    def load_overload(sig, target_context):
        try:
            got = load(sig, target_context)
        except Exception as e:      # noqa: BLE001 - any failure to read a cache entry means: compile anew
            cache.flush()           # an empty index: numba compiles and saves a fresh entry
            notice = (f"numba's cache of {name} was damaged ({type(e).__name__}: {str(e)[:80]}); "
                      "it was dropped and the function compiled again")
            NOTICES.append(notice)
            print(f"gpusim: notice: {notice}", file=sys.stderr)
            got = None
        return got if got is not None else _load_shipped(cache, sig, target_context)
    load_overload._gpusim_guarded = True
    return load_overload


# ---- the shipped copy

class _ShippedCodegen:
    """What a cache key takes from the code generator: the shipped copy's target (manifest)."""
    def __init__(self, magic):
        self._magic = magic

    def magic_tuple(self):
        return self._magic


@lru_cache(maxsize=1)
def shipped_miss() -> str | None:
    """Why this process cannot use the shipped copy at all (None: it can, entry by entry)."""
    if os.environ.get("GPUSIM_NO_SHIPPED"):
        return "GPUSIM_NO_SHIPPED is set"
    man = _manifest()
    if man is None:
        return "no shipped copy in this install"
    import numba
    import llvmlite.binding as ll
    here = {"numba": numba.__version__, "python": f"{sys.version_info[0]}.{sys.version_info[1]}",
            "triple": ll.get_process_triple()}
    for key, have in here.items():
        if man.get(key) != have:
            return f"the shipped copy is for {key} {man.get(key)}, this is {have}"
    return None


@lru_cache(maxsize=1)
def _manifest() -> dict | None:
    try:
        return json.loads((SHIPPED_DIR / MANIFEST).read_text())
    except (OSError, ValueError):
        return None


def _shipped_file(cache):
    """The shipped copy's index and data of one cached function, as numba reads its own."""
    from numba.core.caching import IndexDataCacheFile
    return IndexDataCacheFile(str(SHIPPED_DIR), cache._impl.filename_base, cache._cache_file._source_stamp)


def _shipped_key(cache, sig):
    return cache._index_key(sig, _ShippedCodegen(tuple(_manifest()["magic"])))


def _load_shipped(cache, sig, target_context):
    """The function compiled for sig from the shipped copy, or None (numba then compiles it)."""
    if shipped_miss() is not None:
        return None
    try:
        data = _shipped_file(cache).load(_shipped_key(cache, sig))
        return None if data is None else cache._impl.rebuild(target_context, data)
    except Exception:   # noqa: BLE001 - an unreadable shipped entry is one numba compiles; shipped_has tells
        return None


def shipped_has(dispatcher) -> bool:
    """Whether the shipped copy holds entries of this function that this process can load (stamp current)."""
    if shipped_miss() is not None:
        return False
    try:
        return bool(_shipped_file(dispatcher._cache)._load_index())
    except Exception:   # noqa: BLE001 - unreadable: as if absent
        return False


def shipped_stamps() -> dict:
    """name -> (the stamp in the shipped index, the current stamp) for every cached function (for the
    freshness test; no numba version check: the stamp is what an edit changes)."""
    import pickle
    out = {}
    for name, disp in CACHED.items():
        cf = _shipped_file(disp._cache)
        try:
            with open(cf._index_path, "rb") as f:
                pickle.load(f)                  # numba's version
                stamp, _ = pickle.loads(f.read())
        except FileNotFoundError:
            stamp = None
        out[name] = (stamp, cf._source_stamp)
    return out


# what a run needs compiled, by the number of variants (the engine's: waiter groups on, off, and a stall
# log): the shipped copy's builder fails without them (gpusim/report/jit_build.py)
REQUIRED = {"gpusim.timing.engine.run": 3, "gpusim.memory.cache._l1_run": 1, "gpusim.memory.cache._l2_tiles": 1,
            "gpusim.memory.cache._sampled_bitmap": 1,
            "gpusim.timing.lower._claim_matches": 1, "gpusim.timing.rows._fill_rows": 1,
            "gpusim.timing.lower._row_lines": 1, "gpusim.timing.lower._rank_in_range": 1, "gpusim.timing.lower._providers": 1,
            "gpusim.memory.shared_banks._count_rows": 1, "gpusim.timing.control_codes._gaps": 1,
            "gpusim.timing.lower._take_by_warp": 1, "gpusim.timing.lower._gather": 1,
            "gpusim.memory.coalescer._count_chunks": 1, "gpusim.memory.rows._first_active": 1, "gpusim.memory.rows._line_patterns": 1,
            "gpusim.memory.cache._diffuse": 1}
