"""How fast a warp gets back wide, bank-conflicted shared loads (LDS.32 / .64 / .128, 1- to 4-way).

    python3 calibrate/lds_wide_return.py --out DIR      # on the GPU machine (nvcc, cuobjdump, ncu)
    python3 calibrate/lds_wide_return.py --record DIR   # here: -> traces/hw/h200/micro/lds_wide_return.json

calibrate/lds_wide_return.cu: one CTA; the warps of a mask (1 warp; 4 warps on SMSP 0; 16
warps, 4 per SMSP) issue 8 bursts of B independent loads of one kind; clock64 before the burst, after
its last issue and after a branch on the last load's value (shared loads return in order, so that is when
the whole burst is back). Per (layout, kind, B): medians over warps and bursts 2-8; per (layout,
kind): the slope of the back-time in B (median of pairwise slopes), the cycles each load costs. Nsight Compute (--clock-control
none) gives each kind's wavefronts per load (one warp). The question it settles: does a conflicted
LDS.128 cost its warp 4 cycles per wavefront (wavefronts x registers per lane, the engine's old rule,
inferred from bursts timed until an IADD3 chain had consumed them) or 2 cycles per wavefront, as an
LDS.32 does? (2: the width does not matter.)
"""
from __future__ import annotations

import csv
import io
import json
import re
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from micro_cli import provenance, build_and_run, nvcc_version, out_or_record  # noqa: E402  (beside this script)

MASKS = {"0x1": "1 warp", "0x1111": "4 warps on SMSP 0", "0xffff": "16 warps, 4 per SMSP"}
METRICS = ["smsp__sass_inst_executed_op_shared_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
           "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"]


def run_on_gpu(out: Path):
    from gpusim.hw.devinfo import smi_query, utc_now
    from gpusim.hw.ncu import find_ncu
    out.mkdir(parents=True, exist_ok=True)
    exe, text = build_and_run(HERE / "lds_wide_return.cu", out, "wide", [[m] for m in MASKS])
    ncu = find_ncu() or "ncu"
    cmd = [ncu, "--clock-control", "none", "--csv", "--page", "raw", "--metrics", ",".join(METRICS), str(exe), "0x1"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    (out / "wide_ncu.csv").write_text(p.stdout)
    ver = subprocess.run([ncu, "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    (out / "wide_prov.json").write_text(json.dumps({
        "date": utc_now(), "smi": smi_query(), "nvcc": nvcc_version(), "ncu": ver[-1] if ver else "",
        "ncu_command": " ".join(cmd[:-2]) + " wide_bin 0x1", "ncu_stderr": p.stderr[-2000:],
        "command": "python3 calibrate/lds_wide_return.py --out $OUT"}))
    exe.unlink(missing_ok=True)
    print(text[:2000])
    print(p.stdout[-1500:], p.stderr[-1500:])


def _ncu_wavefronts(text: str) -> dict:
    """{(V, WF, ROWS): wavefronts per shared load} from the ncu CSV (kernel names wide<B, V, WF, ROWS>)."""
    lines = [ln for ln in text.splitlines() if ln.startswith('"')]
    out: dict = {}
    for r in csv.DictReader(io.StringIO("\n".join(lines))):
        m = re.search(r"wide<(\d+), (\d+), (\d+), (\d+)>", r.get("Kernel Name", ""))
        if not m:
            continue
        try:
            n = float(r[METRICS[0]].replace(",", ""))
            wf = float(r[METRICS[1]].replace(",", ""))
        except (KeyError, ValueError):
            continue
        if n > 0:
            out[int(m.group(2)), int(m.group(3)), int(m.group(4))] = wf / n
    return out


def _slope(xs, ys) -> float:
    """Theil-Sen: the median of the pairwise slopes. The third B of each kind's set comes back ~20
    cycles late in every kind (its own unrolled kernel), which a least-squares line would follow."""
    return statistics.median((ys[j] - ys[i]) / (xs[j] - xs[i])
                             for i in range(len(xs)) for j in range(i + 1, len(xs)) if xs[j] != xs[i])


