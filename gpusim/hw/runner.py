"""`record`: build, check, time and (optionally) profile CUDA twins; write traces/hw records.

Needs cupy and a CUDA GPU (imported lazily, through gpusim.hw.gpu); with
ncu=True also Nsight Compute. It returns the records as dicts and writes one
JSON file per kernel and size (schema gpusim.hw/1, see gpusim.hw.records);
it prints nothing: `progress(done, total, label)` reports each step.

Per kernel and size: A and B random in [-1, 1), C poisoned (NaN where the
kernel only writes C; a random C0 where it reads beta*C), one launch checked
against cuBLAS FP32 (TF32 off) by relative Frobenius error, unwritten and
non-finite elements and writes past C's end; then 3 warm-up launches and the
median of n >= 10 launches timed one by one with CUDA events, n chosen so the
timed launches take about a second. cuBLAS itself is recorded as 'cublas'.

With ncu=True, for each size one child process (`python -m gpusim.hw.profile`)
runs under ncu (see gpusim.hw.ncu for the flags): every kernel gets a warm-up
launch and then one launch between cudaProfilerStart/Stop, which ncu profiles.
"""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

from gpusim.errors import GpusimError
from gpusim.hw import ncu as ncu_mod
from gpusim.hw import twins
from gpusim.hw.devinfo import ClockSampler, cuda_versions, smi_query, utc_now
from gpusim.hw.records import SCHEMA, dump_record, record_name, shape_record_name

REPO = Path(__file__).resolve().parents[2]
BUILD_DIR = REPO / "kernels_cuda" / ".build" / "hw"
CUBLAS = "cublas"


class NcuError(GpusimError):
    """Nsight Compute missing or failing."""


def device_slug(name: str) -> str:
    """'NVIDIA H200' -> 'h200': the folder under traces/hw/ a device's records go to."""
    import re
    n = re.sub(r"^nvidia\s+", "", name.strip(), flags=re.I).lower()
    return re.sub(r"[^a-z0-9]+", "_", n).strip("_") or "gpu"


def _noop(done, total, label):
    pass


def provenance(cp, command: str) -> dict:
    smi = smi_query()
    from gpusim.hw.gpu import device_name
    return {
        "command": command,
        "device": smi.get("name") or device_name(cp),
        "driver": str(smi.get("driver_version", "unknown")),
        "cuda": cuda_versions(cp),
        "smi": smi,
    }


def _base(kernel, params, M, N, K, prov, flags, date):
    return {"schema": SCHEMA, "kernel": kernel, "params": params, "M": M, "N": N, "K": K,
            "command": prov["command"], "date": date, "device": prov["device"],
            "driver": prov["driver"], "cuda": prov["cuda"], "build_flags": flags}


def measure_twin(cp, name, params, M, N, K, cubin, target_s=1.0, seed=0) -> dict:
    """Check and time one twin instance; returns the record fields it measures."""
    from gpusim.hw import gpu
    grid, block, geo_src = twins.geometry(name, params, M, N, K)
    fn = cp.RawModule(path=str(cubin)).get_function(name)
    spec = twins.spec(name)
    prob = gpu.problem(cp, spec, M, N, K, seed=seed)
    prob.reset()
    launch = gpu.launcher(fn, grid, block, prob)
    launch()
    cp.cuda.runtime.deviceSynchronize()
    check = prob.check()
    prob.reset()
    with ClockSampler() as clk:
        timing = gpu.time_launches(cp, launch, target_s=target_s)
    flops = spec.flop_count(M, N, K)
    out = {"grid": list(grid), "block": list(block), "launch_from": geo_src, "check": check,
           "clocks": clk.summary(), **timing}
    out["gflops"] = float(f"{flops / (out['time_ms_median'] * 1e6):.5g}")
    # the bandwidth a launch reaches if it moves each array once (spec.min_bytes), for memory-bound kernels
    out["min_bytes"] = spec.min_bytes(M, N, K)
    out["gbps_min_bytes"] = float(f"{out['min_bytes'] / (out['time_ms_median'] * 1e6):.5g}")
    del prob
    cp.get_default_memory_pool().free_all_blocks()
    return out


