"""How evenly an SM's schedulers and MIO / LG queues share the SM among warps.

    bash calibrate/sched_fairness.sh                      # on the GPU machine (writes $OUT)
    python3 calibrate/sched_fairness.py --record DIR      # here: DIR -> traces/hw/h200/micro/sched_fairness.json

One 1024-thread block per SM (8 warps per SMSP), every warp the same independent work; lane 0
records clock64() at its start and at the end of its loop (calibrate/sched_fairness.cu).
Per mode and block: each warp's finish as a fraction of the block's span (first start to last
finish); the record keeps the median over the 132 blocks per warp, and the median of the
earliest finish fraction. 1.0 everywhere: warps progress together; a staircase: the scheduler
keeps some warps and starves the rest.
"""
from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import numpy as np

from micro_cli import MICRO_RECORDS, finish_order, sh_provenance  # (beside this script)


def summarize(text: str) -> dict:
    runs = defaultdict(list)
    for line in text.splitlines():
        f = line.split()
        if len(f) == 6 and f[0] == "W":
            runs[f[1]].append(tuple(int(x) for x in f[2:]))
    out = {}
    for mode, rows in runs.items():
        a = np.array(rows, np.int64)
        nb = int(a[:, 0].max()) + 1
        start, end = a[:, 2].reshape(nb, -1), a[:, 3].reshape(nb, -1)
        s0 = start.min(1, keepdims=True)
        span = end.max(1, keepdims=True) - s0
        fin = (end - s0) / span
        out[mode] = {
            "blocks": nb, "span_cycles_median": float(np.median(span)),
            "start_spread_cycles_median": float(np.median((start - s0).max(1))),
            **finish_order(end, fin),
        }
    return out


def record(dir_: Path, dest: Path):
    rec = {
        "schema": "gpusim.hw.micro/1", "bench": "sched_fairness",
        "what": "how evenly warps of one SM progress when they compete for the LG queue / L1TEX, the MIO "
                "queue / shared pipe, or the FP32 issue slot",
        "how": "132 blocks x 1024 threads (one per SM, 8 warps per SMSP); per warp clock64() at its start "
               "(after a __syncthreads) and at the end of its loop; modes: lg = 8 independent LDG.E per "
               "trip, each on 32 L1-hit lines; lds = 8 independent LDS per trip, 8-way bank conflicted; "
               "ffma4 / ffma2 = 4 / 2 independent FFMA chains (calibrate/sched_fairness.cu)",
        "command": "bash calibrate/sched_fairness.sh (on the H200), then "
                   "python3 calibrate/sched_fairness.py --record DIR here",
        "source": "calibrate/sched_fairness.cu:fair",
        **sh_provenance(dir_),
        "unit": "finish time as a fraction of the block's span",
        "note": "the second of two launches is recorded; warps 0..31 of a block, SMSP = warp % 4",
        "modes": summarize((dir_ / "fair.txt").read_text()),
    }
    rec["value"] = {m: v["earliest_finish_fraction_median"] for m, v in rec["modes"].items()}
    rec["unit"] = "value: median over blocks of the earliest warp's finish as a fraction of the block's span"
    dest.write_text(json.dumps(rec, indent=1))
    for m, v in rec["modes"].items():
        print(m, v["span_cycles_median"], v["earliest_finish_fraction_median"], v["spearman_warp_vs_finish_median"])


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--record", required=True)
    ap.add_argument("--dest", default=str(MICRO_RECORDS / "sched_fairness.json"))
    a = ap.parse_args()
    record(Path(a.record), Path(a.dest))
