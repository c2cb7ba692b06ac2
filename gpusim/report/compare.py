"""Simulated counters against the hardware records, metric by metric (data only, no printing).

`compare_rows` joins, for each kernel at one size, the simulator's metrics
(ncu names) with the recorded ncu metrics of traces/hw/<device>/, keeping the
names both sides have. The recorded side also offers `time_ms` (the median
CUDA-event time), which joins once the simulator reports a `time_ms`.
"""
from __future__ import annotations

import math
from typing import Callable, NamedTuple

from gpusim.errors import RecordError
from gpusim.report.records import hw_record, list_hw_records

REFERENCE_KERNELS = ("cublas",)      # recorded for reference, never simulated


class Row(NamedTuple):
    kernel: str
    metric: str
    simulated: float
    recorded: float
    diff: float                      # simulated - recorded

    @property
    def rel_diff(self) -> float | None:
        """diff / |recorded|; None where recorded is 0 (then diff says it all)."""
        if self.recorded == 0:
            return None if self.diff else 0.0
        return self.diff / abs(self.recorded)


def _default_sim(kernel: str, size: int) -> dict:
    from gpusim import simulate
    return simulate(kernel, M=size, N=size, K=size).metrics


def _number(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return v if math.isfinite(v) else None


def recorded_values(rec) -> dict:
    """The comparable numbers of a record: its ncu metrics plus time_ms."""
    out = {k: v for k, v in rec.metrics.items() if _number(v) is not None}
    out["time_ms"] = rec["time_ms_median"]
    return out


def recorded_kernels(size: int, device: str = "h200") -> list[str]:
    """Kernels with a record at M = N = K = size, ladder order, reference rows left out."""
    seen = []
    for r in list_hw_records(device):
        if r.size == size and r["kernel"] not in REFERENCE_KERNELS and r["kernel"] not in seen:
            seen.append(r["kernel"])
    return seen


def compare_rows(kernels=None, size: int = 4096,
                 sim_fn: Callable[[str, int], dict] | None = None,
                 device: str = "h200") -> list[Row]:
    """Rows (kernel, metric, simulated, recorded, diff) for the metrics both sides have.

    kernels: names, or None for every kernel recorded at this size. A kernel
    named explicitly without a record raises RecordError. sim_fn(kernel, size)
    returns a dict of ncu-named metrics (default: gpusim.simulate(...).metrics).
    Rows come kernel by kernel in the given order, metrics sorted by name.
    """
    sim_fn = sim_fn or _default_sim
    names = list(kernels) if kernels else recorded_kernels(size, device)
    if not names:
        raise RecordError(f"no hardware records at size {size} on {device} (traces/hw/{device}/)")
    rows: list[Row] = []
    for k in names:
        rec = recorded_values(hw_record(k, size, device))
        sim = sim_fn(k, size) or {}
        for metric in sorted(set(rec) & set(sim)):
            s, r = _number(sim[metric]), _number(rec[metric])
            if s is None or r is None:
                continue
            rows.append(Row(k, metric, s, r, s - r))
    return rows


STALL_PREFIX = "smsp__average_warps_issue_stalled_"
STALL_SUFFIX = "_per_issue_active.ratio"
TIME_METRICS = ("time_ms", "sm__cycles_elapsed.avg", "smsp__average_warp_latency_per_inst_issued.ratio",
                "sm__warps_active.avg.pct_of_peak_sustained_active", "smsp__issue_active.avg.per_cycle_active")


def timed_sim(kernel: str, size: int) -> dict:
    """Counts plus the whole-kernel prediction (gpusim.timing.kernel_time): time_ms, cycles,
    warp latency per issued instruction, every stall ratio, achieved occupancy, issue rate."""
    from gpusim import simulate
    from gpusim.timing.kernel_time import predict
    r = simulate(kernel, M=size, N=size, K=size, keep_trace=True)   # (the cache model reads the trace)
    p = predict(r)
    out = dict(r.metrics)
    out.update({k: v for k, v in p.metrics.items() if k in TIME_METRICS or k.startswith(STALL_PREFIX)})
    out["time_ms"] = p.time_ms
    return out


def stall_name(metric: str) -> str | None:
    if metric.startswith(STALL_PREFIX) and metric.endswith(STALL_SUFFIX):
        return metric[len(STALL_PREFIX):-len(STALL_SUFFIX)]
    return None


def top_stall(values: dict) -> str | None:
    """The largest stall reason other than selected, from {reason: ratio}."""
    cand = {k: v for k, v in values.items() if k != "selected"}
    return max(cand, key=cand.get) if cand else None


def _rank_agreement(sim: dict, rec: dict) -> tuple[bool, float]:
    """(same order?, Kendall tau) of the kernels' predicted vs recorded times."""
    ks = sorted(set(sim) & set(rec))
    conc = disc = 0
    for i, a in enumerate(ks):
        for b in ks[i + 1:]:
            s = (sim[a] - sim[b]) * (rec[a] - rec[b])
            conc += s > 0
            disc += s < 0
    n = conc + disc
    return disc == 0, (conc - disc) / n if n else 1.0


def timing_summary(rows: list[dict]) -> dict:
    """From compare rows (dicts with kernel, size, metric, simulated, recorded): MAPE and max
    |error| of time_ms over every point, rank agreement per size, top-stall agreement per size."""
    times, stalls = {}, {}
    for r in rows:
        key = (r["kernel"], r["size"])
        if r["metric"] == "time_ms":
            times[key] = (r["simulated"], r["recorded"])
        name = stall_name(r["metric"])
        if name:
            stalls.setdefault(key, ({}, {}))
            stalls[key][0][name] = r["simulated"]
            stalls[key][1][name] = r["recorded"]
    if not times:
        return {}
    err = {k: 100.0 * (s / h - 1.0) for k, (s, h) in times.items()}
    out = {"points": len(err), "mape_pct": sum(abs(e) for e in err.values()) / len(err),
           "max_abs_error_pct": max(abs(e) for e in err.values()),
           "worst": "%s@%d" % max(err, key=lambda k: abs(err[k])), "sizes": {}}
    for size in sorted({k[1] for k in times}):
        sim = {k: v[0] for (k, s), v in times.items() if s == size}
        rec = {k: v[1] for (k, s), v in times.items() if s == size}
        same, tau = _rank_agreement(sim, rec)
        agree = [k for (k, s), (sv, rv) in stalls.items() if s == size and top_stall(sv) == top_stall(rv)]
        n_st = sum(1 for (k, s) in stalls if s == size)
        out["sizes"][size] = {"rank_same": same, "kendall_tau": tau,
                              "top_stall_agree": len(agree), "top_stall_of": n_st,
                              "top_stall": {k: (top_stall(sv), top_stall(rv))
                                            for (k, s), (sv, rv) in stalls.items() if s == size}}
    return out