def measure_cublas(cp, M, N, K, target_s=1.0, seed=0) -> dict:
    """cuBLAS SGEMM (cupy.matmul into a preallocated C, TF32 off), checked against DGEMM."""
    from gpusim.hw import gpu
    rs = cp.random.RandomState(seed)
    A = rs.uniform(-1.0, 1.0, (M, K), dtype=cp.float32)
    B = rs.uniform(-1.0, 1.0, (K, N), dtype=cp.float32)
    C = cp.full((M, N), cp.nan, dtype=cp.float32)
    cp.matmul(A, B, out=C)
    cp.cuda.runtime.deviceSynchronize()
    ref = cp.matmul(A.astype(cp.float64), B.astype(cp.float64))
    nonfinite = int((~cp.isfinite(C)).sum())
    rel = float(cp.linalg.norm(C.astype(cp.float64) - ref) / cp.linalg.norm(ref)) if not nonfinite else None
    check = {"reference": "cuBLAS DGEMM (FP64) of the same inputs", "rel_err": rel,
             "tolerance": gpu.CHECK_TOL, "unwritten": int(cp.isnan(C).sum()), "nonfinite": nonfinite,
             "poison": "C filled with NaN before the call", "alpha": 1.0, "beta": 0.0,
             "passed": bool(nonfinite == 0 and rel is not None and rel <= gpu.CHECK_TOL),
             "note": "rel_err near 1e-7..1e-6 shows FP32 math; TF32 would give ~1e-4..1e-3"}
    del ref

    def launch():
        cp.matmul(A, B, out=C)
    with ClockSampler() as clk:
        timing = gpu.time_launches(cp, launch, target_s=target_s)
    out = {"check": check, "clocks": clk.summary(), **timing,
           "gflops": float(f"{2.0 * M * N * K / (timing['time_ms_median'] * 1e6):.5g}")}
    del A, B, C
    cp.get_default_memory_pool().free_all_blocks()
    return out


# ------------------------------------------------------------------ ncu

def query_metrics(ncu: str) -> str:
    """`ncu --query-metrics` for the attached GPU (or, failing that, for GH100)."""
    for extra in ([], ["--chip", "gh100"]):
        r = subprocess.run([ncu, "--query-metrics", *extra], capture_output=True, text=True, timeout=120)
        if r.returncode == 0 and "__" in r.stdout:
            return r.stdout
    return ""


def profile_size(ncu: str, jobs: list[dict], size: int, metrics: list[str], work_dir: Path,
                 timeout_s: float = 900) -> tuple[list[dict], dict]:
    """Run ncu over one child process that profiles every job at `size`.

    jobs: [{"label", "kernel", "params", "cubin"}] (kernel 'cublas' for cuBLAS).
    Returns (per-job ncu dicts in job order, info with the command and what
    was dropped). If ncu refuses metric names, it is run once more without them.
    """
    work_dir.mkdir(parents=True, exist_ok=True)
    jobs_path = work_dir / f"jobs_{size}.json"
    manifest = work_dir / f"manifest_{size}.json"
    jobs_path.write_text(json.dumps(jobs))
    report = work_dir / f"ncu_{size}"
    target = [sys.executable, "-m", "gpusim.hw.profile", "--size", str(size),
              "--jobs", str(jobs_path), "--manifest", str(manifest)]
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    t0 = time.time()
    refused: list[str] = []
    for attempt in range(2):
        cmd = ncu_mod.profile_command(ncu, metrics, str(report), target)
        left = timeout_s - (time.time() - t0)
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, env=env, timeout=max(30.0, left))
        (work_dir / f"ncu_{size}.log").write_text(r.stdout + "\n--- stderr ---\n" + r.stderr)
        ok = r.returncode == 0 and Path(str(report) + ".ncu-rep").exists()
        if ok:
            break
        bad = ncu_mod.bad_metrics(r.stdout + r.stderr, metrics) if attempt == 0 else []
        if not bad:
            raise NcuError(f"ncu failed at size {size} (exit {r.returncode}): "
                           f"{(r.stderr or r.stdout).strip()[-800:]}")
        refused += bad
        metrics = [m for m in metrics if m not in bad]
    rep = str(report) + ".ncu-rep"
    ex = subprocess.run(ncu_mod.export_command(ncu, rep), capture_output=True, text=True, timeout=300)
    csv_path = work_dir / f"ncu_{size}.csv"
    csv_path.write_text(ex.stdout)
    rows = ncu_mod.parse_raw_csv(ex.stdout)
    via_api = ncu_mod.read_report(rep, ncu)
    if via_api is not None:
        (work_dir / f"ncu_{size}_api.json").write_text(json.dumps(via_api))
        if len(via_api) != len(rows):
            via_api = None
    rows = [ncu_mod.compact(r, metrics, via_api[i] if via_api else None) for i, r in enumerate(rows)]
    man = json.loads(manifest.read_text()) if manifest.exists() else []
    info = {"wall_s": round(time.time() - t0, 1), "csv": csv_path.name, "refused": refused,
            "metrics": metrics, "command": _display_cmd(cmd, metrics, work_dir),
            "export": " ".join(ncu_mod.export_command("ncu", f"<work>/ncu_{size}.ncu-rep"))}
    return assign_rows(rows, man, jobs), info


