"""Loaded latency: a dependent load's latency from the L2 and from DRAM while the chip streams at a chosen rate.

    python3 calibrate/loaded_latency.py --out DIR      # on the GPU machine (nvcc, cupy)
    python3 calibrate/loaded_latency.py --record DIR   # here: -> traces/hw/h200/micro/loaded_latency.json

The idle latencies (micro/latency_l2_hit.json, latency_dram.json) are one thread's chase on an empty chip.
Under load a request also waits in the crossbar, the L2's queues and the DRAM controllers, and the kernels
that are latency-bound at mid bandwidth (a softmax's passes, an SGEMV's rows) see that. Here one CTA sits on
each SM (calibrate/loaded_latency.cu): its lane 0 chases dependent 64-bit .cg loads while S other warps of
the CTA stream float4 .cg loads, each thread U in flight, so the chip carries 132 x S x 32 x U loads of
16 B. Per point: the chase's cycles per load (median over the 132 SMs, and their spread) and the bandwidth
the streams reached during the timed chase (their bytes over the chase's time, summed over the SMs).

Three families:
    dram    the chase over lines of a 528 MB buffer, each line visited once (cold in L2), the streams over
            a 1 GB buffer (from DRAM): DRAM latency against DRAM bandwidth
    l2      the chase cycling over 256 lines per SM (4.2 MB, warm in the L2), the streams over 16.5 MB (warm
            in the L2): L2 hit latency against L2 bandwidth
    dram_l2 the DRAM chase with the L2-resident streams: does L2 traffic alone slow a DRAM load
Every DRAM point reads a 512 MB flush buffer first so that the last point's stream is out of the L2.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from micro_cli import BUILD_FLAGS, gpu_provenance, out_or_record, write_record  # noqa: E402  (beside this script)

SMS = 132
LINE = 128
WARM, STEPS = 64, 512                      # DRAM chase: untimed steps while the streams start, timed steps
L2_LINES = 256                             # the L2 chase's lines per SM (a full pass warms them)
DRAM_SLICE_LINES = 32768                   # 4 MB of chain buffer per SM
DRAM_STREAM_F4 = 8 * 2**20 // 16           # 8 MB of stream per SM (1 GB in all)
L2_STREAM_F4 = 128 * 2**10 // 16           # 128 KB of stream per SM (16.5 MB in all)
POINTS = [(0, 1)] + [(s, u) for u in (1, 4) for s in (1, 2, 4, 8, 16, 31)] + [(31, 8)]   # (S warps, U)
REPEATS = 3


def _chains(cp, np, rng, slice_lines, seg_lines, n_seg):
    """A buffer of SMS slices of slice_lines lines; in each, n_seg disjoint random chains of seg_lines lines
    (each line's first word the address of the next, the last back to the first). Returns (buffer,
    starts[seg] as a device array of SMS addresses)."""
    words = np.zeros(SMS * slice_lines * (LINE // 8), np.uint64)
    buf = cp.asarray(words)                          # allocate first: the addresses need its base
    base = int(buf.data.ptr)
    lines = np.stack([rng.permutation(slice_lines)[:n_seg * seg_lines] + sm * slice_lines for sm in range(SMS)])
    lines = lines.reshape(SMS, n_seg, seg_lines)
    nxt = np.roll(lines, -1, axis=2)
    words[lines.ravel() * (LINE // 8)] = (base + nxt.ravel() * LINE).astype(np.uint64)
    buf.set(words)
    starts = [cp.asarray((base + lines[:, k, 0] * LINE).astype(np.uint64)) for k in range(n_seg)]
    return buf, starts


def chase_row(res, family: str, s: int, u: int, rep: int) -> dict:
    """One point's row from the kernel's out[] (5 words per CTA): the chase's cycles per load over the
    SMs (median, p10, p90) and the streams' GB/s (their bytes over the chase's time, summed over SMs)."""
    import numpy as np
    r = res.reshape(SMS, 5).astype(np.int64)
    cyc, ns, nbytes, sm = r[:, 0] / STEPS, r[:, 1], r[:, 2], r[:, 4]
    return {"family": family, "stream_warps": s, "loads_in_flight": u, "repeat": rep,
            "chase_cycles_median": float(np.median(cyc)), "chase_cycles_p10": float(np.percentile(cyc, 10)),
            "chase_cycles_p90": float(np.percentile(cyc, 90)),
            "stream_gbps": float(np.sum(nbytes / np.maximum(ns, 1))),
            "chase_us_median": float(np.median(ns)) / 1e3, "distinct_sms": int(len(set(sm.tolist())))}


def run_on_gpu(out: Path):
    import subprocess
    import numpy as np
    from gpusim.hw.gpu import cupy
    cubin = out / "loaded_latency.cubin"
    subprocess.run(["nvcc", *BUILD_FLAGS, "-cubin", "-o", str(cubin), str(HERE / "loaded_latency.cu")], check=True)
    cp = cupy()
    mod = cp.RawModule(path=str(cubin))
    kern = {u: mod.get_function(f"loaded_u{u}") for u in (1, 2, 4, 8)}
    rng = np.random.default_rng(7)
    n_dram = (len(POINTS) + 4) * REPEATS            # the dram points and the four dram_l2 ones
    dram_buf, dram_starts = _chains(cp, np, rng, DRAM_SLICE_LINES, WARM + STEPS, n_dram)
    l2_buf, l2_starts = _chains(cp, np, rng, L2_LINES, L2_LINES, 1)
    dram_stream = cp.ones(SMS * DRAM_STREAM_F4 * 4, cp.float32)
    l2_stream = cp.ones(SMS * L2_STREAM_F4 * 4, cp.float32)
    flush = cp.ones(512 * 2**20 // 4, cp.float32)
    res = cp.zeros(SMS * 5, cp.uint64)
    sink = cp.zeros(1, cp.float32)
    rows, k_dram = [], 0

    def launch(family, s, u, rep):
        nonlocal k_dram
        chase_dram = family in ("dram", "dram_l2")
        stream, slice_f4 = (dram_stream, DRAM_STREAM_F4) if family == "dram" else (l2_stream, L2_STREAM_F4)
        if chase_dram:
            starts, warm = dram_starts[k_dram], WARM
            k_dram += 1
            float(flush.sum())                       # the last point's lines out of the L2
        else:
            starts, warm = l2_starts[0], L2_LINES
        if family != "dram":                          # the L2-resident stream: touched just before
            float(l2_stream.sum())
        res.fill(0)
        kern[u]((SMS,), (32 * (s + 1),), (starts, np.int32(warm), np.int32(STEPS), stream, np.int64(slice_f4),
                                          res, sink))
        cp.cuda.Device().synchronize()
        row = chase_row(res.get(), family, s, u, rep)
        rows.append(row)
        print(row, flush=True)

    launch("l2", 0, 1, -1)                           # warm-up, not kept
    rows.clear()
    for rep in range(REPEATS):
        for family in ("l2", "dram", "dram_l2"):
            for s, u in POINTS:
                if family == "dram_l2" and (s, u) not in ((0, 1), (8, 4), (31, 4), (31, 8)):
                    continue
                launch(family, s, u, rep)
    cubin.unlink()
    (out / "loaded_rows.json").write_text(json.dumps(rows, indent=1))
    (out / "loaded_prov.json").write_text(json.dumps(gpu_provenance("loaded_latency.py")))


def summarize(rows: list) -> list:
    """Per (family, S, U): the medians over the repeats of the chase's cycles and the streams' GB/s."""
    import numpy as np
    keys = sorted({(r["family"], r["stream_warps"], r["loads_in_flight"]) for r in rows})
    out = []
    for fam, s, u in keys:
        rs = [r for r in rows if (r["family"], r["stream_warps"], r["loads_in_flight"]) == (fam, s, u)]
        out.append({"family": fam, "stream_warps": s, "loads_in_flight": u,
                    "chase_cycles": float(np.median([r["chase_cycles_median"] for r in rs])),
                    "stream_gbps": float(np.median([r["stream_gbps"] for r in rs])),
                    "distinct_sms_min": min(r["distinct_sms"] for r in rs)})
    return out


def record(dir_: Path, dest: Path):
    prov = json.loads((dir_ / "loaded_prov.json").read_text())
    rows = json.loads((dir_ / "loaded_rows.json").read_text())
    table = summarize(rows)
    write_record(
        dest, prov, "loaded_latency",
        what="a dependent .cg load's latency (L2 hit, DRAM) while the other warps of every SM stream at a "
            "chosen rate: latency against the bandwidth the chip carries",
        how="calibrate/loaded_latency.cu, one CTA per SM (distinct_sms_min says it held): lane 0 chases "
            f"{STEPS} timed dependent 64-bit .cg loads, S warps stream float4 .cg loads with U in flight per "
            "thread; families dram (cold chase lines, streams from a 1 GB buffer), l2 (warm 256-line chase "
            "per SM, streams over 16.5 MB warm in L2), dram_l2 (cold chase, L2-resident streams); "
            f"{REPEATS} repeats, medians (calibrate/loaded_latency.py)",
        source="calibrate/loaded_latency.cu:loaded_u1,loaded_u2,loaded_u4,loaded_u8",
        unit="SM cycles per dependent load (chase_cycles) against GB/s streamed (stream_gbps); value: the "
            "table, one row per (family, stream warps, loads in flight)",
        value=table,
        details={"rows": rows},
    )


if __name__ == "__main__":
    out_or_record(run_on_gpu, record, "loaded_latency.json")
