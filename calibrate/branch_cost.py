"""A loop's back branch on the H200: the cycles a taken branch adds to a trip beyond ptxas's stall counts.

    python3 calibrate/branch_cost.py --out DIR      # on the GPU machine (nvcc, cuobjdump, cupy)
    python3 calibrate/branch_cost.py --record DIR   # here: -> traces/hw/h200/micro/branch_cost.json (+ .sass)

calibrate/branch_cost.cu, clock64 in the kernel: loops not unrolled whose trip holds K = 4, 8, 16, 32
independent integer updates, the counter's compare and the back branch. One warp per CTA: cycles per trip =
(cycles at n = 2048 less n = 1024) / 1024; the record subtracts the trip's stall counts (each instruction's
own, read off the SASS kept beside the record), leaving the taken branch's cost. Then 4 to 32 warps per CTA
(1 to 8 per SMSP), one CTA per SM, n = 1024: if the cost held the SMSP, a trip of W/4 warps would take
W/4 times (instructions + cost) cycles; if it holds the warp alone, the others issue meanwhile. Medians over
132 CTAs and 3 launches.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from micro_cli import chain_and_rate_rows, gpu_provenance, out_or_record, write_record  # noqa: E402

SMS = 132
LOOPS = ("loop4", "loop8", "loop16", "loop32")
WARPS = (4, 8, 16, 32)
N_RATE = 1024


def run_on_gpu(out: Path):
    rows = chain_and_rate_rows(out, "branch_cost", LOOPS, LOOPS, WARPS, N_RATE, "cycles_per_trip", SMS)
    (out / "branch_rows.json").write_text(json.dumps(rows, indent=1))
    (out / "branch_prov.json").write_text(json.dumps(gpu_provenance("branch_cost.py")))


def loop_trip(sass: str, kernel: str) -> list:
    """[(offset, opcode, stall count)] of the kernel's loop trip: from the back branch's target to the back
    branch (the last backward BRA of the listing's function)."""
    from gpusim.timing.control_codes import parse_sass
    import re
    start = sass.index(f"Function : {kernel}\n")
    end = sass.find("Function : ", start + 1)
    body = sass[start:end if end > 0 else len(sass)]
    insns = parse_sass(body)
    back = None
    for line in body.splitlines():
        m = re.search(r"/\*([0-9a-f]{4,})\*/\s+@!?U?P\d\s+BRA\s+(?:`\(\.L_x_\d+\)\s*)?0x([0-9a-f]+)", line)
        if m and int(m.group(2), 16) < int(m.group(1), 16):
            back = (int(m.group(2), 16), int(m.group(1), 16))
    if back is None:
        raise SystemExit(f"{kernel}: no backward branch in its SASS")
    return [x for x in insns if back[0] <= x[0] <= back[1]]


def record(dir_: Path, dest: Path):
    prov = json.loads((dir_ / "branch_prov.json").read_text())
    rows = json.loads((dir_ / "branch_rows.json").read_text())
    sass = (dir_ / "branch_cost.sass").read_text()
    trips = {}
    for k in LOOPS:
        ins = loop_trip(sass, k)
        step = next(r["cycles_per_trip"] for r in rows if r["kernel"] == k and "cycles_per_trip" in r)
        stalls = sum(max(s, 1) for _, _, s in ins)
        trips[k] = {"instructions": len(ins), "stall_counts": stalls, "cycles_per_trip": round(step, 2),
                    "beyond_stall_counts": round(step - stalls, 2)}
    for r in rows:
        if "cycles" in r:
            r["cycles_per_trip"] = round(r["cycles"] / N_RATE, 2)
    write_record(
        dest, prov, "branch_cost",
        what="the cycles a loop's taken back branch adds to a trip beyond ptxas's stall counts (one warp), and a "
             "trip's cycles with 1 to 8 warps per SMSP",
        how="calibrate/branch_cost.cu, clock64 around n trips of a loop not unrolled holding K = 4-32 independent "
            "integer updates: one warp per CTA, (cycles at n = 2048 less n = 1024) / 1024, less the stall counts "
            "of the trip's instructions read off the SASS (kept beside the record); then 4-32 warps per CTA at "
            f"n = {N_RATE}, the slowest warp's cycles over n; one CTA per SM, medians over 132 CTAs and 3 launches "
            "(calibrate/branch_cost.py)",
        source="calibrate/branch_cost.cu:" + ",".join(LOOPS),
        unit="cycles per loop trip",
        value={k: v["beyond_stall_counts"] for k, v in trips.items()},
        details={"trips": trips, "rows": rows},
        sass=dir_ / "branch_cost.sass",
    )


if __name__ == "__main__":
    out_or_record(run_on_gpu, record, "branch_cost.json")
