"""The --plot figures (PNG, matplotlib's Agg backend): a run's stall breakdown and roofline, compare's
predicted against measured times, a sweep's design space. Each file is written whole or not at all.

matplotlib is optional (`pip install 'gpusim[plot]'`): `require()` refuses, in one line, before any
simulation runs."""
from __future__ import annotations

import math

from gpusim.errors import GpusimError
from gpusim.paths import write_atomic

PLOT_EXTRA = "pip install 'gpusim[plot]'"


def require():
    """Refuse --plot, before anything runs, where matplotlib is missing."""
    try:
        import matplotlib  # noqa: F401 - only whether it imports
    except ImportError:
        raise GpusimError(f"--plot needs matplotlib: {PLOT_EXTRA}") from None


def _figure(width: float, height: float):
    """A Figure on the Agg canvas: no display and no pyplot state, so it works headless and in workers."""
    require()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _save(fig, path):
    return write_atomic(path, lambda f: fig.savefig(f, format="png", dpi=110))


def fp32_peak_gflops(gpu) -> float:
    """The preset's FP32 peak: every FP32 lane an FMA (2 FLOPs) a cycle at the maximum SM clock."""
    return 2.0 * gpu.sm_count * gpu.smsp_per_sm * gpu.fp32_lanes_per_smsp * gpu.sm_clock_max_mhz / 1e3


def roofline_point(r, pred) -> tuple[float, float, str]:
    """(FLOP per DRAM byte, predicted GFLOP/s, what the bytes are). The bytes are the cache model's
    DRAM reads (dram__bytes_read.sum); where it predicts none (A, B and C stay warm in the L2, as in the
    recorded repeated launches) A, B and C read once, the compulsory traffic."""
    from gpusim.kernel.spec import get_kernel
    spec = get_kernel(r.kernel)
    # a kernel without FLOPs (a copy, a transpose) sits at the left edge: one FLOP per 1e6 bytes
    flops = max(spec.flop_count(r.M, r.N, r.K), 1e-6 * spec.min_bytes(r.M, r.N, r.K))
    dram = pred.metrics.get("dram__bytes_read.sum") or 0
    if dram > 0:
        what = "DRAM bytes read (cache model)"
    else:
        dram = spec.min_bytes(r.M, r.N, r.K)
        what = "each array moved once (no DRAM reads predicted: warm L2)"
    return flops / dram, flops / (pred.time_ms * 1e-3) / 1e9, what


def plot_run(path, r, pred, gpu, h200=None):
    """The prediction's warp states per issued instruction beside the H200's (h200: its record of this
    launch, or None), and the kernel on the preset's roofline (FP32 peak, DRAM bandwidth)."""
    from gpusim.timing.states import STATES, stall_metric
    fig = _figure(13, 5.2)
    ax_st, ax_rf = fig.subplots(1, 2, width_ratios=[1, 1.1])
    hw = h200.metrics if h200 is not None else {}
    shown = [s for s in STATES if s != "selected" and (pred.stalls.get(stall_metric(s), 0) > 0.005
                                                      or (hw.get(stall_metric(s)) or 0) > 0.005)]
    shown.sort(key=lambda s: pred.stalls.get(stall_metric(s), 0.0))
    ys = range(len(shown))
    bar = 0.4 if hw else 0.7
    ax_st.barh([y + (bar / 2 if hw else 0) for y in ys], [pred.stalls.get(stall_metric(s), 0.0) for s in shown],
               height=bar, label="predicted", color="tab:blue")
    if hw:
        ax_st.barh([y - bar / 2 for y in ys], [hw.get(stall_metric(s)) or 0.0 for s in shown], height=bar,
                   label="H200 (ncu)", color="tab:orange")
    ax_st.set_yticks(list(ys), shown)
    ax_st.set_xlabel("cycles per issued instruction")
    ax_st.set_title(f"warp states: {r.kernel} {r.M}x{r.N}x{r.K} on {gpu.name}")
    ax_st.legend(loc="lower right")

    ai, gflops, what = roofline_point(r, pred)
    peak, bw, achieved = fp32_peak_gflops(gpu), gpu.dram_bandwidth_gbps, gpu.dram_achieved_bandwidth_gbps
    ridge = peak / bw
    lo, hi = min(ai, ridge) / 16, max(ai, ridge) * 16
    xs = [lo * (hi / lo) ** (i / 200) for i in range(201)]
    ax_rf.loglog(xs, [min(peak, bw * x) for x in xs], color="black",
                 label=f"FP32 peak {peak:,.0f} GFLOP/s, DRAM {bw:,.0f} GB/s")
    ax_rf.loglog(xs, [min(peak, achieved * x) for x in xs], color="gray", linestyle="--",
                 label=f"DRAM achieved {achieved:,.0f} GB/s")
    ax_rf.scatter([ai], [gflops], color="tab:blue", zorder=3, label=f"predicted {gflops:,.0f} GFLOP/s")
    if h200 is not None and h200.get("time_ms_median"):
        measured = gflops * pred.time_ms / h200["time_ms_median"]
        ax_rf.scatter([ai], [measured], color="tab:orange", marker="s", zorder=3,
                      label=f"H200 measured {measured:,.0f} GFLOP/s")
    ax_rf.set_xlabel(f"FLOP per byte ({what})")
    ax_rf.set_ylabel("GFLOP/s")
    ax_rf.set_title(f"roofline ({gpu.name} preset)")
    ax_rf.legend(loc="lower right", fontsize="small")
    ax_rf.grid(True, which="both", alpha=0.3)
    return _save(fig, path)


