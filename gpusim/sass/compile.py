"""The SASS of a CUDA twin for a parameter set: committed, cached, or compiled now.

Where it comes from, in order:
  1. `traces/static/<tag>.sass` + `.json`, committed for the defaults and the recorded variants
     (so CI and a user without a compiler get them);
  2. the user cache (`$GPUSIM_CACHE_DIR`, else `$XDG_CACHE_HOME/gpusim`, else `~/.cache/gpusim`),
     keyed by a hash of the source, the parameters, the flags and the compiler version;
  3. nvcc + cuobjdump, found on the PATH or in the PyPI wheels (`pip install gpusim[cuda]`:
     nvidia-cuda-nvcc 13.0.88 with nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm), whose result
     goes into the cache.
With none of these the caller gets a `CompilerMissing` error that says which step failed.
"""
from __future__ import annotations

import ast
import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from gpusim.errors import GpusimError, KernelConfigError, LaunchError, RecordError

from gpusim.paths import CUDA_DIR, SOURCE_ROOT as REPO, STATIC_DIR
NVCC_FLAGS = ["-arch=sm_90", "-O3", "-cubin", "-Xptxas", "-v"]
RECORDED_NVCC = "13.0.88"          # the compiler of the committed records and the H200 runs


class CompilerMissing(GpusimError):
    """No committed SASS for the parameters and no nvcc / cuobjdump to make it."""


@dataclass
class Compiled:
    kernel: str
    params: dict
    sass: str               # cuobjdump -sass of the function
    ptxas: dict             # registers, shared_bytes, spill_stores, spill_loads, stack_bytes
    source: str             # where it came from: "traces/static/<tag>", "user cache", "compiled now"
    nvcc: str


def find_tool(tool: str) -> str | None:
    """A CUDA tool on the PATH, or inside the nvidia-* PyPI wheels (site-packages/nvidia/cu13/bin)."""
    p = shutil.which(tool)
    if p:
        return p
    spec = importlib.util.find_spec("nvidia")
    if spec is not None and spec.submodule_search_locations:
        for root in spec.submodule_search_locations:
            for sub in ("cu13", "cu12", "cuda_nvcc", "cuda_cuobjdump"):
                cand = Path(root) / sub / "bin" / tool
                if cand.is_file() and os.access(cand, os.X_OK):
                    return str(cand)
    return None


def cache_dir() -> Path:
    d = os.environ.get("GPUSIM_CACHE_DIR")
    if d:
        return Path(d)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "gpusim"


_PTXAS_RE = {
    "registers": re.compile(r"Used (\d+) registers"),
    "shared_bytes": re.compile(r"(\d+) bytes smem"),
    "spill_stores": re.compile(r"(\d+) bytes spill stores"),
    "spill_loads": re.compile(r"(\d+) bytes spill loads"),
    "stack_bytes": re.compile(r"(\d+) bytes stack frame"),
}


def parse_ptxas(text: str) -> dict:
    out = {}
    for key, rx in _PTXAS_RE.items():
        m = rx.search(text)
        out[key] = int(m.group(1)) if m else 0
    return out


def function_sass(text: str, func: str) -> str:
    """The part of a cuobjdump -sass listing that belongs to one function."""
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if re.match(rf"\s*Function : {re.escape(func)}\s*$", ln)), None)
    if start is None:
        raise GpusimError(f"function {func} not in the SASS listing")
    end = len(lines)
    for j in range(start + 1, len(lines)):
        if re.match(r"\s*Function : ", lines[j]) or lines[j].strip().startswith(".........."):
            end = j + 1 if lines[j].strip().startswith("..........") else j
            break
    return "\n".join(lines[start:end]) + "\n"


def nvcc_version(nvcc: str) -> str:
    out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, check=True).stdout
    m = re.search(r"release [\d.]+, V([\d.]+)", out)
    return m.group(1) if m else out.strip().splitlines()[-1]


def tag(kernel: str, params: dict, defaults: dict) -> str:
    over = {k: v for k, v in params.items() if defaults.get(k) != v}
    return kernel + ("__" + "_".join(f"{k}{v}" for k, v in over.items()) if over else "")


