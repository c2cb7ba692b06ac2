"""Which warp an SMSP's scheduler picks when several can issue (calibrate/sched_pick.cu).

    bash calibrate/sched_pick.sh                       # on the GPU machine (writes $OUT)
    python3 calibrate/sched_pick.py --record DIR       # here: DIR -> traces/hw/h200/micro/sched_pick.json

A warps of each of S SMSPs run T trips of 48 FFMAs in K independent chains (K = 1..4): A = 2, 4, 8 on
SMSP 0 over 24 trips, 8 on each SMSP over 24 trips, and three configurations over 64 trips; lane 0
stamps each trip's start. Per (K, A, S, T), over the 132 blocks and, with S = 4, per SMSP: each warp's trip starts relative to the
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

from micro_cli import MICRO_RECORDS, finish_order, sh_provenance  # (beside this script)


def stamps(text: str) -> dict:
    """{(K, A, S, T): [blocks x S SMSPs, A, T + 1] cycles from the first stamp of the SMSP's warps}."""
    rows = defaultdict(list)
    for line in text.splitlines():
        f = line.split()
        if f and f[0] == "P":
            k, a, s, t, blk, warp = (int(x) for x in f[1:7])
            rows[(k, a, s, t)].append((blk, warp % 4, warp, [int(x) for x in f[7:]]))
    out = {}
    for key, rs in rows.items():
        rs.sort()                                   # by block, SMSP, warp
        a = np.array([r[3] for r in rs], np.int64).reshape(-1, key[1], key[3] + 1)
        out[key] = a - a[:, :, :1].min(axis=1, keepdims=True)
    return out


def config_name(k: int, a: int, s: int = 1, t: int = 24) -> str:
    return f"K{k}_A{a}_S{s}_T{t}"


def summarize(text: str) -> dict:
    out = {}
    for (k, a, sm, t), s in sorted(stamps(text).items()):
        end = s[:, :, -1]
        span = end.max(axis=1, keepdims=True)
        fin = end / span
        out[config_name(k, a, sm, t)] = {
            "chains": k, "warps": a, "smsps": sm, "trips": t, "groups": int(s.shape[0]),
            "span_cycles_median": float(np.median(span)),
            "cycles_per_trip_per_warp_median": float(np.median(span) / (s.shape[2] - 1)),
            **finish_order(end, fin),
            "trip_starts_median": np.median(s, axis=0).astype(int).tolist(),
        }
    return out


def record(dir_: Path, dest: Path):
    rec = {
        "schema": "gpusim.hw.micro/1", "bench": "sched_pick",
        "what": "which warp an SMSP's scheduler picks when several can issue: A warps of one SMSP, K "
                "independent FFMA chains each (a warp can issue K of every 4 cycles)",
        "how": "132 blocks x 1024 threads (one per SM); A warps of each of the first S SMSPs (warp w on SMSP "
               "w % 4) run T trips of 48 FFMA (register, register, immediate) in K chains, the block's other "
               "warps exit; lane 0 stamps clock64() at each trip's start (CS2R first in the loop body, the loop "
               "not unrolled: sched_pick.sass) and after the loop; K = 1..4 with A = 2, 4, 8, S = 1, T = 24; "
               "K = 1..4 with A = 8, S = 4, T = 24; (K, A, S, T) = (4, 8, 1, 64), (4, 8, 4, 64), (2, 8, 4, 64); "
               "the second of two launches; per configuration, statistics over the blocks (x SMSPs when S = 4): "
               "medians of each warp's trip starts from the group's first stamp and of its finish fraction",
        "command": "bash calibrate/sched_pick.sh (on the H200), then "
                   "python3 calibrate/sched_pick.py --record DIR here",
        "source": "calibrate/sched_pick.cu:pick",
        **sh_provenance(dir_),
        "unit": "value: median over blocks of the earliest warp's finish as a fraction of the block's span",
        "configs": summarize((dir_ / "pick.txt").read_text()),
    }
    rec["value"] = {c: v["earliest_finish_fraction_median"] for c, v in rec["configs"].items()}
    dest.write_text(json.dumps(rec, indent=1))
    (dest.with_suffix(".sass")).write_text((dir_ / "pick.sass").read_text())
    for c, v in rec["configs"].items():
        print(f"{c:14s} trip {v['cycles_per_trip_per_warp_median']:7.1f}  earliest {v['earliest_finish_fraction_median']:.2f}"
              f"  spearman {v['spearman_warp_vs_finish_median']:+.2f}  {v['finish_fraction_per_warp_median']}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--record", required=True)
    ap.add_argument("--dest", default=str(MICRO_RECORDS / "sched_pick.json"))
    a = ap.parse_args()
    record(Path(a.record), Path(a.dest))
