"""How many L1 misses one SM keeps in flight: a stream of loads that all miss L1, with 4-32 warps, fills
from the L2 or DRAM, and requests of one line, one sector or two lines.

    python3 calibrate/l1_misses.py --out DIR      # on the GPU machine (nvcc, cuobjdump, ncu)
    python3 calibrate/l1_misses.py --record DIR   # here: -> traces/hw/h200/micro/l1_misses.json

calibrate/l1_misses.cu: every warp reads a region of its own, 16 loads a step at immediate offsets.
L2 rows: 128 KB per SM (256 KB with two-line requests) read 16 times, past the L1 that 200 KB of unused shared
memory leaves (about 28 KB); DRAM rows: 16 MB per SM read once. Rows: warp-level loads per SM cycle (CUDA
events, the second of two launches, at the records' 1980 MHz) and ncu's loads in flight, their latency,
L1TEX throughput and warp states (l1_dense.py's metrics).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from micro_cli import provenance, profile_lsu_rows, parse_stamps, out_or_record  # noqa: E402
from l1_dense import EXTRA, STATES, CLOCK_MHZ  # noqa: E402

MODES = {0: "a line (4 sectors)", 1: "a sector", 2: "two lines (8 sectors)"}
# (MODE, U, warps per CTA, CTAs per SM, lines per warp, passes, KB of unused shared memory per CTA)
ROWS = [(0, 16, w, 1, 1024 // w, 16, 200) for w in (4, 8, 16, 32)] + \
       [(1, 16, 32, 1, 32, 16, 200), (2, 16, 32, 1, 64, 16, 200)] + \
       [(0, 16, 16, 1, 4096, 1, 200), (0, 16, 32, 1, 4096, 1, 200), (0, 16, 32, 2, 2048, 1, 100),
        (1, 16, 32, 1, 4096, 1, 200), (2, 16, 32, 1, 4096, 1, 200)]


def label(row) -> str:
    mode, u, w, c, lines, passes, smem = row
    where = "DRAM" if passes == 1 else "L2"
    return f"{MODES[mode]} a load, U {u}, {c} x {w} warps, {lines} lines per warp x{passes} ({where}), smem {smem} KB"


def run_on_gpu(out: Path):
    profile_lsu_rows(HERE / "l1_misses.cu", out, "misses", "l1_misses.py", "l1_misses", ROWS, label,
                     ["MODE", "U", "WARPS", "CTAS_PER_SM", "LINES_PER_WARP", "PASSES", "SMEM_KB"], EXTRA, STATES)


def record(dir_: Path, dest: Path):
    prov = json.loads((dir_ / "misses_prov.json").read_text())
    timed = parse_stamps((dir_ / "misses_stamps.txt").read_text(), "misses")
    rows = []
    for r in ROWS:
        mode, u, w, c, lines, passes, smem = r
        ms, loads = timed[r[:6]]
        cycles = ms * 1e-3 * CLOCK_MHZ * 1e6
        row = {"label": label(r), "mode": mode, "request": MODES[mode], "loads_per_step": u, "warps_per_cta": w,
               "ctas_per_sm": c, "lines_per_warp": lines, "passes": passes, "from": "DRAM" if passes == 1 else "L2",
               "unused_smem_kb_per_cta": smem, "ms": ms, "warp_loads": loads,
               "loads_per_sm_cycle": round(loads / 132 / cycles, 4)}
        if prov["profiled"].get(label(r)):
            row["ncu"] = prov["profiled"][label(r)]
        rows.append(row)
    rec = {
        "schema": "gpusim.hw.micro/1", "bench": "l1_misses",
        "what": "global loads that all miss L1: loads in flight per SM (ncu's LSU-pipe count) and their latency "
                "with 4-32 warps, fills from the L2 or DRAM, requests of one line, one sector or two lines; "
                "warp-level loads per SM cycle",
        "how": "calibrate/l1_misses.cu: every warp a region of its own, 16 loads a step at immediate "
               "offsets (LDG.E), the second of two launches timed with CUDA events, loads per cycle at 1980 MHz; "
               "each row under ncu (one launch after an unprofiled one; calibrate/l1_misses.py)",
        "command": prov["command"] + " (on the H200), then --record DIR here",
        "ncu_command": prov.get("ncu_command", ""),
        "source": "calibrate/l1_misses.cu:l1_misses",
        **provenance(prov),
        "unit": "LSU-pipe global loads in flight per SM cycle; value: a line a load, 32 warps, from the L2",
        "value": next(x["ncu"]["sm__inst_pending_pipe_lsu_mem_lg_cmd_read.avg.per_cycle_active"] for x in rows
                      if x["label"] == label(ROWS[3]) and "ncu" in x),
        "details": {"rows": rows},
    }
    dest.write_text(json.dumps(rec, indent=1))
    (dest.parent / "l1_misses.sass").write_text((dir_ / "misses.sass").read_text())
    print(f"wrote {dest}")
    for x in rows:
        n = x.get("ncu", {})
        print(f"{x['label']:78s} {x['loads_per_sm_cycle']:7.4f}"
              f"  in flight {n.get('sm__inst_pending_pipe_lsu_mem_lg_cmd_read.avg.per_cycle_active', 0):6.1f}"
              f"  latency {n.get('sm__average_inst_latency_pipe_lsu_mem_lg_cmd_read.ratio', 0):5.0f}"
              f"  L1 hit {n.get('l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct', 0):5.1f}")


if __name__ == "__main__":
    out_or_record(run_on_gpu, record, "l1_misses.json")
