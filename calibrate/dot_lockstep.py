"""What holds two warps of one SMSP in step on regtile2d's dotIdx trip: reading the same shared words, or
being warps of one CTA?

    python3 calibrate/dot_lockstep.py --out DIR      # on the GPU machine (nvcc, cuobjdump)
    python3 calibrate/dot_lockstep.py --record DIR   # here: -> traces/hw/h200/micro/dot_lockstep.json

calibrate/dot_lockstep.cu runs dot_pair's trip in three modes, each three times: "same" (warps 0 and
4 of one CTA, as micro/dot_pair.json's 0x11 row: the control on this binary), "split" (the same warps, each
reading its own row of the tiles, so that no Bs word is read by both; banks and conflicts unchanged) and
"cross" (warp 0 of each of two CTAs on one SM, 264 CTAs). Per pair of warps on one SMSP (slot % 4 equal;
for cross, the two CTAs an SM received): each warp's median trip time and the median cycles between their
starts of the same trip over trips 8-63 (0: in step; half a trip: in turns), and how often the lead changes
from one trip to the next.
"""
from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from micro_cli import provenance, build_and_run, gpu_provenance, out_or_record  # noqa: E402
from dot_pair import loop_stall_counts  # noqa: E402  (beside this script)

MODES = ("same", "split", "cross")
RUNS = 3
STEADY = 8          # trips skipped at the start, as dot_pair.py


def run_on_gpu(out: Path):
    out.mkdir(parents=True, exist_ok=True)
    exe, text = build_and_run(HERE / "dot_lockstep.cu", out, "lockstep",
                              [[m, "132", f"r{i}"] for i in range(RUNS) for m in MODES])
    (out / "lockstep_prov.json").write_text(json.dumps(gpu_provenance("dot_lockstep.py")))
    exe.unlink(missing_ok=True)
    print(json.dumps(summarize(parse(text)), indent=1))


def parse(text: str) -> dict:
    """{(mode, run label): {(cta, warp): (SM, warp slot, [trip start cycles])}}."""
    out: dict = {}
    for ln in text.splitlines():
        f = ln.split()
        if len(f) > 11 and f[0] == "dot":
            out.setdefault((f[1], f[2]), {})[(int(f[4]), int(f[6]))] = (int(f[8]), int(f[10]),
                                                                       [int(x) for x in f[11:]])
    return out


def pair_stats(a: list, b: list) -> dict:
    """Two warps' trip starts (one SM's clock): their median trip times, the median cycles between their
    starts of the same trip, and the share of trips whose leader differs from the previous trip's."""
    a, b = a[STEADY:], b[STEADY:]
    trip = [statistics.median(y - x for x, y in zip(t, t[1:])) for t in (a, b)]
    lead = [x < y for x, y in zip(a, b)]
    off = statistics.median(abs(x - y) for x, y in zip(a, b))
    x = (off / statistics.mean(trip)) % 1.0
    return {"trip_cycles_median": trip, "offset_median": off,
            "phase": min(x, 1.0 - x),          # 0: in step, 0.5: in turns (whole trips apart folded away)
            "lead_changes": sum(p != q for p, q in zip(lead, lead[1:])) / (len(lead) - 1)}


def same_smsp_pairs(warps: dict) -> list:
    """The (trip starts, trip starts) of every two warps of a run on one SM whose slots share slot % 4 (the
    SMSP), in the run's order."""
    by_sm: dict = {}
    for sm, slot, t in warps.values():
        by_sm.setdefault(sm, []).append((slot, t))
    return [(ta, tb) for ws in by_sm.values() for i, (sa, ta) in enumerate(ws) for sb, tb in ws[i + 1:]
            if sa % 4 == sb % 4]


def cross_pairs(runs: dict) -> list:
    """Per same-SMSP pair of cross's runs: [cycles between the two warps' first trip starts, between their
    starts of trip STEADY, the median over trips STEADY.. (signed: the later CTA's minus the earlier's), the
    pair's mean trip time]: whether a pair keeps the offset it had once both ran."""
    out = []
    for (mode, _), warps in sorted(runs.items()):
        if mode != "cross":
            continue
        for ta, tb in same_smsp_pairs(warps):
            a, b = (ta, tb) if ta[0] <= tb[0] else (tb, ta)
            trip = statistics.mean(pair_stats(a, b)["trip_cycles_median"])
            out.append([b[0] - a[0], b[STEADY] - a[STEADY],
                        statistics.median(y - x for x, y in zip(a[STEADY:], b[STEADY:])), trip])
    return out


