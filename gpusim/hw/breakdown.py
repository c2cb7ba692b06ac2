"""Where the memory pipes' time goes in a ladder twin: ncu's throughput breakdowns.

    PYTHONPATH=. python3 -m gpusim.hw.breakdown --out "$OUT" --size 2048 [--kernels coalesced ...]

Nsight Compute's Speed Of Light and Memory Workload Analysis sections report each unit's throughput
as the largest of its sub-unit counters (l1tex__throughput = max of the tag stage's requests and
sectors, the data stage's wavefronts, the fill and miss paths, ...; the same for lts__throughput).
With `breakdown:` every sub-counter comes back, as % of its peak: which stage of L1TEX or the L2
limits the kernel, the question the ladder records (time, stall ratios) cannot answer. One record
per kernel, `breakdown_<kernel>_<size>.json`: every metric of the one profiled launch, by name.

With `--family lsu` it collects instead what the LSU pipe holds (`lsu_<kernel>_<size>.json`): shared and
global loads pending in the LSU pipe FIFO, summed over cycles (sm__inst_pending_pipe_lsu_*), their
average latency from issue to retirement (sm__average_inst_latency_pipe_lsu_*), and the MIO's
instruction and operand counters: the occupancy the engine's MIO / LG queue model must reproduce.
"""
from __future__ import annotations

import argparse
import json
import sys

from gpusim.kernel.spec import LADDER

SCHEMA = "gpusim.hw.breakdown/1"
SCHEMA_LSU = "gpusim.hw.lsu/1"
METRICS = [
    "breakdown:l1tex__throughput.avg.pct_of_peak_sustained_elapsed",
    "breakdown:lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__cycles_elapsed.avg", "smsp__inst_executed.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_lgds.sum", "l1tex__lsu_writeback_active.sum",
    "l1tex__m_xbar2l1tex_read_sectors.sum", "lts__t_sectors_srcunit_tex_op_read.sum",
]
LSU_METRICS = [
    "sm__cycles_elapsed.avg", "sm__cycles_elapsed.sum", "sm__cycles_active.sum", "smsp__inst_executed.sum",
    *(f"sm__inst_pending_pipe_lsu_{c}_cmd_read.{x}" for c in ("mem_shared", "mem_lg")
      for x in ("sum", "avg.per_cycle_active", "max")),
    *(f"sm__average_inst_latency_pipe_lsu_{c}_cmd_read.ratio" for c in ("mem_shared", "mem_lg")),
    *(f"sm__inst_executed_pipe_lsu_{c}_cmd_read.sum" for c in ("mem_shared", "mem_lg")),
    "sm__inst_executed_pipe_lsu.sum", "sm__mioc_inst_issued.sum", "sm__mio_inst_issued.sum",
    "sm__mio_pq_read_cycles_active_pipe_lsu.sum", "sm__mio_pq_write_cycles_active_pipe_lsu.sum",
    "sm__mio2rf_writeback_active.sum",
    "smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
]


def all_metrics(rep: str, ncu: str) -> tuple[str, dict]:
    """(kernel name, {metric: value}) of the report's one launch; non-numeric metrics left out."""
    from gpusim.hw import ncu as ncu_mod
    act = ncu_mod.import_ncu_report(ncu).load_report(rep).range_by_idx(0).action_by_idx(0)
    out = {}
    for name in act.metric_names():
        if name.split("__")[0] not in ("sm", "smsp", "l1tex", "lts", "dram", "gpu"):
            continue
        try:
            out[name] = act.metric_by_name(name).as_double()
        except Exception:      # noqa: BLE001 - a string or instanced metric
            continue
    return act.name(), out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--size", type=int, default=2048)
    ap.add_argument("--kernels", nargs="*", default=list(LADDER))
    ap.add_argument("--family", choices=("breakdown", "lsu"), default="breakdown",
                    help="breakdown: the throughput breakdowns; lsu: the LSU pipe's pending loads and latencies")
    a = ap.parse_args(argv)
    from gpusim.hw import ncu as ncu_mod, ncu_twin
    from gpusim.hw.devinfo import utc_now
    s = ncu_twin.start(a.out, a.family)
    if s is None:
        return 2
    out, ncu, smi, ver = s.out, s.ncu, s.smi, s.version
    lsu = a.family == "lsu"
    sections = [] if lsu else ["--section", "SpeedOfLight", "--section", "MemoryWorkloadAnalysis",
                               "--section", "MemoryWorkloadAnalysis_Tables"]
    for k in a.kernels:
        got = ncu_twin.profile(s, k, a.size, sections + ["--metrics", ",".join(LSU_METRICS if lsu else METRICS)],
                               a.family)
        if got is None and not lsu:   # a metric this ncu lacks: the sections alone still carry the breakdowns
            got = ncu_twin.profile(s, k, a.size, sections, "breakdown")
        if got is None:
            continue
        p, ptxas, _, rep, shown = got
        name, metrics = all_metrics(rep, ncu)
        rec = {
            "schema": SCHEMA_LSU if lsu else SCHEMA, "kernel": k, "size": a.size, "params": p, "ncu_kernel_name": name,
            "date": utc_now(), "device": smi, "ncu_version": ncu_mod.ncu_version(ver),
            "command": "PYTHONPATH=. python3 -m gpusim.hw.breakdown " + " ".join(sys.argv[1:]).replace(str(out), "$OUT"),
            "ncu_command": shown,
            "how": "one profiled launch after one warm-up (gpusim.hw.profile), caches flushed; every sm/smsp/"
                   "l1tex/lts/dram/gpu metric of the report",
            "ptxas": ptxas, "metrics": metrics,
        }
        (out / f"{a.family}_{k}_{a.size}.json").write_text(json.dumps(rec, indent=0, sort_keys=True))
        if lsu:
            m = metrics
            print(f"{k}: " + ", ".join(f"{c} pending/cycle {m.get(f'sm__inst_pending_pipe_lsu_mem_{c}_cmd_read.avg.per_cycle_active', float('nan')):.1f} "
                                       f"latency {m.get(f'sm__average_inst_latency_pipe_lsu_mem_{c}_cmd_read.ratio', float('nan')):.0f}"
                                       for c in ("shared", "lg")), flush=True)
            continue
        top = sorted(((v, n) for n, v in metrics.items() if n.endswith("pct_of_peak_sustained_elapsed")
                      and n.split("__")[0] in ("l1tex", "lts")), reverse=True)[:8]
        print(f"{k}: {len(metrics)} metrics; " + ", ".join(f"{n} {v:.1f}" for v, n in top), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
