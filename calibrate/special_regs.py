"""S2R and LDC on the H200: the cycles a warp waits for a special-register read and a constant load.

    python3 calibrate/special_regs.py --out DIR      # on the GPU machine (nvcc, cuobjdump, cupy)
    python3 calibrate/special_regs.py --record DIR   # here: -> traces/hw/h200/micro/special_regs.json (+ .sass)

The engine took S2R, S2UR and LDC results at other_latency_cycles (4), not measured (presets.py said so),
while the H200's PC samples of short CTAs (reduce_smem's prologue, traces/hw/h200/pcsamp/) show the
consumers of SR_TID, SR_CTAID and the parameter loads waiting on short_scoreboard. calibrate/special_regs.cu,
clock64 in the kernel, one warp. S2R: a loop not unrolled that reads %smid each trip and exits if the value
matches one made from x (S2R, ISETP, branch), so the next trip's read issues only once the branch has
resolved on this one; its baseline is the same loop with a LOP3 for the read (alu_loop). (A predicated read in
an unrolled chain was tried first: ptxas made it a SEL and hoisted the S2Rs. A constant at a fixed address,
read so each trip, ptxas hoisted out of the loop as a ULDC: the immediate form of LDC, a kernel's parameters,
is not measured here.) The S2R's latency = s2r_loop's
cycles per trip - alu_loop's + the baseline LOP3's issue offset and latency (micro/fma_issue_rate.json,
latency_iadd3.json); s2ur_loop / ualu_loop are the same with a uniform x (ptxas still reads with S2R). LDC:
a chase through constant memory, LDC R, c[0x3][R]. Cycles per step = (cycles at n = 2048 less n = 1024) /
1024. Then one CTA per SM of W warps, each with 8 independent reads a step: the SM's rate. Medians over 132 CTAs and 3
launches; the SASS is kept beside the record (check that each loop holds the op it names).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from micro_cli import MICRO_RECORDS, chain_and_rate_rows, gpu_provenance, out_or_record, write_record  # noqa: E402

SMS = 132
LATENCY = ("s2r_loop", "alu_loop", "s2ur_loop", "ualu_loop", "ldc_chase")
RATE = ("s2r_rate", "ldc_rate")
RATE_WARPS = (1, 4, 8, 16, 32)
N_RATE = 256


def run_on_gpu(out: Path):
    rows = chain_and_rate_rows(out, "special_regs", LATENCY, RATE, RATE_WARPS, N_RATE, "cycles_per_step", SMS)
    (out / "special_rows.json").write_text(json.dumps(rows, indent=1))
    (out / "special_prov.json").write_text(json.dumps(gpu_provenance("special_regs.py")))


ALU_OFFSET = 1     # the baseline's LOP3 issues one ALU issue interval after the trip's IADD3 (both ALU ops)


def latencies(rows: list, alu_latency: float, alu_interval: float) -> dict:
    """From the record's rows: the cycles a consumer waits for S2R (the loop with a per-thread and with a
    uniform consumer; ptxas read SR_VIRTUALSMID with S2R in both) and for LDC. A trip of s2r_loop waits
    the S2R's latency where alu_loop's waits for its LOP3, which issues an ALU interval after the trip's
    IADD3 and is ready an ALU latency later; the rest of the two trips (ISETP, branch) is the same."""
    step = {r["kernel"]: r["cycles_per_step"] for r in rows if "cycles_per_step" in r}
    base = ALU_OFFSET * alu_interval + alu_latency
    return {"s2r": round(step["s2r_loop"] - step["alu_loop"] + base, 2),
            "s2r_uniform_consumer": round(step["s2ur_loop"] - step["ualu_loop"] + base, 2),
            "ldc": round(step["ldc_chase"], 2)}


def record(dir_: Path, dest: Path):
    prov = json.loads((dir_ / "special_prov.json").read_text())
    rows = json.loads((dir_ / "special_rows.json").read_text())
    alu = json.loads((MICRO_RECORDS / "latency_iadd3.json").read_text())["value"]
    rates = json.loads((MICRO_RECORDS / "fma_issue_rate.json").read_text())["details"]["rows"]
    interval = 1 / max(r["warp_inst_per_cycle_per_smsp"] for r in rates if r["op"] == "IADD3")
    rate = {k: round(max(r["ops_per_sm_cycle"] for r in rows if r["kernel"] == k), 3) for k in RATE}
    write_record(
        dest, prov, "special_regs",
        what="S2R (SR_VIRTUALSMID) and LDC (constant-cache hit): cycles a dependent consumer waits for "
             "the result in one warp, and an SM's rate of independent ones (warp-level ops per SM cycle)",
        how="calibrate/special_regs.cu, clock64 around n trips in one warp per CTA (cycles at n = 2048 less n = "
            "1024, over 1024): a loop not unrolled reading %smid each trip and branching on it, less the same loop "
            "with a LOP3 for the read, plus the LOP3's issue offset and latency (micro/fma_issue_rate.json, "
            "latency_iadd3.json); an LDC chase through constant memory; one CTA per SM of 1-32 warps with 8 "
            f"independent reads each (rate, n = {N_RATE}; ptxas mixed S2UR into the S2R loop and ULDC into the LDC "
            "one, the SASS shows which); medians over 132 CTAs and 3 launches (calibrate/special_regs.py)",
        source="calibrate/special_regs.cu:" + ",".join(LATENCY + RATE),
        unit="cycles from issue to a dependent consumer's issue (latency), warp-level ops per SM cycle (rate, "
             "the best over warp counts)",
        value={"latency_cycles": latencies(rows, alu, interval), "rate_per_sm_cycle": rate},
        details={"rows": rows, "alu_latency_cycles": alu, "alu_issue_interval_cycles": interval},
        sass=dir_ / "special_regs.sass",
    )


if __name__ == "__main__":
    out_or_record(run_on_gpu, record, "special_regs.json")
