"""Two warps of one SMSP on regtile2d's dotIdx trip, nothing else on the SM: in turns or together?

    python3 calibrate/dot_pair.py --out DIR      # on the GPU machine (nvcc, cuobjdump)
    python3 calibrate/dot_pair.py --record DIR   # here: -> traces/hw/h200/micro/dot_pair.json

calibrate/dot_pair.cu: one CTA; the warps of a mask (0x1 warp 0 alone, 0x11 warps 0 and 4 on one
SMSP, 0x3 warps 0 and 1 on two, 0xff two on each SMSP) run 64 trips of regtile2d's dot loop body over a
static shared tile, lane 0 stamping clock64 at the top of each trip. Per mask: each warp's median trip
time (trips 8-63), and for warps on one SMSP the median cycles between their starts of the same trip
(0: together; half a trip: in turns). "ffma 0x1" and "ffma 0x11" run dot_ffma, the trip without its
loads (the 64 FFMAs on registers loaded once).
"""
from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from micro_cli import provenance, build_and_run, gpu_provenance, out_or_record  # noqa: E402  (beside this script)

MASKS = {"0x1": "warp 0 alone", "0x11": "warps 0 and 4 (one SMSP)", "0x3": "warps 0 and 1 (two SMSPs)",
         "0xff": "8 warps, 2 per SMSP"}
STEADY = 8          # trips skipped at the start


def run_on_gpu(out: Path):
    out.mkdir(parents=True, exist_ok=True)
    exe, text = build_and_run(HERE / "dot_pair.cu", out, "dot",
                              [[m] for m in MASKS] + [[m, "1", "ffma"] for m in ("0x1", "0x11")])
    (out / "dot_prov.json").write_text(json.dumps(gpu_provenance("dot_pair.py")))
    exe.unlink(missing_ok=True)
    print(json.dumps(summarize(parse(text)), indent=1))


def parse(text: str) -> dict:
    """{mask: {warp: (warp slot, [trip start cycles])}}; dot_ffma's runs under "ffma MASK"."""
    out: dict = {}
    for ln in text.splitlines():
        f = ln.split()
        if len(f) > 6 and f[0] in ("mask", "ffma_mask"):
            key = f[1] if f[0] == "mask" else f"ffma {f[1]}"
            out.setdefault(key, {})[int(f[3])] = (int(f[5]), [int(x) for x in f[6:]])
    return out


def summarize(runs: dict) -> list:
    rows = []
    for mask, warps in runs.items():
        trip = {w: statistics.median(b - a for a, b in zip(t[STEADY:], t[STEADY + 1:])) for w, (_, t) in warps.items()}
        pairs = []
        ws = sorted(warps)
        for i, a in enumerate(ws):
            for b in ws[i + 1:]:
                if warps[a][0] % 4 == warps[b][0] % 4:
                    ta, tb = warps[a][1][STEADY:], warps[b][1][STEADY:]
                    pairs.append(statistics.median(abs(x - y) for x, y in zip(ta, tb)))
        warps_mask = mask.split()[-1]
        rows.append({"mask": mask, "kernel": "dot_ffma" if mask.startswith("ffma") else "dot_pair",
                     "layout": MASKS[warps_mask] + (", no loads" if mask.startswith("ffma") else ""),
                     "warp_slots": {str(w): s for w, (s, _) in warps.items()},
                     "trip_cycles_median": {str(w): v for w, v in trip.items()},
                     "same_smsp_same_trip_offset_median": pairs})
    return rows


def _function(sass: str, kernel: str) -> str:
    """The cuobjdump listing of one function of the binary."""
    text = sass[sass.index(f"Function : _Z{len(kernel)}{kernel}"):]
    nxt = text.find("Function :", 10)
    return text if nxt < 0 else text[:nxt]


def loop_range(sass: str, kernel: str = "dot_pair") -> tuple[int, int]:
    """(first, last) PC offset of the trip loop in a kernel's SASS (dot_pair, or dot_ffma: the trip without
    its loads): from the clock read (CS2R SR_CLOCKLO) to the loop's backward branch."""
    import re
    from gpusim.timing.control_codes import parse_sass
    text = _function(sass, kernel)
    start = int(re.search(r"/\*([0-9a-f]{4})\*/\s+(?:@!?P\d\s+)?CS2R R\d+, SR_CLOCKLO", text).group(1), 16)
    end = next(off for off, op, _ in parse_sass(text) if off >= start and op == "BRA")
    return start, end


def loop_stall_counts(sass: str, kernel: str = "dot_pair") -> dict:
    """{opcode: mean ptxas stall count} over the trip loop of a kernel's SASS (loop_range)."""
    from gpusim.timing.control_codes import parse_sass
    start, end = loop_range(sass, kernel)
    counts: dict = {}
    for off, op, n in parse_sass(_function(sass, kernel)):
        if start <= off <= end:
            counts.setdefault(op, []).append(n)
    return {op: sum(v) / len(v) for op, v in counts.items()}


def record(dir_: Path, dest: Path):
    prov = json.loads((dir_ / "dot_prov.json").read_text())
    runs = parse((dir_ / "dot_stamps.txt").read_text())
    rows = summarize(runs)
    alone = next(r for r in rows if r["mask"] == "0x1")
    rec = {
        "schema": "gpusim.hw.micro/1", "bench": "dot_pair",
        "what": "regtile2d's dotIdx trip (8 LDS, 2 LDS.128, 64 FFMAs) run by one warp alone, two warps of one "
                "SMSP, two of two SMSPs and two on each SMSP: trip time, and whether warps sharing an SMSP start "
                "the same trip together or in turns",
        "how": "calibrate/dot_pair.cu: one CTA of 256 threads, the warps of a mask run 64 trips over a "
               "static shared tile, lane 0 stamps clock64 at the top of each trip and its %warpid; the second "
               "of two launches is kept; medians over trips 8-63 (calibrate/dot_pair.py)",
        "command": prov["command"] + " (on the H200), then --record DIR here",
        "source": "calibrate/dot_pair.cu:dot_pair",
        **provenance(prov),
        "unit": "cycles (clock64); value: median trip time of warp 0 alone",
        "value": alone["trip_cycles_median"]["0"],
        "details": {"rows": rows, "loop_stall_counts": loop_stall_counts((dir_ / "dot.sass").read_text()),
                    "loop_stall_counts_ffma": loop_stall_counts((dir_ / "dot.sass").read_text(), "dot_ffma"),
                    "stamps": {m: {str(w): t for w, (_, t) in ws.items()} for m, ws in runs.items()}},
    }
    dest.write_text(json.dumps(rec, indent=1))
    print(f"wrote {dest}")
    print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    out_or_record(run_on_gpu, record, "dot_pair.json")
