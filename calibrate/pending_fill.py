"""Does an L2 hit on a line another SM's miss is still fetching wait for that fill, and for how much of it?

    python3 calibrate/pending_fill.py --out DIR      # on the GPU machine (nvcc, cuobjdump, numpy)
    python3 calibrate/pending_fill.py --record DIR   # here: -> traces/hw/h200/micro/pending_fill.json

calibrate/pending_fill.cu: one thread on each of two SMs; for each probe the leader loads a line
no one has in the L2 (ld.global.cg) at T_i and the follower loads the same line at T_i + delay_i (0-1000
ns, %globaltimer), each timing its own load with clock64. Per 50-ns bin of the actual delay (the two
start stamps' difference): the follower's median latency, beside the leader's (a DRAM miss, D) and what
the pending rule says, max(L, D - delay) with the delay in SM cycles (gpusim.timing.lower: the window
D - L and the mean wait (D + L) / 2 over it rest on this rule).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from micro_cli import build_and_run, provenance, gpu_provenance, out_or_record  # noqa: E402  (beside this script)

PROBES = 4000
BIN_NS = 50
SM_MHZ = 1980.0          # the records' clock (nvidia-smi in the provenance); cycles per ns = SM_MHZ / 1000
L2_HIT = 281.47          # micro/latency_l2_hit.json, cycles


def summary(delay_set: np.ndarray, out: np.ndarray) -> dict:
    """delay_set: the delays asked (ns); out: [1 + probes * 4] (leader SM, then per probe leader latency,
    leader start, follower latency, follower start)."""
    p = out[1:].reshape(-1, 4)
    ok = (p >= 0).all(axis=1)
    lead_lat, fol_lat = p[ok, 0].astype(np.float64), p[ok, 2].astype(np.float64)
    d = (p[ok, 3] - p[ok, 1]).astype(np.float64)        # actual delay, ns (in int64 first: the stamps are ~1e18)
    D = float(np.median(lead_lat))
    rows = []
    for lo in range(0, 1000, BIN_NS):
        m = (d >= lo) & (d < lo + BIN_NS)
        if m.sum() < 5:
            continue
        mid = lo + BIN_NS / 2
        rows.append({"delay_ns": mid, "probes": int(m.sum()), "follower_median_cycles": float(np.median(fol_lat[m])),
                     "follower_p10_p90_cycles": [float(np.percentile(fol_lat[m], 10)), float(np.percentile(fol_lat[m], 90))],
                     "rule_cycles": round(max(L2_HIT, D - mid * SM_MHZ / 1000), 1)})
    return {"probes_kept": int(ok.sum()), "leader_median_cycles": D,
            "leader_p10_p90_cycles": [float(np.percentile(lead_lat, 10)), float(np.percentile(lead_lat, 90))],
            "delay_asked_vs_actual_median_ns": float(np.median(d - delay_set[ok])), "bins": rows}


def run_on_gpu(out: Path):
    out.mkdir(parents=True, exist_ok=True)
    raw = out / "pending_raw.bin"
    exe, text = build_and_run(HERE / "pending_fill.cu", out, "pending", [[str(PROBES), str(raw)]])
    print(text)
    buf = raw.read_bytes()
    delays = np.frombuffer(buf[:PROBES * 4], np.int32)
    res = np.frombuffer(buf[PROBES * 4:], np.int64)
    np.savez_compressed(out / "pending_fill.npz", delays=delays, out=res)
    raw.unlink()
    exe.unlink(missing_ok=True)
    (out / "pending_prov.json").write_text(json.dumps(gpu_provenance("pending_fill.py", stdout=text)))
    print(json.dumps(summary(delays, res), indent=1))


def record(dir_: Path, dest: Path):
    prov = json.loads((dir_ / "pending_prov.json").read_text())
    z = np.load(dir_ / "pending_fill.npz")
    d = summary(z["delays"], z["out"])
    rec = {
        "schema": "gpusim.hw.micro/1", "bench": "pending_fill",
        "what": "the latency of an L2 hit on a line another SM's miss began fetching a given time before",
        "how": "calibrate/pending_fill.cu: one thread on each of two SMs; per probe the leader loads a line "
               "absent from the L2 (256 MB written after it) with ld.global.cg at T_i and the follower loads it "
               "delay_i later (0-1000 ns, %globaltimer, shuffled), each timing its own load with clock64 around a "
               f"dependent use; {PROBES} probes 20 us apart (PROBE_GAP_NS); per {BIN_NS}-ns bin of the actual delay the "
               "follower's median latency beside max(L, D - delay) (calibrate/pending_fill.py)",
        "command": prov["command"] + " (on the H200), then --record DIR here",
        "source": "calibrate/pending_fill.cu:pending_fill",
        **provenance(prov),
        "unit": "cycles (SM clock); value: the follower's median latency at 0-50 ns delay over the leader's",
        "value": round(d["bins"][0]["follower_median_cycles"] / d["leader_median_cycles"], 3) if d["bins"] else None,
        "details": {"stdout": prov["stdout"], **d},
    }
    dest.write_text(json.dumps(rec, indent=1))
    print(f"wrote {dest}")
    print(json.dumps(rec["details"], indent=1))


if __name__ == "__main__":
    out_or_record(run_on_gpu, record, "pending_fill.json")
