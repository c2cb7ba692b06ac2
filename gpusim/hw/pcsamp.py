"""Warp-state samples per SASS instruction (ncu's PC sampling), for the ladder twins.

    PYTHONPATH=. python3 -m gpusim.hw.pcsamp --out "$OUT" --size 4096 [--kernels regtile2d ...]

ncu's SourceCounters section samples, every few thousand cycles, one warp of each SMSP: its PC and
its state (selected, not_selected, short_scoreboard, dispatch_stall, ...). Summed per PC, the
samples say at which instruction a kernel's warps wait, and in which state: the view the per-kernel
stall ratios cannot give (where a dispatch stall or a not_selected falls in the loop). One record
per kernel, `pcsamp_<kernel>_<size>.json`, keyed by PC offset from the kernel's entry like the
`inst_executed_per_pc` table of the ncu records, with the SASS text of each PC from cuobjdump.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from gpusim.kernel.spec import LADDER

REPO = Path(__file__).resolve().parents[2]
SCHEMA = "gpusim.hw.pcsamp/1"


def sass_text(cubin: Path, kernel: str) -> dict:
    """PC offset -> SASS instruction text of the kernel's function (kernels_cuda/build.py's parser)."""
    from gpusim.hw.twins import build_module
    b = build_module()
    return {f"0x{i.off:04x}": i.text for i in b.parse_sass(b.function_sass(b.sass_text(cubin), kernel))}


def samples_per_pc(rep: str, ncu: str) -> tuple[str, dict, dict]:
    """(kernel name, {metric: {pc offset: samples}}, {metric: total}) of the report's one launch."""
    from gpusim.hw import ncu as ncu_mod
    ctx = ncu_mod.import_ncu_report(ncu).load_report(rep)
    act = ctx.range_by_idx(0).action_by_idx(0)
    per_pc, totals = {}, {}
    for name in act.metric_names():
        if "pcsamp" not in name:
            continue
        m = act.metric_by_name(name)
        try:
            totals[name] = m.as_double()
        except Exception:      # noqa: BLE001 - a non-numeric metric
            pass
        n = m.num_instances()
        if n <= 0:
            continue
        ids = m.correlation_ids()
        raw = {}
        for i in range(n):
            key = hex(ids.as_uint64(i))
            raw[key] = raw.get(key, 0) + m.as_double(i)
        per_pc[name] = {k: v for k, v in ncu_mod.relative_pcs(raw).items() if v}
    return act.name(), per_pc, totals


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--kernels", nargs="*", default=list(LADDER))
    a = ap.parse_args(argv)
    from gpusim.hw import twins, ncu as ncu_mod
    from gpusim.hw.devinfo import smi_summary, utc_now
    from gpusim.hw.runner import BUILD_DIR
    ncu = ncu_mod.find_ncu()
    if ncu is None:
        print("no ncu on this machine", file=sys.stderr)
        return 2
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="gpusim_pcsamp_"))
    smi = smi_summary()
    print(smi, flush=True)
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    ver = subprocess.run([ncu, "--version"], capture_output=True, text=True).stdout
    for k in a.kernels:
        p = twins.resolve_params(k, None)
        cubin, ptxas, _ = twins.build(k, p, BUILD_DIR)
        jobs = work / f"jobs_{k}.json"
        jobs.write_text(json.dumps([{"label": k, "kernel": k, "params": p, "cubin": str(cubin)}]))
        rep = work / f"pcsamp_{k}"
        cmd = [ncu, "--clock-control", "none", "--cache-control", "all", "--replay-mode", "kernel",
               "--profile-from-start", "off", "--section", "SourceCounters", "--section", "WarpStateStats",
               "--import-source", "no", "-f", "-o", str(rep),
               sys.executable, "-m", "gpusim.hw.profile", "--size", str(a.size), "--jobs", str(jobs),
               "--manifest", str(work / f"manifest_{k}.json")]
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, env=env, timeout=400)
        if r.returncode != 0:
            print(f"{k}: ncu failed ({r.returncode}): {(r.stderr or r.stdout)[-600:]}", flush=True)
            continue
        name, per_pc, totals = samples_per_pc(str(rep) + ".ncu-rep", ncu)
        rec = {
            "schema": SCHEMA, "kernel": k, "size": a.size, "params": p, "ncu_kernel_name": name,
            "date": utc_now(),
            "device": smi, "ncu_version": ncu_mod.ncu_version(ver),
            "command": "PYTHONPATH=. python3 -m gpusim.hw.pcsamp " + " ".join(sys.argv[1:]).replace(str(out), "$OUT"),
            "ncu_command": " ".join(["ncu"] + cmd[1:cmd.index("-o")] + ["-o", "<work>/pcsamp_" + k,
                                     "python3 -m gpusim.hw.profile", "--size", str(a.size), "..."]),
            "how": "one profiled launch after one warm-up; samples summed per PC; PCs as offsets from the "
                   "kernel's first instruction; sass from cuobjdump --dump-sass of the same cubin",
            "totals": totals, "samples_per_pc": per_pc, "sass": sass_text(cubin, k), "ptxas": ptxas,
        }
        (out / f"pcsamp_{k}_{a.size}.json").write_text(json.dumps(rec, indent=0, sort_keys=True))
        top = sorted(((v, n) for n, v in totals.items() if "stalled" in n), reverse=True)[:6]
        print(f"{k}: {len(rec['sass'])} SASS PCs, metrics {len(per_pc)}; " +
              ", ".join(f"{n.replace('smsp__pcsamp_warps_issue_stalled_', '')} {v:.0f}" for v, n in top), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
