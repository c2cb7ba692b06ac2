"""compute-sanitizer on the GPU, for the record that `gpusim check` is compared with.

Runs NVIDIA's compute-sanitizer (memcheck, racecheck, synccheck) over one launch of each CUDA twin
in kernels_cuda/ at its defaults, and of the CUDA versions of the buggy kernels under
tests/estimate/buggy/, and writes what it found (its error count and the first lines of each report)
with the run's provenance. tests/estimate/test_check.py holds gpusim check's findings to it: a kernel
compute-sanitizer finds something in, gpusim check must too, and the other way round.

    python3 -m gpusim.hw.sanitize --out DIR [--size 256]

Each launch runs in a child process under compute-sanitizer (`--launch`), so one kernel's fault cannot
end the others'. Needs a GPU, cupy, nvcc and compute-sanitizer.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

TOOLS = ("memcheck", "racecheck", "synccheck")
BUGGY = Path(__file__).resolve().parents[2] / "tests" / "estimate" / "buggy"
FLAGS = ["-arch=sm_90", "-O3", "-cubin", "-lineinfo"]


def find_sanitizer() -> str | None:
    p = shutil.which("compute-sanitizer")
    if p:
        return p
    for c in sorted(Path("/usr/local").glob("cuda*/bin/compute-sanitizer")):
        return str(c)
    return None


def _size_for(spec, size: int) -> int:
    """`size`, or where the kernel refuses it (a grid-stride reduction needs whole passes of its grid)
    the first size `gpusim check` tries that it takes."""
    from gpusim.errors import KernelConfigError
    try:
        spec.check(size, size, size, **spec.params)
        return size
    except KernelConfigError:
        from gpusim.estimate.check import default_size
        return default_size(spec, None)


def _targets(size: int):
    """(name, .cu, params as -D flags, grid, block, M, N, K) of every launch to sanitize."""
    from gpusim.kernel import get_kernel, list_kernels
    from gpusim.paths import CUDA_DIR
    out = []
    for name in list_kernels():
        spec = get_kernel(name)
        src = CUDA_DIR / f"{name}.cu"
        if not src.is_file():
            continue
        p = dict(spec.params)
        M = N = K = _size_for(spec, size)
        grid, block = spec.launch(M, N, K, **p)
        grid, block = tuple(grid) + (1,) * (3 - len(grid)), tuple(block) + (1,) * (3 - len(block))
        out.append((name, src, [f"-DP_{k}={v}" for k, v in p.items()], grid, block, M, N, K))
    for src in sorted(BUGGY.glob("*.cu")):     # 16x16 tiles, one thread per element of C
        n = 64
        out.append((src.stem, src, [], (n // 16, n // 16, 1), (256, 1, 1), n, n, n))
    return out


def launch_once(cubin: str, name: str, grid, block, M: int, N: int, K: int):
    """The child: one launch of `name` from `cubin` on random inputs, then a synchronize."""
    from gpusim.errors import UnknownKernel
    from gpusim.hw.gpu import Problem, cupy, problem
    from gpusim.kernel import get_kernel
    cp = cupy()
    # one cudaMalloc per array: through cupy's pool an access past A's end lands in the pool's block,
    # where memcheck (which knows allocations, not arrays) cannot see it
    cp.cuda.set_allocator(None)
    try:      # a twin: the arrays its spec declares; a buggy kernel of the tests: the SGEMM's
        prob = problem(cp, get_kernel(name), M, N, K)
    except UnknownKernel:
        prob = Problem(cp, M, N, K)
    prob.reset()
    fn = cp.RawModule(path=cubin).get_function(name)
    fn(tuple(grid), tuple(block), prob.args())
    cp.cuda.runtime.deviceSynchronize()


def _summary(text: str) -> dict:
    """Error count and the kinds of report: 'race Write-Read', 'barrier divergent', 'invalid global read'."""
    m = re.search(r"ERROR SUMMARY: (\d+) error", text) or re.search(r"RACECHECK SUMMARY: .*\((\d+) error", text)
    kinds = set()
    for first, second in re.findall(r"Race reported between (\w+) access.*\n=+\s+and (\w+) access", text):
        kinds.add(f"race {first}-{second}")
    if "Barrier error" in text:
        kinds.add("barrier divergent")
    kinds |= {f"invalid {sp} {rw}" for sp, rw in re.findall(r"Invalid __(\w+)__ (read|write)", text)}
    kinds |= {"uninitialized read" for _ in re.findall(r"Uninitialized __\w+__ memory read", text)[:1]}
    lines = [ln.strip() for ln in text.splitlines() if ln.startswith("=========") and ln.strip("= \n")
             and "Host Frame" not in ln]
    return {"errors": int(m.group(1)) if m else None, "kinds": sorted(kinds), "first_lines": lines[:8]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m gpusim.hw.sanitize")
    ap.add_argument("--out", help="folder for sanitizer.json")
    ap.add_argument("--size", type=int, default=256, help="M = N = K of the twins' launches")
    ap.add_argument("--launch", nargs=11, metavar=("CUBIN", "NAME", "GX", "GY", "GZ", "BX", "BY", "BZ", "M", "N", "K"),
                    help="(internal) the child: one launch")
    a = ap.parse_args(argv)
    if a.launch:
        cubin, name, *dims = a.launch
        d = [int(x) for x in dims]
        launch_once(cubin, name, tuple(d[0:3]), tuple(d[3:6]), *d[6:9])
        return 0
    from gpusim.hw.devinfo import cuda_versions, smi_query, utc_now
    from gpusim.sass.compile import find_tool
    san, nvcc = find_sanitizer(), find_tool("nvcc")
    if san is None or nvcc is None:
        print("gpusim.hw.sanitize needs compute-sanitizer and nvcc", file=sys.stderr)
        return 2
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="gpusim_sanitize_"))     # the cubins stay off the record's folder
    rows = []
    for name, src, defs, grid, block, M, N, K in _targets(a.size):
        cubin = work / f"{name}.cubin"
        subprocess.run([nvcc, *FLAGS, *defs, "-o", str(cubin), str(src)], check=True, capture_output=True)
        row = {"kernel": name, "source": str(src.relative_to(BUGGY.parents[2])), "M": M, "N": N, "K": K,
               "grid": list(grid), "block": list(block)}
        for tool in TOOLS:
            # --padding: a guard after each allocation, else a read just past A lands in B (allocated next
            # to it) and memcheck, which knows allocations and not arrays, sees a valid address
            pad = ["--padding", "256"] if tool == "memcheck" else []
            cmd = [san, "--tool", tool, *pad, "--print-limit", "4", sys.executable, "-m", "gpusim.hw.sanitize",
                   "--launch", str(cubin), name, *map(str, (*grid, *block)), str(M), str(N), str(K)]
            res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            row[tool] = _summary(res.stdout + res.stderr)
            row[tool]["returncode"] = res.returncode
            print(f"{name:10s} {tool:9s} errors {row[tool]['errors']} {row[tool]['kinds']}", flush=True)
        rows.append(row)
    ver = subprocess.run([san, "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    rec = {"schema": "gpusim.hw.sanitizer/1", "command": ("PYTHONPATH=. python3 -m gpusim.hw.sanitize " + " ".join(argv or sys.argv[1:])).replace(str(out), "$OUT"),
           "date": utc_now(), "device": smi_query().get("name", "?"), "driver": smi_query().get("driver_version", "?"),
           "cuda": cuda_versions(), "compute_sanitizer": ver[-1] if ver else "?", "build_flags": FLAGS,
           "what": "compute-sanitizer's error count and first report lines per kernel and tool, one launch each",
           "rows": rows}
    (out / "sanitizer.json").write_text(json.dumps(rec, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