def record(dir_: Path, dest: Path):
    prov = json.loads((dir_ / "wide_prov.json").read_text())
    wavefronts = _ncu_wavefronts((dir_ / "wide_ncu.csv").read_text())
    rows = []
    for ln in (dir_ / "wide_stamps.txt").read_text().splitlines():
        f = ln.split()
        if not f or f[0] != "mask":
            continue
        mask, v, wf, b, nrows = f[1], int(f[3]), int(f[5]), int(f[7]), int(f[9])
        per: dict = {}
        for tok in f[11:]:
            w, _, issue, back = (int(x) for x in tok.split(":"))
            per.setdefault(w, []).append((issue, issue + back))
        reps = [x for r in per.values() for x in r[1:]]
        rows.append({"mask": mask, "layout": MASKS.get(mask, mask), "words_per_lane": v, "conflict": wf,
                     "distinct_rows": nrows, "loads": b,
                     "issue_cycles_median": statistics.median(x[0] for x in reps),
                     "back_cycles_median": statistics.median(x[1] for x in reps),
                     "back_cycles_by_warp": {str(w): statistics.median(x[1] for x in r[1:]) for w, r in per.items()}})
    kinds = []
    for key in sorted({(r["mask"], r["words_per_lane"], r["conflict"], r["distinct_rows"]) for r in rows}):
        pts = sorted((r["loads"], r["back_cycles_median"]) for r in rows
                     if (r["mask"], r["words_per_lane"], r["conflict"], r["distinct_rows"]) == key)
        kinds.append({"mask": key[0], "words_per_lane": key[1], "conflict": key[2], "distinct_rows": key[3],
                      "wavefronts_per_load_ncu": wavefronts.get(key[1:]),
                      "cycles_per_load": _slope([p[0] for p in pts], [p[1] for p in pts])})
    value = next((k["cycles_per_load"] for k in kinds if k["mask"] == "0x1" and k["words_per_lane"] == 4
                  and k["conflict"] == 2 and k["distinct_rows"] == 1), None)
    rec = {
        "schema": "gpusim.hw.micro/1", "bench": "lds_wide_return",
        "what": "cycles per load until a burst of independent shared loads is back at its warp, by width "
                "(LDS.32 / .64 / .128), bank conflict and warp layout",
        "how": "one CTA; the warps of a mask (0x1, 0x1111, 0xffff; warp w on SMSP w % 4) issue 8 bursts of B "
               "ld.volatile.shared (v1 / v2 / v4) with a WF-way conflict, every load the same words (distinct_rows 1) or "
               "load j row j % 8 (distinct_rows 8); clock64 before, after the last issue, "
               "after a branch on the last load's value; medians over warps and bursts 2-8; cycles_per_load = slope "
               "of the back time over B, median of the pairwise slopes (calibrate/lds_wide_return.py, .cu); one "
               "warp alone also runs LDS.128 bursts of 32-48 and LDS.64 bursts of 64-96",
        "command": prov["command"] + " (on the H200), then --record DIR here",
        "ncu_command": prov.get("ncu_command"), "source": "calibrate/lds_wide_return.cu:wide",
        **provenance(prov),
        "unit": "cycles per load (slope of the back time); value: 1 warp, LDS.128 with a 2-way conflict",
        "value": value,
        "details": {"kinds": kinds, "rows": rows},
    }
    dest.write_text(json.dumps(rec, indent=1))
    print(f"wrote {dest}")
    for k in kinds:
        print(k["mask"], f"V{k['words_per_lane']} WF{k['conflict']} rows{k['distinct_rows']}", "wf/load", k["wavefronts_per_load_ncu"],
              "cycles/load", round(k["cycles_per_load"], 2))


if __name__ == "__main__":
    out_or_record(run_on_gpu, record, "lds_wide_return.json")
