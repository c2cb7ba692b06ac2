"""The command line the standalone micro scripts share: --out DIR runs on the GPU machine, --record DIR
turns what it left there into a record under traces/hw/h200/micro/."""
from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

MICRO_RECORDS = Path(__file__).resolve().parents[1] / "traces" / "hw" / "h200" / "micro"
BUILD_FLAGS = ["-arch=sm_90", "-O3"]      # every standalone micro's nvcc flags (its record names them)


def nvcc_build(src: Path, exe: Path) -> Path:
    """Compile a micro's .cu into exe with BUILD_FLAGS (nvcc must be on the machine)."""
    subprocess.run(["nvcc", *BUILD_FLAGS, "-o", str(exe), str(src)], check=True)
    return exe


def build_and_run(src: Path, out: Path, tag: str, runs) -> tuple[Path, str]:
    """Build src into out/<tag>_bin, keep its SASS as out/<tag>.sass, run the binary once per
    argument list in `runs` and keep what it printed as out/<tag>_stamps.txt. Returns (the binary,
    the printed text); the caller deletes the binary when done with it."""
    exe = nvcc_build(src, out / f"{tag}_bin")
    sass = subprocess.run(["cuobjdump", "-sass", str(exe)], capture_output=True, text=True).stdout
    (out / f"{tag}.sass").write_text(sass)
    text = "".join(subprocess.run([str(exe), *args], capture_output=True, text=True).stdout for args in runs)
    (out / f"{tag}_stamps.txt").write_text(text)
    return exe, text


def ncu_profile(ncu: str, exe: Path, args: list, kernel: str, metrics: list, work: Path, tag: str,
                arg_names: list) -> tuple[dict, str]:
    """Profile the second launch of `exe args` (kernels matching `kernel`) under ncu with the project's
    clock and cache control; returns (the metrics of the last profiled kernel, compacted, {} if none; the
    command as a record keeps it, with <metrics>, <work>, <bin> and arg_names in place of this machine's
    values)."""
    from gpusim.hw import ncu as ncu_mod
    rep = work / f"{tag}_rep"
    head = [ncu, "--clock-control", ncu_mod.CLOCK_CONTROL, "--cache-control", ncu_mod.CACHE_CONTROL,
            "--replay-mode", ncu_mod.REPLAY_MODE, "-k", f"regex:{kernel}", "--launch-skip", "1",
            "--launch-count", "1", "--metrics", ",".join(metrics), "-f", "-o"]
    subprocess.run(head + [str(rep), str(exe), *[str(x) for x in args]], capture_output=True, text=True, timeout=300)
    ex = subprocess.run(ncu_mod.export_command(ncu, str(rep) + ".ncu-rep"), capture_output=True, text=True)
    rows = ncu_mod.parse_raw_csv(ex.stdout)
    got = ncu_mod.compact(rows[-1], metrics, per_pc=False)["metrics"] if rows else {}
    Path(str(rep) + ".ncu-rep").unlink(missing_ok=True)
    shown = " ".join(["ncu"] + head[1:] + [f"<work>/{tag}_rep", "<bin>", *arg_names])
    return got, shown.replace(",".join(metrics), "<metrics>")


def profile_lsu_rows(src: Path, out: Path, tag: str, script: str, kernel: str, rows: list, label, arg_names: list,
                     extra: list, states) -> None:
    """On the GPU machine: build src and run it once per row (build_and_run), then profile each row under ncu
    (ncu_profile) with the LSU pipe's metrics (gpusim.hw.breakdown.LSU_METRICS), `extra` and the warp
    `states`; leaves out/<tag>_prov.json (gpu_provenance of `script`, the command, {label(row): metrics})."""
    from gpusim.hw import ncu as ncu_mod
    from gpusim.hw.breakdown import LSU_METRICS
    out.mkdir(parents=True, exist_ok=True)
    exe, _ = build_and_run(src, out, tag, [[str(x) for x in r] for r in rows])
    ncu = ncu_mod.find_ncu()
    metrics = LSU_METRICS + list(extra) + [ncu_mod.stall_metric(s) for s in states]
    res = {**gpu_provenance(script, ncu), "profiled": {}}
    for row in rows if ncu else []:
        n, res["ncu_command"] = ncu_profile(ncu, exe, list(row), kernel, metrics, out, tag, arg_names)
        res["profiled"][label(row)] = n
        print(label(row), {k: round(v, 2) for k, v in n.items() if "pct" in k or "pending_pipe_lsu_mem_lg" in k},
              flush=True)
    (out / f"{tag}_prov.json").write_text(json.dumps(res))
    exe.unlink(missing_ok=True)


