"""ncu's warp states for dot_pair: where one warp, or two of one SMSP, spend regtile2d's dotIdx trip.

    python3 calibrate/dot_pair_ncu.py --out DIR      # on the GPU machine (nvcc, ncu)
    python3 calibrate/dot_pair_ncu.py --record DIR   # here: -> traces/hw/h200/micro/dot_pair_ncu.json

calibrate/dot_pair.cu with 132 CTAs (one per SM, each the same work as dot_pair.json's one CTA)
under ncu: the per-issue stall ratios of the kernel, and PC sampling every 32 cycles (SourceCounters,
--warp-sampling-interval 0), summed per SASS instruction. One warp alone, its trip of 187 cycles is split
into the states it spent them in; with two warps of one SMSP, which states grow. Masks "ffma 0x1" and
"ffma 0x11" run dot_ffma instead, the trip without its loads (the 64 FFMAs alone).
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from micro_cli import provenance, nvcc_build, gpu_provenance, out_or_record  # noqa: E402
from dot_pair import MASKS, loop_range  # noqa: E402
from gpusim.hw import ncu as ncu_mod  # noqa: E402

CTAS = 132
STATES = ("selected", "not_selected", "wait", "short_scoreboard", "dispatch_stall", "math_pipe_throttle",
          "mio_throttle", "long_scoreboard", "lg_throttle", "barrier", "drain", "no_instruction", "branch_resolving",
          "misc")
METRICS = ["smsp__inst_executed.sum", "sm__cycles_elapsed.max", "smsp__average_warp_latency_per_inst_issued.ratio",
           "smsp__issue_active.avg.per_cycle_active"] + [ncu_mod.stall_metric(s) for s in STATES]


def ncu_command(ncu: str, exe: Path, mask: str, report: Path, kernel: str = "dot_pair") -> list[str]:
    """The second launch of `kernel` (dot_pair, or dot_ffma: the trip without its loads) for one mask,
    with PC samples every 32 cycles."""
    return [ncu, "--clock-control", ncu_mod.CLOCK_CONTROL, "--cache-control", ncu_mod.CACHE_CONTROL,
            "--replay-mode", ncu_mod.REPLAY_MODE, "-k", f"regex:{kernel}", "--launch-skip", "1", "--launch-count", "1",
            "--section", "SourceCounters", "--section", "WarpStateStats", "--warp-sampling-interval", "0",
            "--import-source", "no", "--metrics", ",".join(METRICS), "-f", "-o", str(report), str(exe), mask, str(CTAS),
            "ffma" if kernel == "dot_ffma" else "loads"]


def run_on_gpu(out: Path):
    from gpusim.hw.pcsamp import samples_per_pc
    out.mkdir(parents=True, exist_ok=True)
    ncu = ncu_mod.require_ncu()
    exe = nvcc_build(HERE / "dot_pair.cu", out / "dot_ncu_bin")
    res = {**gpu_provenance("dot_pair_ncu.py", ncu), "masks": {}}
    log = []
    for mask in list(MASKS) + ["ffma 0x1", "ffma 0x11"]:
        kernel, m = ("dot_ffma", mask.split()[1]) if mask.startswith("ffma") else ("dot_pair", mask)
        rep = out / f"dot_ncu_{mask.replace(' ', '_')}"
        r = subprocess.run(ncu_command(ncu, exe, m, rep, kernel), capture_output=True, text=True, timeout=300)
        log.append(f"== {mask}\n" + r.stdout[-3000:] + r.stderr[-3000:])
        (out / "dot_ncu.log").write_text("".join(log))
        ex = subprocess.run(ncu_mod.export_command(ncu, str(rep) + ".ncu-rep"), capture_output=True, text=True)
        rows = ncu_mod.parse_raw_csv(ex.stdout)
        met = ncu_mod.compact(rows[-1], METRICS, per_pc=False)["metrics"] if rows else {}
        name, per_pc, totals = samples_per_pc(str(rep) + ".ncu-rep", ncu)
        res["masks"][mask] = {"kernel": name, "metrics": met, "pcsamp_totals": totals, "pcsamp_per_pc": per_pc}
        Path(str(rep) + ".ncu-rep").unlink(missing_ok=True)
        print(mask, {k.replace("smsp__average_warps_issue_stalled_", "").replace("_per_issue_active.ratio", ""):
                     round(v, 2) for k, v in met.items() if v}, flush=True)
    (out / "dot_ncu.json").write_text(json.dumps(res))
    (out / "dot_ncu.log").write_text("".join(log))
    (out / "dot_ncu.sass").write_text(subprocess.run(["cuobjdump", "-sass", str(exe)], capture_output=True,
                                                     text=True).stdout)
    exe.unlink(missing_ok=True)


def record(dir_: Path, dest: Path):
    raw = json.loads((dir_ / "dot_ncu.json").read_text())
    sass = (dir_ / "dot_ncu.sass").read_text()
    rows = []
    for mask, got in raw["masks"].items():
        short = {k.replace("smsp__average_warps_issue_stalled_", "stall_").replace("_per_issue_active.ratio", ""): v
                 for k, v in got["metrics"].items()}
        kernel, warps = ("dot_ffma", mask.split()[1]) if mask.startswith("ffma") else ("dot_pair", mask)
        rows.append({"mask": mask, "kernel": kernel,
                     "layout": MASKS[warps] + (", no loads" if kernel == "dot_ffma" else ""),
                     "loop_pcs": [f"0x{x:04x}" for x in loop_range(sass, kernel)], **short,
                     "pcsamp_totals": {k: v for k, v in got["pcsamp_totals"].items() if v},
                     "pcsamp_per_pc": got["pcsamp_per_pc"]})
    alone = next(r for r in rows if r["mask"] == "0x1")
    rec = {
        "schema": "gpusim.hw.micro/1", "bench": "dot_pair_ncu",
        "what": "ncu's warp states of dot_pair (regtile2d's dotIdx trip by one warp, two of one SMSP, two of two "
                "SMSPs, two on each SMSP): per-issue stall ratios and PC samples per SASS instruction",
        "how": f"calibrate/dot_pair.cu with {CTAS} CTAs (one per SM); the second launch under ncu "
               f"--clock-control {ncu_mod.CLOCK_CONTROL} --cache-control {ncu_mod.CACHE_CONTROL} --replay-mode "
               f"{ncu_mod.REPLAY_MODE}, SourceCounters with PC samples every 32 cycles; PCs as offsets from the "
               "kernel's first instruction (calibrate/dot_pair_ncu.py)",
        "command": raw["command"] + " (on the H200), then --record DIR here",
        "ncu_command": " ".join(ncu_command("ncu", Path("<bin>"), "<mask>", Path("<work>/dot_ncu_<mask>")))
                          .replace(",".join(METRICS), "<see metrics>"),
        "source": "calibrate/dot_pair.cu:dot_pair",
        **provenance(raw),
        "unit": "warps per issued instruction (ncu stall ratios), PC samples; value: dispatch_stall per issue, "
                "one warp alone",
        "value": alone.get("stall_dispatch_stall"),
        "details": {"metrics": METRICS, "rows": rows},
    }
    dest.write_text(json.dumps(rec, indent=1))
    print(f"wrote {dest}")
    for r in rows:
        print(r["mask"], {k: round(v, 2) for k, v in loop_states(rec, r["mask"]).items() if v > 0.01})


def loop_states(rec: dict, mask: str) -> dict:
    """{state: PC samples per selected sample} over the trip loop's instructions: the loop's own warp
    states per issued instruction, without the kernel's fill and start (which the per-issue ratios
    include)."""
    row = next(r for r in rec["details"]["rows"] if r["mask"] == mask)
    lo, hi = (int(x, 16) for x in row["loop_pcs"])
    prefix = "smsp__pcsamp_warps_issue_stalled_"
    tot = {m[len(prefix):].replace("no_instructions", "no_instruction"): sum(v for pc, v in per.items()
                                                                           if lo <= int(pc, 16) <= hi)
           for m, per in row["pcsamp_per_pc"].items() if m.startswith(prefix) and not m.endswith("_not_issued")}
    sel = tot.get("selected", 0.0)
    return {k: v / sel for k, v in tot.items()} if sel else {}


if __name__ == "__main__":
    out_or_record(run_on_gpu, record, "dot_pair_ncu.json")
