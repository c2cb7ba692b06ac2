"""How close in time do the CTAs that share a tile reach it? (regtile1d at 4096, every CTA's slab starts)

    python3 kernels_cuda/micro/sharer_phase.py --out DIR      # on the GPU machine (nvcc, cuobjdump, numpy)
    python3 kernels_cuda/micro/sharer_phase.py --record DIR   # here: -> traces/hw/h200/micro/sharer_phase.json

kernels_cuda/micro/sharer_phase.cu is regtile1d at its defaults with thread 0 of every CTA stamping
%globaltimer (ns) at the top of each of its 512 slabs, before the slab's global loads. The CTAs of a grid
row share A's rows, those of a grid column B's columns. For each array and slab the sharers' stamps are
split into clusters where they come more than CLUSTER_GAP_NS apart (a wave's sharers against the next
wave's); within a cluster the first reader is the one that misses in the model, and each later one's
offset from it says whether it would find the fill still on its way: the share of later readers within
a window (gpusim.timing.lower.l2_pending_window_ns: 254 ns on the H200 preset) is what the cache model's
lockstep schedule puts at 1 (gpusim/timing/README.md, the pending-hit item).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
from micro_cli import build_and_run, provenance, gpu_provenance, out_or_record  # noqa: E402  (beside this script)

N = 4096
CLUSTER_GAP_NS = 20_000      # sharers further apart than this belong to different waves (a CTA runs ~500 us)
WINDOWS_NS = (128, 254, 512, 1000, 2000, 5000)


def sharer_offsets(t: np.ndarray, gx: int, array: str) -> np.ndarray:
    """t: [CTAs, slabs] stamps (ns), CTA id = by * gx + bx. Each later reader's offset (ns) from the first
    reader of its cluster, over every group of sharers (A: a grid row, B: a grid column) and slab."""
    gy = t.shape[0] // gx
    grid = t.reshape(gy, gx, -1)
    groups = grid if array == "A" else grid.transpose(1, 0, 2)     # [groups, sharers, slabs]
    s = np.sort(groups, axis=1)
    gap = np.diff(s, axis=1) > CLUSTER_GAP_NS                       # a new cluster after each such gap
    first = np.concatenate([np.ones_like(gap[:, :1]), gap], axis=1)
    idx = np.maximum.accumulate(np.where(first, np.arange(s.shape[1])[None, :, None], 0), axis=1)
    lead = np.take_along_axis(s, idx, axis=1)
    return (s - lead)[~first]


def summary(t: np.ndarray, gx: int) -> dict:
    out = {}
    for arr in "AB":
        off = sharer_offsets(t, gx, arr)
        chunk0 = sharer_offsets(t[:, ::4], gx, arr)                 # the first slab of each 128-B line of A
        out[arr] = {
            "later_readers": int(off.size),
            "share_within_ns": {str(w): round(float((off < w).mean()), 4) for w in WINDOWS_NS},
            "offset_quantiles_ns": {str(q): float(np.percentile(off, q)) for q in (10, 25, 50, 75, 90)},
            "line_first_slab_share_within_ns": {str(w): round(float((chunk0 < w).mean()), 4) for w in WINDOWS_NS},
        }
    return out


def run_on_gpu(out: Path):
    out.mkdir(parents=True, exist_ok=True)
    raw = out / "sharer_raw.bin"
    exe, text = build_and_run(HERE / "sharer_phase.cu", out, "sharer", [[str(N), str(raw)]])
    print(text)
    ctas = int(text.split("ctas ")[1].split()[0])
    slabs = int(text.split("slabs ")[1].split()[0])
    gx = int(text.split("gridx ")[1].split()[0])
    buf = raw.read_bytes()
    where = np.frombuffer(buf[:ctas * 8], np.int32).reshape(ctas, 2)[:, 0]
    stamps = np.frombuffer(buf[ctas * 8:], np.int64).reshape(ctas, slabs)
    rel = (stamps - stamps.min()).astype(np.int32)                  # ns from the launch's first stamp
    np.savez_compressed(out / "sharer_stamps.npz", smid=where.astype(np.int16), stamps=rel, gx=gx)
    raw.unlink()
    exe.unlink(missing_ok=True)
    (out / "sharer_prov.json").write_text(json.dumps(gpu_provenance("sharer_phase.py", stdout=text)))
    print(json.dumps(summary(rel.astype(np.int64), gx), indent=1))


def record(dir_: Path, dest: Path):
    prov = json.loads((dir_ / "sharer_prov.json").read_text())
    z = np.load(dir_ / "sharer_stamps.npz")
    t, gx = z["stamps"].astype(np.int64), int(z["gx"])
    ms = [float(ln.split(" ms ")[1]) for ln in prov["stdout"].splitlines() if ln.startswith("launch")]
    d = summary(t, gx)
    rec = {
        "schema": "gpusim.hw.micro/1", "bench": "sharer_phase",
        "what": "how far apart in time the CTAs that share a tile of A (a grid row) or of B (a grid column) start "
                "each slab of regtile1d at 4096: whether a sharer's L2 hit can find the line's fill still on its way",
        "how": "kernels_cuda/micro/sharer_phase.cu: regtile1d at its defaults, 4096^3, thread 0 of every CTA writes "
               "%globaltimer (ns) at the top of each of its 512 slabs, before the global loads; the second of two "
               "launches is kept. Per array and slab, the sharers' stamps are split where they come more than "
               f"{CLUSTER_GAP_NS} ns apart; each later reader's offset from its cluster's first: the share within "
               "each window and its quantiles, over every slab and over the first slab of each 128-B line of A "
               "(every 4th) (kernels_cuda/micro/sharer_phase.py)",
        "command": prov["command"] + " (on the H200), then --record DIR here",
        "source": "kernels_cuda/micro/sharer_phase.cu:sharer_phase",
        **provenance(prov),
        "unit": "share of later readers; value: A's later readers within 254 ns of their cluster's first "
                "(the H200 preset's pending window, gpusim.timing.lower.l2_pending_window_ns)",
        "value": d["A"]["share_within_ns"]["254"],
        "details": {"kernel_ms": ms, **d},
    }
    dest.write_text(json.dumps(rec, indent=1))
    print(f"wrote {dest}")
    print(json.dumps(rec["details"], indent=1))


if __name__ == "__main__":
    out_or_record(run_on_gpu, record, "sharer_phase.json")