def parse_stamps(text: str, tag: str, n_keys: int = 6) -> dict:
    """{(n_keys ints): (ms, warp-level loads)} from a binary's lines "tag K1 .. Kn ms MS loads LOADS"."""
    got = {}
    for ln in text.splitlines():
        f = ln.split()
        if len(f) >= n_keys + 5 and f[0] == tag:
            got[tuple(int(x) for x in f[1:n_keys + 1])] = (float(f[n_keys + 2]), int(f[n_keys + 4]))
    return got


def provenance(prov: dict) -> dict:
    """The fields every standalone micro's record takes from the provenance its GPU run left (date,
    nvidia-smi query, nvcc and, where the run used it, ncu): date, device, driver, cuda, clocks,
    build_flags, in that order."""
    smi = prov.get("smi", {})
    cuda = {"nvcc": prov.get("nvcc", "")}
    if "ncu" in prov:
        cuda["ncu"] = prov["ncu"]
    return {"date": prov["date"], "device": smi.get("name", "NVIDIA H200"), "driver": str(smi.get("driver_version", "")),
            "cuda": cuda, "clocks": {k: v for k, v in smi.items() if "clock" in k}, "build_flags": BUILD_FLAGS}


def build_keeping_sass(out: Path, stem: str) -> Path:
    """nvcc calibrate/<stem>.cu into out/<stem>.cubin, its cuobjdump listing kept as out/<stem>.sass (for
    write_record's sass=); the cubin's path."""
    cubin = out / f"{stem}.cubin"
    src = Path(__file__).resolve().parent / f"{stem}.cu"
    subprocess.run(["nvcc", *BUILD_FLAGS, "-cubin", "-o", str(cubin), str(src)], check=True)
    sass = subprocess.run(["cuobjdump", "-sass", str(cubin)], capture_output=True, text=True).stdout
    (out / f"{stem}.sass").write_text(sass)
    return cubin


def chain_and_rate_rows(out: Path, stem: str, latency, rate, rate_warps, n_rate: int,
                        step_key: str = "cycles_per_step", sms: int = 132) -> list:
    """On the GPU machine: build calibrate/<stem>.cu keeping its SASS (build_keeping_sass) and time its
    kernels, each called (n, out) with one CTA per SM that leaves its clock64 cycles in out[2 * cta]: each
    of `latency` with one warp at n = 1024 and 2048 (step_key: the cycles of one step, their difference
    over 1024, so the loop's fixed cost drops out), each of `rate` with 1..32 warps (rate_warps) at
    n = n_rate, 8 independent ops a step per thread (ops_per_sm_cycle). Medians over the CTAs and 3
    launches; each row printed as it comes. The cubin is deleted after."""
    import numpy as np
    from gpusim.hw.gpu import cupy
    cubin = build_keeping_sass(out, stem)
    cp = cupy()
    mod = cp.RawModule(path=str(cubin))
    res = cp.zeros(2 * sms, cp.int64)

    def cycles(name, block, n):
        got = []
        for _ in range(3):
            res.fill(0)
            mod.get_function(name)((sms,), (block,), (np.int32(n), res))
            cp.cuda.Device().synchronize()
            got.append(float(np.median(res.get().reshape(sms, 2)[:, 0])))
        return float(np.median(got))

    rows = []
    for name in latency:
        c1, c2 = cycles(name, 32, 1024), cycles(name, 32, 2048)
        rows.append({"kernel": name, "warps": 1, "cycles_1024": c1, "cycles_2048": c2, step_key: (c2 - c1) / 1024})
        print(rows[-1], flush=True)
    for name in rate:
        for w in rate_warps:
            c = cycles(name, 32 * w, n_rate)
            rows.append({"kernel": name, "warps": w, "cycles": c, "ops_per_sm_cycle": w * 8 * n_rate / c})
            print(rows[-1], flush=True)
    cubin.unlink()
    return rows


def write_record(dest: Path, prov: dict, bench: str, *, what: str, how: str, source: str, unit: str, value,
                 details: dict, sass: Path | None = None) -> None:
    """Write a standalone micro's record to dest: its fields in the order every record keeps them, the
    provenance its GPU run left (prov) spread in, the command as run there and then here; sass: the
    listing the GPU run kept, copied beside the record under its own name (where it exists)."""
    rec = {"schema": "gpusim.hw.micro/1", "bench": bench, "what": what, "how": how,
           "command": prov["command"] + " (on the H200), then --record DIR here", "source": source,
           **provenance(prov), "unit": unit, "value": value, "details": details}
    dest.write_text(json.dumps(rec, indent=1))
    print(f"wrote {dest}")
    if sass is not None and sass.exists():
        (dest.parent / sass.name).write_text(sass.read_text())


