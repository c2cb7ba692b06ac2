"""How fast L1TEX serves global loads when the SMSPs can issue them faster than it takes them: hits, misses
to the L2 and hits on a line whose fill is on its way (coalesced's B loads), at about two instructions a load.

    python3 calibrate/l1_dense.py --out DIR      # on the GPU machine (nvcc, cuobjdump, ncu)
    python3 calibrate/l1_dense.py --record DIR   # here: -> traces/hw/h200/micro/l1_dense.json

calibrate/l1_dense.cu: CTAs of 32 warps, 1 or 2 per SM, each reading a region of its own with U
loads a step at immediate offsets; groups of G warps read the same lines (G = 32: one miss and 31 hits a
line; G = 1: every warp lines of its own). Regions of 8 KB stay in L1 (every load a hit after the first of
many passes); regions past the L1 that unused shared memory leaves (about 28 KB) miss L1 on every pass and
hit the L2; 16 MB regions come from DRAM. Rows: warp-level loads per SM cycle (CUDA events, the second of
two launches, at the records' 1980 MHz) and ncu's L1TEX throughput, loads in flight, latency and warp states.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from micro_cli import provenance, profile_lsu_rows, parse_stamps, out_or_record  # noqa: E402

# (G, U, warps per CTA, CTAs per SM, KB per CTA, passes, KB of unused shared memory per CTA)
# (G = 1 needs 32 x U lines a step: its L1 rows take 128 / 64 KB regions, still inside the L1 of about 240 KB)
ROWS = [(32, u, 32, c, 8, 512, 0) for u in (8, 16) for c in (1, 2)] + \
       [(1, u, 32, c, 128 // c, 64, 0) for u in (8, 16) for c in (1, 2)] + \
       [(g, u, 32, 1, 128, 16, 200) for g in (32, 1) for u in (8, 16)] + \
       [(g, u, 32, 2, 96, 16, 100) for g in (32, 1) for u in (8, 16)] + \
       [(32, 16, 32, 1, 16384, 1, 200), (32, 16, 32, 2, 8192, 1, 100)] + \
       [(g, 16, 32, c, kb, 16, smem) for g in (2, 4, 8, 16) for c, kb, smem in ((1, 128, 200), (2, 96, 100))] + \
       [(g, 16, 32, 2, 8192, 1, 100) for g in (4, 16)]
# (G = 2-16, U = 16: hits per miss between the two ends, from the L2 and from DRAM)
CLOCK_MHZ = 1980
EXTRA = ["l1tex__lsuin_requests.avg.pct_of_peak_sustained_elapsed",
         "l1tex__data_pipe_lsu_wavefronts.avg.pct_of_peak_sustained_elapsed",
         "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum",
         "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum",
         "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__m_xbar2l1tex_read_sectors.sum",
         "l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct", "lts__t_sector_op_read_hit_rate.pct",
         "smsp__issue_active.avg.pct_of_peak_sustained_active", "gpu__time_duration.sum", "dram__bytes_read.sum",
         "smsp__average_warp_latency_per_inst_issued.ratio",
         "l1tex__lsu_writeback_active.avg.pct_of_peak_sustained_elapsed",
         "l1tex__data_bank_reads.avg.pct_of_peak_sustained_elapsed",
         "l1tex__data_bank_writes.avg.pct_of_peak_sustained_elapsed",
         "l1tex__m_l1tex2xbar_req_cycles_active.avg.pct_of_peak_sustained_elapsed",
         "l1tex__m_xbar2l1tex_read_sectors.avg.pct_of_peak_sustained_elapsed"]
STATES = ("lg_throttle", "long_scoreboard", "not_selected", "wait", "dispatch_stall", "math_pipe_throttle",
          "no_instruction", "branch_resolving", "drain", "selected")


def label(row) -> str:
    g, u, w, c, kb, passes, smem = row
    return f"G {g} U {u}, {c} x {w} warps, {kb} KB per CTA x{passes}, smem {smem} KB"


def run_on_gpu(out: Path):
    profile_lsu_rows(HERE / "l1_dense.cu", out, "dense", "l1_dense.py", "l1_dense", ROWS, label,
                     ["G", "U", "WARPS", "CTAS_PER_SM", "KB_PER_CTA", "PASSES", "SMEM_KB"], EXTRA, STATES)


def record(dir_: Path, dest: Path):
    prov = json.loads((dir_ / "dense_prov.json").read_text())
    timed = parse_stamps((dir_ / "dense_stamps.txt").read_text(), "dense")
    rows = []
    for r in ROWS:
        g, u, w, c, kb, passes, smem = r
        ms, loads = timed[(g, u, w, c, kb, passes)]
        cycles = ms * 1e-3 * CLOCK_MHZ * 1e6
        row = {"label": label(r), "warps_per_line": g, "loads_per_step": u, "warps_per_cta": w, "ctas_per_sm": c,
               "kb_per_cta": kb, "passes": passes, "unused_smem_kb_per_cta": smem, "ms": ms, "warp_loads": loads,
               "loads_per_sm_cycle": round(loads / 132 / cycles, 4)}
        if prov["profiled"].get(label(r)):
            row["ncu"] = prov["profiled"][label(r)]
        rows.append(row)
    rec = {
        "schema": "gpusim.hw.micro/1", "bench": "l1_dense",
        "what": "warp-level global loads per SM cycle at about two instructions a load: groups of G warps on the "
                "same lines (G = 32: one miss and 31 hits on a line whose fill is on its way; G = 1: lines of their "
                "own), regions in L1, past L1 in the L2, or in DRAM; ncu's L1TEX throughput, LSU-pipe loads in flight "
                "and latency, hit rates and warp states",
        "how": "calibrate/l1_dense.cu: CTAs of 32 warps, 1 or 2 per SM, U loads a step at immediate offsets "
               "(LDG.E), the second of two launches timed with CUDA events, loads per cycle at 1980 MHz; each row "
               "under ncu (one launch after an unprofiled one; calibrate/l1_dense.py)",
        "command": prov["command"] + " (on the H200), then --record DIR here",
        "ncu_command": prov.get("ncu_command", ""),
        "source": "calibrate/l1_dense.cu:l1_dense",
        **provenance(prov),
        "unit": "warp-level loads per SM cycle; value: G 32, U 16, 2 CTAs per SM, fills from the L2",
        "value": next(x["loads_per_sm_cycle"] for x in rows if x["label"] == label((32, 16, 32, 2, 96, 16, 100))),
        "details": {"rows": rows},
    }
    dest.write_text(json.dumps(rec, indent=1))
    (dest.parent / "l1_dense.sass").write_text((dir_ / "dense.sass").read_text())
    print(f"wrote {dest}")
    for x in rows:
        n = x.get("ncu", {})
        print(f"{x['label']:52s} {x['loads_per_sm_cycle']:7.4f}"
              f"  lsuin {n.get('l1tex__lsuin_requests.avg.pct_of_peak_sustained_elapsed', 0):5.1f} %"
              f"  in flight {n.get('sm__inst_pending_pipe_lsu_mem_lg_cmd_read.avg.per_cycle_active', 0):6.1f}"
              f"  latency {n.get('sm__average_inst_latency_pipe_lsu_mem_lg_cmd_read.ratio', 0):5.0f}"
              f"  L1 hit {n.get('l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct', 0):5.1f}"
              f"  issue {n.get('smsp__issue_active.avg.pct_of_peak_sustained_active', 0):5.1f} %")


if __name__ == "__main__":
    out_or_record(run_on_gpu, record, "l1_dense.json")
