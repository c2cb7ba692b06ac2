"""numba's on-disk cache, guarded: a damaged cache file (truncated by a full disk or a killed run)
is dropped and the function compiled again, with a notice, instead of failing every later run until
someone deletes it by hand."""
from __future__ import annotations

import sys

# the notices of this process's rebuilds, for the output's warnings
NOTICES: list[str] = []


def guard_cache(namespace: dict):
    """Wrap the cache loader of every cached numba function in a module's namespace (call it at the
    end of the module with globals())."""
    for name, obj in list(namespace.items()):
        cache = getattr(obj, "_cache", None)
        load = getattr(cache, "load_overload", None)
        if load is None or getattr(load, "_gpusim_guarded", False):
            continue    # not a cached dispatcher (or a numba that lays its cache out otherwise)
        cache.load_overload = _guarded(load, cache, f"{namespace.get('__name__', '?')}.{name}")


def _guarded(load, cache, name: str):
    def load_overload(sig, target_context):
        try:
            return load(sig, target_context)
        except Exception as e:      # noqa: BLE001 - any failure to read a cache entry means: compile anew
            cache.flush()           # an empty index: numba compiles and saves a fresh entry
            notice = (f"numba's cache of {name} was damaged ({type(e).__name__}: {str(e)[:80]}); "
                      "it was dropped and the function compiled again")
            NOTICES.append(notice)
            print(f"gpusim: notice: {notice}", file=sys.stderr)
            return None
    load_overload._gpusim_guarded = True
    return load_overload
