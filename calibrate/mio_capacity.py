"""How many shared loads the MIO path holds in flight, by load kind and by warp layout.

    python3 calibrate/mio_capacity.py --out DIR      # on the GPU machine (nvcc, cuobjdump)
    python3 calibrate/mio_capacity.py --record DIR   # here: -> traces/hw/h200/micro/mio_capacity.json

calibrate/mio_capacity.cu: one CTA; the warps of a mask (1 warp; one warp on each SMSP; 4
warps on SMSP 0; 16 warps, 4 per SMSP) issue bursts of B independent LDS of one kind (LDS.32 with a
1- to 32-way bank conflict, conflict-free LDS.64 and LDS.128), clock64 before the burst, after its
last issue and after its values are consumed. Per (layout, kind, B): the median over warps and reps
1.. of the issue time t1 - t0 and of the wait t2 - t1. A burst that fits issues in about 4 cycles a
load; past the capacity its issue time grows at the drain rate.
"""
from __future__ import annotations

import json
import re
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from micro_cli import provenance, build_and_run, gpu_provenance, out_or_record  # noqa: E402  (beside this script)

MASKS = {"0x1": "1 warp", "0xf": "1 warp on each SMSP", "0x1111": "4 warps on SMSP 0",
         "0xffff": "16 warps, 4 per SMSP"}


def run_on_gpu(out: Path):
    out.mkdir(parents=True, exist_ok=True)
    exe, text = build_and_run(HERE / "mio_capacity.cu", out, "mio", [[m] for m in MASKS])
    (out / "mio_prov.json").write_text(json.dumps(gpu_provenance("mio_capacity.py")))
    exe.unlink(missing_ok=True)
    print(text[:3000])


def _lds_kinds(sass: str) -> list[str]:
    """The distinct LDS opcodes of the cap<> kernels (what the bursts really issue)."""
    return sorted(set(re.findall(r"\b(LDS(?:\.[A-Z0-9]+)*)\b", sass)))


def record(dir_: Path, dest: Path):
    prov = json.loads((dir_ / "mio_prov.json").read_text())
    rows = []
    for ln in (dir_ / "mio_stamps.txt").read_text().splitlines():
        f = ln.split()
        if not f or f[0] != "mask":
            continue
        mask, v, wf, b = f[1], int(f[3]), int(f[5]), int(f[7])
        per = {}
        for tok in f[9:]:
            w, _, issue, wait = (int(x) for x in tok.split(":"))
            per.setdefault(w, []).append((issue, wait))
        issue = [x[0] for reps in per.values() for x in reps[1:]]
        wait = [x[1] for reps in per.values() for x in reps[1:]]
        rows.append({"mask": mask, "layout": MASKS.get(mask, mask), "words_per_lane": v, "conflict": wf, "loads": b,
                     "issue_cycles_median": statistics.median(issue), "wait_cycles_median": statistics.median(wait),
                     "issue_cycles_by_warp": {str(w): statistics.median(x[0] for x in reps[1:])
                                              for w, reps in per.items()}})
    rec = {
        "schema": "gpusim.hw.micro/1", "bench": "mio_capacity",
        "what": "issue time of bursts of B independent shared loads by kind (LDS.32 1- to 32-way conflicted, "
                "LDS.64, LDS.128) and warp layout: where issue starts to wait is the MIO path's capacity",
        "how": "one CTA; the warps of a mask (0x1, 0xf, 0x1111, 0xffff; warp w on SMSP w % 4) issue 8 bursts of "
               "B ld.volatile.shared into registers kept live until the burst is issued; clock64 before, after "
               "the last issue, after consumption; medians over warps and bursts 2-8 "
               "(calibrate/mio_capacity.py, .cu)",
        "command": prov["command"] + " (on the H200), then --record DIR here",
        "source": "calibrate/mio_capacity.cu:cap",
        **provenance(prov), "sass_loads": _lds_kinds((dir_ / "mio.sass").read_text()),
        "unit": "cycles (clock64) to issue a burst; value: 1 warp, 96 conflict-free LDS.32",
        "value": next((r["issue_cycles_median"] for r in rows if r["mask"] == "0x1" and r["words_per_lane"] == 1
                       and r["conflict"] == 1 and r["loads"] == 96), None),
        "details": {"rows": rows},
    }
    dest.write_text(json.dumps(rec, indent=1))
    print(f"wrote {dest}")
    for r in rows:
        print(r["mask"], f"V{r['words_per_lane']} WF{r['conflict']} B{r['loads']}", r["issue_cycles_median"],
              r["wait_cycles_median"])


if __name__ == "__main__":
    out_or_record(run_on_gpu, record, "mio_capacity.json")
