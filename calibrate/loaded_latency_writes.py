"""Loaded latency under writes: a dependent DRAM load's latency while the other warps of every SM store, or copy.

    python3 calibrate/loaded_latency_writes.py --out DIR      # on the GPU machine (nvcc, cupy)
    python3 calibrate/loaded_latency_writes.py --record DIR   # here: -> traces/hw/h200/micro/loaded_latency_writes.json

micro/loaded_latency.json found a DRAM load's latency flat up to 1.3 TB/s of DRAM reads and 5 % higher at
2.4 TB/s. softmax at 4096 reads A from DRAM while it writes B, at about 1.9 TB/s of reads, and its last
pass waits about 870 cycles a load on the H200 where the engine, with the idle latency, waits 780. Do the
writes raise the reads' latency? The same kernel (calibrate/loaded_latency.cu, one CTA per SM, lane 0 of
warp 0 chasing dependent .cg loads over lines cold in the L2) with the S other warps storing float4s
(family dram_w, each thread U stores per step) or copying them, U loads then U stores to the other half of
their slice (dram_rw), against read streams as in the first study (dram), run alongside them.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from loaded_latency import (DRAM_SLICE_LINES, DRAM_STREAM_F4, SMS, STEPS, WARM, _chains,  # noqa: E402
                            chase_row, summarize)
from micro_cli import BUILD_FLAGS, gpu_provenance, out_or_record, write_record  # noqa: E402  (beside this script)

KERNELS = {("dram", 1): "loaded_u1", ("dram", 4): "loaded_u4", ("dram_w", 1): "loaded_w_u1",
           ("dram_w", 4): "loaded_w_u4", ("dram_rw", 1): "loaded_rw_u1", ("dram_rw", 4): "loaded_rw_u4"}
POINTS = ([("dram", 0, 1)] + [("dram", s, 4) for s in (4, 8, 31)] +
          [(f, s, u) for f in ("dram_w", "dram_rw") for u in (1, 4) for s in (2, 4, 8, 16, 31)])
REPEATS = 3
CHAINS = 32                 # disjoint chains per SM slice (32 x 576 of its 32768 lines)


FIT_BELOW = 0.6      # of dram_achieved_bandwidth_gbps: the points the write-latency fit takes


def write_latency_fit(value: list, achieved_gbps: float) -> tuple[float, float]:
    """(cycles per TB/s written, cycles per TB/s read x TB/s written): least squares, no intercept, of the
    chase's rise over its idle latency at the record's store (dram_w: all writes) and copy (dram_rw: half
    reads, half writes) points whose streams carry under FIT_BELOW of the achieved DRAM bandwidth (past
    it the bandwidth's own queueing, which the engine models apart, takes over). The H200 preset's
    dram_write_latency_cycles_per_tbps and dram_mix_latency_cycles_per_tbps2."""
    import numpy as np
    idle = next(r["chase_cycles"] for r in value if r["family"] == "dram" and r["stream_warps"] == 0)
    x, y = [], []
    for r in value:
        total = r["stream_gbps"] / 1e3
        if r["family"] not in ("dram_w", "dram_rw") or r["stream_gbps"] >= FIT_BELOW * achieved_gbps:
            continue
        write, read = (total, 0.0) if r["family"] == "dram_w" else (total / 2, total / 2)
        x.append([write, read * write])
        y.append(r["chase_cycles"] - idle)
    coef = np.linalg.lstsq(np.array(x), np.array(y), rcond=None)[0]
    return float(coef[0]), float(coef[1])


def run_on_gpu(out: Path):
    import subprocess
    import numpy as np
    from gpusim.hw.gpu import cupy
    cubin = out / "loaded_latency.cubin"
    subprocess.run(["nvcc", *BUILD_FLAGS, "-cubin", "-o", str(cubin), str(HERE / "loaded_latency.cu")], check=True)
    cp = cupy()
    mod = cp.RawModule(path=str(cubin))
    kern = {k: mod.get_function(name) for k, name in KERNELS.items()}
    rng = np.random.default_rng(11)
    # chains are reused (the 512 MB read before each point takes their lines out of the L2 again)
    dram_buf, starts = _chains(cp, np, rng, DRAM_SLICE_LINES, WARM + STEPS, CHAINS)
    stream = cp.ones(SMS * DRAM_STREAM_F4 * 4, cp.float32)
    flush = cp.ones(512 * 2**20 // 4, cp.float32)
    res = cp.zeros(SMS * 5, cp.uint64)
    sink = cp.zeros(1, cp.float32)
    rows = []
    k = 0
    for rep in range(REPEATS):
        for family, s, u in POINTS:
            float(flush.sum())                       # the last point's lines (and dirty ones) out of the L2
            cp.cuda.Device().synchronize()
            res.fill(0)
            kern[(family, u)]((SMS,), (32 * (s + 1),), (starts[k % CHAINS], np.int32(WARM), np.int32(STEPS), stream,
                                                        np.int64(DRAM_STREAM_F4), res, sink))
            k += 1
            cp.cuda.Device().synchronize()
            row = chase_row(res.get(), family, s, u, rep)
            rows.append(row)
            print(row, flush=True)
    cubin.unlink()
    (out / "loaded_w_rows.json").write_text(json.dumps(rows, indent=1))
    (out / "loaded_w_prov.json").write_text(json.dumps(gpu_provenance("loaded_latency_writes.py")))


def record(dir_: Path, dest: Path):
    prov = json.loads((dir_ / "loaded_w_prov.json").read_text())
    rows = json.loads((dir_ / "loaded_w_rows.json").read_text())
    write_record(
        dest, prov, "loaded_latency_writes",
        what="a dependent .cg DRAM load's latency while the other warps of every SM store (dram_w) or copy "
            "(dram_rw, loads then stores) float4s through the L2 to DRAM, against read streams (dram)",
        how="calibrate/loaded_latency.cu, one CTA per SM (distinct_sms_min says it held): lane 0 chases "
            f"{STEPS} timed dependent 64-bit .cg loads over lines cold in the L2 (a 512 MB read before each "
            "point), S warps stream over their 8 MB slice of a 1 GB buffer with U float4 .cg accesses per "
            "thread a step (stores for dram_w; for dram_rw U loads from the slice's first half, then U "
            "stores of them to its second half); stream_gbps counts loads and stores; "
            f"{REPEATS} repeats, medians (calibrate/loaded_latency_writes.py)",
        source="calibrate/loaded_latency.cu:" + ",".join(sorted(set(KERNELS.values()))),
        unit="SM cycles per dependent load (chase_cycles) against GB/s streamed (stream_gbps); value: the "
            "table, one row per (family, stream warps, accesses in flight)",
        value=summarize(rows),
        details={"rows": rows},
    )


if __name__ == "__main__":
    out_or_record(run_on_gpu, record, "loaded_latency_writes.json")
