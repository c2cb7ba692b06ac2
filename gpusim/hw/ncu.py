"""Nsight Compute: which metrics, the command line, and parsing its CSV (pure Python).

Nothing here needs a GPU: the device runs the command, this module builds it
and turns ncu's raw-page CSV into compact dicts. Tests exercise the parser on
text shaped like ncu's.

Profiling conditions, the same for every record:
  --clock-control none    the clocks stay as the card runs them (ncu's default
                          'base' locks the SM near 1.4-1.5 GHz on the H200)
  --cache-control all     ncu's default: caches are flushed before every
                          replay pass, so each pass starts with cold L1 and L2
  --replay-mode kernel    every pass replays the one profiled launch, with
                          device memory saved and restored between passes
"""
from __future__ import annotations

import csv
import glob
import io
import os
import re
import shutil

CLOCK_CONTROL = "none"
CACHE_CONTROL = "all"
REPLAY_MODE = "kernel"

# Every metric the simulator reports, and what the timing model is checked with.
BASE_METRICS = [
    # instructions
    "smsp__inst_executed.sum",
    "smsp__inst_issued.sum",
    "smsp__thread_inst_executed_per_inst_executed.ratio",
    "smsp__sass_inst_executed_op_shared_ld.sum",
    "smsp__sass_inst_executed_op_shared_st.sum",
    "smsp__sass_inst_executed_op_global_ld.sum",
    "smsp__sass_inst_executed_op_global_st.sum",
    "smsp__inst_executed_pipe_fma.sum",
    "smsp__inst_executed_pipe_fmaheavy.sum",
    "smsp__inst_executed_pipe_fmalite.sum",
    "smsp__inst_executed_pipe_alu.sum",
    "smsp__inst_executed_pipe_lsu.sum",
    "smsp__inst_executed_pipe_adu.sum",
    "smsp__inst_executed_pipe_cbu.sum",
    "smsp__inst_executed_pipe_uniform.sum",
    "smsp__inst_executed_pipe_xu.sum",
    # global memory
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct",
    "l1tex__t_sector_hit_rate.pct",
    "l1tex__m_xbar2l1tex_read_bytes.sum",
    "l1tex__m_l1tex2xbar_write_bytes.sum",
    # global reductions and atomics (RED / ATOM: the second ladder's atomicAdd)
    "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum",
    "smsp__sass_inst_executed_op_global_red.sum",
    "smsp__sass_inst_executed_op_global_atom.sum",
    "smsp__sass_inst_executed_op_shared_atom.sum",
    "lts__t_requests_srcunit_tex_op_red.sum",
    "lts__t_sectors_srcunit_tex_op_red.sum",
    # shared memory
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
    # L2 and DRAM
    "lts__t_sector_hit_rate.pct",
    "lts__t_sector_op_read_hit_rate.pct",
    "lts__t_bytes.sum",
    "lts__t_sectors_srcunit_tex_op_read.sum",
    "lts__t_sectors_srcunit_tex_op_write.sum",
    "lts__t_requests_srcunit_tex_op_read.sum",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    # launch and occupancy
    "launch__registers_per_thread",
    "launch__occupancy_limit_registers",
    "launch__occupancy_limit_shared_mem",
    "launch__occupancy_limit_warps",
    "launch__occupancy_limit_blocks",
    "launch__waves_per_multiprocessor",
    "launch__grid_size",
    "launch__block_size",
    "launch__shared_mem_per_block_static",
    "launch__sm_count",
    "sm__maximum_warps_per_active_cycle_pct",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "smsp__warps_active.avg.per_cycle_active",
    "smsp__warps_eligible.avg.per_cycle_active",
    "smsp__issue_active.avg.per_cycle_active",
    # time and clocks
    "sm__cycles_elapsed.avg",
    "sm__cycles_elapsed.avg.per_second",
    "sm__cycles_active.avg",
    "smsp__cycles_active.avg",
    "gpc__cycles_elapsed.max",
    "lts__cycles_elapsed.avg.per_second",
    "dram__cycles_elapsed.avg.per_second",
    "gpu__time_duration.sum",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    # warp states
    "smsp__average_warp_latency_per_inst_issued.ratio",
]
OPCODE_METRIC = "sass__inst_executed_per_opcode"
# Launch facts ncu reports with every profile whether asked or not; kept because
# they explain its occupancy limits (the driver's shared-memory carveout is
# launch__shared_mem_config_size, often far below the SM's 228 KB).
ALWAYS_KEPT = [
    "launch__shared_mem_config_size", "launch__shared_mem_per_block_driver",
    "launch__shared_mem_per_block_allocated", "launch__shared_mem_per_block_dynamic",
    "launch__registers_per_thread_allocated", "launch__thread_count", "launch__occupancy_limit_barriers",
    "sm__maximum_warps_avg_per_active_cycle", "profiler__replayer_passes",
]

