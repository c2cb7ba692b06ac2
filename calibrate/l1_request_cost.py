"""What one L1-hit global load request costs the SM, with no address arithmetic in the way.

    python3 calibrate/l1_request_cost.py --out DIR      # on the GPU machine (nvcc, ncu)
    python3 calibrate/l1_request_cost.py --record DIR   # here: -> traces/hw/h200/micro/l1_request_cost.json

calibrate/l1_request_cost.cu: 2 blocks per SM of 4, 16 or 32 warps issue 256 x 16
independent LDG.E [R+imm] into a warmed 32 KB buffer, one line per load: 32 consecutive words
("line", coalesced's B loads), one word for every lane ("bcast", coalesced's A loads), the two
alternately ("mix"), or 8 words on each of 4 lines ("quad"). clock64() per block; Nsight Compute
(--clock-control none) gives the SM's elapsed cycles, requests, data-stage wavefronts and warp
states of the same launches (64 warps per SM).
"""
from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from micro_cli import provenance, nvcc_build, out_or_record  # noqa: E402  (beside this script)

MODES = {0: "line", 1: "bcast", 2: "mix", 3: "quad"}
WARPS_PER_BLOCK = (32, 16, 4)          # 64, 32, 8 warps per SM
NCU_WARPS = 32
METRICS = [
    "sm__cycles_elapsed.avg", "smsp__inst_executed.sum", "smsp__inst_executed_op_global_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct", "l1tex__data_pipe_lsu_wavefronts_mem_lgds.sum",
    "l1tex__lsu_writeback_active.sum", "l1tex__throughput.avg.pct_of_peak_sustained_active",
    "smsp__issue_active.avg.pct_of_peak_sustained_active", "smsp__average_warp_latency_per_inst_issued.ratio",
] + [f"smsp__average_warps_issue_stalled_{s}_per_issue_active.ratio" for s in (
    "lg_throttle", "long_scoreboard", "wait", "not_selected", "selected", "math_pipe_throttle",
    "dispatch_stall", "mio_throttle", "short_scoreboard", "no_instruction", "tex_throttle")]


def run_on_gpu(out: Path):
    from gpusim.hw.devinfo import smi_query, utc_now
    from gpusim.hw.ncu import find_ncu
    out.mkdir(parents=True, exist_ok=True)
    exe = out / "rq_bin"
    nvcc_build(HERE / "l1_request_cost.cu", exe)
    sass = subprocess.run(["cuobjdump", "-sass", str(exe)], capture_output=True, text=True).stdout
    (out / "rq.sass").write_text(sass)
    modes = [str(m) for m in MODES]
    runs = [subprocess.run([str(exe), str(w), *modes], capture_output=True, text=True).stdout
            for _ in range(3) for w in WARPS_PER_BLOCK]
    (out / "rq_clock64.txt").write_text("".join(runs))
    ncu = find_ncu() or "ncu"
    known = {ln.split()[0] for ln in subprocess.run([ncu, "--query-metrics"], capture_output=True,
                                                    text=True).stdout.splitlines() if ln.strip()}
    metrics = [m for m in METRICS if m.split(".")[0] in known]
    cmd = [ncu, "--clock-control", "none", "--kernel-name", "rq", "--csv", "--page", "raw",
           "--metrics", ",".join(metrics), str(exe), str(NCU_WARPS), *modes]
    p = subprocess.run(cmd, capture_output=True, text=True)
    (out / "rq_ncu.csv").write_text(p.stdout)
    ver = subprocess.run([ncu, "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    nv = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    (out / "rq_prov.json").write_text(json.dumps({
        "date": utc_now(), "smi": smi_query(), "ncu": ver[-1] if ver else "", "nvcc": nv[-1] if nv else "",
        "metrics_dropped": sorted(set(METRICS) - set(metrics)), "ncu_stderr": p.stderr[-3000:],
        "ncu_command": " ".join(cmd[:-len(modes) - 2]) + f" rq_bin {NCU_WARPS} " + " ".join(modes),
        "command": "python3 calibrate/l1_request_cost.py --out $OUT"}))
    exe.unlink(missing_ok=True)
    print(open(out / "rq_clock64.txt").read())
    print(p.stdout[-3000:], p.stderr[-2000:])


