"""Registers per thread: from ptxas -v of the CUDA twin, recorded under traces/static/.

Machines without nvcc read the committed records; where no record matches the
parameters and nvcc is on the PATH, the twin is compiled on the spot (and the
figure cached for the process). Otherwise the figure is unknown (None), and the
occupancy report says so rather than guessing.
"""
from __future__ import annotations

import functools
import importlib.util
import json
import shutil
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
STATIC_DIR = REPO / "traces" / "static"


def _records():
    out = []
    if STATIC_DIR.is_dir():
        for f in sorted(STATIC_DIR.glob("*.json")):
            try:
                out.append(json.loads(f.read_text()))
            except (OSError, json.JSONDecodeError):
                continue
    return out


@functools.lru_cache(maxsize=None)
def _lookup(kernel: str, params_items: tuple):
    params = dict(params_items)
    for rec in _records():
        if rec.get("kernel") == kernel and rec.get("params") == params:
            return rec.get("ptxas"), "traces/static"
    if shutil.which("nvcc"):
        build = REPO / "kernels_cuda" / "build.py"
        if build.exists():
            spec = importlib.util.spec_from_file_location("gpusim_twin_build", build)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            with tempfile.TemporaryDirectory() as d:
                try:
                    return mod.build_cubin(kernel, params, str(Path(d) / "k.cubin")), "nvcc"
                except Exception:   # noqa: BLE001 - a failed build leaves the figure unknown
                    return None, None
    return None, None


def ptxas_info(kernel: str, params: dict):
    """(ptxas dict or None, where it came from)."""
    return _lookup(kernel, tuple(sorted(params.items())))
