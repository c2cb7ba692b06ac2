"""Registers per thread: from ptxas -v of the CUDA twin, recorded under traces/static/.

Machines without nvcc read the committed records; where no record matches the
parameters and a compiler is at hand, the twin is compiled on the spot
(gpusim.sass.compile, cached in the user cache). Otherwise the figure is unknown (None), and the
occupancy report says so rather than guessing.
"""
from __future__ import annotations

import functools
import json

from gpusim.paths import SOURCE_ROOT as REPO, STATIC_DIR  # noqa: F401  (REPO: the checkout, for tests)


def _records():
    out = []
    if STATIC_DIR.is_dir():
        for f in sorted(STATIC_DIR.glob("*.json")):
            try:
                out.append(json.loads(f.read_text()))
            except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:     # refused by name, never skipped
                from gpusim.errors import RecordError
                raise RecordError(f"traces/static/{f.name}: not a readable JSON record ({e})") from None
    return out


@functools.lru_cache(maxsize=None)
def _lookup(kernel: str, params_items: tuple):
    params = dict(params_items)
    for rec in _records():
        if rec.get("kernel") == kernel and rec.get("params") == params:
            return rec.get("ptxas"), "traces/static"
    from gpusim.errors import GpusimError
    from gpusim.sass.compile import compile_twin
    try:
        comp = compile_twin(kernel, params)
    except GpusimError:          # no compiler, no twin, or it does not compile: the figure stays unknown
        return None, None
    return comp.ptxas, comp.source


def ptxas_info(kernel: str, params: dict):
    """(ptxas dict or None, where it came from)."""
    return _lookup(kernel, tuple(sorted(params.items())))
