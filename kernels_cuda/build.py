"""Compile the CUDA twins and commit their SASS: traces/static/<tag>.sass and .json.

    python kernels_cuda/build.py [KERNEL ...] [--out traces/static] [--params BN=64 ...]

For every twin (kernels_cuda/<name>.cu with kernels_py/<name>.py) this writes the listing of its
defaults and of every parameter set that has a hardware record under traces/hw/ (the held-out
variants, the parameter sweep), so that gpusim runs those without a compiler. --params builds one
further set of the named kernels. Needs nvcc and cuobjdump/nvdisasm (on the PATH, or
`pip install 'gpusim[cuda]'`); the committed records were made with nvcc 13.0.88. Nothing here is
kernel-specific: each twin's parameters and defaults are its Python spec's.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from gpusim.hw import twins                         # noqa: E402
from gpusim.kernel.spec import get_kernel           # noqa: E402
from gpusim.sass.compile import STATIC_DIR, write_static   # noqa: E402


def recorded_params(kernel: str) -> list[dict]:
    """Every parameter set of the kernel with a hardware record under traces/hw/, defaults first."""
    spec = get_kernel(kernel)
    out = [dict(spec.params)]
    for f in sorted((REPO / "traces" / "hw").rglob(f"{kernel}*.json")):
        try:
            rec = json.loads(f.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        if rec.get("kernel") == kernel and isinstance(rec.get("params"), dict):
            p = spec.resolve(rec["params"])
            if p not in out:
                out.append(p)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="kernels (default: every twin)")
    ap.add_argument("--out", default=str(STATIC_DIR), help="output folder")
    ap.add_argument("--params", nargs="*", default=[], metavar="NAME=VALUE",
                    help="also build this parameter set of each named kernel")
    a = ap.parse_args(argv)
    names = a.names or twins.twin_names()
    extra = dict(kv.split("=", 1) for kv in a.params)
    for name in names:
        spec = get_kernel(name)
        sets = recorded_params(name)
        if extra:
            sets.append(spec.resolve(extra))
        for p in sets:
            path = write_static(name, p, spec.params, Path(a.out))
            print(f"{name} {p}: {path.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
