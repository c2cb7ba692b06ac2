"""SHFL and MUFU on the H200: the latency of a dependent chain and the rate of independent ones.

    python3 calibrate/shfl_mufu.py --out DIR      # on the GPU machine (nvcc, cuobjdump, cupy)
    python3 calibrate/shfl_mufu.py --record DIR   # here: -> traces/hw/h200/micro/shfl_mufu.json (+ .sass)

The engine took a shuffle as a 4-cycle op and MUFU at 18 cycles, neither measured (presets.py said so).
The memory ladder's shuffle reductions (reduce_shfl, softmax, sgemv) and softmax's __expf run through
them. calibrate/shfl_mufu.cu, clock64 in the kernel: one warp runs n dependent ops (SHFL.BFLY alone; a
butterfly step SHFL then FADD; MUFU.EX2 alone and then FADD; MUFU.RCP then FADD), and the latency is the cycles of
n = 2048 less those of n = 1024, over 1024 (the loop's own fixed cost drops out). Then one CTA per SM of
W warps, each with 8 independent chains: the SM's rate, warp-level ops per cycle (the slowest warp's
cycles). Each figure is the median over 132 CTAs and 3 launches; the SASS is kept beside the record.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from micro_cli import chain_and_rate_rows, gpu_provenance, out_or_record, write_record  # noqa: E402  (beside this script)

SMS = 132
LATENCY = ("shfl_chain", "shfl_fadd", "ex2_only", "ex2_chain", "rcp_chain")
RATE = ("shfl_rate", "ex2_rate")
RATE_WARPS = (1, 4, 8, 16, 32)
N_RATE = 256


def run_on_gpu(out: Path):
    rows = chain_and_rate_rows(out, "shfl_mufu", LATENCY, RATE, RATE_WARPS, N_RATE, "cycles_per_op", SMS)
    (out / "shfl_rows.json").write_text(json.dumps(rows, indent=1))
    (out / "shfl_prov.json").write_text(json.dumps(gpu_provenance("shfl_mufu.py")))


def record(dir_: Path, dest: Path):
    prov = json.loads((dir_ / "shfl_prov.json").read_text())
    rows = json.loads((dir_ / "shfl_rows.json").read_text())
    lat = {r["kernel"]: round(r["cycles_per_op"], 2) for r in rows if "cycles_per_op" in r}
    rate = {k: round(max(r["ops_per_sm_cycle"] for r in rows if r["kernel"] == k), 3) for k in RATE}
    write_record(
        dest, prov, "shfl_mufu",
        what="SHFL.BFLY and MUFU (EX2, RCP): cycles per op of a dependent chain in one warp, and an SM's rate of "
            "independent ones (warp-level ops per SM cycle)",
        how="calibrate/shfl_mufu.cu, clock64 around n dependent ops in one warp per CTA (latency: cycles at n = "
            "2048 less n = 1024, over 1024); one CTA per SM of 1-32 warps with 8 independent chains each "
            f"(rate: ops over the slowest warp's cycles, n = {N_RATE}); medians over 132 CTAs and 3 launches "
            "(calibrate/shfl_mufu.py)",
        source="calibrate/shfl_mufu.cu:" + ",".join(LATENCY + RATE),
        unit="cycles per dependent op (latency), warp-level ops per SM cycle (rate, the best over warp counts)",
        value={"latency_cycles": lat, "rate_per_sm_cycle": rate},
        details={"rows": rows},
        sass=dir_ / "shfl_mufu.sass",
    )


if __name__ == "__main__":
    out_or_record(run_on_gpu, record, "shfl_mufu.json")