def _ncu_rows(text: str) -> list[dict]:
    lines = [ln for ln in text.splitlines() if ln.startswith('"')]
    rows = []
    for r in csv.DictReader(io.StringIO("\n".join(lines))):
        try:
            int(r["ID"])
        except (KeyError, ValueError):
            continue
        rows.append({k: float(v.replace(",", "")) for k, v in r.items()
                     if "__" in k and re.fullmatch(r"-?[0-9.,]+(e[-+]?\d+)?", v.strip() or "x")})
    return rows


def _ldg_lines(sass: str) -> list[str]:
    """The rq kernel's LDG instructions as cuobjdump prints them (address operands included)."""
    body = sass.split("Function : rq", 1)[-1]
    return [re.sub(r"\s+", " ", m.group(1)).strip() for m in re.finditer(r"\*/\s+(@?!?P?\d?\s*LDG[^;]*);", body)]


def record(dir_: Path, dest: Path):
    prov = json.loads((dir_ / "rq_prov.json").read_text())
    clk: dict = {}
    for ln in (dir_ / "rq_clock64.txt").read_text().splitlines():
        f = ln.split()
        if f and f[0] == "warps_per_sm":
            key = (int(f[1]), int(f[3]))
            clk.setdefault(key, []).append(float(f[f.index("cycles_per_request") + 1]))
    ncu = _ncu_rows((dir_ / "rq_ncu.csv").read_text())
    rows = []
    for (wps, mode), v in sorted(clk.items()):
        v = sorted(v)
        row = {"warps_per_sm": wps, "mode": MODES[mode], "cycles_per_request_clock64": v[len(v) // 2],
               "cycles_per_request_runs": v}
        if wps == 2 * NCU_WARPS and mode < len(ncu):
            m = ncu[mode]
            row["ncu"] = {k: v for k, v in m.items() if k.split("__")[0] in ("sm", "smsp", "l1tex")}
            req = m.get("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")
            if req:
                sm = m["sm__cycles_elapsed.avg"]
                row["ncu_cycles_per_request"] = sm * 132 / req
                row["ncu_sectors_per_request"] = m.get("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 0) / req
                row["ncu_wavefronts_per_request"] = m.get("l1tex__data_pipe_lsu_wavefronts_mem_lgds.sum", 0) / req
        rows.append(row)
    rec = {
        "schema": "gpusim.hw.micro/1", "bench": "l1_request_cost",
        "what": "SM cycles per L1-hit global load request, one line per load, no address arithmetic per load",
        "how": "132 SMs x 2 blocks of 4 / 16 / 32 warps; each warp issues 256 x 16 independent ld.global.f32 "
               "[R+imm] into a warmed 32 KB buffer: 32 consecutive words of a line (line), one word for all "
               "lanes (bcast), the two alternately (mix), 8 words on each of 4 lines (quad); clock64() per "
               "block (the slowest block of the launch over the requests of its SM); ncu --clock-control none "
               "on the same launches at 64 warps per SM (calibrate/l1_request_cost.py, .cu)",
        "command": prov["command"] + " (on the H200), then --record DIR here",
        "ncu_command": prov.get("ncu_command"),
        "source": "calibrate/l1_request_cost.cu:rq",
        **provenance(prov),
        "sass_loads": _ldg_lines((dir_ / "rq.sass").read_text())[:20],
        "metrics_dropped": prov.get("metrics_dropped"),
        "unit": "SM cycles per L1-hit request of one line (mode line, 64 warps per SM; ncu: sm__cycles_elapsed.avg "
                "x 132 / requests); details.rows has every mode",
        "value": next((r["ncu_cycles_per_request"] for r in rows
                       if r["mode"] == "line" and "ncu_cycles_per_request" in r), None),
        "details": {"rows": rows},
    }
    dest.write_text(json.dumps(rec, indent=1))
    print(f"wrote {dest}")
    for r in rows:
        print(r["warps_per_sm"], r["mode"], r["cycles_per_request_clock64"], r.get("ncu_cycles_per_request"),
              r.get("ncu_sectors_per_request"), r.get("ncu_wavefronts_per_request"))


if __name__ == "__main__":
    out_or_record(run_on_gpu, record, "l1_request_cost.json")
