"""L1TEX -> L2 throughput of global loads that miss in L1 and hit in L2, by distinct lines per request.

    python3 calibrate/l2_requests.py --out DIR      # on the GPU machine (needs nvcc, ncu)
    python3 calibrate/l2_requests.py --record DIR   # here: DIR/* -> traces/hw/h200/micro/l2_requests.json

Warps issue independent 4-byte loads whose lanes touch D = 1..32 distinct lines of an 8 MB buffer
held in the L2 (calibrate/l2_requests.cu): ld.global.ca (LDG.E, misses in L1) and
ld.global.cg (L2 only), 64 warps per SM (throughput) and 4 (one per SMSP). clock64() gives SM
cycles per request; Nsight Compute (--clock-control none) the requests, sectors and hit rates of
the same launches at L1 and L2. The question it answers: whether a request's cost on the miss
path grows with its lines (one L2 request each, 1 sector for D >= 4) or with its bytes.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from micro_cli import provenance, nvcc_build          # (beside this script)

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from gpusim.arch.presets import H200  # noqa: E402  (its SM count: ncu's sums are over all SMs)

DS = (1, 2, 4, 8, 16, 32)
CONFIGS = ((0, 2, 1024), (1, 2, 1024), (0, 1, 128))      # (mode, blocks per SM, threads)
NCU_CONFIGS = ((0, 2, 1024), (1, 2, 1024))
METRICS = [
    "sm__cycles_elapsed.avg", "smsp__inst_executed_op_global_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct", "l1tex__m_xbar2l1tex_read_bytes.sum",
    "lts__t_requests_srcunit_tex_op_read.sum", "lts__t_sectors_srcunit_tex_op_read.sum",
    "lts__t_sector_op_read_hit_rate.pct", "dram__bytes_read.sum",
    "smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
    "smsp__average_warp_latency_per_inst_issued.ratio",
]


def run_on_gpu(out: Path):
    from gpusim.hw.ncu import find_ncu, parse_raw_csv
    from gpusim.hw.devinfo import smi_query, utc_now
    out.mkdir(parents=True, exist_ok=True)
    exe = out / "l2req_bin"
    nvcc_build(HERE / "l2_requests.cu", exe)
    from gpusim.hw.pcsamp import sass_text
    loads = sorted({t.split()[0] for k in ("l2req_ca", "l2req_cg") for t in sass_text(exe, k).values()
                    if t.startswith("LDG")})
    runs = []
    for _ in range(3):
        for mode, bps, th in CONFIGS:
            runs.append(subprocess.run([str(exe), str(mode), str(bps), str(th), *map(str, DS)],
                                       capture_output=True, text=True, check=True).stdout)
    ncu = find_ncu() or "ncu"
    ncu_rows = {}
    for mode, bps, th in NCU_CONFIGS:
        cmd = [ncu, "--clock-control", "none", "--kernel-name", "regex:l2req", "--csv", "--page", "raw",
               "--metrics", ",".join(METRICS), str(exe), str(mode), str(bps), str(th), *map(str, DS)]
        p = subprocess.run(cmd, capture_output=True, text=True)
        key = f"{mode} {bps * th // 32}"                 # load mode, warps per SM
        ncu_rows[key] = [r["metrics"] for r in parse_raw_csv(p.stdout)]
        if not ncu_rows[key]:
            print(p.stdout[-2000:], p.stderr[-2000:])
    nv = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    ver = subprocess.run([ncu, "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    (out / "l2req_raw.json").write_text(json.dumps({
        "date": utc_now(), "smi": smi_query(), "nvcc": nv[-1] if nv else "", "ncu": ver[-1] if ver else "",
        "sass_loads": loads, "clock64": runs, "ncu_rows": ncu_rows,
        "ncu_command": f"{ncu} --clock-control none --kernel-name regex:l2req --csv --page raw --metrics "
                       "<see metrics> l2req_bin MODE BLOCKS_PER_SM THREADS " + " ".join(map(str, DS)),
        "command": "python3 calibrate/l2_requests.py --out $OUT"}))
    exe.unlink(missing_ok=True)
    print("\n".join(runs[:len(CONFIGS)]))


def _clock_rows(runs: list[str]) -> dict:
    per: dict = {}
    for text in runs:
        for line in text.splitlines():
            f = line.split()
            if f and f[0] == "mode":
                kv = dict(zip(f[0::2], f[1::2]))
                key = (int(kv["mode"]), int(kv["warps_per_sm"]), int(kv["D"]))
                per.setdefault(key, []).append(float(kv["cycles_per_request"]))
    return per


def record(dir_: Path, dest: Path):
    raw = json.loads((dir_ / "l2req_raw.json").read_text())
    clk = _clock_rows(raw["clock64"])
    rows = []
    for (mode, warps, d), v in sorted(clk.items()):
        v = sorted(v)
        row = {"load": "ld.global.cg" if mode else "ld.global.ca", "warps_per_sm": warps,
               "distinct_lines_per_request": d, "cycles_per_request_clock64": v[len(v) // 2],
               "cycles_per_request_runs": v}
        row["cycles_per_line_clock64"] = row["cycles_per_request_clock64"] / d
        ncu = raw["ncu_rows"].get(f"{mode} {warps}")
        if ncu and DS.index(d) < len(ncu):
            m = {k: v for k, v in ncu[DS.index(d)].items() if k in METRICS}
            row["ncu"] = m
            req = m.get("lts__t_requests_srcunit_tex_op_read.sum")
            cyc = m.get("sm__cycles_elapsed.avg")
            if req and cyc:
                row["l2_requests_per_sm_cycle"] = req / H200.sm_count / cyc
                row["l2_sectors_per_sm_cycle"] = m["lts__t_sectors_srcunit_tex_op_read.sum"] / H200.sm_count / cyc
        rows.append(row)

    def clk_at(load, warps, d):
        return next((r["cycles_per_request_clock64"] for r in rows if r["load"] == load and
                     r["warps_per_sm"] == warps and r["distinct_lines_per_request"] == d), None)
    rec = {
        "schema": "gpusim.hw.micro/1", "bench": "l2_requests",
        "what": "throughput of global loads that miss in L1 and hit in L2, by distinct 128-B lines per warp request",
        "how": "132 SMs x 2 blocks x 1024 threads (64 warps/SM) or 1 block x 128 threads; each warp issues 128 x 8 "
               "independent 4-byte loads whose 32 lanes touch D distinct lines of an 8 MB L2-resident buffer "
               "(ld.global.ca: LDG.E, L1 misses; ld.global.cg: L2 only); clock64() per block around the timed loop, "
               "median of 3 runs; ncu --clock-control none on the same launches (calibrate/l2_requests.py)",
        "command": raw["command"] + " (on the H200), then --record DIR here",
        "ncu_command": raw["ncu_command"], "source": "calibrate/l2_requests.cu:l2req_ca,l2req_cg",
        **provenance(raw),
        "sass_loads": raw.get("sass_loads"),
        "unit": "SM cycles per request (clock64; with one block per SM it is the SM's own time)",
        "note": "with 2 blocks per SM the clock64 figure is a per-block mean and understates the SM's time (its "
                "blocks finish apart); ncu's sm__cycles_elapsed covers the whole launch. One-sector lines (D >= 4) "
                "cost the SM ~1.1 cycles each with 4 warps or 64; whole lines (D = 1, 4 sectors) 3.2 per request "
                "with 64 warps (40 B/cycle, above bandwidth_l2.json's 28 B/cycle per SM share)",
        "value": {"ld.global.ca_4warps_D32": clk_at("ld.global.ca", 4, 32),
                  "ld.global.ca_64warps_D32": clk_at("ld.global.ca", 64, 32),
                  "ld.global.ca_64warps_D1": clk_at("ld.global.ca", 64, 1)},
        "details": {"rows": rows, "metrics": METRICS},
    }
    dest.write_text(json.dumps(rec, indent=1))
    for r in rows:
        print(r["load"], r["warps_per_sm"], r["distinct_lines_per_request"], r["cycles_per_request_clock64"],
              round(r.get("l2_requests_per_sm_cycle", 0), 3), round(r.get("l2_sectors_per_sm_cycle", 0), 3))


def main():
    from micro_cli import out_or_record          # (beside this script)
    out_or_record(run_on_gpu, record, "l2_requests.json")


if __name__ == "__main__":
    main()