def _log_diagonal(ax, lo, hi, band: bool):
    """Log-log axes over [lo, hi] with predicted = measured drawn (band: and +-10 % dotted), measured on x."""
    ax.plot([lo, hi], [lo, hi], color="black", linewidth=0.8, label="predicted = measured")
    if band:
        for f in (0.9, 1.1):
            ax.plot([lo, hi], [lo * f, hi * f], color="gray", linewidth=0.6, linestyle=":")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel("measured on the H200 (ms, CUDA-event median)")
    ax.grid(True, which="both", alpha=0.3)


def plot_compare(path, rows):
    """Predicted against measured time, log-log: one marker per kernel, each point labelled with its size."""
    points = [r for r in rows if r["metric"] == "time_ms" and r["simulated"] and r["recorded"]]
    if not points:
        raise GpusimError("--plot: no predicted times to draw (compare ran with --no-time?)")
    fig = _figure(7.5, 6.5)
    ax = fig.subplots()
    markers = "osD^v<>pP*hX"
    kernels = list(dict.fromkeys(r["kernel"] for r in points))
    for i, k in enumerate(kernels):
        mine = [r for r in points if r["kernel"] == k]
        ax.scatter([r["recorded"] for r in mine], [r["simulated"] for r in mine], marker=markers[i % len(markers)],
                   label=k, zorder=3)
        for r in mine:
            ax.annotate(str(r["size"]), (r["recorded"], r["simulated"]), textcoords="offset points", xytext=(4, 4),
                        fontsize="x-small")
    lo = min(min(r["recorded"], r["simulated"]) for r in points) / 1.5
    hi = max(max(r["recorded"], r["simulated"]) for r in points) * 1.5
    _log_diagonal(ax, lo, hi, band=True)
    ax.set_ylabel("predicted (ms)")
    ax.set_title("predicted against measured time (dotted: +-10 %)")
    ax.legend(fontsize="small")
    return _save(fig, path)


def _axis_value(row, axis):
    kind, name = axis
    if kind == "param":
        return row["params"][name]
    if kind == "set":
        return row["sets"][name]
    if kind == "size":
        return row["M"] if row["M"] == row["N"] == row["K"] else f"{row['M']}x{row['N']}x{row['K']}"
    return row["arch"]


