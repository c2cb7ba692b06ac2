"""regblock's tile staging alone, stamped per tile (calibrate/tile_loads.cu).

    python3 calibrate/tile_loads.py --out DIR      # on the GPU machine (needs nvcc)
    python3 calibrate/tile_loads.py --record DIR   # here: DIR/* -> traces/hw/h200/micro/tile_loads.json

How long a warp waits for one K-tile's global loads (clock64 before its first load, after the
barrier that follows the STS) when four 128-thread CTAs share each SM, with no work between the
barriers or with regblock's 512 FFMA per thread per tile; A, B of 2048^2 (in the L2 after the
first launch) or 4096^2 (64 MB each); the loads and the stores also each alone (2048).
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from micro_cli import provenance, nvcc_build          # (beside this script)

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
RUNS = tuple((m, n, w) for m in (0, 1, 2, 3) for n, w in ((2048, 0), (2048, 64), (4096, 0), (4096, 64))
             if m == 0 or n == 2048)
TILES = 256
MODES = ("loads+sts", "loads", "sts", "loads+sts phases")
NCU_RUNS = ((0, 2048, 0), (1, 2048, 0), (0, 2048, 64), (0, 4096, 64))
NCU_METRICS = ["sm__cycles_elapsed.avg", "dram__bytes_read.sum", "lts__t_sector_hit_rate.pct",
               "lts__t_sectors_srcunit_tex_op_read.sum", "lts__t_requests_srcunit_tex_op_read.sum",
               "lts__t_sectors_srcunit_ltcfabric.sum", "lts__throughput.avg.pct_of_peak_sustained_elapsed",
               "l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct",
               "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
               "smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio"]


def run_on_gpu(out: Path):
    from gpusim.hw.devinfo import smi_query, utc_now
    out.mkdir(parents=True, exist_ok=True)
    exe = out / "tile_bin"
    nvcc_build(HERE / "tile_loads.cu", exe)
    from gpusim.hw.pcsamp import sass_text
    ops = [t for k in ("tile_loads0", "tile_loads1", "tile_loads2", "tile_loads3") for t in sass_text(exe, k).values()]
    lines = []
    for _ in range(3):
        for mode, size, work in RUNS:
            lines.append(subprocess.run([str(exe), str(size), str(work), str(TILES), str(mode)], capture_output=True,
                                        text=True, check=True).stdout.strip())
    from gpusim.hw.ncu import find_ncu, parse_raw_csv
    ncu = find_ncu() or "ncu"
    ncu_rows = {}
    for mode, size, work in NCU_RUNS:      # each binary run launches twice; the second is kept
        p = subprocess.run([ncu, "--clock-control", "none", "--kernel-name", "regex:tile_loads", "--csv", "--page",
                            "raw", "--metrics", ",".join(NCU_METRICS), str(exe), str(size), str(work), str(TILES),
                            str(mode)], capture_output=True, text=True)
        got = parse_raw_csv(p.stdout)
        ncu_rows[f"{mode} {size} {work}"] = got[-1]["metrics"] if got else None
        if not got:
            print(p.stdout[-1500:], p.stderr[-1500:])
    # where the warps of mode 3 (2048, no work) wait, per SASS instruction: ncu's PC samples
    from gpusim.hw.pcsamp import samples_per_pc
    rep = out / "tile_pcsamp"
    p = subprocess.run([ncu, "--clock-control", "none", "--kernel-name", "tile_loads3", "--launch-skip", "1",
                        "--launch-count", "1", "--section", "SourceCounters", "--section", "WarpStateStats",
                        "--import-source", "no", "-f", "-o", str(rep), str(exe), "2048", "0", str(TILES), "3"],
                       capture_output=True, text=True)
    pcsamp = None
    if p.returncode == 0:
        _, per_pc, totals = samples_per_pc(str(rep) + ".ncu-rep", ncu)
        pcsamp = {"samples_per_pc": per_pc, "totals": totals, "sass": sass_text(exe, "tile_loads3")}
    else:
        print(p.stdout[-1500:], p.stderr[-1500:])
    nv = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    (out / "tile_raw.json").write_text(json.dumps({"pcsamp_mode3_2048": pcsamp,
        "date": utc_now(), "smi": smi_query(), "nvcc": nv[-1] if nv else "", "sass": ops, "lines": lines,
        "ncu": ncu_rows, "ncu_command": f"{ncu} --clock-control none --kernel-name regex:tile_loads --csv --page raw "
        "--metrics <see details.metrics> tile_bin SIZE WORK 256 MODE",
        "command": "python3 calibrate/tile_loads.py --out $OUT"}))
    exe.unlink(missing_ok=True)
    print("\n".join(lines))


def record(dir_: Path, dest: Path):
    raw = json.loads((dir_ / "tile_raw.json").read_text())
    per: dict = {}
    names = {"p50": "load_wait_p50", "p90": "load_wait_p90"}     # (the binary prints them short)
    for ln in raw["lines"]:
        f = ln.split()
        kv = dict(zip(f[0::2], f[1::2]))
        per.setdefault((int(kv.get("mode", 0)), int(kv["size"]), int(kv["work"])), []).append(
            {names.get(k, k): float(v) for k, v in kv.items() if k not in ("mode", "size", "work", "tiles")})
    rows = []
    for (mode, size, work), runs in sorted(per.items()):
        med = {k: sorted(r[k] for r in runs)[len(runs) // 2] for k in runs[0]}
        rows.append({"mode": MODES[mode], "size": size, "ffma_per_thread_per_tile": 8 * work, **med, "runs": runs,
                     "ncu": {k: v for k, v in ((raw.get("ncu") or {}).get(f"{mode} {size} {work}") or {}).items()
                             if k in NCU_METRICS} or None})
    rec = {
        "schema": "gpusim.hw.micro/1", "bench": "tile_loads",
        "what": "a warp's wait for one K-tile of regblock's global loads (load to after the STS barrier), "
                "4 CTAs x 4 warps per SM, with and without regblock's FFMA work between the barriers",
        "how": "calibrate/tile_loads.cu: grid (SIZE/64, SIZE/128) of 128 threads, 256 tiles; lane 0 "
               "stamps clock64 before the first load and after the first __syncthreads (BAR.SYNC.DEFER_BLOCKING: "
               "that read issues when the warp arrives, before the barrier releases); percentiles over warps "
               "and tiles 2.. of the second of two launches; median of 3 runs",
        "command": raw["command"] + " (on the H200), then --record DIR here",
        "source": "calibrate/tile_loads.cu:tile_loads", **provenance(raw), "sass": raw.get("sass"),
        "unit": "cycles (SM clock64)",
        "value": {f"{r['mode']}_{r['size']}_ffma{r['ffma_per_thread_per_tile']}": r["load_wait_p50"] for r in rows},
        "ncu_command": raw.get("ncu_command"),
        "details": {"rows": rows, "metrics": NCU_METRICS, "pcsamp_mode3_2048": raw.get("pcsamp_mode3_2048")},
    }
    dest.write_text(json.dumps(rec, indent=1))
    for r in rows:
        print(r["mode"], r["size"], r["ffma_per_thread_per_tile"], r["load_wait_p10"], r["load_wait_p50"], r["load_wait_p90"],
              r["cycles_per_tile_median"])


def main():
    from micro_cli import out_or_record          # (beside this script)
    out_or_record(run_on_gpu, record, "tile_loads.json")


if __name__ == "__main__":
    main()
