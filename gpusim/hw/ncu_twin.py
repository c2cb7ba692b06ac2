"""One profiled launch of a ladder twin under Nsight Compute, for the per-kernel ncu studies
(gpusim.hw.pcsamp, gpusim.hw.breakdown): build the twin, run gpusim.hw.profile (one warm-up, one
profiled launch) under ncu with the study's sections or metrics, keep the report."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


@dataclass
class ProfileRun:
    ncu: str            # the ncu binary
    out: Path           # where the records go
    work: Path          # working folder: jobs, manifests, reports
    smi: str            # nvidia-smi's summary, for the records
    version: str        # `ncu --version`
    env: dict           # the environment the profiled program runs in


def start(out: str, prefix: str) -> ProfileRun | None:
    """A profiling run writing under `out`; None (and a message) when this machine has no ncu."""
    from gpusim.hw import ncu as ncu_mod
    from gpusim.hw.devinfo import smi_summary
    ncu = ncu_mod.find_ncu()
    if ncu is None:
        print("no ncu on this machine", file=sys.stderr)
        return None
    outp = Path(out)
    outp.mkdir(parents=True, exist_ok=True)
    smi = smi_summary()
    print(smi, flush=True)
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    ver = subprocess.run([ncu, "--version"], capture_output=True, text=True).stdout
    return ProfileRun(ncu, outp, Path(tempfile.mkdtemp(prefix=f"gpusim_{prefix}_")), smi, ver, env)


def profile(s: ProfileRun, kernel: str, size: int, ncu_args: list, tag: str, cache_control: str = "all"):
    """Profile the twin of `kernel` (default parameters) at size^3 with `ncu ncu_args`; cache_control
    "all" flushes the caches before the profiled launch (as the kernel records do), "none" leaves them
    as the warm-up launch left them (as the timed launches find them). Returns
    (params, ptxas info, cubin, report path, ncu command line for the record) or None if ncu failed."""
    from gpusim.hw import twins
    from gpusim.hw.runner import BUILD_DIR
    p = twins.resolve_params(kernel, None)
    cubin, ptxas, _ = twins.build(kernel, p, BUILD_DIR)
    jobs = s.work / f"jobs_{kernel}.json"
    jobs.write_text(json.dumps([{"label": kernel, "kernel": kernel, "params": p, "cubin": str(cubin)}]))
    rep = s.work / f"{tag}_{kernel}"
    base = [s.ncu, "--clock-control", "none", "--cache-control", cache_control, "--replay-mode", "kernel",
            "--profile-from-start", "off", *ncu_args]
    cmd = base + ["-f", "-o", str(rep), sys.executable, "-m", "gpusim.hw.profile", "--size", str(size),
                  "--jobs", str(jobs), "--manifest", str(s.work / f"manifest_{kernel}.json")]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, env=s.env, timeout=400)
    if r.returncode != 0:
        print(f"{kernel}: ncu failed ({r.returncode}): {(r.stderr or r.stdout)[-600:]}", flush=True)
        return None
    shown = " ".join(["ncu"] + base[1:] + ["-o", f"<work>/{tag}_{kernel}", "python3 -m gpusim.hw.profile",
                                           "--size", str(size), "..."])
    return p, ptxas, cubin, str(rep) + ".ncu-rep", shown