def plot_sweep(path, rows):
    """The design space: for each axis that varies (a tile parameter, the size, the arch, a preset
    field), every point's predicted time against that axis's values, with the best per value joined."""
    timed = [r for r in rows if r["status"] == "ok" and r["time_ms"] is not None]
    if not timed:
        raise GpusimError("--plot: no point has a predicted time to draw")
    axes = [("param", n) for n in timed[0]["params"]] + [("size", None), ("arch", None)]
    axes += [("set", n) for n in timed[0]["sets"]]
    # a single point still gets one panel: its first axis
    varied = [a for a in axes if len({_axis_value(r, a) for r in timed}) > 1] or axes[:1]
    cols = min(3, len(varied))
    fig = _figure(4.6 * cols, 3.9 * math.ceil(len(varied) / cols))
    grid = fig.subplots(math.ceil(len(varied) / cols), cols, squeeze=False, sharey=True)
    for i, axis in enumerate(varied):
        ax = grid[i // cols][i % cols]
        # in the order the command gave them (the points' product order)
        values = list(dict.fromkeys(_axis_value(r, axis) for r in sorted(timed, key=lambda r: r["point"])))
        pos = {v: j for j, v in enumerate(values)}
        ax.scatter([pos[_axis_value(r, axis)] for r in timed], [r["time_ms"] for r in timed], alpha=0.6,
                   label="each point")
        best = [min(r["time_ms"] for r in timed if _axis_value(r, axis) == v) for v in values]
        ax.plot(range(len(values)), best, color="tab:red", marker="_", label="fastest at this value")
        ax.set_xticks(range(len(values)), [str(v) for v in values])
        ax.set_xlabel(axis[1] or axis[0])
        ax.set_ylabel("predicted time (ms)")
        ax.set_yscale("log")
        ax.grid(True, axis="y", which="both", alpha=0.3)
        if i == 0:
            ax.legend(fontsize="small")
    for j in range(len(varied), len(grid) * cols):
        grid[j // cols][j % cols].set_visible(False)
    fig.suptitle(f"design space: {timed[0]['kernel']}, {len(timed)} points")
    return _save(fig, path)


def plot_validation(path, points, source: str):
    """docs/validation.md's points (gpusim.report.docs.parse_validation's "points"): predicted against
    measured time, log-log, and each point's error against its measured time; one colour per ladder, one
    marker per set. `source` (the table's "generated on DATE from commit HASH") goes into the PNG's Source
    text chunk, so that a check can tell a figure drawn from another table (png_source)."""
    from gpusim.report.docs.validation_doc import SETS      # the sets' titles, as the tables give them
    timed = []
    for p in points:
        try:
            timed.append((p, float(p["measured"]), float(p["predicted"])))
        except (KeyError, ValueError):      # a point said not to be predicted
            continue
    if not timed:
        raise GpusimError("no predicted point in docs/validation.md to draw")
    fig = _figure(12.5, 5.6)
    ax, ax_err = fig.subplots(1, 2, width_ratios=[1, 1.15])
    colours = {"sgemm": "tab:blue", "memory": "tab:orange"}
    markers = {"ladder": "o", "variants": "s", "shapes": "D", "sweep": "^"}
    groups = list(dict.fromkeys((p["ladder"], p["set"]) for p, _, _ in timed))
    for ladder, set_ in groups:
        mine = [(m, q) for p, m, q in timed if (p["ladder"], p["set"]) == (ladder, set_)]
        style = dict(s=22, alpha=0.8, zorder=3, color=colours.get(ladder, "tab:gray"), marker=markers.get(set_, "x"))
        ax.scatter([m for m, _ in mine], [q for _, q in mine], label=f"{ladder}, {SETS.get(set_, (set_,))[0]} "
                   f"({len(mine)})", **style)
        ax_err.scatter([m for m, _ in mine], [100.0 * (q / m - 1.0) for m, q in mine], **style)
    lo = min(min(m, q) for _, m, q in timed) / 1.5
    hi = max(max(m, q) for _, m, q in timed) * 1.5
    _log_diagonal(ax, lo, hi, band=False)
    ax.set_ylabel("predicted by gpusim (ms)")
    ax.set_title(f"predicted against measured time, {len(timed)} launches")
    ax.legend(fontsize="small", loc="upper left")
    # the same points as errors: the diagonal's few per cent are invisible over five decades
    ax_err.axhspan(-10, 10, color="tab:green", alpha=0.08, label="within 10 %")
    ax_err.axhline(0, color="black", linewidth=0.8)
    ax_err.set_xscale("log")
    ax_err.set_xlim(lo, hi)
    ax_err.set_xlabel("measured on the H200 (ms)")
    ax_err.set_ylabel("error: predicted / measured - 1 (%)")
    ax_err.set_title("error per launch")
    ax_err.legend(fontsize="small", loc="upper left")
    ax_err.grid(True, which="both", alpha=0.3)
    return write_atomic(path, lambda f: fig.savefig(f, format="png", dpi=90, metadata={"Source": source}))


def png_source(path) -> str | None:
    """The Source text chunk of a PNG that plot_validation wrote, None where the file or the chunk is
    missing (read with the standard library: the check needs no matplotlib)."""
    import struct
    try:
        data = open(path, "rb").read()
    except OSError:
        return None
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    i = 8
    while i + 8 <= len(data):
        n, kind = struct.unpack(">I4s", data[i:i + 8])
        if kind == b"tEXt":
            key, _, value = data[i + 8:i + 8 + n].partition(b"\0")
            if key == b"Source":
                return value.decode("latin-1")
        if kind == b"IEND":
            break
        i += 12 + n
    return None
