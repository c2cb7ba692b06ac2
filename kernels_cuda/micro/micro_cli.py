"""The command line the standalone micro scripts share: --out DIR runs on the GPU machine, --record DIR
turns what it left there into a record under traces/hw/h200/micro/."""
from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

MICRO_RECORDS = Path(__file__).resolve().parents[2] / "traces" / "hw" / "h200" / "micro"
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


def gpu_provenance(script: str, ncu: str | None = None, **extra) -> dict:
    """What a micro's GPU run keeps about itself for its record (provenance() reads it): the date, the
    nvidia-smi query, nvcc's version, ncu's when it ran under `ncu`, `extra`, and the command
    (`python3 kernels_cuda/micro/<script> --out $OUT`). Runs on the GPU machine."""
    from gpusim.hw.devinfo import smi_query, utc_now
    prov = {"date": utc_now(), "smi": smi_query(), "nvcc": nvcc_version()}
    if ncu:
        lines = subprocess.run([ncu, "--version"], capture_output=True, text=True).stdout.strip().splitlines()
        prov["ncu"] = lines[-1] if lines else ""
    return {**prov, **extra, "command": f"python3 kernels_cuda/micro/{script} --out $OUT"}


def nvcc_version() -> str:
    """The last line of `nvcc --version` ("" without nvcc output)."""
    nv = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    return nv[-1] if nv else ""


def out_or_record(run_on_gpu, record, record_name: str, argv=None):
    """Parse --out / --record and call run_on_gpu(out_dir) or record(dir, MICRO_RECORDS / record_name)."""
    ap = argparse.ArgumentParser()
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--out", type=Path, help="on the GPU machine: where to leave the raw results")
    g.add_argument("--record", type=Path, help="here: the folder --out filled")
    a = ap.parse_args(argv)
    if a.out:
        run_on_gpu(a.out)
    else:
        record(a.record, MICRO_RECORDS / record_name)
