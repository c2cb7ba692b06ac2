"""Which warps of a CTA wait at regtile1d's barriers, and how long?

    python3 calibrate/barrier_wait.py --out DIR      # on the GPU machine (nvcc, cuobjdump, numpy)
    python3 calibrate/barrier_wait.py --record DIR   # here: -> traces/hw/h200/micro/barrier_wait.json

calibrate/barrier_wait.cu is regtile1d at its defaults, 4096^3, with lane 0 of each warp writing
clock64 four times in each of slabs 16-31: t0 after its stores to shared memory (its global loads are
back), t1 after the first barrier, t2 after its dot loop, t3 after the second barrier. Per warp of a
CTA (0-15: the warp's age within it) this gives the wait at each barrier (t1 - t0, t3 - t2) and the
order in which the CTA's warps reach it (rank of t0 / t2 among the 16, 0 = first), and how spread out
the arrivals are; and each warp's global-load time per slab (load_latency). tests/timing/test_barrier_wait.py and `python bench/bench_micro.py --only barrier` put
the engine's order beside it (the H200's younger warps arrive first: the scheduler's age preference).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from micro_cli import build_and_run, provenance, gpu_provenance, out_or_record  # noqa: E402  (beside this script)

N = 4096
WARPS_PER_CTA = 16


def arrival_ranks(at: np.ndarray) -> np.ndarray:
    """at: [CTAs, warps, barriers] arrival cycles. The mean rank of each warp of a CTA among its CTA's warps
    in reaching a barrier (0 = first), over CTAs and barriers."""
    return at.argsort(axis=1).argsort(axis=1).mean(axis=(0, 2))


def per_warp(stamps: np.ndarray) -> dict:
    """stamps: [CTAs, 16 warps, slabs, 4]. Median wait at each barrier and mean arrival rank, by warp of
    the CTA, and the CTA's spread of arrivals (last - first) at each barrier."""
    t = stamps.astype(np.float64)
    wait1, wait2 = t[..., 1] - t[..., 0], t[..., 3] - t[..., 2]
    spread1 = t[..., 0].max(axis=1) - t[..., 0].min(axis=1)
    spread2 = t[..., 2].max(axis=1) - t[..., 2].min(axis=1)
    r = lambda a: [round(float(x), 2) for x in a]
    return {"wait1_median_cycles": r(np.median(wait1, axis=(0, 2))),
            "wait2_median_cycles": r(np.median(wait2, axis=(0, 2))),
            "wait1_mean_cycles": r(wait1.mean(axis=(0, 2))), "wait2_mean_cycles": r(wait2.mean(axis=(0, 2))),
            "arrival1_mean_rank": r(arrival_ranks(t[..., 0])), "arrival2_mean_rank": r(arrival_ranks(t[..., 2])),
            "spread1_median_cycles": float(np.median(spread1)), "spread2_median_cycles": float(np.median(spread2)),
            "slab_median_cycles": float(np.median(np.diff(t[:, 0, :, 0], axis=1))),
            **load_latency(t)}


HIST_BIN = 50           # cycles per bin of the load-latency histogram


def load_latency(t: np.ndarray) -> dict:
    """Each warp's global-load time per slab, t0 of slab s+1 - t3 of slab s (from the second barrier's
    release, after a shared load, to its shared stores: the slab's LDGs, their data, the STS issue): its
    quantiles, a histogram (HIST_BIN-cycle bins), the median spread over a CTA's warps in one slab, and the
    share of its variance that lies within a (CTA, slab) (1: the warps of a CTA differ as much as any;
    0: they wait alike)."""
    return latency_summary(t[:, :, 1:, 0] - t[:, :, :-1, 3])      # [CTAs, warps, slabs - 1]