def _display_cmd(cmd, metrics, work_dir):
    """The ncu command with the metric list shortened and paths made relative."""
    out = []
    for a in cmd:
        if a == ",".join(metrics):
            out.append("<metrics: see ncu.metrics_requested>")
        elif a.startswith(str(work_dir)):
            out.append("<work>" + a[len(str(work_dir)):])
        elif a.startswith(str(REPO)):
            out.append(os.path.relpath(a, REPO))
        elif a == sys.executable:
            out.append("python3")
        elif a.endswith("/ncu"):
            out.append("ncu")
        else:
            out.append(a)
    return " ".join(shlex.quote(x) for x in out)


def assign_rows(rows: list[dict], manifest: list[dict], jobs: list[dict]) -> list[dict]:
    """Match ncu's rows (launch order, as `ncu.compact` made them) to the jobs, using the manifest.

    The manifest lists, per job, how many kernels were launched inside its
    profiled range (`n`): our twins launch one; cuBLAS, always the last job,
    has n = None and takes the remaining rows. A job with several rows keeps
    the longest one as its main kernel. Jobs missing from the manifest (the
    child died) get None.
    """
    out = []
    i = 0
    counts = {m["label"]: m.get("n", 1) for m in manifest}
    for job in jobs:
        n = counts.get(job["label"], 0)
        mine = rows[i:] if n is None else rows[i:i + n]
        n = len(mine)
        i += n
        if not mine:
            out.append(None)
            continue
        main = max(mine, key=lambda r: (r["metrics"].get("gpu__time_duration.sum") or 0))
        rec = dict(main)
        if job["kernel"] == "cublas":
            rec.pop("inst_executed_per_pc", None)       # a library kernel: the opcode table is enough
        if len(mine) > 1:
            rec["other_kernels"] = [{"kernel_name": r["kernel_name"],
                                     "gpu__time_duration.sum": r["metrics"].get("gpu__time_duration.sum")}
                                    for r in mine if r is not main]
        out.append(rec)
    return out


# ------------------------------------------------------------------ record