def committed(kernel: str, params: dict) -> Compiled | None:
    """The committed record of exactly these parameters, if there is one."""
    if not STATIC_DIR.is_dir():
        return None
    for f in sorted(STATIC_DIR.glob(f"{kernel}*.json")):
        try:
            rec = json.loads(f.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            raise RecordError(f"traces/static/{f.name}: not a readable JSON record ({e})") from None
        if not isinstance(rec, dict):
            raise RecordError(f"traces/static/{f.name}: not a JSON object")
        if rec.get("kernel") == kernel and rec.get("params") == params:
            sass = f.with_suffix(".sass")
            if not sass.is_file():
                raise RecordError(f"traces/static/{f.name} has no listing beside it ({sass.name} is missing)")
            text = sass.read_text()
            _check_listing(f, rec, text, kernel)
            return Compiled(kernel, params, text, rec.get("ptxas") or {},
                            f"traces/static/{f.stem}", rec.get("nvcc_version", ""))
    return None


def _check_listing(f: Path, rec: dict, text: str, kernel: str):
    """A committed listing must hold the instructions its record counted: a truncated or edited .sass
    would change the stream (and the prediction) while the output still named the file."""
    from collections import Counter
    from gpusim.sass.listing import parse_listing
    want = rec.get("sass_opcode_histogram")
    if isinstance(want, str):           # schema gpusim.static/1 kept it as a Python dict's text
        try:
            want = ast.literal_eval(want)
        except (ValueError, SyntaxError):
            want = None
    if not isinstance(want, dict) or not want:
        raise RecordError(f"traces/static/{f.name}: no sass_opcode_histogram to check its listing against")
    try:
        got = Counter(i.opcode for i in parse_listing(text, kernel))
    except Exception as e:              # a damaged listing may fail to parse at all
        raise RecordError(f"{f.with_suffix('.sass').name}: not a readable listing ({e})") from None
    if dict(got) != want:
        diff = sorted(op for op in set(got) | set(want) if got.get(op, 0) != want.get(op, 0))
        counts = ", ".join(f"{op} {got.get(op, 0)} against {want.get(op, 0)}" for op in diff[:4])
        where = f"traces/static/{f.with_suffix('.sass').name}" if f.parent == STATIC_DIR else f.with_suffix(".sass")
        raise RecordError(f"{where}: its instructions differ from the "
                          f"opcode counts recorded beside it ({counts}): truncated or edited; restore it "
                          "(git checkout) or rebuild it with kernels_cuda/build.py")


def _key(src: Path, params: dict, nvcc_ver: str) -> str:
    h = hashlib.sha256()
    h.update(b"cache/2")        # the entry's form: k.json carries the listing's opcode histogram
    h.update(src.read_bytes())
    h.update(json.dumps(sorted(params.items())).encode())
    h.update(" ".join(NVCC_FLAGS).encode())
    h.update(nvcc_ver.encode())
    return h.hexdigest()[:20]


def _refuse_build(kernel: str, params: dict, text: str):
    """The one-line error for a twin that does not compile (LaunchError when it needs more static
    shared memory than a block may have)."""
    first = next((ln for ln in text.splitlines() if "error" in ln), text.strip()[:200]).strip()
    if "too much shared data" in first:
        raise LaunchError(f"{kernel} {params}: static shared memory per block over the limit ({first})")
    raise KernelConfigError(f"{kernel} {params}: the CUDA twin does not compile: {first}")


def nvcc_args(kernel: str, params: dict, out_path: str) -> list[str]:
    """The nvcc argument list of one twin instance, with paths as given (relative to the repo root)."""
    return ["nvcc", *NVCC_FLAGS, *[f"-DP_{k}={v}" for k, v in params.items()], "-o", str(out_path),
            f"kernels_cuda/{kernel}.cu"]


def build_cubin(kernel: str, params: dict, out_path) -> dict:
    """Compile kernels_cuda/<kernel>.cu with NVCC_FLAGS and -DP_<K>=<V> into out_path (relative to the
    repository root when relative); the ptxas -v facts. Raises CompilerMissing without nvcc,
    KernelConfigError when the twin does not compile, RuntimeError on a compiler warning."""
    nvcc = find_tool("nvcc")
    if nvcc is None:
        raise CompilerMissing(f"{kernel}: nvcc not found (PATH, or `pip install 'gpusim[cuda]'`)")
    out = Path(out_path)
    full = out if out.is_absolute() else REPO / out
    full.parent.mkdir(parents=True, exist_ok=True)
    args = nvcc_args(kernel, params, str(out))
    args[0] = nvcc
    res = subprocess.run(args, cwd=REPO, capture_output=True, text=True)
    text = res.stdout + res.stderr
    if res.returncode != 0:
        _refuse_build(kernel, params, text)
    if re.search(r"warning", text, re.IGNORECASE):
        raise RuntimeError(f"nvcc warnings for {kernel} {params}:\n{text}")
    return parse_ptxas(text)


def sass_text(cubin) -> str:
    """cuobjdump -sass of a cubin (every function in it)."""
    cuobjdump, nvdisasm = find_tool("cuobjdump"), find_tool("nvdisasm")
    if cuobjdump is None or nvdisasm is None:
        raise CompilerMissing("cuobjdump and nvdisasm are needed to read SASS "
                              "(`pip install 'gpusim[cuda]'` brings both)")
    # cuobjdump runs nvdisasm for -sass; the wheels keep it beside cuobjdump, not on the PATH
    env = dict(os.environ, NVDISASM_PATH=str(Path(nvdisasm).parent))
    dis = subprocess.run([cuobjdump, "-sass", str(cubin)], capture_output=True, text=True, env=env)
    if dis.returncode != 0:
        raise CompilerMissing(f"cuobjdump -sass {Path(cubin).name} failed: {dis.stderr.strip()[:300]}")
    return dis.stdout


def compile_twin(kernel: str, params: dict, source: Path | None = None) -> Compiled:
    """Compile kernels_cuda/<kernel>.cu with -DP_<K>=<V> (or read the cache). Raises
    CompilerMissing without nvcc / cuobjdump, KernelConfigError when the twin does not compile
    for these parameters (a static_assert, say)."""
    src = source or CUDA_DIR / f"{kernel}.cu"
    if not src.is_file():
        raise CompilerMissing(f"{kernel}: no CUDA twin ({src} does not exist), so there is no SASS to run")
    missing = " and ".join(t for t in ("nvcc", "cuobjdump", "nvdisasm") if find_tool(t) is None)
    nvcc = find_tool("nvcc")
    if nvcc is None:
        raise CompilerMissing(
            f"{kernel} {params}: no committed SASS for these parameters and no {missing} to compile "
            "the twin; install the pinned compiler with `pip install 'gpusim[cuda]'`")
    ver = nvcc_version(nvcc)
    key = _key(src, params, ver)
    cdir = cache_dir() / "sass" / f"{kernel}-{key}"
    damaged = ""
    if (cdir / "k.sass").is_file() and (cdir / "k.json").is_file():
        try:    # the cache is ours: a damaged entry is compiled again, and the output says so
            meta = json.loads((cdir / "k.json").read_text())
            text = (cdir / "k.sass").read_text()
            _check_listing(cdir / "k.json", meta, text, kernel)
            return Compiled(kernel, params, text, meta["ptxas"], "user cache", ver)
        except (OSError, ValueError, KeyError, TypeError, RecordError) as e:
            damaged = f"; the cached copy was damaged ({str(e)[:120]})"
            shutil.rmtree(cdir, ignore_errors=True)
    with tempfile.TemporaryDirectory() as d:
        cubin = Path(d) / "k.cubin"
        args = [nvcc, *NVCC_FLAGS, *[f"-DP_{k}={v}" for k, v in params.items()], "-o", str(cubin), str(src)]
        res = subprocess.run(args, capture_output=True, text=True)
        text = res.stdout + res.stderr
        if res.returncode != 0:     # the parameters' fault (a static_assert, too much shared memory)
            _refuse_build(kernel, params, text)
        ptxas = parse_ptxas(text)
        if missing:                 # it compiles, but its SASS cannot be read here
            raise CompilerMissing(
                f"{kernel} {params}: no committed SASS for these parameters and no {missing} to read the "
                "compiled twin's; install the pinned tools with `pip install 'gpusim[cuda]'`")
        listing = sass_text(cubin)
    sass = function_sass(listing, kernel)
    from collections import Counter
    from gpusim.sass.listing import parse_listing
    hist = dict(Counter(i.opcode for i in parse_listing(sass, kernel)))
    cdir.mkdir(parents=True, exist_ok=True)
    tmp = cdir / "k.sass.tmp"
    tmp.write_text(sass)
    (cdir / "k.json").write_text(json.dumps({"kernel": kernel, "params": params, "ptxas": ptxas,
                                             "nvcc": ver, "flags": NVCC_FLAGS,
                                             "sass_opcode_histogram": hist}) + "\n")
    tmp.replace(cdir / "k.sass")
    return Compiled(kernel, params, sass, ptxas, "compiled now" + damaged, ver)


def describe(comp: Compiled) -> str:
    """One line: where the SASS came from, and the compiler if it is not the records' one."""
    where = f"{comp.source}.sass" if comp.source.startswith("traces/") else f"the twin, {comp.source}"
    ver = comp.nvcc or "unknown"
    warn = "" if ver == RECORDED_NVCC else f"; not the {RECORDED_NVCC} the H200 records were built with"
    return f"{where} (nvcc {ver}{warn})"


def kernel_sass(kernel: str, params: dict) -> Compiled:
    """The SASS and ptxas facts of the twin at these parameters: committed, cached or compiled."""
    return committed(kernel, params) or compile_twin(kernel, params)


def write_static(kernel: str, params: dict, defaults: dict, out_dir: Path = STATIC_DIR) -> Path:
    """Compile the twin now and commit-ready: out_dir/<tag>.sass and .json (ptxas facts, compiler,
    command, date, static opcode histogram), the form `committed` reads."""
    import datetime as _dt
    from collections import Counter
    from gpusim.sass.listing import parse_listing
    comp = compile_twin(kernel, params)
    name = tag(kernel, params, defaults)
    out_dir.mkdir(parents=True, exist_ok=True)
    hist = Counter(i.opcode for i in parse_listing(comp.sass, kernel))
    rec = {"schema": "gpusim.static/2", "kernel": kernel, "params": params, "nvcc_version": comp.nvcc,
           "command": " ".join(["nvcc", *NVCC_FLAGS, *[f"-DP_{k}={v}" for k, v in params.items()],
                                "-o", f"{name}.cubin", f"kernels_cuda/{kernel}.cu"]) + f"; cuobjdump -sass {name}.cubin",
           "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d"), "ptxas": comp.ptxas,
           "sass_opcode_histogram": dict(sorted(hist.items(), key=lambda kv: (-kv[1], kv[0])))}
    (out_dir / f"{name}.json").write_text(json.dumps(rec, indent=1) + "\n")
    (out_dir / f"{name}.sass").write_text(comp.sass)
    return out_dir / f"{name}.json"
