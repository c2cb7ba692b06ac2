"""Whether an L2 hit costs every SM the same: lines warmed by one SM, then chased by every SM in turn.

    python3 calibrate/l2_near_far.py --out DIR      # on the GPU machine (nvcc, cuobjdump)
    python3 calibrate/l2_near_far.py --record DIR   # here: -> traces/hw/h200/micro/l2_near_far.json

calibrate/l2_near_far.cu: after a 256 MB flush, the CTA on SM 0 or SM 66 (or none: "cold")
reads a footprint of 2 or 8 MB into the L2 with ld.global.cg; then, one SM at a time in SM order, a
single thread on each SM chases 2048 lines of the same random chain (its own start) and reports its
cycles per load. An SM for which the lines warmed by SM 0 and those warmed by SM 66 cost different
amounts sees a "near" and a "far" L2: the per-SM pairs are the record's evidence. Lines a chase has
fetched over the fabric are held on its side afterwards, so the later SMs in the order find more of
them near: compare the early SMs.
"""
from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from micro_cli import provenance, build_and_run, nvcc_version, out_or_record  # noqa: E402  (beside this script)

SPLIT = 50.0          # cycles: an SM whose two warmed chases differ by more has a near and a far side


def run_on_gpu(out: Path):
    from gpusim.hw.devinfo import smi_query, utc_now
    out.mkdir(parents=True, exist_ok=True)
    exe, text = build_and_run(HERE / "l2_near_far.cu", out, "nf", [[]])
    (out / "nf_prov.json").write_text(json.dumps({
        "date": utc_now(), "smi": smi_query(), "nvcc": nvcc_version(),
        "command": "python3 calibrate/l2_near_far.py --out $OUT"}))
    exe.unlink(missing_ok=True)
    print(text[:3000])


def record(dir_: Path, dest: Path):
    prov = json.loads((dir_ / "nf_prov.json").read_text())
    runs = {}
    for ln in (dir_ / "nf_stamps.txt").read_text().splitlines():
        f = ln.split()
        if f and f[0] == "footprint_mb":
            runs[int(f[1]), int(f[3])] = [float(x) for x in f[5:]]
    rows, pairs = [], []
    for (mb, who), v in sorted(runs.items()):
        s = sorted(v)
        rows.append({"footprint_mb": mb, "warmer_sm": who, "cycles_per_load_by_sm": v,
                     "median": statistics.median(v), "p10": s[len(s) // 10], "p90": s[9 * len(s) // 10]})
    for mb in sorted({k[0] for k in runs}):
        a, b = runs.get((mb, 0)), runs.get((mb, 66))
        if a and b:
            split = [(min(x, y), max(x, y)) for x, y in zip(a, b) if abs(x - y) > SPLIT]
            pairs.append({"footprint_mb": mb, "sms_with_two_sides": len(split),
                          "near_median": statistics.median(p[0] for p in split) if split else None,
                          "far_median": statistics.median(p[1] for p in split) if split else None})
    two = next((p for p in pairs if p["footprint_mb"] == 2), None)
    rec = {
        "schema": "gpusim.hw.micro/1", "bench": "l2_near_far",
        "what": "L2-hit latency seen by each SM for lines another SM brought into the L2 (SM 0 or SM 66), "
                "one SM chasing at a time; and with no warm-up (cold)",
        "how": "256 MB flush; the CTA on the warmer SM reads the 2 / 8 MB chain once (ld.global.cg); then SM 0, "
               "1, ..., 131 in turn: one thread chases 2048 lines of the chain from its own start, clock64 per "
               "load (calibrate/l2_near_far.py, .cu). sms_with_two_sides: SMs whose chases after the "
               "two warmers differ by more than 50 cycles; near / far: the medians of their lower / higher",
        "command": prov["command"] + " (on the H200), then --record DIR here",
        "source": "calibrate/l2_near_far.cu:warm,probe",
        **provenance(prov),
        "unit": "cycles per dependent load; value: the far-side median, 2 MB",
        "value": two["far_median"] if two else None,
        "details": {"pairs": pairs, "rows": rows},
    }
    dest.write_text(json.dumps(rec, indent=1))
    print(f"wrote {dest}")
    for p in pairs:
        print(p)
    for r in rows:
        print(r["footprint_mb"], r["warmer_sm"], "median", r["median"], "p10", r["p10"], "p90", r["p90"])


if __name__ == "__main__":
    out_or_record(run_on_gpu, record, "l2_near_far.json")
