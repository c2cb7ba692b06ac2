"""Do the warps of a coalesced CTA (no barrier) wait on their global loads alike?

    python3 calibrate/coalesced_wait.py --out DIR      # on the GPU machine (nvcc, cuobjdump, numpy)
    python3 calibrate/coalesced_wait.py --record DIR   # here: -> traces/hw/h200/micro/coalesced_wait.json

calibrate/coalesced_wait.cu is coalesced at BLOCKSIZE 32, 4096^3, its K loop in chunks of 32, lane 0 of
every warp timing the chunk's first load of A (the warp's own line) for chunks 16-47. The record holds that load
time's quantiles and histogram, the median spread over a CTA's 32 warps in one chunk, and the share of its
variance within a (CTA, chunk): barrier_wait.json's load_latency for a kernel without barriers.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from micro_cli import build_and_run, provenance, gpu_provenance, out_or_record  # noqa: E402
from barrier_wait import latency_summary  # noqa: E402

N = 4096
WARPS_PER_CTA = 32
KEPT_CTAS = 512          # the stamps brought back (the summary is over all 16384 CTAs)


def summarize(stamps: np.ndarray) -> dict:
    """stamps: [CTAs, 32 warps, chunks, 2] (t0, t1)."""
    return latency_summary(stamps[..., 1] - stamps[..., 0])


def run_on_gpu(out: Path):
    out.mkdir(parents=True, exist_ok=True)
    raw = out / "coalesced_raw.bin"
    exe, text = build_and_run(HERE / "coalesced_wait.cu", out, "coalesced_wait", [[str(N), str(raw)]])
    print(text)
    ctas = int(text.split("ctas ")[1].split()[0])
    chunks = int(text.split("chunks ")[1].split()[0])
    buf = raw.read_bytes()
    n_w = ctas * WARPS_PER_CTA
    where = np.frombuffer(buf[:n_w * 8], np.int32).reshape(n_w, 2)
    stamps = np.frombuffer(buf[n_w * 8:], np.int64).reshape(ctas, WARPS_PER_CTA, chunks, 2)
    rel = stamps - stamps.min(axis=(1, 2, 3), keepdims=True)
    summary = summarize(rel)              # over every CTA; the stamps kept are the first KEPT_CTAS' (size)
    np.savez_compressed(out / "coalesced_stamps.npz", where=where[:KEPT_CTAS * WARPS_PER_CTA],
                        stamps=rel[:KEPT_CTAS].astype(np.int32))
    raw.unlink()
    exe.unlink(missing_ok=True)
    (out / "coalesced_prov.json").write_text(json.dumps({**gpu_provenance("coalesced_wait.py", stdout=text),
                                                         "summary": summary}))
    print(json.dumps({k: v for k, v in summary.items() if k != "load_latency_hist"}, indent=1))


def record(dir_: Path, dest: Path):
    prov = json.loads((dir_ / "coalesced_prov.json").read_text())
    ms = [float(ln.split(" ms ")[1]) for ln in prov["stdout"].splitlines() if ln.startswith("launch")]
    d = prov["summary"]
    rec = {
        "schema": "gpusim.hw.micro/1", "bench": "coalesced_wait",
        "what": "how alike the warps of a coalesced CTA (no barrier) wait on a global load: the time of each warp's "
                "first load of A in a 32-wide chunk of K (its own line), its spread within a CTA and the share of its "
                "variance within a (CTA, chunk)",
        "how": "calibrate/coalesced_wait.cu: coalesced at BLOCKSIZE 32, 4096^3, lane 0 of every warp reads "
               "clock64 before the chunk's first A load and after a shared store of its value, chunks 16-47; the second "
               "of two launches is kept; the figures are over all 16384 CTAs (computed on the GPU machine) "
               "(calibrate/coalesced_wait.py)",
        "command": prov["command"] + " (on the H200), then --record DIR here",
        "source": "calibrate/coalesced_wait.cu:coalesced_wait",
        **provenance(prov),
        "unit": "cycles (SM clock); value: share of the load time's variance within a (CTA, chunk)",
        "value": d["load_latency_within_cta_share"],
        "details": {"kernel_ms": ms, **d},
    }
    dest.write_text(json.dumps(rec, indent=1))
    (dest.parent / "coalesced_wait.sass").write_text((dir_ / "coalesced_wait.sass").read_text())
    print(f"wrote {dest}")
    print(json.dumps({k: v for k, v in rec["details"].items() if k != "load_latency_hist"}, indent=1))


if __name__ == "__main__":
    out_or_record(run_on_gpu, record, "coalesced_wait.json")