def latency_summary(lat: np.ndarray) -> dict:
    """lat: [CTAs, warps, samples] load times (cycles). Quantiles, histogram, median spread over a CTA's warps
    in one sample, share of the variance within a (CTA, sample) (coalesced_wait.py uses it too)."""
    lat = np.asarray(lat, np.float64)
    within = lat.var(axis=1).mean()
    hist = np.bincount(np.clip(lat.ravel() // HIST_BIN, 0, 59).astype(np.int64), minlength=60)
    return {"load_latency_quantiles_cycles": {str(q): float(np.percentile(lat, q)) for q in (10, 25, 50, 75, 90)},
            "load_latency_hist": {"bin_cycles": HIST_BIN, "counts": hist.tolist()},
            "load_latency_cta_spread_median_cycles": float(np.median(lat.max(axis=1) - lat.min(axis=1))),
            "load_latency_within_cta_share": round(float(within / lat.var()), 4)}


def run_on_gpu(out: Path):
    out.mkdir(parents=True, exist_ok=True)
    raw = out / "barrier_raw.bin"
    exe, text = build_and_run(HERE / "barrier_wait.cu", out, "barrier", [[str(N), str(raw)]])
    print(text)
    ctas = int(text.split("ctas ")[1].split()[0])
    slabs = int(text.split("slabs ")[1].split()[0])
    buf = raw.read_bytes()
    n_w = ctas * WARPS_PER_CTA
    where = np.frombuffer(buf[:n_w * 8], np.int32).reshape(n_w, 2)
    stamps = np.frombuffer(buf[n_w * 8:], np.int64).reshape(ctas, WARPS_PER_CTA, slabs, 4)
    rel = stamps - stamps.min(axis=(1, 2, 3), keepdims=True)          # per CTA, from its first stamp
    np.savez_compressed(out / "barrier_stamps.npz", where=where, stamps=rel.astype(np.int32))
    raw.unlink()
    exe.unlink(missing_ok=True)
    (out / "barrier_prov.json").write_text(json.dumps(gpu_provenance("barrier_wait.py", stdout=text)))
    print(json.dumps(per_warp(rel), indent=1))


def record(dir_: Path, dest: Path):
    prov = json.loads((dir_ / "barrier_prov.json").read_text())
    z = np.load(dir_ / "barrier_stamps.npz")
    stamps = z["stamps"].astype(np.int64)
    ms = [float(ln.split(" ms ")[1]) for ln in prov["stdout"].splitlines() if ln.startswith("launch")]
    d = per_warp(stamps)
    rec = {
        "schema": "gpusim.hw.micro/1", "bench": "barrier_wait",
        "what": "how long each warp of a regtile1d CTA waits at its two barriers, by the warp's index in the CTA "
                "(its age), and in which order the CTA's warps reach them",
        "how": "calibrate/barrier_wait.cu: regtile1d at its defaults, 4096^3, lane 0 of every warp writes "
               "clock64 after its shared stores (t0), after the first __syncthreads (t1, read after a shared load), "
               "after its dot loop (t2) and after the second __syncthreads (t3, after a shared load), in slabs "
               "16-31; the second of two launches is kept; wait1 = t1 - t0, wait2 = t3 - t2, medians and means "
               "over every CTA and slab; load latency = t0 of the next slab - t3, its quantiles, histogram, spread "
               "within a CTA and the share of its variance within a (CTA, slab) (calibrate/barrier_wait.py)",
        "command": prov["command"] + " (on the H200), then --record DIR here",
        "source": "calibrate/barrier_wait.cu:barrier_wait",
        **provenance(prov),
        "unit": "cycles (SM clock); value: mean wait at the first barrier of warps 0-3 over that of warps 12-15",
        "value": round(float(np.mean(d["wait1_mean_cycles"][:4]) / max(np.mean(d["wait1_mean_cycles"][12:]), 1e-9)), 3),
        "details": {"kernel_ms": ms, **d},
    }
    dest.write_text(json.dumps(rec, indent=1))
    print(f"wrote {dest}")
    print(json.dumps(rec["details"], indent=1))


if __name__ == "__main__":
    out_or_record(run_on_gpu, record, "barrier_wait.json")