# The metrics the issue names: never dropped on the strength of --query-metrics
# alone (only if ncu itself refuses them).
REQUIRED = {
    "smsp__inst_executed.sum", "smsp__sass_inst_executed_op_shared_ld.sum",
    "smsp__sass_inst_executed_op_shared_st.sum", "smsp__sass_inst_executed_op_global_ld.sum",
    "smsp__sass_inst_executed_op_global_st.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "sm__warps_active.avg.pct_of_peak_sustained_active",
    "l1tex__t_sector_hit_rate.pct", "lts__t_sector_hit_rate.pct", "lts__t_bytes.sum", "dram__bytes_read.sum",
    "dram__bytes_write.sum", "sm__cycles_elapsed.avg", "gpu__time_duration.sum",
    "smsp__average_warp_latency_per_inst_issued.ratio", "sm__maximum_warps_per_active_cycle_pct",
    "launch__registers_per_thread",
}

# ncu's warp-state reasons on sm_90 [PG 2.4.7]; used only if --query-metrics gives none.
STALL_REASONS_FALLBACK = [
    "barrier", "branch_resolving", "dispatch_stall", "drain", "imc_miss", "lg_throttle",
    "long_scoreboard", "math_pipe_throttle", "membar", "mio_throttle", "misc",
    "no_instruction", "not_selected", "selected", "short_scoreboard", "sleeping",
    "tex_throttle", "wait",
]
STALL_RE = re.compile(r"\b(smsp__average_warps_issue_stalled_([a-z0-9_]+?)_per_issue_active)\b")
# families --query-metrics does not list (other providers); kept without a check
UNLISTED_PREFIXES = ("launch__", "sass__", "device__", "profiler__")


def stall_metric(reason: str) -> str:
    return f"smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio"


def find_ncu() -> str | None:
    """ncu on the PATH, else the newest under the usual install folders."""
    p = shutil.which("ncu")
    if p:
        return p
    cands = sorted(glob.glob("/opt/nvidia/nsight-compute/*/ncu")) + \
        sorted(glob.glob("/usr/local/cuda*/bin/ncu"))
    return cands[-1] if cands else None


def require_ncu() -> str:
    """find_ncu's path, or exit with a clear message where there is none (the micros' GPU-side runs)."""
    p = find_ncu()
    if not p:
        raise SystemExit("no ncu on this machine")
    return p


def query_base_names(text: str) -> set[str]:
    """Base metric names (unit__counter) in `ncu --query-metrics` output."""
    return set(re.findall(r"\b([a-z][a-z0-9]*__[a-z0-9_]+)\b", text))


def select_metrics(query_text: str | None) -> tuple[list[str], list[str], list[str]]:
    """(metrics to collect, stall reasons, dropped names) given --query-metrics output.

    Metrics whose base name the query does not list are dropped (ncu would
    refuse the whole run); families it never lists are kept.
    """
    names = query_base_names(query_text or "")
    reasons = sorted({m.group(2) for m in STALL_RE.finditer(query_text or "")})
    if not reasons:
        reasons = list(STALL_REASONS_FALLBACK)
    wanted = BASE_METRICS + [stall_metric(r) for r in reasons]
    keep, dropped = [], []
    for m in wanted:
        base = m.split(".")[0]
        if not names or base in names or m.startswith(UNLISTED_PREFIXES) or m in REQUIRED:
            keep.append(m)
        else:
            dropped.append(m)
    keep.append(OPCODE_METRIC)
    return keep, reasons, dropped


def profile_command(ncu: str, metrics: list[str], report: str, target: list[str]) -> list[str]:
    """ncu profiling only the launches between cudaProfilerStart and Stop in `target`."""
    return [ncu, "--clock-control", CLOCK_CONTROL, "--cache-control", CACHE_CONTROL,
            "--replay-mode", REPLAY_MODE, "--profile-from-start", "off",
            "--target-processes", "all", "--metrics", ",".join(metrics),
            "-f", "-o", report, *target]