def finish_order(end, fin) -> dict:
    """The warp-order statistics sched_fairness.py and sched_pick.py record, over groups (rows) of warps
    (columns, oldest first): end = each warp's last stamp, fin = its finish as a fraction of its group's
    span. Medians over the groups of the earliest finish, of each warp's finish, and of the Spearman
    correlation between a warp's age and its finish order."""
    import numpy as np
    order = np.arange(end.shape[1])
    rank_corr = [float(np.corrcoef(order, np.argsort(np.argsort(e)))[0, 1]) for e in end]
    return {"earliest_finish_fraction_median": float(np.median(fin.min(axis=1))),
            "finish_fraction_per_warp_median": [round(float(x), 4) for x in np.median(fin, axis=0)],
            "spearman_warp_vs_finish_median": float(np.median(rank_corr))}


def sh_provenance(dir_: Path) -> dict:
    """The same fields for the micros run by a .sh script, from what it left in dir_: the nvidia-smi query
    (smi.txt: name, driver, SM clock, max SM clock) and date.txt (the date, then nvcc's version)."""
    smi = (dir_ / "smi.txt").read_text().strip().splitlines()
    name, driver, clk, clk_max = [x.strip() for x in smi[-1].split(",")]
    date_nvcc = (dir_ / "date.txt").read_text().strip().splitlines()
    return {"date": date_nvcc[0], "device": name, "driver": driver,
            "cuda": {"nvcc": date_nvcc[-1] if len(date_nvcc) > 1 else ""},
            "clocks": {"sm_mhz": clk, "sm_max_mhz": clk_max}, "build_flags": BUILD_FLAGS}


def gpu_provenance(script: str, ncu: str | None = None, **extra) -> dict:
    """What a micro's GPU run keeps about itself for its record (provenance() reads it): the date, the
    nvidia-smi query, nvcc's version, ncu's when it ran under `ncu`, `extra`, and the command
    (`python3 calibrate/<script> --out $OUT`). Runs on the GPU machine."""
    from gpusim.hw.devinfo import smi_query, utc_now
    prov = {"date": utc_now(), "smi": smi_query(), "nvcc": nvcc_version()}
    if ncu:
        lines = subprocess.run([ncu, "--version"], capture_output=True, text=True).stdout.strip().splitlines()
        prov["ncu"] = lines[-1] if lines else ""
    return {**prov, **extra, "command": f"python3 calibrate/{script} --out $OUT"}


def nvcc_version() -> str:
    """The last line of `nvcc --version` ("" without nvcc output)."""
    nv = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    return nv[-1] if nv else ""


def out_or_record(run_on_gpu, record, record_name: str, argv=None):
    """Parse --out / --record [--dest FILE] and call run_on_gpu(out_dir) or record(dir, dest), dest by default
    MICRO_RECORDS / record_name (`python3 -m calibrate` points it into its own folder instead)."""
    ap = argparse.ArgumentParser()
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--out", type=Path, help="on the GPU machine: where to leave the raw results")
    g.add_argument("--record", type=Path, help="the folder --out filled: turn it into the record")
    ap.add_argument("--dest", type=Path, default=MICRO_RECORDS / record_name,
                    help=f"with --record: the record's path (default traces/hw/h200/micro/{record_name}; "
                         "a .sass kept with it goes beside it)")
    a = ap.parse_args(argv)
    if a.out:
        a.out.mkdir(parents=True, exist_ok=True)
        run_on_gpu(a.out)
    else:
        a.dest.parent.mkdir(parents=True, exist_ok=True)
        record(a.record, a.dest)


def queued_times(cp, spin, launch, batches: int = 3, per_batch: int = 200) -> list:
    """Milliseconds of `batches` x `per_batch` launches, each between two CUDA events, queued behind a
    20 ms run of the one-thread `spin` kernel (spin.cuh) so that the GPU runs them back to back, as it runs
    the ladder's timed launches (the host's launch path does not pace them)."""
    times = []
    for _ in range(batches):
        evs = [(cp.cuda.Event(), cp.cuda.Event()) for _ in range(per_batch)]
        spin((1,), (1,), (cp.int64(20_000_000 * 1.98),))
        for a, b in evs:
            a.record()
            launch()
            b.record()
        evs[-1][1].synchronize()
        times += [cp.cuda.get_elapsed_time(a, b) for a, b in evs]
    return times
