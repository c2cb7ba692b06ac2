"""S2R and SHFL beside conflicted shared loads on the H200: do they take the shared (MIO) pipe's cycles?

    python3 calibrate/mio_special.py --out DIR      # on the GPU machine (nvcc, cuobjdump, cupy)
    python3 calibrate/mio_special.py --record DIR   # here: -> traces/hw/h200/micro/mio_special.json (+ .sass)

The Profiling Guide's LSU pipe "also issues special register reads (S2R), shuffles", and the H200's PC
samples of transpose_smem at 4096 find 15 % of all warp cycles at its S2R in mio_throttle, behind the
other CTAs' 32-way conflicted shared loads. calibrate/mio_special.cu: one CTA per SM of W warps, each
step of each warp 4 shared loads of 32 wavefronts, or 16 S2R, or 32 SHFL, or the loads with either. If
a mixed step costs the sum of the two alone, S2R / SHFL use the shared pipe's cycles; if the larger,
a unit of their own. Cycles of the slowest warp, medians over 132 CTAs and 3 launches; the SASS beside
the record says what ptxas emitted.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from micro_cli import chain_and_rate_rows, gpu_provenance, out_or_record, write_record  # noqa: E402  (beside this script)

SMS = 132
KERNELS = ("lds32_only", "s2r_only", "shfl_only", "lds32_s2r", "lds32_shfl")
WARPS = (4, 8, 16, 32)
N = 256
PER_STEP = {"lds32_only": 128, "s2r_only": 16, "shfl_only": 32}   # wavefronts / ops a warp's step issues


def run_on_gpu(out: Path):
    rows = chain_and_rate_rows(out, "mio_special", (), KERNELS, WARPS, N, "cycles_per_step", SMS)
    (out / "mio_rows.json").write_text(json.dumps(rows, indent=1))
    (out / "mio_prov.json").write_text(json.dumps(gpu_provenance("mio_special.py")))


def summary(rows: list) -> dict:
    """Per warp count: SM cycles per warp-step of each kernel, and each mixed kernel's cycles over the sum
    and over the larger of its two parts alone (1.0 against the sum: the parts share a pipe)."""
    out = {}
    for w in WARPS:
        c = {r["kernel"]: r["cycles"] / (w * N) for r in rows if r["warps"] == w}
        if set(KERNELS) - set(c):
            continue
        out[str(w)] = {
            "cycles_per_warp_step": {k: round(v, 2) for k, v in c.items()},
            "lds32_s2r_over_sum": round(c["lds32_s2r"] / (c["lds32_only"] + c["s2r_only"]), 3),
            "lds32_s2r_over_max": round(c["lds32_s2r"] / max(c["lds32_only"], c["s2r_only"]), 3),
            "lds32_shfl_over_sum": round(c["lds32_shfl"] / (c["lds32_only"] + c["shfl_only"]), 3),
            "lds32_shfl_over_max": round(c["lds32_shfl"] / max(c["lds32_only"], c["shfl_only"]), 3),
            "s2r_pipe_cycles": round((c["lds32_s2r"] - c["lds32_only"]) / PER_STEP["s2r_only"], 3),
            "shfl_pipe_cycles": round((c["lds32_shfl"] - c["lds32_only"]) / PER_STEP["shfl_only"], 3),
        }
    return out


def record(dir_: Path, dest: Path):
    prov = json.loads((dir_ / "mio_prov.json").read_text())
    rows = json.loads((dir_ / "mio_rows.json").read_text())
    s = summary(rows)
    top = s[str(max(int(k) for k in s))]
    write_record(
        dest, prov, "mio_special",
        what="whether S2R and SHFL take the shared pipe's cycles: an SM's cycles per warp-step of 4 conflicted "
             "shared loads (32 wavefronts each), 16 S2R, 32 SHFL, and the loads with either in one step",
        how="calibrate/mio_special.cu, one CTA per SM of 4-32 warps, n = 256 steps a warp, clock64 around the "
            "loop, the slowest warp's cycles; medians over 132 CTAs and 3 launches (calibrate/mio_special.py); "
            "x_pipe_cycles: the mixed step's cycles less the loads' alone, per S2R / SHFL",
        source="calibrate/mio_special.cu:" + ",".join(KERNELS),
        unit="SM cycles per warp-step; value: at the most warps, the mixed steps over the sum of their parts, "
             "and the shared-pipe cycles one S2R / SHFL adds",
        value={k: top[k] for k in ("lds32_s2r_over_sum", "lds32_shfl_over_sum", "s2r_pipe_cycles",
                                   "shfl_pipe_cycles")},
        details={"by_warps": s, "rows": rows},
        sass=dir_ / "mio_special.sass",
    )


if __name__ == "__main__":
    out_or_record(run_on_gpu, record, "mio_special.json")
