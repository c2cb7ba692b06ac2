"""Simulated counters against the hardware records, metric by metric (data only, no printing).

`compare_rows` joins, for each kernel at one size, the simulator's metrics
(ncu names) with the recorded ncu metrics of traces/hw/<device>/, keeping the
names both sides have. The recorded side also offers `time_ms` (the median
CUDA-event time), which joins once the simulator reports a `time_ms`. With
variants=True it joins the held-out set instead (traces/hw/<device>/variants/:
the kernels with other tile parameters), each row's kernel being the record's
name without its size (e.g. regtile2d-BN64TM4).
"""
from __future__ import annotations

import math
from typing import Callable, NamedTuple

from gpusim.errors import RecordError
from gpusim.hw.records import device_dir, hw_record, list_hw_records, load_record
from gpusim.timing.states import top_stall

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


def _default_sim(kernel: str, size: int, params: dict | None = None) -> dict:
    from gpusim import simulate
    return simulate(kernel, M=size, N=size, K=size, params=params).metrics


def _number(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return v if math.isfinite(v) else None


def recorded_values(rec) -> dict:
    """The comparable numbers of a record: its ncu metrics plus time_ms, the stall ratios those of the
    caches the timed launches find (warm_stall_ratios) where such a record exists."""
    out = {k: v for k, v in rec.metrics.items() if _number(v) is not None}
    out["time_ms"] = rec["time_ms_median"]
    size = getattr(rec, "size", None)
    warm = warm_stall_ratios(rec["kernel"], size, rec.get("params", {}), rec.path) if size else None
    if warm:
        out = {k: v for k, v in out.items() if not stall_name(k)}
        out.update(warm)
    return out


# ncu's PC-sample states by the names of its per-issue stall ratios
_PCSAMP = "smsp__pcsamp_warps_issue_stalled_"
_PCSAMP_NAMES = {"no_instructions": "no_instruction"}


def warm_stall_ratios(kernel: str, size: int, params: dict, record_path=None, device: str = "h200") -> dict | None:
    """The warp states per issued instruction of a launch with the caches as the timed launches find them
    (warmed by the launch before), from its PC-sample record (traces/hw/<device>/pcsamp/, gpusim.hw.pcsamp
    --cache-control none): each state's samples over the selected ones. The kernel records' ncu counters
    run with the caches flushed (ncu's default), so where a launch's data fits in the L2 their loads wait
    on DRAM where the timed launches' (and the prediction's) hit the L2. None where no such record is
    (or its parameters differ, or it sampled flushed caches)."""
    import json
    from pathlib import Path
    base = Path(record_path).parent if record_path else device_dir(device)
    f = base / "pcsamp" / f"pcsamp_{kernel}_{int(size)}.json"
    if not f.exists():
        return None
    d = json.loads(f.read_text())
    if d.get("cache_control") != "none" or d.get("params", {}) != dict(params or {}):
        return None
    t = d.get("totals", {})
    sel = t.get(_PCSAMP + "selected", 0)
    if sel <= 0:
        return None
    out = {}
    for k, v in t.items():
        if k.startswith(_PCSAMP) and not k.endswith("_not_issued"):
            name = k[len(_PCSAMP):]
            out[STALL_PREFIX + _PCSAMP_NAMES.get(name, name) + STALL_SUFFIX] = v / sel
    return out


def recorded_kernels(size: int, device: str = "h200") -> list[str]:
    """Kernels with a record at M = N = K = size, ladder order, reference rows left out."""
    seen = []
    for r in list_hw_records(device):
        if r.size == size and r["kernel"] not in REFERENCE_KERNELS and r["kernel"] not in seen:
            seen.append(r["kernel"])
    return seen


def variant_records(size: int, device: str = "h200", kernels=None) -> list[tuple[str, object]]:
    """(label, record) of the held-out variants recorded at M = N = K = size, optionally only those of
    `kernels` (base names), in ladder order."""
    from gpusim.kernel.spec import LADDER
    out = []
    for f in sorted((device_dir(device) / "variants").glob(f"*_{int(size)}.json")):
        rec = load_record(f)
        if kernels and rec["kernel"] not in kernels:
            continue
        out.append((f.stem.rsplit("_", 1)[0], rec))
    order = {k: i for i, k in enumerate(LADDER)}
    return sorted(out, key=lambda lr: (order.get(lr[1]["kernel"], len(order)), lr[0]))


def compare_rows(kernels=None, size: int = 4096,
                 sim_fn: Callable[..., dict] | None = None,
                 device: str = "h200", variants: bool = False) -> list[Row]:
    """Rows (kernel, metric, simulated, recorded, diff) for the metrics both sides have.

    kernels: names, or None for every kernel recorded at this size. A kernel
    named explicitly without a record raises RecordError. sim_fn(kernel, size, params)
    returns a dict of ncu-named metrics (default: gpusim.simulate(...).metrics).
    Rows come kernel by kernel in the given order, metrics sorted by name.
    variants: the held-out variants of these kernels (all when None) instead.
    """
    sim_fn = sim_fn or _default_sim
    if variants:
        cases = [(label, rec["kernel"], rec["params"], rec) for label, rec in variant_records(size, device, kernels)]
        if not cases:
            raise RecordError(f"no variant records at size {size} on {device} (traces/hw/{device}/variants/)")
    else:
        names = list(kernels) if kernels else recorded_kernels(size, device)
        if not names:
            raise RecordError(f"no hardware records at size {size} on {device} (traces/hw/{device}/)")
        cases = [(k, k, None, hw_record(k, size, device)) for k in names]
    return _join(cases, size, sim_fn)


def _join(cases, size, sim_fn) -> list[Row]:
    rows: list[Row] = []
    for label, k, params, rec in cases:
        rec = recorded_values(rec)
        sim = (sim_fn(k, size, params) if params else sim_fn(k, size)) or {}
        for metric in sorted(set(rec) & set(sim)):
            s, r = _number(sim[metric]), _number(rec[metric])
            if s is None or r is None:
                continue
            rows.append(Row(label, metric, s, r, s - r))
    return rows


def compare_records(records, sim_fn: Callable[..., dict] | None = None) -> list[dict]:
    """compare_rows for given records (a user's own, e.g. imported from an ncu export by
    gpusim.hw.ncu_import): row dicts with their size, in the records' order. M = N = K records only.
    A row's kernel is the record's, with its parameters where they differ from the defaults."""
    from gpusim.kernel.spec import get_kernel
    from gpusim.hw.records import record_name
    sim_fn = sim_fn or _default_sim
    out = []
    for rec in records:
        if rec.size is None:
            raise RecordError(f"{rec.path or 'record'}: compare takes M = N = K launches; this one is "
                              f"{rec['M']}x{rec['N']}x{rec['K']} (simulate it with gpusim run --M --N --K)")
        defaults = dict(get_kernel(rec["kernel"]).params)
        params = rec["params"] if {**defaults, **rec["params"]} != defaults else None
        label = record_name(rec["kernel"], rec.size, rec["params"], defaults).rsplit("_", 1)[0]
        out += [dict(r._asdict(), size=rec.size) for r in _join([(label, rec["kernel"], params, rec)],
                                                                  rec.size, sim_fn)]
    return out


STALL_PREFIX = "smsp__average_warps_issue_stalled_"
STALL_SUFFIX = "_per_issue_active.ratio"
TIME_METRICS = ("time_ms", "sm__cycles_elapsed.avg", "smsp__average_warp_latency_per_inst_issued.ratio",
                "sm__warps_active.avg.pct_of_peak_sustained_active", "smsp__issue_active.avg.per_cycle_active")


def timed_sim(kernel: str, size: int | None, params: dict | None = None, shape: tuple | None = None) -> dict:
    """Counts plus the whole-kernel prediction (gpusim.estimate.kernel_time): time_ms, cycles,
    warp latency per issued instruction, every stall ratio, achieved occupancy, issue rate.
    shape: (M, N, K) of a non-square launch, in place of M = N = K = size."""
    from gpusim import simulate
    from gpusim.estimate.kernel_time import predict
    M, N, K = shape if shape is not None else (size, size, size)
    r = simulate(kernel, M=M, N=N, K=K, params=params, keep_trace=True)   # (the cache model reads the trace)
    p = predict(r)
    out = dict(r.metrics)
    out.update({k: v for k, v in p.metrics.items() if k in TIME_METRICS or k.startswith(STALL_PREFIX)})
    out["time_ms"] = p.time_ms
    return out


def stall_name(metric: str) -> str | None:
    if metric.startswith(STALL_PREFIX) and metric.endswith(STALL_SUFFIX):
        return metric[len(STALL_PREFIX):-len(STALL_SUFFIX)]
    return None


def _rank_agreement(sim: dict, rec: dict) -> tuple[bool | None, float | None]:
    """(same order?, Kendall tau) of the kernels' predicted vs recorded times; (None, None) where
    fewer than two kernels (or only ties) leave no order to compare."""
    ks = sorted(set(sim) & set(rec))
    conc = disc = 0
    for i, a in enumerate(ks):
        for b in ks[i + 1:]:
            s = (sim[a] - sim[b]) * (rec[a] - rec[b])
            conc += s > 0
            disc += s < 0
    n = conc + disc
    return (disc == 0, (conc - disc) / n) if n else (None, None)


def ladder_of(label: str) -> str:
    """The ladder a compare row's kernel (or variant label, "KERNEL-PARAMS") belongs to: "sgemm",
    "memory", or "other" for a label that names no kernel."""
    from gpusim.errors import UnknownKernel
    from gpusim.kernel.spec import get_kernel
    try:
        return get_kernel(label.split("-")[0]).ladder() or "other"
    except UnknownKernel:
        return "other"


def _error_stats(err: dict) -> dict:
    return {"points": len(err), "mape_pct": sum(abs(e) for e in err.values()) / len(err),
            "max_abs_error_pct": max(abs(e) for e in err.values()),
            "worst": "%s@%d" % max(err, key=lambda k: abs(err[k]))}


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
    out = _error_stats(err)
    out["sizes"] = {}
    ladders = {}
    for k in err:
        ladders.setdefault(ladder_of(k[0]), {})[k] = err[k]
    if len(ladders) > 1:        # one line per ladder: the SGEMM ladder's and the memory ladder's apart
        out["ladders"] = {lad: _error_stats(e) for lad, e in sorted(ladders.items())}
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


# a count the simulator does not model as ncu reports it: the shared-memory CTA limit, ncu's being for the
# carveout the driver picked (the simulator's for the largest); compare's summary leaves it out
NOT_COUNTED = ("launch__occupancy_limit_shared_mem",)

# why a count differs where it is known to (tests/test_hw_agreement.py): the summary's notes say it
_L1 = "ncu counts extra L1 data-bank traffic"
EXPLAINED = {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": _L1,
             "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": _L1,
             "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": _L1,
             "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum": _L1}


def is_count(metric: str) -> bool:
    """A compare row of the exact counts (not the time, the stalls or the predicted rates)."""
    return metric != "time_ms" and metric not in TIME_METRICS and stall_name(metric) is None \
        and metric not in NOT_COUNTED


def same_count(sim, rec) -> bool:
    """Equal, to the digits the record has: a ratio ncu printed with two decimals (a CSV export's 3.88
    waves per SM) equals a simulated 3.8788, where the full-precision value would have to match it all."""
    if math.isclose(sim, rec, rel_tol=1e-9, abs_tol=1e-9):
        return True
    if isinstance(rec, float) and not rec.is_integer():
        digits = len(repr(rec).split(".")[1]) if "e" not in repr(rec) else 17
        return digits <= 6 and abs(sim - rec) <= 0.5 * 10.0 ** -digits
    return False


def point_summary(rows: list[dict]) -> list[dict]:
    """One entry per (kernel, size) of compare rows (dicts with kernel, size, metric, simulated, recorded),
    in their order: predicted and H200 time and the error in percent (None without timing), how many
    count metrics equal ncu's and which differ (metric, H200's relative excess in percent or None), the
    top stall reason of each side (None without timing), and whether the carveout limit differs."""
    out = {}
    stalls = {}
    for r in rows:
        key = (r["kernel"], r["size"])
        p = out.setdefault(key, {"kernel": r["kernel"], "size": r["size"], "time_ms": None, "h200_ms": None,
                                 "time_error_pct": None, "counts_equal": 0, "counts": 0, "counts_differ": [],
                                 "top_stall": None, "h200_top_stall": None, "carveout_differs": False})
        sim, rec, m = r["simulated"], r["recorded"], r["metric"]
        if m == "time_ms":
            p.update(time_ms=sim, h200_ms=rec, time_error_pct=100.0 * (sim / rec - 1.0) if rec else None)
        elif stall_name(m):
            s = stalls.setdefault(key, ({}, {}))
            s[0][stall_name(m)], s[1][stall_name(m)] = sim, rec
        elif m in NOT_COUNTED:
            p["carveout_differs"] |= sim != rec
        elif is_count(m):
            p["counts"] += 1
            if same_count(sim, rec):
                p["counts_equal"] += 1
            else:
                p["counts_differ"].append((m, 100.0 * (rec / sim - 1.0) if sim else None))
    for key, (sim, rec) in stalls.items():
        out[key].update(top_stall=top_stall(sim), h200_top_stall=top_stall(rec))
    return list(out.values())