def record(kernels=None, sizes=(1024, 2048, 4096), ncu: bool = False, out_dir=None, progress=None, *,
           params: dict | None = None, cublas: bool = True, command: str | None = None,
           ncu_sizes=None, target_s: float = 1.0, work_dir=None, seed: int = 0,
           deadline: float | None = None) -> list[dict]:
    """Measure CUDA twins on this machine's GPU and write one record per kernel and size.

    kernels: twin names (default: all eight); params: {kernel: {PARAM: value}}
    overrides; sizes: M = N = K values; ncu: also profile (at ncu_sizes, default
    all sizes) with Nsight Compute; cublas: add the cuBLAS reference row;
    out_dir: where records go (default traces/hw/<device>, e.g. h200); progress(done, total,
    label). deadline: time.time() after which no further ncu size is started.
    Returns the records (dicts). Raises NoGpu without cupy or a GPU and
    NcuError when ncu is asked for but missing.
    """
    from gpusim.hw import gpu
    progress = progress or _noop
    names = list(kernels) if kernels else twins.twin_names()
    ncu_exe = None
    if ncu:
        ncu_exe = ncu_mod.find_ncu()
        if not ncu_exe:
            raise NcuError("--ncu needs Nsight Compute (ncu) on the PATH or under /opt/nvidia/nsight-compute")
    cp = gpu.cupy()
    work_dir = Path(work_dir) if work_dir else BUILD_DIR / "ncu"
    command = command or "gpusim hw record " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    prov = provenance(cp, command)
    out_dir = Path(out_dir) if out_dir else REPO / "traces" / "hw" / device_slug(prov["device"])
    flags = twins.build_flags()
    date = utc_now()
    sizes = [int(s) for s in sizes]
    ncu_sizes = [int(s) for s in (ncu_sizes or sizes)] if ncu else []
    steps = len(names) + (len(names) + int(cublas)) * len(sizes) + len(ncu_sizes)
    done = 0

    from concurrent.futures import ThreadPoolExecutor
    resolved = {n: twins.resolve_params(n, (params or {}).get(n)) for n in names}
    built = {}
    with ThreadPoolExecutor(max_workers=min(8, len(names))) as ex:
        futs = {n: ex.submit(twins.build, n, resolved[n], BUILD_DIR) for n in names}
        for name in names:
            cubin, ptxas, nv = futs[name].result()
            built[name] = (resolved[name], cubin, ptxas, nv)
            done += 1
            progress(done, steps, f"built {name}")

    records: dict[tuple, dict] = {}
    order = []
    for size in sizes:
        for name in names:
            p, cubin, ptxas, nv = built[name]
            rec = _base(name, p, size, size, size, prov, flags, date)
            rec.update({"nvcc_command": nv, "ptxas": ptxas})
            rec.update(measure_twin(cp, name, p, size, size, size, cubin, target_s, seed))
            rec["clocks"]["smi_at_start"] = prov["smi"]
            fname = record_name(name, size, p, twins.default_params(name))
            records[(name, size)] = rec
            order.append((name, size, fname))
            dump_record(rec, out_dir / fname)
            done += 1
            progress(done, steps, f"{name} {size}: {rec['time_ms_median']:.4g} ms")
        if cublas:
            rec = _base(CUBLAS, {"call": "cupy.matmul(A, B, out=C), float32, CUPY_TF32=0"},
                        size, size, size, prov, [], date)
            rec.update(measure_cublas(cp, size, size, size, target_s, seed))
            rec["clocks"]["smi_at_start"] = prov["smi"]
            records[(CUBLAS, size)] = rec
            order.append((CUBLAS, size, f"{CUBLAS}_{size}.json"))
            dump_record(rec, out_dir / f"{CUBLAS}_{size}.json")
            done += 1
            progress(done, steps, f"cublas {size}: {rec['time_ms_median']:.4g} ms")

    if ncu:
        qtext = query_metrics(ncu_exe)
        work_dir.mkdir(parents=True, exist_ok=True)
        (work_dir / "query_metrics.txt").write_text(qtext)
        metrics, reasons, dropped = ncu_mod.select_metrics(qtext)
        vr = subprocess.run([ncu_exe, "--version"], capture_output=True, text=True)
        version = ncu_mod.ncu_version(vr.stdout)
        for size in ncu_sizes:
            if deadline is not None and time.time() > deadline:
                progress(done, steps, f"ncu {size}: skipped (out of time)")
                continue
            jobs = [{"label": n, "kernel": n, "params": built[n][0], "cubin": str(built[n][1])}
                    for n in names]
            if cublas:
                jobs.append({"label": CUBLAS, "kernel": CUBLAS, "params": {}, "cubin": None})
            limit = 900.0 if deadline is None else max(60.0, deadline + 120.0 - time.time())
            try:
                results, info = profile_size(ncu_exe, jobs, size, metrics, work_dir, timeout_s=limit)
            except (NcuError, subprocess.TimeoutExpired) as e:
                progress(done, steps, f"ncu {size}: FAILED {str(e)[:300]}")
                continue
            for job, res in zip(jobs, results):
                key = (job["kernel"], size)
                if res is None or key not in records:
                    continue
                rec = records[key]
                rec["ncu"] = {"version": version, "clock_control": ncu_mod.CLOCK_CONTROL,
                              "cache_control": ncu_mod.CACHE_CONTROL,
                              "caches_flushed": ncu_mod.CACHE_CONTROL == "all",
                              "replay_mode": ncu_mod.REPLAY_MODE, "command": info["command"],
                              "export": info["export"], "stall_reasons": reasons,
                              "metrics_requested": info["metrics"],
                              "metrics_dropped": dropped + info["refused"],
                              "profiled_launch": "one launch after one warm-up launch of the same "
                                                 "kernel, same buffers", **res}
                fname = next(f for n, s, f in order if (n, s) == key)
                dump_record(rec, out_dir / fname)
            done += 1
            progress(done, steps, f"ncu {size}: {info['wall_s']} s")
    return [records[(n, s)] for n, s, _ in order]


def record_shapes(kernels, shapes, out_dir, progress=None, *, command: str | None = None,
                  target_s: float = 1.0, seed: int = 0) -> list[dict]:
    """Check and time the CUDA twins (default parameters) at non-square shapes [(M, N, K)], one record
    each (records.shape_record_name) under out_dir; no ncu. Raises NoGpu without cupy or a GPU."""
    from gpusim.hw import gpu
    progress = progress or _noop
    names = list(kernels) if kernels else twins.twin_names()
    cp = gpu.cupy()
    prov = provenance(cp, command or "gpusim.hw.batch --shapes")
    flags, date = twins.build_flags(), utc_now()
    out_dir = Path(out_dir)
    recs, done, steps = [], 0, len(names) * (1 + len(shapes))
    for name in names:
        p = twins.resolve_params(name, None)
        cubin, ptxas, nv = twins.build(name, p, BUILD_DIR)
        done += 1
        progress(done, steps, f"built {name}")
        for M, N, K in shapes:
            rec = _base(name, p, M, N, K, prov, flags, date)
            rec.update({"nvcc_command": nv, "ptxas": ptxas})
            rec.update(measure_twin(cp, name, p, M, N, K, cubin, target_s, seed))
            rec["clocks"]["smi_at_start"] = prov["smi"]
            dump_record(rec, out_dir / shape_record_name(name, M, N, K))
            recs.append(rec)
            done += 1
            progress(done, steps, f"{name} {M}x{N}x{K}: {rec['time_ms_median']:.4g} ms")
    return recs
