"""When and where the H200 runs each CTA of a ladder launch: start and end (%globaltimer) and SM.

    PYTHONPATH=. python3 -m gpusim.hw.ctasched --out "$OUT" [--sizes 2048 4096] [--kernels ...]

Each twin is built through calibrate/cta_stamp.cu (the twin's source unchanged, its
entry called from a wrapper whose first thread stamps the CTA's start, SM and end), launched
once to warm up and once to record, with the twins' inputs (gpusim.hw.gpu.Problem). One record
per kernel and size, `ctasched_<kernel>_<size>.json`: per CTA in linear blockIdx order, start and
end in ns from the launch's first start, the SM, and the SM cycles (clock64) from the twin's start to
the end stamp (`cycles`; records made before it was added lack it). The L2 model's schedule (gpusim.memory.cache)
is the use: whether CTAs run in waves or spread evenly over time, and how fast the waves dissolve.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from gpusim.kernel.spec import LADDER

REPO = Path(__file__).resolve().parents[2]
SCHEMA = "gpusim.hw.ctasched/1"
SRC = "calibrate/cta_stamp.cu"


C_TYPES = {"i32": "int ", "f32": "float ", "ptr": "float *"}


def twin_signature(kernel: str) -> tuple[str, str]:
    """(the wrapper's parameter list, the call's arguments) for a twin that declares its own arguments
    (KernelSpec.args); ("", "") for the SGEMM signature, cta_stamp.cu's default."""
    from gpusim.kernel.spec import get_kernel
    spec = get_kernel(kernel)
    if spec.args is None:
        return "", ""
    args = spec.arguments
    return ", ".join(f"{C_TYPES[a.kind]}{a.name}" for a in args), ", ".join(a.name for a in args)


def build(kernel: str, out: Path) -> tuple[list, dict]:
    """nvcc the stamped twin; (command as run, ptxas facts)."""
    from gpusim.hw import twins
    flags = twins.build_flags()
    params, args = twin_signature(kernel)
    sig = []
    if params:      # a header the build pre-includes (nvcc splits a -D value at its commas)
        head = out.parent / f"cta_stamp_{kernel}_sig.h"
        head.write_text(f"#define TWIN_PARAMS {params}\n#define TWIN_ARGS {args}\n")
        sig = ["-include", str(head.relative_to(REPO))]
    cmd = ["nvcc", *flags, f"-DTWIN={kernel}", f'-DTWIN_SRC="../kernels_cuda/{kernel}.cu"', *sig, "-o", str(out), SRC]
    r = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"nvcc failed for {kernel}: {r.stderr[-800:]}")
    facts = twins.build_module().parse_ptxas(r.stderr + r.stdout)
    return ["nvcc", *flags, f"-DTWIN={kernel}", f"-DTWIN_SRC='\"../kernels_cuda/{kernel}.cu\"'",
            *sig, "-o",
            f"kernels_cuda/.build/cta_stamp_{kernel}.cubin", SRC], facts


def record(cp, kernel: str, size: int, cubin: Path) -> dict:
    import numpy as np
    from gpusim.hw import gpu, twins
    p = twins.resolve_params(kernel, None)
    grid, block, _ = twins.geometry(kernel, p, size, size, size)
    mod = cp.RawModule(path=str(cubin))
    fn = mod.get_function("stamped")
    stamp = mod.get_global("gpusim_cta_stamp")
    buf = cp.ndarray((3 * 65536,), dtype=cp.uint64, memptr=stamp)
    clk = cp.ndarray((65536,), dtype=cp.uint64, memptr=mod.get_global("gpusim_cta_cycles"))
    n = grid[0] * grid[1] * grid[2]
    if n > 65536:
        raise RuntimeError(f"{kernel} {size}: {n} CTAs exceed the stamp buffer")
    prob = gpu.problem(cp, twins.spec(kernel), size, size, size, seed=0)
    prob.reset()
    launch = gpu.launcher(fn, grid, block, prob)
    launch()
    cp.cuda.runtime.deviceSynchronize()
    buf.fill(0)
    prob.reset()
    launch()
    cp.cuda.runtime.deviceSynchronize()
    s = buf[: 3 * n].get().reshape(n, 3).astype(np.int64)
    cycles = clk[:n].get().astype(np.int64)
    t0 = int(s[:, 0].min())
    del prob
    cp.get_default_memory_pool().free_all_blocks()
    return {"kernel": kernel, "size": size, "params": p, "grid": list(grid), "block": list(block),
            "start_ns": (s[:, 0] - t0).tolist(), "end_ns": (s[:, 1] - t0).tolist(),
            "sm": s[:, 2].tolist(), "cycles": cycles.tolist()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--sizes", nargs="*", type=int, default=[2048, 4096])
    ap.add_argument("--kernels", nargs="*", default=list(LADDER))
    a = ap.parse_args(argv)
    from gpusim.hw.gpu import cupy
    from gpusim.hw.devinfo import smi_query, utc_now, cuda_versions
    cp = cupy()
    smi = smi_query()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    build_dir = REPO / "kernels_cuda" / ".build"
    build_dir.mkdir(parents=True, exist_ok=True)
    cmd = ("PYTHONPATH=. python3 -m gpusim.hw.ctasched " + " ".join(sys.argv[1:])).replace(str(out), "$OUT")
    for k in a.kernels:
        cubin = build_dir / f"cta_stamp_{k}.cubin"
        nvcc_cmd, facts = build(k, cubin)
        for size in a.sizes:
            rec = record(cp, k, size, cubin)
            rec.update({"schema": SCHEMA, "date": utc_now(), "command": cmd, "nvcc_command": " ".join(nvcc_cmd),
                        "ptxas": facts, "device": smi.get("name"), "driver": str(smi.get("driver_version")),
                        "cuda": cuda_versions(cp), "source": SRC,
                        "how": "one recorded launch after one warm-up launch on the same buffers; thread 0 of each "
                               "CTA stamps %globaltimer before the twin's body and after a final __syncthreads, "
                               "and clock64's cycles between the two"})
            (out / f"ctasched_{k}_{size}.json").write_text(json.dumps(rec, separators=(",", ":")))
            dur = [e - s for s, e in zip(rec["start_ns"], rec["end_ns"])]
            print(f"{k} {size}: {len(dur)} CTAs on {len(set(rec['sm']))} SMs, span {max(rec['end_ns']) / 1e6:.3f} ms, "
                  f"CTA time median {sorted(dur)[len(dur) // 2] / 1e3:.1f} us", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
