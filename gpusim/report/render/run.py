"""The report of `gpusim run`: the header, Nsight Compute's sections, warnings and notes."""
from __future__ import annotations

from pathlib import Path


from gpusim.memory.counters import per_base_opcode
from gpusim.report import render as R
from gpusim.report.render import SECTIONS, _fmt, _hw_col, _name, _names_note, _ratio, _table, _wide
from gpusim.report.render.views import print_check


def print_summary(r, pred=None, checked=None, sections=None):
    """The text report of `gpusim run`: a header, then the chosen sections (SECTIONS; all of them when
    None) in Nsight Compute's order, the notes, the sanitizer's findings, and the warnings last."""
    show = set(SECTIONS if sections is None else sections)
    # what the H200 measured for this very launch, where traces/hw/h200/ has it: beside each figure of
    # the same ncu name (the exact counts must agree; the cache model's rates and the predictions need not)
    rec = h200_record(r)
    ncu = rec.metrics if rec is not None else {}
    p = ", ".join(f"{k}={v}" for k, v in r.params.items())
    from gpusim.kernel.spec import get_kernel
    size = f"M={r.M} N={r.N} K={r.K}" if get_kernel(r.kernel).is_gemm else f"M={r.M} N={r.N}"
    R.console.print(f"[bold]{r.kernel}[/bold] on {r.arch}  {size}  ({p})")
    print_arch_overrides(r)
    R.console.print(f"grid {r.grid}  block {r.block}  mode: {r.mode} ({r.ctas_simulated} CTAs simulated"
                  f"{', values checked: rel. error %.1e' % r.max_rel_error if r.max_rel_error is not None else ''})"
                  f"  {r.wall_s:.2f} s")
    if pred is None:
        R.console.print("[dim]predicted time: skipped (--no-time)[/dim]")
    elif "SpeedOfLight" in show:
        _speed_of_light(pred, rec)
    if "Occupancy" in show:
        _occupancy(r, pred, ncu)
    if "MemoryWorkloadAnalysis" in show:
        _memory(r, pred, rec)
    if "InstructionStats" in show:
        _instructions(r, rec)
    if pred is not None and "WarpStateStats" in show:
        _warp_states(pred, ncu)
    if pred is not None and "SourceCounters" in show:
        _print_stall_sites(pred)
    for note in r.notes:
        R.console.print(f"[yellow]note:[/yellow] {note}")
    for note in (pred.notes if pred is not None else []):
        R.console.print(f"[dim]note: {note}[/dim]")
    # the sections not shown that would show something (the prediction's need it: not with --no-time)
    left = [s for s in SECTIONS if s not in show and s != "warps"
            and (pred is not None or s in ("Occupancy", "MemoryWorkloadAnalysis", "InstructionStats"))]
    hints = [f"more: --section all, or {', '.join(left)}"] if sections is not None and left else []
    if show - {"warps"}:
        hints += _names_note(print_it=False)
    if hints:
        R.console.print(f"[dim]{'; '.join(hints)}[/dim]")
    if checked is not None:     # --mode full: the sanitizer's findings (gpusim check)
        print_check(checked)
    print_warnings(r)       # last, where they are seen


def _occupancy(r, pred, ncu):
    m = r.metrics
    launch = _table("Launch Statistics / Occupancy", "metric", ">value")
    hw = _hw_col(launch, ncu)
    keys = ("launch__grid_size", "launch__block_size", "launch__registers_per_thread",
            "launch__shared_mem_per_block_static", "launch__occupancy_limit_registers",
            "launch__occupancy_limit_shared_mem", "launch__occupancy_limit_warps",
            "launch__occupancy_limit_blocks", "sm__maximum_warps_per_active_cycle_pct",
            "launch__waves_per_multiprocessor")
    for key in keys:
        launch.add_row(_name(key), _fmt(m.get(key)), *([_fmt(ncu.get(key))] if hw else []))
    R.console.print(launch)
    if any(m.get(k) is None for k in keys):
        R.console.print("[dim]n/a: no such figure for this instruction stream (the Python kernel's own has no "
                      "register count, so no register limit)[/dim]")
    shm = "launch__occupancy_limit_shared_mem"
    if hw and shm in ncu and m.get(shm) != ncu[shm]:
        R.console.print("[dim]CTA limit: shared mem differs by design: ncu's is for the shared-memory carveout the "
                      "driver picked (launch__shared_mem_config_size), the simulator's for the largest; the "
                      "occupancy itself agrees[/dim]")
    if pred is not None:
        _metric_table("Occupancy (predicted)", [
            ("sm__warps_active.avg.pct_of_peak_sustained_active", "%",
             pred.metrics.get("sm__warps_active.avg.pct_of_peak_sustained_active")),
            ("smsp__warps_active.avg.per_cycle_active", "warp",
             pred.metrics.get("smsp__warps_active.avg.per_cycle_active")),
        ], ncu)


