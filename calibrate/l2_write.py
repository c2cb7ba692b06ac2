"""What stores cost at the L2: full-sector and partial-sector writes, and a copy, on L2-resident buffers.

    python3 calibrate/l2_write.py --out DIR      # on the GPU machine (nvcc, cupy)
    python3 calibrate/l2_write.py --record DIR   # here: -> traces/hw/h200/micro/l2_write.json

calibrate/l2_write.cu's kernels run grid-stride loops (132 x 8 CTAs of 256 threads) over buffers of
a few MB that stay in the L2 between launches; each launch is timed as the records time theirs
(gpusim.hw.gpu.time_launches: CUDA events, queued behind a spin kernel); the rates are marginal, between
the 8 and 16 MB buffers, so that a launch's fixed costs cancel. Rows: bytes or sectors per launch, the
median time, and the rate. The timing model reads: the L2 write bandwidth of whole sectors (store_full), the
time a partial-sector write takes (store_strided, 4 B per sector, one per sector or one per 128-B line), and
whether reads and writes share the L2's bandwidth (copy_full against load_full and store_full).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from micro_cli import BUILD_FLAGS, provenance, gpu_provenance, out_or_record  # noqa: E402  (beside this script)

GRID, BLOCK = 132 * 8, 256
MB = 1 << 20


def run_on_gpu(out: Path):
    import subprocess
    import numpy as np
    from gpusim.hw.gpu import cupy, time_launches
    out.mkdir(parents=True, exist_ok=True)
    cubin = out / "l2_write.cubin"
    subprocess.run(["nvcc", *BUILD_FLAGS, "-cubin", "-o", str(cubin), str(HERE / "l2_write.cu")], check=True)
    cp = cupy()
    mod = cp.RawModule(path=str(cubin))
    f = {n: mod.get_function(n) for n in ("store_full", "store_strided", "copy_full", "load_full")}
    buf_a = cp.zeros(16 * MB // 4, dtype=cp.float32)       # 16 MB: in the L2 with room to spare
    buf_b = cp.zeros(16 * MB // 4, dtype=cp.float32)
    sink = cp.zeros(1, dtype=cp.float32)
    rows = []

    def row(name, launch, nbytes=None, sectors=None, **kw):
        t = time_launches(cp, launch, target_s=0.5)
        rows.append({"kernel": name, **kw, "bytes": nbytes, "sectors": sectors,
                     "time_us_median": 1e3 * t["time_ms_median"], "launches": t["timing"]["launches"],
                     "method": t["timing"]["method"]})
        print(rows[-1], flush=True)

    for mb in (4, 8, 16):
        n4 = mb * MB // 16
        row("store_full", lambda n4=n4: f["store_full"]((GRID,), (BLOCK,), (buf_a, np.int32(n4))),
            nbytes=mb * MB, sectors=mb * MB // 32, buffer_mb=mb)
        row("load_full", lambda n4=n4: f["load_full"]((GRID,), (BLOCK,), (buf_a, sink, np.int32(n4))),
            nbytes=mb * MB, sectors=mb * MB // 32, buffer_mb=mb)
        row("copy_full", lambda n4=n4: f["copy_full"]((GRID,), (BLOCK,), (buf_a, buf_b, np.int32(n4))),
            nbytes=2 * mb * MB, sectors=2 * mb * MB // 32, buffer_mb=mb)
    for stride in (8, 32):
        for mb in (4, 8, 16):            # the region the strided floats cover
            n = mb * MB // (4 * stride)
            row("store_strided", lambda n=n, s=stride: f["store_strided"]((GRID,), (BLOCK,),
                                                                          (buf_a, np.int32(n), np.int32(s))),
                nbytes=4 * n, sectors=n, stride=stride, buffer_mb=mb)
    cubin.unlink()
    (out / "l2_write_rows.json").write_text(json.dumps(rows, indent=1))
    (out / "l2_write_prov.json").write_text(json.dumps(gpu_provenance("l2_write.py")))


def record(dir_: Path, dest: Path):
    prov = json.loads((dir_ / "l2_write_prov.json").read_text())
    rows = json.loads((dir_ / "l2_write_rows.json").read_text())
    def slope(kernel, unit, stride=None):
        """Marginal rate between the 8 and 16 MB buffers: the fixed costs of a launch (its CTAs' start, the
        tail) cancel, what is left is the L2's rate."""
        a, b = (next(r for r in rows if r["kernel"] == kernel and r.get("stride") == stride
                     and r["buffer_mb"] == mb) for mb in (8, 16))
        return (b[unit] - a[unit]) / ((b["time_us_median"] - a["time_us_median"]) * 1e3)
    rec = {
        "schema": "gpusim.hw.micro/1", "bench": "l2_write",
        "what": "global stores that stay in the L2: whole-sector and partial-sector (4 B per sector) write "
                "rates, and a copy within the L2 against reads and writes alone",
        "how": "calibrate/l2_write.cu, grid-stride loops of 132 x 8 CTAs x 256 threads over 4-16 MB, "
               "timed by gpusim.hw.gpu.time_launches (queued CUDA events); rates are marginal, between the "
               "8 and 16 MB buffers (calibrate/l2_write.py)",
        "command": prov["command"] + " (on the H200), then --record DIR here",
        "source": "calibrate/l2_write.cu",
        **provenance(prov),
        "unit": "GB/s (1e9 B/s) of whole-sector stores, marginal 8 -> 16 MB; details: the other rates and every row",
        "value": slope("store_full", "bytes"),
        "details": {
            "store_full_gbps": slope("store_full", "bytes"),
            "load_full_gbps": slope("load_full", "bytes"),
            "copy_full_gbps_read_plus_write": slope("copy_full", "bytes"),
            "store_full_gsectors_per_s": slope("store_full", "sectors"),
            # one float per 32-B sector (8 sectors of a line written per request line), one per 128-B line
            "partial_sector_gsectors_per_s": slope("store_strided", "sectors", 8),
            "partial_line_gsectors_per_s": slope("store_strided", "sectors", 32),
            "rows": rows},
    }
    dest.write_text(json.dumps(rec, indent=1))
    print(f"wrote {dest}")


if __name__ == "__main__":
    out_or_record(run_on_gpu, record, "l2_write.json")
