"""Which FFMAs of a lone warp lose a cycle at dispatch: calibrate/ffma_dispatch.cu's eight operand
patterns, one warp per SM, timed and under ncu's PC sampling.

    python3 calibrate/ffma_dispatch.py --out DIR      # on the GPU machine (nvcc, cuobjdump, ncu)
    python3 calibrate/ffma_dispatch.py --record DIR   # here: -> traces/hw/h200/micro/ffma_dispatch.json
                                                               #          (and ffma_dispatch.sass)

Each pattern: its cycles a trip of 64 FFMAs from clock64 (min and max over the 132 warps), then the same
launch under ncu with PC samples every 32 cycles (SourceCounters, --warp-sampling-interval 0), summed
per SASS instruction. With one warp on its SMSP, no loads and no branch inside the 64 FFMAs, every
dispatch_stall sample there is the instruction stream's own (micro/dot_pair_ncu.json's dot_ffma row is
pattern 0's picture); the record keeps, per FFMA of each loop, its PC, its text (registers, .reuse flags)
and its samples, the material for a rule that says which FFMAs stall.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from micro_cli import provenance, nvcc_build, gpu_provenance, out_or_record  # noqa: E402
from gpusim.hw import ncu as ncu_mod  # noqa: E402

PATTERNS = {0: "a[k/8] * b[k%8] (m-major, dot_ffma's)", 1: "a[k%8] * b[k/8] (n-major)",
            2: "regtile2d's order: for each half of b, each a with four b", 3: "the 64 pairs scrambled (37k+11)",
            4: "the 64 pairs scrambled (23k+5)", 5: "a[m] * a[m+n]: both operands from one array",
            6: "one b per 16 FFMAs", 7: "m-major, accumulators in reverse"}
STATES = ("selected", "not_selected", "wait", "dispatch_stall", "math_pipe_throttle", "no_instruction",
          "branch_resolving", "short_scoreboard")
METRICS = ["smsp__inst_executed.sum", "sm__cycles_elapsed.max", "smsp__average_warp_latency_per_inst_issued.ratio"] \
    + [ncu_mod.stall_metric(s) for s in STATES]
PREFIX = "smsp__pcsamp_warps_issue_stalled_"


def ncu_command(ncu: str, exe: Path, pattern, report: Path) -> list[str]:
    """ncu's command line for the second launch of pattern `pattern`'s kernel, PC samples every 32 cycles."""
    return [ncu, "--clock-control", ncu_mod.CLOCK_CONTROL, "--cache-control", ncu_mod.CACHE_CONTROL,
            "--replay-mode", ncu_mod.REPLAY_MODE, "-k", f"regex:ffma_p{pattern}", "--launch-skip", "1",
            "--launch-count", "1", "--section", "SourceCounters", "--warp-sampling-interval", "0",
            "--import-source", "no", "--metrics", ",".join(METRICS), "-f", "-o", str(report), str(exe), str(pattern)]


def run_on_gpu(out: Path):
    from gpusim.hw.pcsamp import samples_per_pc
    out.mkdir(parents=True, exist_ok=True)
    ncu = ncu_mod.require_ncu()
    exe = nvcc_build(HERE / "ffma_dispatch.cu", out / "ffd_bin")
    (out / "ffd.sass").write_text(subprocess.run(["cuobjdump", "-sass", str(exe)], capture_output=True,
                                                 text=True).stdout)
    res = {**gpu_provenance("ffma_dispatch.py", ncu), "patterns": {}}
    for p in PATTERNS:
        timed = subprocess.run([str(exe), str(p)], capture_output=True, text=True, timeout=120).stdout
        rep = out / f"ffd_p{p}"
        r = subprocess.run(ncu_command(ncu, exe, p, rep), capture_output=True, text=True, timeout=300)
        ex = subprocess.run(ncu_mod.export_command(ncu, str(rep) + ".ncu-rep"), capture_output=True, text=True)
        rows = ncu_mod.parse_raw_csv(ex.stdout)
        met = ncu_mod.compact(rows[-1], METRICS, per_pc=False)["metrics"] if rows else {}
        name, per_pc, totals = samples_per_pc(str(rep) + ".ncu-rep", ncu)
        res["patterns"][p] = {"timed": timed.strip(), "kernel": name, "metrics": met, "per_pc": per_pc,
                              "ncu_tail": (r.stdout + r.stderr)[-1500:]}
        Path(str(rep) + ".ncu-rep").unlink(missing_ok=True)
        print(p, timed.strip(), {k: round(v, 2) for k, v in met.items() if "stalled" in k and v}, flush=True)
    (out / "ffd.json").write_text(json.dumps(res))
    exe.unlink(missing_ok=True)


def function_text(sass: str, pattern: int) -> str:
    """The cuobjdump listing of kernel ffma_p<pattern>."""
    parts = re.split(r"\n\s*Function : ", sass)
    return next(p for p in parts if p.startswith(f"_Z7ffma_p{pattern}"))


def loop_instructions(sass: str, pattern: int) -> list[tuple[int, str]]:
    """[(PC offset, instruction text)] of the trip loop: from the branch target of the loop's backward
    BRA to that BRA."""
    ins = [(int(m.group(1), 16), m.group(2)) for m in
           re.finditer(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", function_text(sass, pattern))]
    bra = next((pc, t) for pc, t in ins if re.search(r"BRA 0x[0-9a-f]+", t)
               and int(re.search(r"BRA (0x[0-9a-f]+)", t).group(1), 16) < pc)
    top = int(re.search(r"BRA (0x[0-9a-f]+)", bra[1]).group(1), 16)
    return [(pc, t) for pc, t in ins if top <= pc <= bra[0]]


def record(dir_: Path, dest: Path):
    raw = json.loads((dir_ / "ffd.json").read_text())
    sass = (dir_ / "ffd.sass").read_text()
    rows = []
    for p, got in raw["patterns"].items():
        p = int(p)
        m = re.search(r"min ([0-9.]+) max ([0-9.]+)", got["timed"])
        loop = []
        for pc, text in loop_instructions(sass, p):
            key = f"0x{pc:04x}"
            loop.append({"pc": key, "sass": text, **{s: got["per_pc"].get(PREFIX + s, {}).get(key, 0)
                                                       for s in ("selected", "dispatch_stall", "wait",
                                                                 "not_selected", "no_instructions",
                                                                 "branch_resolving")}})
        short = {k.replace("smsp__average_warps_issue_stalled_", "stall_").replace("_per_issue_active.ratio", ""): v
                 for k, v in got["metrics"].items()}
        rows.append({"pattern": p, "what": PATTERNS[p], "kernel": got["kernel"],
                     "cycles_per_trip_min": float(m.group(1)) if m else None,
                     "cycles_per_trip_max": float(m.group(2)) if m else None, **short, "loop": loop})
    rec = {
        "schema": "gpusim.hw.micro/1", "bench": "ffma_dispatch",
        "what": "one warp per SM running 64 independent FFMAs a trip in eight operand patterns: cycles a trip and, "
                "per SASS instruction of the loop, ncu's PC samples (selected, dispatch_stall, ...)",
        "how": "calibrate/ffma_dispatch.cu, 132 CTAs of 32 threads, 256 trips; clock64 around the loop "
               f"(second launch); then the second launch under ncu --clock-control {ncu_mod.CLOCK_CONTROL} "
               f"--cache-control {ncu_mod.CACHE_CONTROL} --replay-mode {ncu_mod.REPLAY_MODE}, SourceCounters with PC "
               "samples every 32 cycles; PCs as offsets from the kernel's first instruction "
               "(calibrate/ffma_dispatch.py)",
        "command": raw["command"] + " (on the H200), then --record DIR here",
        "ncu_command": " ".join(ncu_command("ncu", Path("<bin>"), "<pattern>", Path("<work>/ffd_p<pattern>")))
                          .replace(",".join(METRICS), "<see metrics>"),
        "source": "calibrate/ffma_dispatch.cu",
        **provenance(raw),
        "unit": "cycles a trip of 64 FFMAs; PC samples per instruction; value: pattern 0's cycles a trip (min)",
        "value": rows[0]["cycles_per_trip_min"],
        "details": {"metrics": METRICS, "rows": rows},
    }
    dest.write_text(json.dumps(rec, indent=1))
    (dest.parent / "ffma_dispatch.sass").write_text(sass)
    print(f"wrote {dest}")
    for r in rows:
        ds = sum(i["dispatch_stall"] for i in r["loop"]); sel = sum(i["selected"] for i in r["loop"])
        print(r["pattern"], r["cycles_per_trip_min"], f"dispatch_stall per issue in the loop {ds / max(sel, 1):.2f}")


if __name__ == "__main__":
    out_or_record(run_on_gpu, record, "ffma_dispatch.json")
