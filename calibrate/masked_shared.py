"""Shared-memory instructions with every lane predicated off: their rate and latency on the H200.

    python3 calibrate/masked_shared.py --out DIR      # on the GPU machine (nvcc, cuobjdump, cupy)
    python3 calibrate/masked_shared.py --record DIR   # here: -> traces/hw/h200/micro/masked_shared.json (+ .sass)

A shared-memory tree reduction (reduce_smem) runs each level's LDS and STS in every warp, predicated off in
the warps past the level's stride: at 4096 the engine, which takes such a row through the MIO queue and the
shared pipe like a one-wavefront access, shows mio_throttle at them where the H200's PC samples hardly do
(traces/hw/h200/pcsamp/pcsamp_reduce_smem_4096.json). calibrate/masked_shared.cu: one CTA per SM of W
warps, each issuing iters x 16 independent LDS (or STS) under one predicate the host sets all on or all
off (rate: warp-instructions per SM cycle, the slowest warp's clock64), and one warp's chain of dependent
LDS, each address the last one's result (latency: cycles per step, on and off). Medians over 132 CTAs and
3 launches; the SASS is kept beside the record.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from micro_cli import build_keeping_sass, gpu_provenance, out_or_record, write_record  # noqa: E402  (beside this script)

SMS = 132
WARPS = (1, 4, 8, 16, 32)
ITERS = 64
CHAIN = (64, 128)          # iterations of 16 dependent loads: the step is the difference over 16 x 64


def run_on_gpu(out: Path):
    import numpy as np
    from gpusim.hw.gpu import cupy
    cubin = build_keeping_sass(out, "masked_shared")
    cp = cupy()
    mod = cp.RawModule(path=str(cubin))
    res = cp.zeros(2 * SMS, cp.int64)
    sink = cp.zeros(1, cp.float32)

    def cycles(name, warps, flag, iters):
        got = []
        for _ in range(3):
            res.fill(0)
            mod.get_function(name)((SMS,), (32 * warps,), (np.int32(flag), np.int32(iters), res, sink))
            cp.cuda.Device().synchronize()
            got.append(float(np.median(res.get().reshape(SMS, 2)[:, 0])))
        return float(np.median(got))

    rows = []
    for name in ("rate_lds", "rate_sts"):
        for flag in (1, 0):
            for w in WARPS:
                c = cycles(name, w, flag, ITERS)
                rows.append({"kernel": name, "lanes_on": 32 * flag, "warps": w, "cycles": c,
                             "inst_per_sm_cycle": w * 16 * ITERS / c})
                print(rows[-1], flush=True)
    for flag in (1, 0):
        c1, c2 = cycles("chain_lds", 1, flag, CHAIN[0]), cycles("chain_lds", 1, flag, CHAIN[1])
        rows.append({"kernel": "chain_lds", "lanes_on": 32 * flag, "warps": 1, "cycles_64": c1, "cycles_128": c2,
                     "cycles_per_step": (c2 - c1) / (16 * (CHAIN[1] - CHAIN[0]))})
        print(rows[-1], flush=True)
    cubin.unlink()
    (out / "masked_rows.json").write_text(json.dumps(rows, indent=1))
    (out / "masked_prov.json").write_text(json.dumps(gpu_provenance("masked_shared.py")))


def record(dir_: Path, dest: Path):
    prov = json.loads((dir_ / "masked_prov.json").read_text())
    rows = json.loads((dir_ / "masked_rows.json").read_text())
    rate = {f"{k}_{'on' if on else 'off'}": round(max(r["inst_per_sm_cycle"] for r in rows
                                                       if r["kernel"] == k and r["lanes_on"] == on), 3)
            for k in ("rate_lds", "rate_sts") for on in (32, 0)}
    lat = {f"chain_lds_{'on' if r['lanes_on'] else 'off'}": round(r["cycles_per_step"], 2)
           for r in rows if r["kernel"] == "chain_lds"}
    write_record(
        dest, prov, "masked_shared",
        what="shared-memory LDS and STS with every lane predicated off against all lanes on (conflict-free): "
            "an SM's rate of them and a dependent LDS chain's cycles per step",
        how="calibrate/masked_shared.cu: one CTA per SM of 1-32 warps, each issuing 64 x 16 independent LDS "
            "(STS) under one predicate set from a kernel argument (rate: warp-instructions over the slowest "
            "warp's clock64 cycles); one warp's chain of 16 x 64 and 16 x 128 dependent LDS (latency: the "
            "difference per step); medians over 132 CTAs and 3 launches (calibrate/masked_shared.py)",
        source="calibrate/masked_shared.cu:rate_lds,rate_sts,chain_lds",
        unit="warp-instructions per SM cycle (rate, the best over warp counts); cycles per dependent step",
        value={"rate_per_sm_cycle": rate, "latency_cycles": lat},
        details={"rows": rows},
        sass=dir_ / "masked_shared.sass",
    )


if __name__ == "__main__":
    out_or_record(run_on_gpu, record, "masked_shared.json")