def _memory(r, pred, rec):
    from gpusim.timing import LSU_METRIC_NAMES
    m = r.metrics
    ncu = rec.metrics if rec is not None else {}
    mem = _table("Memory Workload Analysis (exact counts)", "metric", ">value", ">per request")
    hw = _hw_col(mem, ncu)

    def mem_row(key, v, per=""):
        mem.add_row(_name(key), _fmt(v), per, *([_fmt(ncu.get(key))] if hw else []))
    for op in ("ld", "st"):
        req = m[f"l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum"]
        mem_row(f"l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum", req)
        sec = m[f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum"]
        mem_row(f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum", sec, _ratio(sec, req))
    for op in ("ld", "st"):
        n = m[f"smsp__sass_inst_executed_op_shared_{op}.sum"]
        wf = m[f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum"]
        bc = m[f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum"]
        mem_row(f"smsp__sass_inst_executed_op_shared_{op}.sum", n)
        mem_row(f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum", wf, _ratio(wf, n))
        mem_row(f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum", bc, _ratio(bc, n))
    R.console.print(mem)
    R.console.print("[dim]per request: sectors per global request; wavefronts and bank conflicts per shared "
                  "instruction (1.000 wavefront: no conflict; -: no such instruction)[/dim]")
    if hw:
        R.console.print(f"[dim]H200 (ncu): traces/hw/h200/{rec.path}, the same launch. Instructions, requests and "
                      f"sectors equal ncu's; shared-load wavefronts are within 0.1 % on the SGEMM ladder, and ncu counts "
                      f"up to 3.7 % more on the memory ladder (tests/test_hw_agreement.py); "
                      f"ncu's shared-store wavefronts run 0-20 % above what the addresses need (L1 traffic on the "
                      f"data banks).[/dim]")
    if pred is None:
        return
    pm = pred.metrics
    if "dram__bytes_read.sum" in pm:
        _metric_table("Memory Workload Analysis (cache model)", [
            ("l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct", "%",
             pm.get("l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct")),
            ("lts__t_sector_op_read_hit_rate.pct", "%", pm.get("lts__t_sector_op_read_hit_rate.pct")),
            ("dram__bytes_read.sum", "byte", pm.get("dram__bytes_read.sum")),
            ("gpusim__dram_read_gbps", "GB/s", pm.get("gpusim__dram_read_gbps")),
        ], ncu)
    # the loads in the LSU pipe over the whole kernel, as ncu counts them (extrapolated from the two
    # windows like the warp states), beside the H200's where traces/hw/h200/lsu/ has this launch
    lsu_rows = [(k, "cycle" if k.endswith(".ratio") else "inst", pm.get(k)) for k in LSU_METRIC_NAMES]
    if any(v for _, _, v in lsu_rows):
        _metric_table("LSU pipe: loads in flight (predicted)", lsu_rows, lsu_record(r))


def _instructions(r, rec):
    m = r.metrics
    inst = _table(f"Instructions executed: {'smsp__inst_executed.sum = ' if _wide() else ''}"
                  f"{m['smsp__inst_executed.sum']:,}", "SASS opcode", ">executed", ">share")
    by_op = rec.get("ncu", {}).get("inst_executed_per_opcode_with_modifier", {}) if rec is not None else {}
    hw = _hw_col(inst, by_op)
    total = m["smsp__inst_executed.sum"] or 1
    for name, c in sorted(r.inst_executed_per_opcode.items(), key=lambda kv: -kv[1]):
        inst.add_row(name, _fmt(c), f"{100 * c / total:.1f} %", *([_fmt(_by_name(by_op, name))] if hw else []))
    R.console.print(inst)
    if hw and any(_by_name(by_op, name) is None for name in r.inst_executed_per_opcode):
        R.console.print("[dim]n/a: no single opcode of ncu's spelling matches the simulator's name[/dim]")
    ffma = per_base_opcode(r.inst_executed_per_opcode).get("FFMA", 0)
    if ffma:
        lds = m["smsp__sass_inst_executed_op_shared_ld.sum"]
        ldg = m["smsp__sass_inst_executed_op_global_ld.sum"]
        R.console.print(f"loads per FFMA: shared {lds / ffma:.4f}, global {ldg / ffma:.4f}")


def _by_name(by_op, name):
    """ncu's count for a SASS name, also where ncu spells out a modifier the simulator's name leaves
    off (BAR.SYNC: BAR.SYNC.DEFER_BLOCKING); None when no unique name matches."""
    if name in by_op:
        return by_op[name]
    longer = [k for k in by_op if k.startswith(name + ".")]
    return by_op[longer[0]] if len(longer) == 1 else None


# the same quantity under another of ncu's names: (name, factor); an SMSP issues at most one
# instruction a cycle, so its issue-active per cycle is the fraction of its peak
_NCU_ALIASES = {"smsp__issue_active.avg.pct_of_peak_sustained_active": ("smsp__issue_active.avg.per_cycle_active", 100.0)}


def _ncu_value(ncu, name):
    if name in ncu:
        return ncu[name]
    alias, factor = _NCU_ALIASES.get(name, (None, 1.0))
    return ncu[alias] * factor if alias in ncu else None


def _metric_table(title, rows, ncu=None):
    """A section of predicted metrics, with the H200's value of the same name beside each where the
    launch has a record (gpusim__* metrics have no ncu counterpart: "-", and a note says so).
    Returns whether some row had no H200 value."""
    t = _table(title, "metric", "unit", ">predicted")
    hw = _hw_col(t, ncu)
    missing = False
    for name, unit, v in rows:
        if v is not None:
            h = _ncu_value(ncu, name.split(" ")[0]) if hw else None
            missing |= hw and h is None
            t.add_row(_name(name), unit, _fmt(float(v)), *([_fmt(h) if h is not None else "-"] if hw else []))
    R.console.print(t)
    if missing:
        R.console.print("[dim]H200 -: ncu has no such metric (the simulator's own figure)[/dim]")


def _speed_of_light(p, rec):
    """GPU Speed Of Light: the predicted time, beside the H200's where it has this launch, each unit's
    throughput against its peak, and the unit nearest its peak (the binding limit)."""
    from gpusim.estimate.sweep import SPEED_OF_LIGHT
    m = p.metrics
    rate = f"{p.gflops:,.0f} GFLOP/s" if p.gflops > 0 else f"{p.gbps:,.0f} GB/s moving each array once"
    R.console.print(f"[bold]predicted time {p.time_ms:.4f} ms[/bold]  ({p.cycles:,.0f} SM cycles, {rate})")
    if rec is not None:
        R.console.print(f"H200 recorded {rec['time_ms_median']:.4f} ms (traces/hw/h200/{rec.path}): prediction "
                      f"{100 * (p.time_ms / rec['time_ms_median'] - 1):+.1f} %")
    ncu = rec.metrics if rec is not None else {}
    rounds = "; ".join(f"{r.count} x {r.ctas} resident CTA(s), {r.trips} trips"
                       + (f" at {r.per_trip:,.1f} cycles/trip" if r.per_trip else " (timed in full)")
                       for r in p.rounds)
    R.console.print(f"[dim]busiest SM: {rounds}; windows of {p.windows[0]} and "
                  f"{p.windows[1]} trips; global loads: {p.memory_levels}[/dim]")
    _metric_table("GPU Speed Of Light Throughput (predicted)", [
        ("gpu__time_duration.sum", "ns", m.get("gpu__time_duration.sum")),
        ("sm__cycles_elapsed.avg", "cycle", m.get("sm__cycles_elapsed.avg")),
        ("smsp__issue_active.avg.pct_of_peak_sustained_active", "%",
         m.get("smsp__issue_active.avg.pct_of_peak_sustained_active")),
        ("gpusim__pipe_fma_issue.pct (FFMA/FMUL/IMAD issue slots of the FMA pipes)", "%",
         m.get("gpusim__pipe_fma_issue.pct")),
        ("gpusim__pipe_alu_issue.pct", "%", m.get("gpusim__pipe_alu_issue.pct")),
        ("gpusim__shared_pipe_busy.pct (wavefronts per SM cycle)", "%", m.get("gpusim__shared_pipe_busy.pct")),
        ("gpusim__l1tex_busy.pct (LSU requests in the L1TEX stage)", "%", m.get("gpusim__l1tex_busy.pct")),
        ("gpusim__dram_read.pct_of_achieved_peak", "%", m.get("gpusim__dram_read.pct_of_achieved_peak")),
    ], ncu)
    sol = [(m[k], label) for k, label in SPEED_OF_LIGHT if m.get(k) is not None]
    if sol:
        pct, unit = max(sol)
        # ncu's Speed Of Light rule: every unit under 60 % of its peak points at latency instead
        R.console.print(f"binding limit: [bold]{unit}[/bold], {pct:.0f} % of its peak (the unit nearest its peak)"
                      + ("; every unit under 60 %: latency, more than throughput, limits it" if pct < 60 else ""))
    if ncu:
        R.console.print("[dim]H200 column: one profiled launch, caches flushed; H200 recorded: a timed median[/dim]")


def _warp_states(p, ncu):
    """Warp State Statistics: each stall reason in cycles per issued instruction, beside ncu's."""
    from gpusim.report.stall_sites import not_issued_split
    from gpusim.timing import not_issued_metric
    from gpusim.timing.states import STATES, stall_metric
    m = p.metrics
    wl = "smsp__average_warp_latency_per_inst_issued.ratio"
    total = m[wl]
    h200 = f" (H200, ncu: {ncu[wl]:.2f})" if wl in ncu else ""
    wide = _wide()
    title = (f"Warp State Statistics: {wl} = {total:.2f}{h200}" if wide else
             f"Warp State Statistics: {total:.2f} cycles/issue" + (f" (H200: {ncu[wl]:.2f})" if h200 else ""))
    # how much of each reason's cycles fell while the warp's SMSP issued nothing (ncu: not-issued PC
    # samples), beside the H200's when its PC-sampling record of this launch exists
    idle = any(not_issued_metric(s) in m for s in STATES)
    hw = not_issued_split(p.kernel, p.M) if idle and p.M == p.N == p.K else None
    cols = (["stall reason (ncu)", ">cycles / issued inst", ">share"] if wide else
            ["stall reason", ">cycles/issue", ">share"])
    if wl in ncu:
        cols.append(">H200 (ncu)" if wide else ">H200")
    if idle:
        cols.append(">of it, SMSP issued nothing" if wide else ">idle")
    if hw:
        cols.append(">of it on the H200 (PC samples)" if wide else ">H200 idle")
    caption = None if wide or not idle else "idle: of them, the SMSP issued nothing" + (
        " (H200: PC samples)" if hw else "")
    st = _table(title, *cols, caption=caption)
    for name in sorted(STATES, key=lambda s: -p.stalls.get(stall_metric(s), 0)):
        v = p.stalls.get(stall_metric(name), 0.0)
        h = ncu.get(stall_metric(name))
        if v or (h or 0) >= 0.005:
            extra = [f"{m.get(not_issued_metric(name), 0.0):.0f} %"] if idle else []
            extra += [f"{hw[name][1]:.0f} %" if name in hw else "-"] if hw else []
            hcol = ([f"{h:.3f}" if h is not None else "-"] if wl in ncu else [])
            st.add_row(name, f"{v:.3f}", f"{100 * v / total:.1f} %", *hcol, *extra)
    R.console.print(st)
    pools = []
    for q in ("mio", "lg"):
        v, pool = p.stalls.get(stall_metric(f"{q}_throttle"), 0.0), m.get(f"gpusim__{q}_throttle_sm_pool.ratio", 0.0)
        if v and pool:
            pools.append(f"{q}_throttle {pool:.3f} of its {v:.3f}")
    if pools:
        R.console.print(f"[dim]{', '.join(pools)} per issue waited for the SM-wide pool while the warp's own SMSP "
                      f"queue had room[/dim]")


def _on_the_h200(r) -> bool:
    """Whether the run's GPU is the H200 preset as measured: one with fields changed by --set is not."""
    from gpusim.arch import arch_overrides
    return r.arch.lower() == "h200" and not (getattr(r, "gpu", None) is not None and arch_overrides(r.gpu))


def lsu_record(r) -> dict:
    """ncu's LSU-pipe figures of this very launch (traces/hw/h200/lsu/, `gpusim.hw.breakdown --family
    lsu`: ladder kernels at their default parameters, square sizes), or {}."""
    import json
    from gpusim.kernel.spec import get_kernel
    from gpusim.hw.records import device_dir
    if not _on_the_h200(r) or not (r.M == r.N == r.K) or r.params != dict(get_kernel(r.kernel).params):
        return {}
    path = device_dir("h200") / "lsu" / f"lsu_{r.kernel}_{r.M}.json"
    if not path.exists():
        return {}
    try:
        metrics = json.loads(path.read_text())["metrics"]
        if not isinstance(metrics, dict):
            raise TypeError("'metrics' is not an object")
        return metrics
    except (OSError, ValueError, KeyError, TypeError) as e:
        _warn(r, f"traces/hw/h200/lsu/{path.name} is damaged ({type(e).__name__}: {e}); its H200 column is left out")
        return {}


def _warn(r, text: str):
    """A figure the output cannot give: said once, in the text and under `warnings` in the JSON."""
    if text not in r.warnings:
        r.warnings.append(text)


def print_warnings(r):
    for w in r.warnings:
        R.console.print(f"[bold yellow]warning:[/] {w}", highlight=False)


def h200_record(r):
    """The committed H200 record of this very launch (kernel, its parameters, M x N x K), or None: the
    simulation and prediction are then printed beside what the H200 measured (the validation set, not
    an input). Non-square launches have records (times only) at the default parameters, under shapes/."""
    from gpusim.hw.records import (RecordError, RecordMissing, device_dir, hw_record, load_record,
                                       shape_record_name)
    if not _on_the_h200(r):
        return None
    try:
        if not (r.M == r.N == r.K):
            from gpusim.kernel.spec import get_kernel
            p = device_dir("h200") / "shapes" / shape_record_name(r.kernel, r.M, r.N, r.K)
            if r.params != dict(get_kernel(r.kernel).params) or not p.exists():
                return None
            rec = load_record(p)
            rec.path = f"shapes/{p.name}"
            return rec
        rec = hw_record(r.kernel, r.M, params=r.params)
    except RecordMissing:
        return None         # nobody measured this launch
    except (RecordError, OSError, ValueError) as e:
        _warn(r, f"the H200 record of this launch is damaged and its column left out: {e}")
        return None
    if rec.get("params", {}) != r.params:
        return None
    name = Path(rec.path).name       # (shown under traces/hw/h200/)
    rec.path = f"variants/{name}" if Path(rec.path).parent.name == "variants" else name
    return rec


def _print_stall_sites(p, top: int = 10):
    """ncu's Source Counters view by opcode: where the warps wait, as shares of all warp cycles, beside
    the H200's PC samples when traces/hw/h200/pcsamp/ holds this launch."""
    from gpusim.report.stall_sites import load_pcsamp, regroup, site_rows
    if not p.op_state_cycles:
        return
    hw = load_pcsamp(p.kernel, p.M) if p.M == p.N == p.K else None
    rows = site_rows(regroup(p.op_state_cycles), hw or {}, top)
    t = _table("Source Counters by opcode", "opcode", "state", ">% of warp cycles",
               *([">H200 (PC samples)"] if hw else []))
    for g, s, a, b in rows:
        t.add_row(g, s, f"{a:.1f} %", *([f"{b:.1f} %"] if hw else []))
    R.console.print(t)


def print_timing_summary(s):
    """The compare summary lines: time MAPE, max error, rank and top-stall agreement; one line per size
    and per ladder, so that each fits an 80-column page."""
    R.console.print(f"[bold]summary[/bold] time: MAPE {s['mape_pct']:.1f} %, max |error| {s['max_abs_error_pct']:.1f} % "
                  f"({s['worst']}) over {s['points']} points")
    for size, v in s["sizes"].items():
        ranks = ("no order to compare (one kernel)" if v["kendall_tau"] is None else
                 f"ranks {'same' if v['rank_same'] else 'differ'} (Kendall tau {v['kendall_tau']:.2f})")
        R.console.print(f"[bold]summary[/bold] {size}: {ranks}, top stall agrees "
                      f"{v['top_stall_agree']}/{v['top_stall_of']}")
    for lad, v in s.get("ladders", {}).items():
        R.console.print(f"[bold]summary[/bold] {lad} ladder: MAPE {v['mape_pct']:.1f} %, max "
                      f"{v['max_abs_error_pct']:.1f} % ({v['worst']}), {v['points']} points")


def print_arch_overrides(r):
    """The preset's fields this run changed (--set), old and new."""
    from gpusim.arch import arch_overrides
    changed = arch_overrides(r.gpu) if getattr(r, "gpu", None) is not None else {}
    if changed:
        R.console.print(f"{r.arch} preset with fields changed (--set): " +
                      ", ".join(f"{k} {_fmt(v['old'])} -> {_fmt(v['new'])}" for k, v in changed.items()),
                      style="bold yellow", highlight=False)
