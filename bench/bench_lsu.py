"""Loads in flight: the engine against ncu's count of the loads pending in the H200's LSU pipe.

For every ladder kernel (traces/hw/h200/lsu/lsu_<kernel>_<size>.json, `gpusim.hw.breakdown --family lsu`):
shared (LDS) and global (LDG) loads pending per SM cycle from issue to retirement
(sm__inst_pending_pipe_lsu_mem_*_cmd_read.avg.per_cycle_active) and their average latency
(sm__average_inst_latency_pipe_lsu_mem_*_cmd_read.ratio), beside the same two figures of the engine's
prediction over the whole kernel (extrapolated from its two timed windows like the warp states,
kernel_time.predict). By
Little's law pending = rate x latency, so a kernel the engine times right can still hold too few loads
for too short a time (its warps then wait to issue rather than on the data). A diagnosis beside
bench_timing.py's stall columns; the ladder is the validation set, so nothing is fitted to it.
Usage: python bench/bench_lsu.py [--size 4096] [--kernels a,b]
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))     # this checkout's gpusim

import gpusim  # noqa: E402
from gpusim.kernel import LADDER  # noqa: E402
from gpusim.report.render import lsu_record  # noqa: E402
from gpusim.timing import LSU_PENDING as PEND, LSU_LATENCY as LAT  # noqa: E402
from gpusim.estimate.kernel_time import predict  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--kernels", default=",".join(LADDER))
    a = ap.parse_args()
    print(f"{'':11s} {'LDS pending / cycle':>22s} {'LDS latency':>16s}   {'LDG pending / cycle':>22s} {'LDG latency':>16s}")
    print(f"{'kernel':11s} {'H200':>11s} {'sim':>10s} {'H200':>8s} {'sim':>7s}   {'H200':>11s} {'sim':>10s} "
          f"{'H200':>8s} {'sim':>7s}")
    for k in a.kernels.split(","):
        r = gpusim.simulate(k, a.size, keep_trace=True)
        hw = lsu_record(r)
        if not hw:
            print(f"{k:11s} (no record traces/hw/h200/lsu/lsu_{k}_{a.size}.json)")
            continue
        sim = predict(r).metrics
        cols = []
        for c in ("shared", "lg"):
            cols.append(f"{hw.get(PEND.format(c), 0):11.1f} {sim[PEND.format(c)]:10.1f} "
                        f"{hw.get(LAT.format(c), 0):8.0f} {sim[LAT.format(c)]:7.0f}")
        print(f"{k:11s} " + "   ".join(cols), flush=True)


if __name__ == "__main__":
    main()