def export_command(ncu: str, report: str) -> list[str]:
    """The report as raw-page CSV, base units, instance values with their keys."""
    return [ncu, "--import", report, "--csv", "--page", "raw", "--print-units", "base",
            "--print-metric-instances", "details"]


# ---------------------------------------------------------------- parsing

# Instanced metrics worth keeping, and the record field each one goes to.
# ncu prints an instanced cell as `AGGREGATE (KEY: VALUE; KEY: VALUE; ...)`.
INSTANCED = {
    OPCODE_METRIC: "inst_executed_per_opcode",
    "sass__inst_executed_per_opcode_with_modifier_all": "inst_executed_per_opcode_with_modifier",
    "inst_executed": "inst_executed_per_pc",
}

_NUM = re.compile(r"^[-+]?(\d[\d,]*\.?\d*|\.\d+)([eE][-+]?\d+)?$")


def parse_number(s: str):
    """An ncu cell as int, float, None (n/a) or the string itself."""
    if s is None:
        return None
    t = s.strip()
    if t in ("", "n/a", "N/A", "(!) n/a", "nan", "-"):
        return None
    if _NUM.match(t):
        t2 = t.replace(",", "")
        try:
            if re.fullmatch(r"[-+]?\d+", t2):
                return int(t2)
            return float(t2)
        except ValueError:
            return t
    return t


def parse_instances(cell: str) -> tuple[object, dict]:
    """(aggregate, {key: value}) of a cell printed as `AGG (KEY: VALUE; ...)`.

    Keys are whatever ncu prints (an opcode, 'LDS.128', a PC such as
    0x7fac3b7a0010, a category with spaces); values may carry thousands
    separators. A cell without parentheses has no instances.
    """
    if cell is None:
        return None, {}
    m = re.match(r"^\s*([^()]*?)\s*\((.*)\)\s*$", cell, re.S)
    if not m:
        return parse_number(cell), {}
    agg = parse_number(m.group(1)) if m.group(1) else None
    inst: dict = {}
    for part in m.group(2).split(";"):
        key, sep, val = part.rpartition(":")
        if not sep:
            continue
        v = parse_number(val)
        if isinstance(v, (int, float)):
            k = key.strip()
            inst[k] = inst.get(k, 0) + v
    return agg, inst


ID_COLUMNS = ("ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context",
              "Stream", "Block Size", "Grid Size", "Device", "CC")


def parse_raw_csv(text: str) -> list[dict]:
    """Rows of `ncu --csv --page raw`: [{'kernel', 'id', 'metrics', 'units', 'instances', 'launch'}].

    The first row names the columns, the second gives units; every later row
    is one profiled launch, in launch order. Lines before the header (ncu's
    '==PROF==' messages, the program's own output) are skipped. Instanced
    cells give their aggregate under 'metrics' and, for the INSTANCED
    metrics, their instances under 'instances'.
    """
    csv.field_size_limit(2**31 - 1)
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith('"ID"') or ln.startswith("ID,")), None)
    if start is None:
        return []
    rows = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    header = rows[0]
    units = rows[1] if len(rows) > 1 else [""] * len(header)
    body = rows[2:]
    if units and units[0].strip():           # no unit row: the first data row
        body, units = rows[1:], [""] * len(header)
    out = []
    for r in body:
        if len(r) != len(header):
            continue
        row = {"kernel": None, "id": None, "metrics": {}, "units": {}, "instances": {}, "launch": {}}
        for name, unit, cell in zip(header, units, r):
            if name in ID_COLUMNS:
                row["launch"][name] = cell
                if name == "Kernel Name":
                    row["kernel"] = cell
                elif name == "ID":
                    row["id"] = parse_number(cell)
                continue
            agg, inst = parse_instances(cell)
            row["metrics"][name] = agg
            if inst and name in INSTANCED:
                row["instances"][name] = inst
            if unit:
                row["units"][name] = unit
        out.append(row)
    return out


def _as_number(v):
    if isinstance(v, float) and v.is_integer() and abs(v) < 2**53:
        return int(v)
    return v


def relative_pcs(inst: dict) -> dict:
    """Per-PC counts keyed by the offset from the lowest PC (the entry, always executed)."""
    pcs = {}
    for k, v in inst.items():
        try:
            pcs[int(str(k), 16)] = v
        except ValueError:
            return {}
    if not pcs:
        return {}
    base = min(pcs)
    return {f"0x{pc - base:04x}": _as_number(v) for pc, v in sorted(pcs.items())}


