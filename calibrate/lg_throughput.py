"""L1TEX throughput of global loads that hit in L1, by distinct 128-B lines per request.

    python3 calibrate/lg_throughput.py --out DIR      # on the GPU machine (needs nvcc, ncu)
    python3 calibrate/lg_throughput.py --record DIR   # here: DIR/* -> traces/hw/h200/micro/lg_throughput.json

64 warps per SM issue independent LDG.E (ld.global.f32) whose lanes touch D = 1, 2, 4, 8, 16, 32
distinct lines, all L1 hits (a 32 KB buffer, warmed). clock64() gives SM cycles per request
(calibrate/lg_throughput.cu); Nsight Compute (--clock-control none) gives the L1TEX
data-stage wavefronts, requests, sectors and hit rate of the same launches.
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import re
import subprocess
import sys
from pathlib import Path

from micro_cli import MICRO_RECORDS, provenance, nvcc_build          # (beside this script)

DS = (1, 2, 4, 8, 16, 32)
BASE_METRICS = [
    "sm__cycles_elapsed.avg", "smsp__inst_executed_op_global_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct",
    "smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
]


def run_on_gpu(out: Path, lsu: bool = False):
    here = Path(__file__).resolve().parent
    sys.path.insert(0, str(here.parent))
    from gpusim.hw.ncu import find_ncu
    from gpusim.hw.devinfo import smi_query, utc_now
    exe = out / "lg_bin"
    nvcc_build(here / "lg_throughput.cu", exe)
    sass = subprocess.run(["cuobjdump", "-sass", str(exe)], capture_output=True, text=True).stdout
    ldg = sorted(set(re.findall(r"LDG\.[A-Z0-9.]+", sass)))
    runs = [subprocess.run([str(exe), *map(str, DS)], capture_output=True, text=True).stdout for _ in range(3)]
    (out / "lg_clock64.txt").write_text("\n---\n".join(runs))
    ncu = find_ncu() or "ncu"
    q = subprocess.run([ncu, "--query-metrics"], capture_output=True, text=True).stdout
    names = sorted({l.split()[0] for l in q.splitlines()
                    if l.startswith("l1tex__data_pipe_lsu_wavefronts") or l.startswith("l1tex__lsu_writeback")})
    metrics = BASE_METRICS + [n + ".sum" for n in names]
    if lsu:     # the LSU pipe's pending loads and latencies (gpusim.hw.breakdown --family lsu)
        from gpusim.hw.breakdown import LSU_METRICS
        metrics += [m for m in LSU_METRICS if m not in metrics]
    cmd = [ncu, "--clock-control", "none", "--kernel-name", "lg", "--csv", "--page", "raw",
           "--metrics", ",".join(metrics), str(exe), *map(str, DS)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    (out / "lg_ncu.csv").write_text(p.stdout)
    ver = subprocess.run([ncu, "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    nv = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    (out / "lg_prov.json").write_text(json.dumps({
        "date": utc_now(), "smi": smi_query(), "ncu": ver[-1] if ver else "", "nvcc": nv[-1] if nv else "",
        "sass_ldg": ldg, "queried_metrics": names, "ncu_stderr": p.stderr[-3000:],
        "ncu_command": " ".join(cmd[:-len(DS) - 1]) + " lg_bin " + " ".join(map(str, DS)),
        "command": "python3 calibrate/lg_throughput.py --out $OUT" + (" --lsu" if lsu else "")}))
    exe.unlink(missing_ok=True)
    print(open(out / "lg_clock64.txt").read())
    print(p.stdout[-4000:], p.stderr[-2000:])


def parse_ncu(text: str) -> list[dict]:
    lines = [l for l in text.splitlines() if l.startswith('"')]
    out = []
    for r in csv.DictReader(io.StringIO("\n".join(lines))):
        try:
            int(r["ID"])
        except (KeyError, ValueError):
            continue
        out.append({k: float(v.replace(",", "")) for k, v in r.items()
                    if "__" in k and re.fullmatch(r"-?[0-9.,]+(e[-+]?\d+)?", v.strip() or "x")})
    return out


def parse_clock(text: str) -> dict:
    per_d: dict[int, list[float]] = {}
    for line in text.splitlines():
        f = line.split()
        if f and f[0] == "D":
            per_d.setdefault(int(f[1]), []).append(float(f[f.index("cycles_per_request") + 1]))
    return per_d


def record(dir_: Path, dest: Path):
    prov = json.loads((dir_ / "lg_prov.json").read_text())
    clk = parse_clock((dir_ / "lg_clock64.txt").read_text())
    ncu = parse_ncu((dir_ / "lg_ncu.csv").read_text())
    rows = []
    for i, d in enumerate(DS):
        cpr = sorted(clk.get(d, []))
        row = {"distinct_lines_per_request": d, "cycles_per_request_clock64": cpr[len(cpr) // 2] if cpr else None,
               "cycles_per_request_runs": cpr}
        if i < len(ncu):
            m = ncu[i]
            req = m.get("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")
            row["ncu"] = m
            if req:
                row["ncu_cycles_per_request"] = m["sm__cycles_elapsed.avg"] * 132 / req
                for k, v in m.items():
                    if k.startswith("l1tex__data_pipe_lsu_wavefronts") and v:
                        row.setdefault("wavefronts_per_request", {})[k] = v / req
        rows.append(row)
    # the rate: the L1TEX data stage's wavefronts per SM cycle, from ncu (sm__cycles_elapsed is the
    # SM's own elapsed time; the clock64 figure is a per-block mean, and the two blocks of an SM do
    # not finish together, so it understates the SM's cycles). Each distinct line of a request is
    # one data-stage wavefront; D >= 4 is limited by that stage.
    big = [r for r in rows if r["distinct_lines_per_request"] >= 4 and "ncu" in r]
    for r in rows:
        m = r.get("ncu", {})
        if m.get("sm__cycles_elapsed.avg"):
            r["wavefronts_per_sm_cycle"] = m["l1tex__data_pipe_lsu_wavefronts_mem_lgds.avg"] / m["sm__cycles_elapsed.avg"]
    rate = min(r["wavefronts_per_sm_cycle"] for r in big) if big else None
    rec = {
        "schema": "gpusim.hw.micro/1", "bench": "lg_throughput",
        "what": "L1TEX throughput of global loads hitting in L1, by distinct 128-B lines per warp request",
        "how": "132 SMs x 2 blocks x 1024 threads (64 warps/SM); each warp issues 256 x 8 independent "
               "ld.global.f32 (LDG.E, L1-cached) whose 32 lanes touch D distinct lines of a warmed 32 KB "
               "buffer; clock64() per block around the timed loop; ncu --clock-control none on the same "
               "launches (calibrate/lg_throughput.py, lg_throughput.cu)",
        "command": prov["command"] + " (on the H200), then --record DIR here",
        "ncu_command": prov.get("ncu_command"),
        "source": "calibrate/lg_throughput.cu:lg",
        **provenance(prov),
        "sass_loads": prov.get("sass_ldg"),
        "unit": "L1TEX data-stage wavefronts (= distinct 128-B lines of a request) per SM cycle, L1 hits; the lowest of D = 4..32",
        "note": "wavefronts per request = D exactly (l1tex__data_pipe_lsu_wavefronts_mem_lgds); cycles per request = D for D >= 4; D = 1 and 2 cost about 2.5 cycles per request (another limit, not the data stage); clock64 cycles are per-block means and understate the SM elapsed time (blocks of one SM finish at different times)",
        "value": rate,
        "details": {"rows": rows, "queried_metrics": prov.get("queried_metrics")},
    }
    dest.write_text(json.dumps(rec, indent=1))
    print(f"wrote {dest}: {rate} lines/cycle")
    for r in rows:
        print(r["distinct_lines_per_request"], r["cycles_per_request_clock64"], r.get("ncu_cycles_per_request"),
              r.get("wavefronts_per_request", {}).get("l1tex__data_pipe_lsu_wavefronts_mem_lgds.sum"),
              r.get("wavefronts_per_sm_cycle"))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--record")
    ap.add_argument("--dest", default=str(MICRO_RECORDS / "lg_throughput.json"))
    ap.add_argument("--lsu", action="store_true", help="with --out: also ncu's LSU pending / latency metrics "
                    "(record them with --dest traces/hw/h200/micro/lg_throughput_lsu.json)")
    a = ap.parse_args()
    if a.out:
        run_on_gpu(Path(a.out), a.lsu)
    if a.record:
        record(Path(a.record), Path(a.dest))
