"""Does another warp's shared-load data hold up a warp's FFMAs on the same SMSP (dispatch_stall), and does
one SMSP write shared-load data back at a rate of its own?

    python3 calibrate/wb_mix.py --out DIR      # on the GPU machine (nvcc, cuobjdump, ncu)
    python3 calibrate/wb_mix.py --record DIR   # here: -> traces/hw/h200/micro/wb_mix.json

calibrate/wb_mix.cu: one CTA of 8 warps; the FFMA warps run dot_ffma's trip (64 FFMAs, no loads),
the load warps bursts of 8 independent LDS.32, LDS.128 or broadcast LDS.128. Per layout, with clock64
stamps (one CTA): the FFMA warp's median trip and the load warps' median burst. Under ncu (132 CTAs, one
per SM, PC samples every 32 cycles) for a subset: the per-issue states and PC samples per instruction,
from which the FFMA loop's own states are read (loop_states).
"""
from __future__ import annotations

import json
import re
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from micro_cli import provenance, build_and_run, gpu_provenance, out_or_record  # noqa: E402

KINDS = {0: "LDS.32", 1: "LDS.128", 2: "LDS.128 broadcast"}
# (FFMA warps, load warps, kind): warps w and w + 4 share an SMSP (the record keeps every warp's %warpid)
STAMPED = [("0x1", "0x0", 0), ("0x1", "0x10", 0), ("0x1", "0x10", 1), ("0x1", "0x10", 2), ("0x1", "0x2", 1),
           ("0x1", "0xf0", 1), ("0x11", "0x0", 0),
           ("0x0", "0x1", 0), ("0x0", "0x1", 1), ("0x0", "0x1", 2), ("0x0", "0x11", 0), ("0x0", "0x11", 1),
           ("0x0", "0x11", 2), ("0x0", "0x3", 1), ("0x0", "0x3", 0)]
PROFILED = [("0x1", "0x0", 0), ("0x1", "0x10", 1), ("0x1", "0x10", 0), ("0x1", "0x10", 2), ("0x1", "0x2", 1),
            ("0x0", "0x1", 1), ("0x0", "0x11", 1)]
LTRIPS = 192
CTAS = 132
STEADY = 8
STATES = ("selected", "not_selected", "wait", "short_scoreboard", "dispatch_stall", "math_pipe_throttle",
          "mio_throttle", "long_scoreboard", "lg_throttle", "barrier", "drain", "no_instruction", "branch_resolving",
          "misc")


def _label(f, l, k) -> str:
    return f"{f} {l} {k}"


def run_on_gpu(out: Path):
    from gpusim.hw import ncu as ncu_mod
    from gpusim.hw.pcsamp import samples_per_pc
    out.mkdir(parents=True, exist_ok=True)
    exe, _ = build_and_run(HERE / "wb_mix.cu", out, "wb", [[f, l, str(k), "1", str(LTRIPS)] for f, l, k in STAMPED])
    ncu = ncu_mod.find_ncu()
    res = {**gpu_provenance("wb_mix.py", ncu), "profiled": {}}
    metrics = ["smsp__inst_executed.sum", "sm__cycles_elapsed.max"] + [ncu_mod.stall_metric(s) for s in STATES]
    for f, l, k in PROFILED if ncu else []:
        rep = out / "wb_rep"
        cmd = [ncu, "--clock-control", ncu_mod.CLOCK_CONTROL, "--cache-control", ncu_mod.CACHE_CONTROL,
               "--replay-mode", ncu_mod.REPLAY_MODE, "-k", "regex:wb_mix", "--launch-skip", "1", "--launch-count", "1",
               "--section", "SourceCounters", "--section", "WarpStateStats", "--warp-sampling-interval", "0",
               "--import-source", "no", "--metrics", ",".join(metrics), "-f", "-o", str(rep),
               str(exe), f, l, str(k), str(CTAS), str(LTRIPS)]
        subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        ex = subprocess.run(ncu_mod.export_command(ncu, str(rep) + ".ncu-rep"), capture_output=True, text=True)
        rows = ncu_mod.parse_raw_csv(ex.stdout)
        met = ncu_mod.compact(rows[-1], metrics, per_pc=False)["metrics"] if rows else {}
        _, per_pc, totals = samples_per_pc(str(rep) + ".ncu-rep", ncu)
        res["profiled"][_label(f, l, k)] = {"metrics": met, "pcsamp_per_pc": per_pc}
        Path(str(rep) + ".ncu-rep").unlink(missing_ok=True)
        print(_label(f, l, k), {s: round(v, 2) for s, v in met.items() if v}, flush=True)
    res["ncu_command"] = " ".join(["ncu"] + cmd[1:-9] + ["-f", "-o", "<work>/wb_rep", "<bin>", "F", "L", "KIND",
                                                         str(CTAS), str(LTRIPS)]).replace(",".join(metrics),
                                                                                          "<metrics>") if ncu else ""
    (out / "wb_prov.json").write_text(json.dumps(res))
    exe.unlink(missing_ok=True)