def compact(row: dict, requested: list[str], api: dict | None = None, per_pc: bool = True) -> dict:
    """What a record keeps of one profiled launch: requested metrics and the instanced tables.

    api: the same launch read through ncu_report (full precision), preferred
    over the CSV's rounded cells where it has the metric.
    """
    api = api or {}
    am, ai = api.get("metrics", {}), api.get("instances", {})
    metrics = {}
    for name in list(requested) + [k for k in ALWAYS_KEPT if k not in requested]:
        v = am.get(name, row["metrics"].get(name))
        if v is not None and not (isinstance(v, float) and v != v):
            metrics[name] = _as_number(v)
    out = {"metrics": metrics, "kernel_name": row.get("kernel") or api.get("kernel"),
           "units": {k: u for k, u in row.get("units", {}).items() if k in metrics}}
    for name, field in INSTANCED.items():
        inst = ai.get(name) or row.get("instances", {}).get(name) or {}
        if field == "inst_executed_per_pc":
            if per_pc:
                inst = relative_pcs(inst)
            else:
                inst = {}
        else:
            inst = {k: _as_number(v) for k, v in sorted(inst.items()) if v}
        if inst:
            out[field] = inst
    return out


def opcode_histogram(row: dict) -> dict:
    """Executed warp-level instructions per SASS opcode from a parsed row."""
    inst = row.get("instances", {}).get(OPCODE_METRIC, {})
    return {k: _as_number(v) for k, v in sorted(inst.items()) if v}


def bad_metrics(error_text: str, metrics: list[str]) -> list[str]:
    """Metrics of ours that ncu's error output names (it refuses a run over one unknown name)."""
    found = []
    for m in metrics:
        base = m.split(".")[0]
        if re.search(rf"(?<![a-z0-9_]){re.escape(base)}(?![a-z0-9_])", error_text or ""):
            found.append(m)
    return found if len(found) <= len(metrics) // 4 else []    # the whole list echoed: no clue


def import_ncu_report(ncu: str):
    """ncu's own Python module (extras/python/ncu_report beside the ncu binary); ImportError if absent."""
    import sys
    from pathlib import Path
    cands = [Path(ncu).resolve().parent / "extras" / "python"] + \
        [Path(p) for p in sorted(glob.glob("/opt/nvidia/nsight-compute/*/extras/python"))]
    for c in cands:
        if (c / "ncu_report.py").exists() and str(c) not in sys.path:
            sys.path.append(str(c))
    import ncu_report
    return ncu_report


def read_report(path: str, ncu: str) -> list[dict] | None:
    """Every profiled launch of an .ncu-rep through ncu's own Python interface.

    A second source beside the CSV, at full precision: per launch, the
    kernel name, every metric's value, and the instances of the INSTANCED
    metrics keyed as ncu keys them. None where the module
    (extras/python/ncu_report) will not load.
    """
    try:
        ctx = import_ncu_report(ncu).load_report(path)
    except Exception:          # noqa: BLE001 - optional second source
        return None
    out = []
    for r in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(r)
        for a in range(rng.num_actions()):
            act = rng.action_by_idx(a)
            row = {"kernel": act.name(), "metrics": {}, "instances": {}}
            for name in act.metric_names():
                m = act.metric_by_name(name)
                try:
                    row["metrics"][name] = m.as_double()
                except Exception:      # noqa: BLE001
                    pass
                if name in INSTANCED:
                    inst = {}
                    try:
                        ids = m.correlation_ids()
                        for i in range(m.num_instances()):
                            if name == "inst_executed":          # keyed by PC
                                key = hex(ids.as_uint64(i))
                            else:
                                try:
                                    key = ids.as_string(i)
                                except Exception:      # noqa: BLE001
                                    key = hex(ids.as_uint64(i))
                            inst[key] = inst.get(key, 0) + m.as_double(i)
                    except Exception as e:      # noqa: BLE001
                        row.setdefault("errors", {})[name] = f"{type(e).__name__}: {e}"
                    if inst:
                        row["instances"][name] = inst
            out.append(row)
    return out


def ncu_version(text: str) -> str | None:
    m = re.search(r"Version\s+([\d.]+)", text or "")
    return m.group(1) if m else None
