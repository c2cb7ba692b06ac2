"""What partial-line stores cost at the L2 when the CTA's other warps fill the same sectors at once (a naive
transpose's stores), against the same stores with nothing else in their lines (micro/l2_write.json's
partial-line rate), on L2-resident buffers.

    python3 calibrate/l2_write_fill.py --out DIR      # on the GPU machine (nvcc, cupy)
    python3 calibrate/l2_write_fill.py --record DIR   # here: -> traces/hw/h200/micro/l2_write_fill.json

calibrate/l2_write_fill.cu's store_columns over an n x n matrix (n = 1024 and 2048: 4 and 16 MB, in the
L2 launch after launch). Each launch timed as the records time theirs (gpusim.hw.gpu.time_launches:
CUDA events, queued behind a spin kernel); rates are marginal, between the two sizes, so that a launch's
fixed costs cancel: sector writes (one 4-B store each) per second, chip-wide.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from micro_cli import BUILD_FLAGS, MICRO_RECORDS, provenance, gpu_provenance, out_or_record  # noqa: E402

SIZES = (1024, 2048)
GRID, BLOCK = 132 * 8, 256


def run_on_gpu(out: Path):
    import subprocess
    from gpusim.hw.gpu import cupy, time_launches
    cubin = out / "l2_write_fill.cubin"
    subprocess.run(["nvcc", *BUILD_FLAGS, "-cubin", "-o", str(cubin), str(HERE / "l2_write_fill.cu")], check=True)
    cp = cupy()
    mod = cp.RawModule(path=str(cubin))
    cols = mod.get_function("store_columns")
    rows = []
    for n in SIZES:
        buf = cp.zeros(n * n, dtype=cp.float32)

        def launch(buf=buf, n=n):
            cols((n // 32, n // 32), (32, 8), (buf, cp.int32(n)))
        t = time_launches(cp, launch, target_s=0.5)
        assert float(buf[-1]) == 1.0
        rows.append({"kernel": "store_columns", "n": n, "stores": n * n, "time_us_median": 1e3 * t["time_ms_median"],
                     "launches": t["timing"]["launches"], "method": t["timing"]["method"]})
        print(rows[-1], flush=True)
    cubin.unlink()
    (out / "fill_rows.json").write_text(json.dumps(rows, indent=1))
    (out / "fill_prov.json").write_text(json.dumps(gpu_provenance("l2_write_fill.py")))


def marginal_gsectors(rows: list, kernel: str) -> float:
    r = sorted((x for x in rows if x["kernel"] == kernel), key=lambda x: x["n"])
    a, b = r[0], r[-1]
    return (b["stores"] - a["stores"]) / ((b["time_us_median"] - a["time_us_median"]) * 1e-6) / 1e9


def record(dir_: Path, dest: Path):
    prov = json.loads((dir_ / "fill_prov.json").read_text())
    rows = json.loads((dir_ / "fill_rows.json").read_text())
    filled = marginal_gsectors(rows, "store_columns")
    alone = json.loads((MICRO_RECORDS / "l2_write.json").read_text())["details"]["partial_line_gsectors_per_s"]
    rec = {
        "schema": "gpusim.hw.micro/1", "bench": "l2_write_fill",
        "what": "partial-line stores (4 B in one sector of a line) whose sectors the CTA's other warps fill at "
                "once, as a naive transpose stores, on an L2-resident buffer; alone_gsectors_per_s is "
                "micro/l2_write.json's partial-line rate (each such store alone in its line), for comparison",
        "how": "calibrate/l2_write_fill.cu's store_columns over n x n floats (n = 1024, 2048: 4 and 16 MB); "
               "gpusim.hw.gpu.time_launches (queued CUDA events); marginal rate between the two sizes "
               "(calibrate/l2_write_fill.py)",
        "command": prov["command"] + " (on the H200), then --record DIR here",
        "source": "calibrate/l2_write_fill.cu:store_columns",
        **provenance(prov),
        "unit": "G sector writes (4-B stores) per second, chip-wide; value: filled by the CTA's warps",
        "value": filled,
        "details": {"filled_gsectors_per_s": filled, "alone_gsectors_per_s": alone, "rows": rows},
    }
    dest.write_text(json.dumps(rec, indent=1))
    print(f"wrote {dest}")


if __name__ == "__main__":
    out_or_record(run_on_gpu, record, "l2_write_fill.json")
