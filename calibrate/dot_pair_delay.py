"""Do two warps of one SMSP on regtile2d's dotIdx trip come together when they start apart?

    python3 calibrate/dot_pair_delay.py --out DIR      # on the GPU machine (nvcc, cuobjdump)
    python3 calibrate/dot_pair_delay.py --record DIR   # here: -> traces/hw/h200/micro/dot_pair_delay.json

calibrate/dot_pair_delay.cu runs dot_pair's trips (dot_trip.cuh) with warps 4-7 held back DELAY
cycles before their first trip: warps 0 and 4 (one SMSP, mask 0x11) and all eight (0xff), with and
without the trip's loads. Per run: each warp's median trip time over trips STEADY.. and, per pair of warps
on one SMSP, where the later warp's trip starts within the earlier's trip (its phase, folded to 0..1/2 of
a trip: 0 together, 1/2 in turns), trip by trip. The same GPU run rebuilds dot_pair.cu (whose trip moved
into dot_trip.cuh) and checks that its trip loop is the SASS micro/dot_pair.sass holds.
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

RUNS = [("0x11", d, False) for d in (0, 16, 32, 64, 100, 150)] + [("0xff", d, False) for d in (0, 32, 100)] \
    + [("0x11", d, True) for d in (0, 40)]
STEADY = 24          # trips skipped before the steady medians (the pair may take trips to settle)


def run_on_gpu(out: Path):
    out.mkdir(parents=True, exist_ok=True)
    exe, text = build_and_run(HERE / "dot_pair_delay.cu", out, "delay",
                              [[m, str(d)] + (["ffma"] if f else []) for m, d, f in RUNS])
    exe.unlink(missing_ok=True)
    exe2, _ = build_and_run(HERE / "dot_pair.cu", out, "dotcheck", [["0x11"], ["0xff"]])
    exe2.unlink(missing_ok=True)
    (out / "delay_prov.json").write_text(json.dumps(gpu_provenance("dot_pair_delay.py")))
    print(json.dumps(summarize(parse(text)), indent=1))


def parse(text: str) -> dict:
    """{(kernel, mask, delay): {warp: (warp slot, [trip start cycles])}}."""
    out: dict = {}
    for ln in text.splitlines():
        f = ln.split()
        if len(f) > 8 and f[0] == "delay":
            key = ("dot_ffma" if f[2] == "ffma_mask" else "dot_pair", f[3], int(f[1]))
            out.setdefault(key, {})[int(f[5])] = (int(f[7]), [int(x) for x in f[8:]])
    return out


def folded_offsets(ta: list, tb: list, trip: float) -> list:
    """Per trip, warp b's start offset from warp a's, folded to 0..trip/2 (0 together, trip/2 in turns)."""
    return [abs((y - x + trip / 2) % trip - trip / 2) for x, y in zip(ta, tb)]


def pair_phases(warps: dict, trip: float) -> list:
    """For each pair of warps on one SMSP: (warps, folded_offsets of their trip starts)."""
    out = []
    ws = sorted(warps)
    for i, a in enumerate(ws):
        for b in ws[i + 1:]:
            if warps[a][0] % 4 == warps[b][0] % 4:
                out.append(([a, b], folded_offsets(warps[a][1], warps[b][1], trip)))
    return out


def summarize(runs: dict) -> list:
    rows = []
    for (kernel, mask, delay), warps in runs.items():
        trip = {w: statistics.median(b - a for a, b in zip(t[STEADY:], t[STEADY + 1:])) for w, (_, t) in warps.items()}
        mean_trip = statistics.mean(trip.values())
        rows.append({"kernel": kernel, "mask": mask, "delay": delay,
                     "warp_slots": {str(w): s for w, (s, _) in warps.items()},
                     "trip_cycles_median": {str(w): v for w, v in trip.items()},
                     "pairs": [{"warps": p, "phase_by_trip": [round(x) for x in d[:16]],
                                "phase_median": statistics.median(d[STEADY:])}
                               for p, d in pair_phases(warps, mean_trip)]})
    return rows


def loop_sass(sass: str, kernel: str) -> list:
    """The trip loop's instructions of a kernel in a cuobjdump listing, without their PCs."""
    from dot_pair import loop_range, _function
    lo, hi = loop_range(sass, kernel)
    return [m.group(2) for m in re.finditer(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", _function(sass, kernel))
            if lo <= int(m.group(1), 16) <= hi]


def record(dir_: Path, dest: Path):
    prov = json.loads((dir_ / "delay_prov.json").read_text())
    runs = parse((dir_ / "delay_stamps.txt").read_text())
    committed = (HERE.parent / "traces/hw/h200/micro/dot_pair.sass").read_text()
    rebuilt = (dir_ / "dotcheck.sass").read_text()
    same = {k: loop_sass(rebuilt, k) == loop_sass(committed, k) for k in ("dot_pair", "dot_ffma")}
    rows = summarize(runs)
    rec = {
        "schema": "gpusim.hw.micro/1", "bench": "dot_pair_delay",
        "what": "dot_pair's trip (regtile2d's dotIdx trip: 8 LDS, 2 LDS.128, 64 FFMAs) by two warps of one SMSP "
                "(0x11) or two on each SMSP (0xff), warps 4-7 held back DELAY cycles before their first trip, "
                "with and without the trip's loads: do the warps of an SMSP come together or settle in turns?",
        "how": "calibrate/dot_pair_delay.cu: one CTA of 256 threads, the trips of calibrate/"
               "dot_trip.cuh after warps 4-7 spin on clock64 for DELAY cycles; lane 0 stamps clock64 at the top "
               "of each of 64 trips and its %warpid; the second of two launches is kept. Pair phase: the later "
               "warp's trip start minus the other's, folded to 0..trip/2 with the run's mean trip time; "
               f"medians over trips {STEADY}-63 (calibrate/dot_pair_delay.py)",
        "command": prov["command"] + " (on the H200), then --record DIR here",
        "source": "calibrate/dot_pair_delay.cu",
        **provenance(prov),
        "unit": "cycles (clock64); value: median pair phase of 0x11 held back 100 cycles",
        "value": next(r for r in rows if r["mask"] == "0x11" and r["delay"] == 100
                      and r["kernel"] == "dot_pair")["pairs"][0]["phase_median"],
        "details": {"rows": rows,
                    "dot_pair_loop_sass_unchanged": same,
                    "stamps": {f"{k} {m} {d}": {str(w): t for w, (_, t) in ws.items()}
                               for (k, m, d), ws in runs.items()},
                    "warp_slots": {f"{k} {m} {d}": {str(w): s for w, (s, _) in ws.items()}
                                   for (k, m, d), ws in runs.items()}},
    }
    dest.write_text(json.dumps(rec, indent=1))
    (dest.parent / "dot_pair_delay.sass").write_text((dir_ / "delay.sass").read_text())
    print(f"wrote {dest}")
    print(json.dumps({"dot_pair_loop_sass_unchanged": same}))
    for r in rows:
        print(r["kernel"], r["mask"], r["delay"], r["trip_cycles_median"],
              [(p["warps"], p["phase_by_trip"][:8], p["phase_median"]) for p in r["pairs"]])


if __name__ == "__main__":
    out_or_record(run_on_gpu, record, "dot_pair_delay.json")
