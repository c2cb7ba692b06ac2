"""When the warps wait: each stall reason's share of warp-cycles spent while the warp's SMSP issued
nothing, the engine (kernel_time.predict(not_issued=True)) against ncu's PC samples at 4096
(traces/hw/h200/pcsamp/: a sample taken when the sampled warp's scheduler issued nothing is a
"not issued" sample; a dispatch stall counts as a warp selected, so dispatch_stall is almost never
one). A reason whose waits fall while other warps issue is hidden latency; one whose waits fall
while the whole SMSP is stalled is what the kernel's time is made of. Both sides also give each
reason's share of all warp-cycles. A diagnosis beside bench_timing.py's stall columns, not a target.
Usage: python bench/bench_not_issued.py [--kernels a,b] [--size 4096] [--min 2.0]
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gpusim  # noqa: E402
from gpusim.kernel import LADDER  # noqa: E402
from gpusim.report.stall_sites import not_issued_split  # noqa: E402
from gpusim.timing import STATES, not_issued_metric, stall_metric  # noqa: E402
from gpusim.estimate.kernel_time import predict  # noqa: E402

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", default=",".join(LADDER))
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--min", type=float, default=2.0, help="show reasons above this share of warp-cycles (%%)")
    a = ap.parse_args()
    print(f"{'kernel':11s} {'reason':18s} {'share of warp-cycles %':>24s} {'of it, SMSP issued nothing %':>30s}")
    print(f"{'':11s} {'':18s} {'H200':>12s} {'sim':>11s} {'H200':>15s} {'sim':>14s}")
    for k in a.kernels.split(","):
        hw = not_issued_split(k, a.size)
        if hw is None:
            print(f"{k:11s} (no PC-sampling record at {a.size})")
            continue
        p = predict(gpusim.simulate(k, a.size), not_issued=True)
        lat = p.metrics["smsp__average_warp_latency_per_inst_issued.ratio"]
        sim = {s: 100.0 * p.stalls[stall_metric(s)] / lat for s in STATES}
        for s in sorted(STATES, key=lambda s: -max(hw.get(s, (0, 0))[0], sim[s])):
            h_share, h_ni = hw.get(s, (0.0, 0.0))
            if max(h_share, sim[s]) < a.min:
                continue
            s_ni = p.metrics.get(not_issued_metric(s), 0.0)
            print(f"{k:11s} {s:18s} {h_share:12.1f} {sim[s]:11.1f} {h_ni:15.0f} {s_ni:14.0f}", flush=True)
        ni_all_hw = sum(v[0] * v[1] for v in hw.values()) / 100.0
        ni_all_sim = sum(sim[s] * p.metrics.get(not_issued_metric(s), 0.0) for s in STATES) / 100.0
        print(f"{k:11s} {'(all)':18s} {100.0:12.1f} {100.0:11.1f} {ni_all_hw:15.0f} {ni_all_sim:14.0f}\n", flush=True)


if __name__ == "__main__":
    main()
