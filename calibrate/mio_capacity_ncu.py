"""ncu's warp states for the mio_capacity bursts: what the H200 calls a wait for the SM's shared-load path.

    python3 calibrate/mio_capacity_ncu.py --out DIR      # on the GPU machine (nvcc, ncu)
    python3 calibrate/mio_capacity_ncu.py --record DIR   # here: -> traces/hw/h200/micro/mio_capacity_ncu.json
    python3 calibrate/mio_capacity_ncu.py --lsu --out DIR / --lsu --record DIR
        # the same launches with ncu's count of the loads pending in the LSU pipe and their latency
        # (gpusim.hw.breakdown.LSU_METRICS) -> traces/hw/h200/micro/mio_capacity_lsu_ncu.json

The binary is calibrate/mio_capacity.cu as mio_capacity.py builds it; every launch of its cap<>
kernels runs under ncu (each configuration launches twice; the record keeps the second, the first warms
the instruction cache). The question is the layout "one warp on each SMSP": four warps can hold at most
4 x 13 loads in the SM (micro/mio_queue_depth.json: the SM-wide pool of 52) while each warp's own SMSP
queue holds 30, so in a long burst every wait is the pool's. Whether ncu counts that wait as
mio_throttle (as it does when one warp fills its own queue, layout "1 warp") or as another state decides
what the engine's pool states (S_MIO_POOL) are named.
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
from mio_capacity import MASKS  # noqa: E402
from gpusim.hw import ncu as ncu_mod  # noqa: E402

STATES = ("mio_throttle", "short_scoreboard", "wait", "not_selected", "selected", "dispatch_stall", "barrier",
          "long_scoreboard", "drain", "math_pipe_throttle", "lg_throttle", "no_instruction", "branch_resolving",
          "misc")
METRICS = ["smsp__inst_executed.sum", "sm__cycles_elapsed.max", "smsp__average_warp_latency_per_inst_issued.ratio",
           "smsp__sass_inst_executed_op_shared_ld.sum"] + [ncu_mod.stall_metric(s) for s in STATES]
KERNEL_RE = re.compile(r"cap<(\d+), (\d+), (\d+)>")
LSU = "--lsu" in sys.argv
if LSU:
    from gpusim.hw.breakdown import LSU_METRICS  # noqa: E402
    METRICS += [m for m in LSU_METRICS + ["sm__cycles_active.max"] if m not in METRICS]


def ncu_command(ncu: str, exe: Path, mask: str, report: Path) -> list[str]:
    """Every cap<> launch of the binary for one mask, under the project's profiling conditions."""
    return [ncu, "--clock-control", ncu_mod.CLOCK_CONTROL, "--cache-control", ncu_mod.CACHE_CONTROL,
            "--replay-mode", ncu_mod.REPLAY_MODE, "-k", "regex:cap", "--metrics", ",".join(METRICS),
            "-f", "-o", str(report), str(exe), mask]


def run_on_gpu(out: Path):
    out.mkdir(parents=True, exist_ok=True)
    ncu = ncu_mod.require_ncu()
    exe = nvcc_build(HERE / "mio_capacity.cu", out / "mio_ncu_bin")
    (out / "mio_ncu_prov.json").write_text(json.dumps(gpu_provenance("mio_capacity_ncu.py" + (" --lsu" if LSU else ""),
                                                                     ncu)))
    for mask in sorted(MASKS, key=lambda m: m != "0xf"):     # the layout in question first
        rep = out / f"mio_ncu_{mask}"
        r = subprocess.run(ncu_command(ncu, exe, mask, rep), capture_output=True, text=True, timeout=500)
        with open(out / "mio_ncu.log", "a") as log:          # ncu's own messages, all masks in one file
            log.write(f"== {mask}\n" + r.stdout[-4000:] + r.stderr[-4000:])
        ex = subprocess.run(ncu_mod.export_command(ncu, str(rep) + ".ncu-rep"), capture_output=True, text=True)
        (out / f"mio_ncu_{mask}.csv").write_text(ex.stdout)
        Path(str(rep) + ".ncu-rep").unlink(missing_ok=True)
        print(mask, "rows", len(ncu_mod.parse_raw_csv(ex.stdout)), flush=True)
    exe.unlink(missing_ok=True)