def p10_p90(values) -> list:
    v = sorted(values)
    return [v[len(v) // 10], v[(9 * len(v)) // 10]]


def summarize(runs: dict) -> list:
    rows = []
    for mode in MODES:
        got = [[pair_stats(a, b) for a, b in same_smsp_pairs(warps)]
               for (m, _), warps in sorted(runs.items()) if m == mode]
        allp = [p for ps in got for p in ps]
        if not allp:
            continue
        offs = [p["offset_median"] for p in allp]
        phases = [p["phase"] for p in allp]
        rows.append({"mode": mode, "runs": len(got), "pairs": len(allp),
                     "trip_cycles_median": statistics.median(statistics.mean(p["trip_cycles_median"]) for p in allp),
                     "offset_median": statistics.median(offs), "offset_p10_p90": p10_p90(offs),
                     "phase_median": statistics.median(phases), "phase_p10_p90": p10_p90(phases),
                     "lead_changes_median": statistics.median(p["lead_changes"] for p in allp)})
    return rows


def record(dir_: Path, dest: Path):
    prov = json.loads((dir_ / "lockstep_prov.json").read_text())
    runs = parse((dir_ / "lockstep_stamps.txt").read_text())
    rows = summarize(runs)
    sass = (dir_ / "lockstep.sass").read_text()
    smi = prov.get("smi", {})
    (dest.parent / "dot_lockstep.sass").write_text(
        "# cuobjdump -sass of calibrate/dot_lockstep.cu, the binary micro/dot_lockstep.json ran (its\n"
        "# loop_stall_counts come from the trip loop: CS2R SR_CLOCKLO to the backward BRA).\n"
        f"# Made {prov['date']} on the H200 machine ({smi.get('name', 'NVIDIA H200')}, driver "
        f"{smi.get('driver_version', '')}, {prov.get('nvcc', '')}):\n"
        "#   python3 calibrate/dot_lockstep.py --out $OUT (nvcc -arch=sm_90 -O3, cuobjdump -sass)\n" + sass)
    rec = {
        "schema": "gpusim.hw.micro/1", "bench": "dot_lockstep",
        "what": "two warps of one SMSP on regtile2d's dotIdx trip: in step or in turns when they read the same "
                "shared words (same), different ones (split), or belong to two CTAs (cross)",
        "how": "calibrate/dot_lockstep.cu: dot_pair's trip (8 LDS, 2 LDS.128, 64 FFMAs over a static "
               "shared tile) for 64 trips, lane 0 stamping clock64 at the top of each trip with its %smid and "
               "%warpid; same / split: warps 0 and 4 of one CTA; cross: in each of 264 CTAs the lowest warp on SMSP 0, "
               "paired with the other CTA on its SM; the second of two launches kept, three runs per mode; medians over trips 8-63 "
               "(calibrate/dot_lockstep.py)",
        "command": prov["command"] + " (on the H200), then --record DIR here",
        "source": "calibrate/dot_lockstep.cu:dot_lockstep",
        **provenance(prov),
        "unit": "cycles (clock64); value: median same-SMSP offset in mode split",
        "value": next((r["offset_median"] for r in rows if r["mode"] == "split"), None),
        "details": {"rows": rows, "cross_pairs": cross_pairs(runs),
                    "loop_stall_counts": loop_stall_counts(sass, "dot_lockstep"),
                    "stamps": {f"{m} {label}": {str(w): t for (_, w), (_, _, t) in ws.items()}
                               for (m, label), ws in sorted(runs.items()) if m != "cross"}},
    }
    dest.write_text(json.dumps(rec, indent=1))
    print(f"wrote {dest}")
    print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    out_or_record(run_on_gpu, record, "dot_lockstep.json")
