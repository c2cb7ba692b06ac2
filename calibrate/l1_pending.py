"""How fast L1TEX serves loads that hit a line whose fill (from the L2) is on its way.

    python3 calibrate/l1_pending.py --out DIR      # on the GPU machine (nvcc, cuobjdump, ncu)
    python3 calibrate/l1_pending.py --record DIR   # here: -> traces/hw/h200/micro/l1_pending.json

calibrate/l1_pending.cu: one CTA per SM of 4-32 warps; a large unused dynamic shared-memory
allocation (200 KB) leaves about 28 KB of L1, so a 16 MiB buffer read 8 times misses L1 and hits the L2.
The CTA's warps form groups of G; the warps of a group read the same lines a step (G > 1: one miss, the
others hit the pending line, as coalesced's B loads with G = 32), each group lines of its own (G = 1: every
load an L1 miss); more groups, more lines in flight. Each thread has 4 loads in flight (U = 8-32 in the
deep rows: there the warps do not wait on their own loads alone, so a rate limit of L1TEX's can show). Rows: warp-level loads per SM cycle (CUDA events, the
second of two launches, at the records' 1980 MHz) and, for some, ncu's loads in the LSU pipe, their
latency, the hit rates and the warps' wait; beside them the same with the full L1 and from DRAM (2 GiB).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from micro_cli import provenance, build_and_run, gpu_provenance, ncu_profile, out_or_record  # noqa: E402

# (G warps per line, warps per SM, MiB, passes, KB of unused shared memory, loads in flight per thread U)
TIMED = [(g, 32, 16, 8, 200, 4) for g in (1, 2, 4, 8, 16, 32)] + [(g, 16, 16, 8, 200, 4) for g in (1, 4, 16)] + \
        [(g, 32, 16, 8, 0, 4) for g in (1, 4, 32)] + [(g, 32, 2048, 1, 200, 4) for g in (1, 4, 32)]
# deeper: U = 8-32 loads in flight per thread, fills from the L2; the same with a 1 MiB buffer that stays in
# L1 (every load a hit after the first of 64 passes: L1TEX's rate for plain hits at the same depth); from DRAM
DEEP = [(g, 32, 16, 8, 200, u) for u in (8, 16, 32) for g in (1, 4, 32)] + \
       [(g, 32, 1, 64, 200, u) for u in (4, 16, 32) for g in (1, 32)] + [(g, 32, 2048, 1, 200, 16) for g in (1, 32)]
TIMED += DEEP
PROFILED = [(g, 32, 16, 8, 200, 4) for g in (1, 2, 4, 8, 32)] + [(4, 32, 2048, 1, 200, 4)] + \
           [(g, 32, 16, 8, 200, u) for u in (8, 16, 32) for g in (1, 32)] + [(32, 32, 1, 64, 200, 16),
                                                                            (32, 32, 2048, 1, 200, 16)]
CLOCK_MHZ = 1980
EXTRA = ["l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct", "lts__t_sector_op_read_hit_rate.pct",
         "gpu__time_duration.sum", "dram__bytes_read.sum", "l1tex__data_pipe_lsu_wavefronts_mem_lg.sum",
         "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "smsp__average_warp_latency_per_inst_issued.ratio"]
STATES = ("lg_throttle", "long_scoreboard", "not_selected", "wait", "drain")


def _args(row) -> list[str]:
    return [str(x) for x in row]


def label(row) -> str:
    g, w, mib, reps, kb, u = row
    return f"G {g} of {w} warps {mib} MiB x{reps} smem {kb} KB" + (f" U {u}" if u != 4 else "")


def run_on_gpu(out: Path):
    from gpusim.hw import ncu as ncu_mod
    from gpusim.hw.breakdown import LSU_METRICS
    out.mkdir(parents=True, exist_ok=True)
    exe, _ = build_and_run(HERE / "l1_pending.cu", out, "pending", [_args(r) for r in TIMED])
    ncu = ncu_mod.find_ncu()
    metrics = LSU_METRICS + EXTRA + [ncu_mod.stall_metric(s) for s in STATES]
    res = {**gpu_provenance("l1_pending.py", ncu), "profiled": {}}
    for row in PROFILED if ncu else []:
        n, res["ncu_command"] = ncu_profile(ncu, exe, _args(row), "l1_pending", metrics, out, "pending",
                                            ["G", "WARPS", "MIB", "REPS", "SMEM_KB", "U"])
        res["profiled"][label(row)] = n
        print(label(row), {k: round(v, 2) for k, v in n.items()
                           if "pending" in k or "latency" in k or "hit_rate" in k}, flush=True)
    (out / "pending_prov.json").write_text(json.dumps(res))
    exe.unlink(missing_ok=True)


def parse(text: str) -> dict:
    """{(G, warps, MiB, KB, U): (ms, warp-level loads)} from the binary's lines."""
    got = {}
    for ln in text.splitlines():
        f = ln.split()
        if len(f) >= 10 and f[0] == "pending":
            u = int(f[11]) if len(f) >= 12 and f[10] == "u" else 4
            got[(int(f[1]), int(f[2]), int(f[3]), int(f[9]), u)] = (float(f[5]), int(f[7]))
    return got


