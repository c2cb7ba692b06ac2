"""How fast one SM's stores go into the L2 when few SMs store, against the chip-wide rate all 132 reach.

    python3 calibrate/l2_write_sms.py --out DIR      # on the GPU machine (nvcc, cupy)
    python3 calibrate/l2_write_sms.py --record DIR   # here: -> traces/hw/h200/micro/l2_write_sms.json

The engine charges a store the SM's share of the chip's L2 write rate (micro/l2_write.json, every SM
storing at once). An SGEMM's CTAs store C at their end, a few SMs at a time. calibrate/l2_write.cu's
store_full (float4: whole sectors) and store_strided (4 B per 32-B sector) run with k CTAs of 1,024
threads for k = 1 to 132 (one an SM: the block scheduler spreads a launch's first CTAs over the SMs; not
checked here, but a CTA's rate is flat from 1 to 16 CTAs), over 8 and 16 MB L2-resident buffers; each launch timed as the
records time theirs (gpusim.hw.gpu.time_launches); rates marginal between the two sizes, so that a
launch's fixed costs cancel. Per row: sectors per second for the whole chip, and per SM.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from micro_cli import BUILD_FLAGS, gpu_provenance, out_or_record, write_record  # noqa: E402  (beside this script)

SMS = (1, 2, 4, 8, 16, 33, 66, 132)
BLOCK = 1024
MB = 1 << 20
SIZES_MB = (8, 16)


def run_on_gpu(out: Path):
    import subprocess
    import numpy as np
    from gpusim.hw.gpu import cupy, time_launches
    out.mkdir(parents=True, exist_ok=True)
    cubin = out / "l2_write_sms.cubin"
    subprocess.run(["nvcc", *BUILD_FLAGS, "-cubin", "-o", str(cubin), str(HERE / "l2_write.cu")], check=True)
    cp = cupy()
    mod = cp.RawModule(path=str(cubin))
    full, strided = mod.get_function("store_full"), mod.get_function("store_strided")
    buf = cp.zeros(16 * MB // 4, dtype=cp.float32)
    rows = []
    for k in SMS:
        for mb in SIZES_MB:
            n4, n8 = mb * MB // 16, mb * MB // 32
            for name, launch, sectors in (
                    ("store_full", lambda n4=n4, k=k: full((k,), (BLOCK,), (buf, np.int32(n4))), mb * MB // 32),
                    ("store_strided", lambda n8=n8, k=k: strided((k,), (BLOCK,), (buf, np.int32(n8), np.int32(8))),
                     n8)):
                t = time_launches(cp, launch, target_s=0.3, max_n=2000)
                rows.append({"kernel": name, "ctas": k, "buffer_mb": mb, "sectors": sectors,
                             "time_us_median": 1e3 * t["time_ms_median"], "launches": t["timing"]["launches"],
                             "method": t["timing"]["method"]})
                print(rows[-1]["kernel"], k, mb, rows[-1]["time_us_median"], flush=True)
    cubin.unlink()
    (out / "l2ws_rows.json").write_text(json.dumps(rows, indent=1))
    (out / "l2ws_prov.json").write_text(json.dumps(gpu_provenance("l2_write_sms.py")))


def rates(rows: list) -> dict:
    """{kernel: {k: (chip-wide G sectors/s, per SM G sectors/s)}}, marginal between the buffer sizes."""
    out = {}
    for name in ("store_full", "store_strided"):
        out[name] = {}
        for k in SMS:
            r = sorted((x for x in rows if x["kernel"] == name and x["ctas"] == k), key=lambda x: x["buffer_mb"])
            if len(r) < 2:
                continue
            g = (r[-1]["sectors"] - r[0]["sectors"]) / ((r[-1]["time_us_median"] - r[0]["time_us_median"]) * 1e-6) / 1e9
            out[name][str(k)] = {"chip_gsectors_per_s": round(g, 3), "per_sm_gsectors_per_s": round(g / k, 4)}
    return out


def record(dir_: Path, dest: Path):
    prov = json.loads((dir_ / "l2ws_prov.json").read_text())
    rows = json.loads((dir_ / "l2ws_rows.json").read_text())
    r = rates(rows)
    write_record(
        dest, prov, "l2_write_sms",
        what="L2 write rates when only k SMs store (one CTA of 1,024 threads each): whole sectors (float4) and "
             "4 B per sector, chip-wide and per SM",
        how="calibrate/l2_write.cu's store_full and store_strided (stride 8) with k CTAs, k = 1..132, over 8 and 16 MB "
            "L2-resident buffers; gpusim.hw.gpu.time_launches (queued CUDA events); marginal rates between the sizes "
            "(calibrate/l2_write_sms.py)",
        source="calibrate/l2_write.cu:store_full,store_strided",
        unit="G sector writes per second (chip-wide and per SM)",
        value={name: {k: v["per_sm_gsectors_per_s"] for k, v in by.items()} for name, by in r.items()},
        details={"rates": r, "rows": rows},
    )


if __name__ == "__main__":
    out_or_record(run_on_gpu, record, "l2_write_sms.json")