def parse(text: str) -> dict:
    """{label: {warp: (slot, role, [stamps])}}"""
    out: dict = {}
    for ln in text.splitlines():
        f = ln.split()
        if len(f) > 10 and f[0] == "wb":
            out.setdefault(_label(f[1], f[2], int(f[3])), {})[int(f[5])] = (int(f[7]), f[9], [int(x) for x in f[10:]])
    return out


def loops(sass: str) -> dict:
    """{"ffma": (first, last), "lds": (first, last)} PC offsets: the FFMA trip (its first FFMA to the branch
    after its last) and the load loop (the first clock read to its backward branch)."""
    from gpusim.timing.control_codes import parse_sass
    ins = parse_sass(sass[sass.index("Function : "):])
    ffma = [off for off, op, _ in ins if op == "FFMA"]
    ffma_end = next(off for off, op, _ in ins if off > ffma[-1] and op == "BRA")
    clock = int(re.search(r"/\*([0-9a-f]{4})\*/\s+(?:@!?P\d\s+)?CS2R R\d+, SR_CLOCKLO", sass).group(1), 16)
    lds_end = max(off for off, op, _ in ins if op == "BRA" and off < ffma[0])
    return {"ffma": (ffma[0], ffma_end), "lds": (clock, lds_end)}


def loop_states(per_pc: dict, lo: int, hi: int) -> dict:
    """{state: PC samples per selected sample} over [lo, hi]: a loop's own states per issued instruction."""
    prefix = "smsp__pcsamp_warps_issue_stalled_"
    tot = {m[len(prefix):].replace("no_instructions", "no_instruction"):
           sum(v for pc, v in per.items() if lo <= int(pc, 16) <= hi)
           for m, per in per_pc.items() if m.startswith(prefix) and not m.endswith("_not_issued")}
    sel = tot.get("selected", 0.0)
    return {k: round(v / sel, 3) for k, v in tot.items() if v} if sel else {}


def summarize(runs: dict) -> list:
    rows = []
    for label, warps in runs.items():
        f, l, k = label.split()
        med = {str(w): statistics.median(b - a for a, b in zip(t[STEADY:64], t[STEADY + 1:64]))
               for w, (_, _, t) in warps.items()}
        rows.append({"label": label, "ffma_mask": f, "load_mask": l, "kind": KINDS[int(k)],
                     "slots": {str(w): s for w, (s, _, _) in warps.items()},
                     "roles": {str(w): r for w, (_, r, _) in warps.items()},
                     "median_cycles": med})
    return rows


def record(dir_: Path, dest: Path):
    prov = json.loads((dir_ / "wb_prov.json").read_text())
    sass = (dir_ / "wb.sass").read_text()
    runs = parse((dir_ / "wb_stamps.txt").read_text())
    lp = loops(sass)
    prof = {lab: {"metrics": got["metrics"],
                  "ffma_loop_states": loop_states(got["pcsamp_per_pc"], *lp["ffma"]),
                  "lds_loop_states": loop_states(got["pcsamp_per_pc"], *lp["lds"]),
                  "pcsamp_per_pc": got["pcsamp_per_pc"]} for lab, got in prov["profiled"].items()}
    rows = summarize(runs)
    rec = {
        "schema": "gpusim.hw.micro/1", "bench": "wb_mix",
        "what": "an FFMA warp (dot_ffma's trip, no loads) beside warps issuing bursts of 8 shared loads (LDS.32, "
                "LDS.128, broadcast LDS.128) on its own SMSP or another, and load warps alone, two on one SMSP or "
                "on two: the FFMA trip's and the load burst's median cycles, and ncu's states of each loop",
        "how": "calibrate/wb_mix.cu: one CTA of 256 threads for the clock64 stamps (second of two launches, "
               f"medians over trips / bursts {STEADY}-63); {CTAS} CTAs (one per SM) under ncu with PC samples every "
               "32 cycles for the profiled layouts; loop states = PC samples over the loop's PCs per selected sample "
               "(calibrate/wb_mix.py)",
        "command": prov["command"] + " (on the H200), then --record DIR here",
        "ncu_command": prov.get("ncu_command", ""),
        "source": "calibrate/wb_mix.cu:wb_mix",
        **provenance(prov),
        "unit": "cycles (clock64); ncu states per issued instruction",
        "value": None,
        "details": {"loop_pcs": {k: [f"0x{a:04x}", f"0x{b:04x}"] for k, (a, b) in lp.items()},
                    "rows": rows, "profiled": prof},
    }
    alone = next(r for r in rows if r["label"] == "0x1 0x0 0")
    rec["value"] = alone["median_cycles"]["0"]
    dest.write_text(json.dumps(rec, indent=1))
    (dest.parent / "wb_mix.sass").write_text(sass)
    print(f"wrote {dest}")
    for r in rows:
        print(f"{r['label']:14s} {r['kind']:18s}", {w: (r['roles'][w], r['slots'][w] % 4, c)
                                                    for w, c in r["median_cycles"].items()})
    for lab, p in prof.items():
        print(lab, "ffma loop", {k: v for k, v in p["ffma_loop_states"].items() if v > 0.01})
        print(lab, "lds loop ", {k: v for k, v in p["lds_loop_states"].items() if v > 0.01})


if __name__ == "__main__":
    out_or_record(run_on_gpu, record, "wb_mix.json")