def rows_of(csv_text: str, mask: str) -> list[dict]:
    """One row per configuration: the second of its two launches, ncu's figures by short name."""
    seen: dict = {}
    for row in ncu_mod.parse_raw_csv(csv_text):
        m = KERNEL_RE.search(row["kernel"] or "")
        if not m:
            continue
        b, v, wf = (int(x) for x in m.groups())
        seen.setdefault((v, wf, b), []).append(row)
    out = []
    for (v, wf, b), launches in seen.items():
        met = ncu_mod.compact(launches[-1], METRICS, per_pc=False)["metrics"]
        out.append({"mask": mask, "layout": MASKS[mask], "words_per_lane": v, "conflict": wf, "loads": b,
                    "launches_profiled": len(launches),
                    **{k.replace("smsp__average_warps_issue_stalled_", "stall_").replace("_per_issue_active.ratio", ""): x
                       for k, x in met.items()}})
    return out


def record(dir_: Path, dest: Path):
    prov = json.loads((dir_ / "mio_ncu_prov.json").read_text())
    rows = []
    for mask in MASKS:
        rows += rows_of((dir_ / f"mio_ncu_{mask}.csv").read_text(), mask)
    if not rows:
        raise SystemExit(f"no cap<> launches in {dir_}/mio_ncu_*.csv")
    # headline: bursts of 16 (a warp's own SMSP queue holds 30), so any wait is the SM's
    key = next((r for r in rows if r["mask"] == "0xf" and r["words_per_lane"] == 1 and r["conflict"] == 16
                and r["loads"] == 16), None)
    rec = {
        "schema": "gpusim.hw.micro/1", "bench": "mio_capacity_ncu",
        "what": "ncu's warp states (per issued instruction) of the mio_capacity bursts, by warp layout and load kind: "
                "what a wait for the SM-wide shared-load path is called"
                + ("; with ncu's count of the shared loads pending in the LSU pipe (sm__inst_pending_pipe_lsu_*, "
                   "summed over cycles: divide by sm__cycles_active.max) and their latency from issue to "
                   "retirement" if LSU else ""),
        "how": "calibrate/mio_capacity.cu built as for mio_capacity.json; every cap<> launch under ncu "
               f"--clock-control {ncu_mod.CLOCK_CONTROL} --cache-control {ncu_mod.CACHE_CONTROL} --replay-mode "
               f"{ncu_mod.REPLAY_MODE}; each configuration launches twice, the second is kept; ratios are over the "
               "whole kernel (shared-memory fill, 8 bursts and their consumption)",
        "command": prov["command"] + " (on the H200), then --record DIR here",
        "ncu_command": " ".join(ncu_command("ncu", Path("<bin>"), "<mask>", Path("<work>/mio_ncu_<mask>")))
                          .replace(",".join(METRICS), "<see metrics>"),
        "source": "calibrate/mio_capacity.cu:cap",
        **provenance(prov),
        "unit": "warps per issued instruction (ncu stall ratios); value: mio_throttle, one warp on each SMSP, "
                "bursts of 16 LDS.32 with a 16-way conflict",
        "value": key["stall_mio_throttle"] if key else None,
        "details": {"metrics": METRICS, "rows": rows},
    }
    dest.write_text(json.dumps(rec, indent=1))
    print(f"wrote {dest}")


if __name__ == "__main__":
    out_or_record(run_on_gpu, record, "mio_capacity_lsu_ncu.json" if LSU else "mio_capacity_ncu.json",
                  [a for a in sys.argv[1:] if a != "--lsu"])
