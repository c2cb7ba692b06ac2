"""How far apart the warps that share lines run: l1_dense's loop with every warp's step starts stamped.

    python3 calibrate/l1_phase.py --out DIR      # on the GPU machine (nvcc, cuobjdump)
    python3 calibrate/l1_phase.py --record DIR   # here: -> traces/hw/h200/micro/l1_phase.json

calibrate/l1_phase.cu: CTAs of 32 warps, 16 loads a step at immediate offsets, groups of G warps on the
same lines (as micro/l1_dense.json); lane 0 of each warp of CTA 0 stamps clock64 at the start of every step of one
pass. Rows: the launch's loads per SM cycle (the stamps cost a predicated clock read and store a step) and the
stamps (cycles from CTA 0's first; at most MAX_STEPS steps a warp kept).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from micro_cli import provenance, build_and_run, gpu_provenance, out_or_record  # noqa: E402

CLOCK_MHZ = 1980
MAX_STEPS = 256
# (G, warps per CTA, CTAs per SM, KB per CTA, passes, KB of unused shared memory per CTA, stamped pass)
ROWS = [(32, 32, 1, 16, 256, 0, 128),       # every load an L1 hit
        (32, 32, 1, 128, 16, 200, 8), (8, 32, 1, 128, 16, 200, 8),        # from the L2
        (32, 32, 2, 96, 16, 100, 8), (8, 32, 2, 96, 16, 100, 8),
        (32, 32, 1, 2048, 1, 200, 0)]       # from DRAM


def label(row) -> str:
    g, w, c, kb, passes, smem, sp = row
    where = "L1" if kb <= 16 else ("DRAM" if passes == 1 else "L2")
    return f"G {g}, {c} x {w} warps, {kb} KB per CTA x{passes} ({where}), smem {smem} KB, pass {sp} stamped"


def run_on_gpu(out: Path):
    out.mkdir(parents=True, exist_ok=True)
    exe, _ = build_and_run(HERE / "l1_phase.cu", out, "phase", [[str(x) for x in r] for r in ROWS])
    (out / "phase_prov.json").write_text(json.dumps(gpu_provenance("l1_phase.py")))
    exe.unlink(missing_ok=True)


def parse(text: str) -> list[dict]:
    """The binary's runs in order: {key, ms, loads, stamps (warps x steps)}."""
    runs, cur, need = [], None, 0
    for ln in text.splitlines():
        f = ln.split()
        if f and f[0] == "phase":
            cur = {"key": tuple(int(x) for x in f[1:7]), "ms": float(f[8]), "loads": int(f[10]), "stamps": []}
            runs.append(cur)
        elif f and f[0] == "stamps":
            need = int(f[1])
        elif cur is not None and need > 0:
            cur["stamps"].append([int(x) for x in f])
            need -= 1
    return runs


def step_spreads(starts: list) -> list:
    """Sorted over steps: the spread (last - first) of the warps' starts of each step."""
    return sorted(max(col) - min(col) for col in zip(*starts))


def record(dir_: Path, dest: Path):
    prov = json.loads((dir_ / "phase_prov.json").read_text())
    runs = parse((dir_ / "phase_stamps.txt").read_text())
    rows = []
    for r, got in zip(ROWS, runs):
        g, w, c, kb, passes, smem, sp = r
        assert got["key"] == (g, 16, w, c, kb, passes), (got["key"], r)
        cycles = got["ms"] * 1e-3 * CLOCK_MHZ * 1e6
        rows.append({"label": label(r), "warps_per_line": g, "loads_per_step": 16, "warps_per_cta": w, "ctas_per_sm": c,
                     "kb_per_cta": kb, "passes": passes, "unused_smem_kb_per_cta": smem, "stamped_pass": sp,
                     "ms": got["ms"], "warp_loads": got["loads"],
                     "loads_per_sm_cycle": round(got["loads"] / 132 / cycles, 4),
                     "step_start_cycles": [s[:MAX_STEPS] for s in got["stamps"]]})
    rec = {
        "schema": "gpusim.hw.micro/1", "bench": "l1_phase",
        "what": "each warp's start of every step of one pass (clock64, CTA 0) in l1_dense's loop: how far apart the "
                "warps that share lines run (G = 32: all 32 on the same lines; G = 8: groups of 8), from L1, the L2 "
                "or DRAM; and the launch's loads per SM cycle",
        "how": "calibrate/l1_phase.cu: CTAs of 32 warps, 16 loads a step at immediate offsets (LDG.E), lane 0 "
               "of each warp of CTA 0 stamps clock64 at every step of the stamped pass; the second of two launches "
               "timed with CUDA events, loads per cycle at 1980 MHz; stamps in cycles from CTA 0's first",
        "command": prov["command"] + " (on the H200), then --record DIR here",
        "source": "calibrate/l1_phase.cu:l1_phase",
        **provenance(prov),
        "unit": "cycles (stamps); value: G 32 from the L2, one CTA: median over steps of the spread (last - first) of "
                "the 32 warps' starts of a step",
        "value": step_spreads(rows[1]["step_start_cycles"])[len(rows[1]["step_start_cycles"][0]) // 2],
        "details": {"rows": rows},
    }
    dest.write_text(json.dumps(rec, separators=(",", ":")))
    (dest.parent / "l1_phase.sass").write_text((dir_ / "phase.sass").read_text())
    print(f"wrote {dest}")
    for x in rows:
        spreads = step_spreads(x["step_start_cycles"])
        print(f"{x['label']:70s} {x['loads_per_sm_cycle']:7.4f}  steps {len(spreads)}  spread of a step's starts: "
              f"median {spreads[len(spreads) // 2]}, p90 {spreads[int(0.9 * (len(spreads) - 1))]}")


if __name__ == "__main__":
    out_or_record(run_on_gpu, record, "l1_phase.json")
