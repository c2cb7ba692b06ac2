"""Build gpusim/jit_cache/, the compiled copy of gpusim's numba functions that a fresh install loads
instead of compiling (gpusim/jit.py): `python -m gpusim.report.jit_build`, after an edit to a compiled
module (tests/test_jit.py fails while the copy is stale). About 3 minutes on a 2-core machine.

A fresh process with an empty numba cache and NUMBA_CPU_NAME=generic (code any CPU of the triple runs)
runs the commands and engine variants a run, a trace and the tests need; each compiled function's
entries are then copied beside a MANIFEST.json (numba, CPython, triple), without numba's type annotation
text (it names this machine's source paths), and the builder fails on any other path of this machine."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from gpusim import jit


def _import_compiled_modules():
    import gpusim.memory.cache  # noqa: F401
    import gpusim.memory.coalescer  # noqa: F401
    import gpusim.memory.rows  # noqa: F401
    import gpusim.timing  # noqa: F401
    import gpusim.timing.engine  # noqa: F401
    import gpusim.timing.lower  # noqa: F401


def _compile_all():
    """Compile every variant a run, a trace or a test asks for (in the builder's process)."""
    import contextlib
    import io
    from gpusim.arch import get_arch
    from gpusim.estimate.simulate import simulate
    from gpusim.report.cli import main
    from gpusim.timing import lower, run_lowered
    with contextlib.redirect_stdout(io.StringIO()):
        for argv in (["run", "regtile2d", "--size", "2048", "--json"], ["run", "copy4", "--size", "1024", "--json"],
                     ["run", "regtile2d", "--size", "512", "--trace", "--json"]):
            if main(argv) != 0:
                raise SystemExit(f"gpusim {' '.join(argv)} failed")
    gpu = get_arch("h200")
    lw = lower(simulate("regtile2d", 256, mode="full", keep_trace=True).trace, gpu)
    for log_states, groups in ((0, False), (0, True), (8, False)):      # the engine's three variants
        run_lowered(lw, gpu, log_states, groups)
    missing = [name for name, n in jit.REQUIRED.items() if len(jit.CACHED[name].signatures) < n]
    if missing:
        raise SystemExit(f"the builder's runs did not compile {', '.join(missing)}")


def _strip_paths(payload: tuple) -> tuple:
    """A cached compile result without its type annotation text (numba keeps it for inspect_types only;
    it names the builder's source paths)."""
    return payload[:6] + ("(gpusim's shipped copy keeps no type annotation)",) + payload[7:]


def _write_shipped(staging: Path):
    """In the builder's process: copy each compiled function's entries into staging, without paths."""
    import datetime
    import platform
    import numba
    import llvmlite.binding as ll
    from numba.core import config
    from numba.core.caching import IndexDataCacheFile
    from numba.core.registry import cpu_target
    magic = cpu_target.target_context.codegen().magic_tuple()
    if magic[1] != jit.SHIPPED_CPU:
        raise SystemExit(f"the builder's target CPU is {magic[1]}, not {jit.SHIPPED_CPU} (NUMBA_CPU_NAME)")
    files = []
    for name, disp in sorted(jit.CACHED.items()):
        if not disp.signatures:
            continue
        cache = disp._cache
        src = cache._cache_file
        dst = IndexDataCacheFile(str(staging), cache._impl.filename_base, src._source_stamp)
        for sig in disp.signatures:
            key = cache._index_key(sig, cpu_target.target_context.codegen())
            data = src.load(key)
            if data is None:
                raise SystemExit(f"{name}{sig}: compiled but not in numba's cache")
            dst.save(key, _strip_paths(data))
        files.append(name)
    home = [str(Path(__file__).resolve().parents[2]), os.path.expanduser("~")]
    for f in staging.iterdir():
        blob = f.read_bytes()
        for p in home:
            if p.encode() in blob:
                raise SystemExit(f"{f.name} names a path of this machine ({p})")
    (staging / jit.MANIFEST).write_text(json.dumps({
        "what": "numba's compiled gpusim functions for a fresh install (gpusim/jit.py)",
        "made": {"command": "python -m gpusim.report.jit_build", "date": datetime.date.today().isoformat(),
                 "machine": platform.machine()},
        "numba": numba.__version__, "python": f"{sys.version_info[0]}.{sys.version_info[1]}",
        "triple": ll.get_process_triple(), "magic": list(magic), "cpu_name_env": config.CPU_NAME,
        "functions": files}, indent=1) + "\n")


def build():
    """Compile every cached function for the generic CPU in a fresh process with an empty numba cache,
    and replace gpusim/jit_cache/ with the result."""
    import shutil
    import subprocess
    import tempfile
    with tempfile.TemporaryDirectory(prefix="gpusim-jit-") as tmp:
        staging = Path(tmp) / "jit_cache"
        staging.mkdir()
        env = {**os.environ, "NUMBA_CPU_NAME": jit.SHIPPED_CPU, "NUMBA_CPU_FEATURES": "",
               "NUMBA_CACHE_DIR": str(Path(tmp) / "numba"), "GPUSIM_NO_SHIPPED": "1"}
        subprocess.run([sys.executable, "-m", "gpusim.report.jit_build", "_build_in", str(staging)], env=env, check=True)
        if jit.SHIPPED_DIR.exists():
            shutil.rmtree(jit.SHIPPED_DIR)
        shutil.copytree(staging, jit.SHIPPED_DIR)
    print(f"wrote {jit.SHIPPED_DIR.name}/: {len(list(jit.SHIPPED_DIR.iterdir()))} files")


if __name__ == "__main__":
    if sys.argv[1:2] == ["_build_in"]:
        _import_compiled_modules()
        _compile_all()
        _write_shipped(Path(sys.argv[2]))
    else:
        build()
