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