def record(dir_: Path, dest: Path):
    prov = json.loads((dir_ / "pending_prov.json").read_text())
    timed = parse((dir_ / "pending_stamps.txt").read_text())
    sms = 132
    rows = []
    for r in TIMED:
        g, w, mib, reps, kb, u = r
        ms, loads = timed[(g, w, mib, kb, u)]
        cycles = ms * 1e-3 * CLOCK_MHZ * 1e6
        row = {"label": label(r), "warps_per_line": g, "warps_per_sm": w, "buffer_mib": mib, "passes": reps,
               "unused_smem_kb": kb, "loads_in_flight_per_thread": u, "ms": ms, "warp_loads": loads,
               "loads_per_sm_cycle": round(loads / sms / cycles, 4)}
        ncu = prov["profiled"].get(label(r))
        if ncu:
            row["ncu"] = ncu
        rows.append(row)
    rec = {
        "schema": "gpusim.hw.micro/1", "bench": "l1_pending",
        "what": "warp-level global loads per SM cycle when groups of G warps of a CTA read the same lines (one "
                "miss, the others hit a line whose fill is on its way; G = 1: every load a miss), fills from the L2 "
                "(16 MiB buffer; 200 KB of unused shared memory leave a 28 KB L1), with the full L1 and from DRAM; "
                "ncu's LSU-pipe loads in flight, latency, hit rates and warp states for some",
        "how": "calibrate/l1_pending.cu: one CTA per SM, U loads in flight per thread (LDG.E; U = 4 "
               "unless the label says otherwise: l1_pending, else l1_pending_deep<U>), the "
               "second of two launches timed with CUDA events, loads per cycle at 1980 MHz; under ncu (one launch "
               "after an unprofiled one) for the profiled rows (calibrate/l1_pending.py)",
        "command": prov["command"] + " (on the H200), then --record DIR here",
        "ncu_command": prov.get("ncu_command", ""),
        "source": "calibrate/l1_pending.cu:l1_pending",
        **provenance(prov),
        "unit": "warp-level loads per SM cycle; value: G = 32 of 32 warps, fills from the L2",
        "value": next(x["loads_per_sm_cycle"] for x in rows if x["label"] == label((32, 32, 16, 8, 200, 4))),
        "details": {"rows": rows},
    }
    dest.write_text(json.dumps(rec, indent=1))
    (dest.parent / "l1_pending.sass").write_text((dir_ / "pending.sass").read_text())
    print(f"wrote {dest}")
    for x in rows:
        n = x.get("ncu", {})
        extra = ""
        if n:
            extra = (f"  in flight {n.get('sm__inst_pending_pipe_lsu_mem_lg_cmd_read.avg.per_cycle_active', 0):6.1f}"
                     f" latency {n.get('sm__average_inst_latency_pipe_lsu_mem_lg_cmd_read.ratio', 0):6.0f}"
                     f" L1 hit {n.get('l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct', 0):5.1f}"
                     f" L2 hit {n.get('lts__t_sector_op_read_hit_rate.pct', 0):5.1f}"
                     f" lg_throttle {n.get(ncu_stall('lg_throttle'), 0):5.2f}")
        print(f"{x['label']:40s} {x['loads_per_sm_cycle']:7.4f}{extra}")


def ncu_stall(reason: str) -> str:
    return f"smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio"


if __name__ == "__main__":
    out_or_record(run_on_gpu, record, "l1_pending.json")
