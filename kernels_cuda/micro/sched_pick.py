"""Which warp an SMSP's scheduler picks when several can issue (kernels_cuda/micro/sched_pick.cu).

    bash kernels_cuda/micro/sched_pick.sh                       # on the GPU machine (writes $OUT)
    python3 kernels_cuda/micro/sched_pick.py --record DIR       # here: DIR -> traces/hw/h200/micro/sched_pick.json

A warps of SMSP 0 (A = 2, 4, 8) run 24 trips of 48 FFMAs in K independent chains (K = 1..4); lane 0
stamps each trip's start. Per (K, A), over the 132 blocks: each warp's trip starts relative to the
block's first stamp (median per warp and trip), its finish as a fraction of the block's span, the
earliest finish fraction and the Spearman correlation of warp index and finish. Pairs or a staircase:
the scheduler keeps warps and falls back to a fixed order; 1.0 everywhere: it rotates them.
"""
from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import numpy as np


def stamps(text: str) -> dict:
    """{(K, A): [blocks, A, trips + 1] cycles from each block's first stamp}."""
    rows = defaultdict(list)
    for line in text.splitlines():
        f = line.split()
        if f and f[0] == "P":
            k, a, blk, warp = (int(x) for x in f[1:5])
            rows[(k, a)].append((blk, warp, [int(x) for x in f[5:]]))
    out = {}
    for key, rs in rows.items():
        rs.sort()
        a = np.array([r[2] for r in rs], np.int64).reshape(-1, key[1], len(rs[0][2]))
        out[key] = a - a[:, :, :1].min(axis=1, keepdims=True)
    return out


def spearman(x) -> float:
    return float(np.corrcoef(np.arange(len(x)), np.argsort(np.argsort(x)))[0, 1])


def summarize(text: str) -> dict:
    out = {}
    for (k, a), s in sorted(stamps(text).items()):
        end = s[:, :, -1]
        span = end.max(axis=1, keepdims=True)
        fin = end / span
        out[f"K{k}_A{a}"] = {
            "chains": k, "warps": a, "blocks": int(s.shape[0]),
            "span_cycles_median": float(np.median(span)),
            "cycles_per_trip_per_warp_median": float(np.median(span) / (s.shape[2] - 1)),
            "earliest_finish_fraction_median": float(np.median(fin.min(axis=1))),
            "finish_fraction_per_warp_median": [round(float(x), 4) for x in np.median(fin, axis=0)],
            "spearman_warp_vs_finish_median": float(np.median([spearman(e) for e in end])),
            "trip_starts_median": np.median(s, axis=0).astype(int).tolist(),
        }
    return out


def record(dir_: Path, dest: Path):
    smi = (dir_ / "smi.txt").read_text().strip().splitlines()
    name, driver, clk, clk_max = [x.strip() for x in smi[-1].split(",")]
    date_nvcc = (dir_ / "date.txt").read_text().strip().splitlines()
    rec = {
        "schema": "gpusim.hw.micro/1", "bench": "sched_pick",
        "what": "which warp an SMSP's scheduler picks when several can issue: A warps of one SMSP, K "
                "independent FFMA chains each (a warp can issue K of every 4 cycles)",
        "how": "132 blocks x 1024 threads (one per SM); warps 0, 4, .., 4(A-1) (SMSP 0) run 24 trips of 48 "
               "FFMA (register, register, immediate) in K chains, the block's other warps exit; lane 0 "
               "stamps clock64() at each trip's start (CS2R first in the loop body, the loop not unrolled: "
               "sched_pick.sass) and after the loop; K = 1..4, A = 2, 4, 8; the second of two launches",
        "command": "bash kernels_cuda/micro/sched_pick.sh (on the H200), then "
                   "python3 kernels_cuda/micro/sched_pick.py --record DIR here",
        "source": "kernels_cuda/micro/sched_pick.cu:pick",
        "date": date_nvcc[0], "device": name, "driver": driver,
        "cuda": {"nvcc": date_nvcc[-1] if len(date_nvcc) > 1 else ""},
        "clocks": {"sm_mhz": clk, "sm_max_mhz": clk_max},
        "build_flags": ["-arch=sm_90", "-O3"],
        "unit": "value: median over blocks of the earliest warp's finish as a fraction of the block's span",
        "configs": summarize((dir_ / "pick.txt").read_text()),
    }
    rec["value"] = {c: v["earliest_finish_fraction_median"] for c, v in rec["configs"].items()}
    dest.write_text(json.dumps(rec, indent=1))
    (dest.with_suffix(".sass")).write_text((dir_ / "pick.sass").read_text())
    for c, v in rec["configs"].items():
        print(f"{c:7s} trip {v['cycles_per_trip_per_warp_median']:7.1f}  earliest {v['earliest_finish_fraction_median']:.2f}"
              f"  spearman {v['spearman_warp_vs_finish_median']:+.2f}  {v['finish_fraction_per_warp_median']}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--record", required=True)
    ap.add_argument("--dest", default="traces/hw/h200/micro/sched_pick.json")
    a = ap.parse_args()
    record(Path(a.record), Path(a.dest))
