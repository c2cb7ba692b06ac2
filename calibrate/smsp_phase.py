"""Do the warps of one SMSP run regtile2d's dot loop together, or take turns?

    python3 calibrate/smsp_phase.py --out DIR      # on the GPU machine (nvcc, cuobjdump, numpy)
    python3 calibrate/smsp_phase.py --record DIR   # here: -> traces/hw/h200/micro/smsp_phase.json

calibrate/smsp_phase.cu is regtile2d at its defaults, 4096^3, with lane 0 of each warp writing
clock64 at the top of every dotIdx trip of slabs 16-31 (128 trips), and its SM and warp slot once. For
two warps on one SM, the phase of warp a against warp b is where each of a's trip starts falls within
b's trip then running: (t_a - t_b[k]) / (t_b[k+1] - t_b[k]), folded to its distance from 0 (0 = they
start their trips together, 0.5 = half a trip apart; warps that take turns spread over 0-0.5, mean
0.25). Pairs are grouped by same / different SMSP (warp slot % 4) and same / other CTA (the other one
resident on the SM at the same time). Two warps of one CTA start each slab at the same barrier, so
for them the distance between their starts of the same trip says it in cycles as well
(same_trip_offsets). bench/bench_micro.py --only phase computes both from the engine's issue times.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from micro_cli import provenance, nvcc_build, gpu_provenance, out_or_record  # noqa: E402  (beside this script)

N = 4096
WARPS_PER_CTA = 8


def fold_phase(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance from 0 of the phase of each trip start in a within b's trips (those inside b's range)."""
    k = np.searchsorted(b, a, side="right") - 1
    ok = (k >= 0) & (k < len(b) - 1)
    k = k[ok]
    ph = (a[ok] - b[k]) / np.maximum(b[k + 1] - b[k], 1)
    return np.minimum(ph, 1.0 - ph)


def pair_phases(series: dict, smsp: dict, cta: dict) -> dict:
    """series: {warp key: sorted trip-start times, one SM's clock}; smsp / cta: {warp key: its SMSP / CTA}.
    Returns {"same SMSP, same CTA": [folded phases], ...} over every ordered pair of warps whose
    series overlap in time."""
    groups = {}
    keys = list(series)
    for a in keys:
        for b in keys:
            if a == b:
                continue
            ta, tb = series[a], series[b]
            if len(ta) < 2 or len(tb) < 2 or ta[-1] < tb[0] or tb[-1] < ta[0]:
                continue
            g = f"{'same' if smsp[a] == smsp[b] else 'other'} SMSP, {'same' if cta[a] == cta[b] else 'other'} CTA"
            groups.setdefault(g, []).append(fold_phase(ta, tb))
    return {g: np.concatenate(v) for g, v in groups.items()}


def same_trip_offsets(series: dict, smsp: dict, cta: dict) -> dict:
    """|t_a[j] - t_b[j]| for every pair of warps of one CTA (their slabs start at the same barrier, so
    trip j is the same work), grouped "same SMSP" / "other SMSP"."""
    out: dict = {"same SMSP": [], "other SMSP": []}
    for a in series:
        for b in series:
            if a < b and cta[a] == cta[b]:
                n = min(len(series[a]), len(series[b]))
                out["same SMSP" if smsp[a] == smsp[b] else "other SMSP"].append(np.abs(series[a][:n] - series[b][:n]))
    return {g: np.concatenate(v) for g, v in out.items() if v}


def summarize(groups: dict) -> dict:
    return {g: {"pairs_trips": int(v.size), "median": round(float(np.median(v)), 3),
                "mean": round(float(v.mean()), 3), "below_0.1": round(float((v < 0.1).mean()), 3)}
            for g, v in sorted(groups.items())}


def hw_phases(where: np.ndarray, stamps: np.ndarray) -> tuple[dict, dict, float]:
    """The H200's pair phases and same-trip offsets from the micro's output (where: [warps, 2] smid, warp
    slot; stamps: [warps, trips]), and the median trip time in cycles."""
    groups: dict = {}
    offs: dict = {}
    for sm in np.unique(where[:, 0]):
        ws = np.flatnonzero(where[:, 0] == sm)
        series = {int(w): stamps[w].astype(np.float64) for w in ws}
        smsp = {int(w): int(where[w, 1]) % 4 for w in ws}
        cta = {int(w): int(w) // WARPS_PER_CTA for w in ws}
        for g, v in pair_phases(series, smsp, cta).items():
            groups.setdefault(g, []).append(v)
        for g, v in same_trip_offsets(series, smsp, cta).items():
            offs.setdefault(g, []).append(v)
    trip = float(np.median(np.diff(stamps, axis=1)))
    return ({g: np.concatenate(v) for g, v in groups.items()}, {g: np.concatenate(v) for g, v in offs.items()}, trip)


def summarize_offsets(offs: dict) -> dict:
    return {g: {"pairs_trips": int(v.size), "median": float(np.median(v)), "mean": round(float(v.mean()), 1)}
            for g, v in sorted(offs.items())}


def run_on_gpu(out: Path):
    out.mkdir(parents=True, exist_ok=True)
    exe = nvcc_build(HERE / "smsp_phase.cu", out / "phase_bin")
    (out / "phase.sass").write_text(subprocess.run(["cuobjdump", "-sass", str(exe)], capture_output=True,
                                                   text=True).stdout)
    raw = out / "phase_raw.bin"
    text = subprocess.run([str(exe), str(N), str(raw)], capture_output=True, text=True, check=True).stdout
    print(text)
    ctas = int(text.split("ctas ")[1].split()[0])
    trips = int(text.split("trips ")[1].split()[0])
    buf = raw.read_bytes()
    n_w = ctas * WARPS_PER_CTA
    where = np.frombuffer(buf[:n_w * 8], np.int32).reshape(n_w, 2)
    stamps = np.frombuffer(buf[n_w * 8:], np.int64).reshape(n_w, trips)
    # per SM, times from that SM's first stamp (int32 holds a 5 ms kernel's cycles)
    rel = np.zeros_like(stamps, dtype=np.int64)
    for sm in np.unique(where[:, 0]):
        ws = where[:, 0] == sm
        rel[ws] = stamps[ws] - stamps[ws].min()
    np.savez_compressed(out / "phase_stamps.npz", where=where, stamps=rel.astype(np.int32))
    raw.unlink()
    exe.unlink(missing_ok=True)
    (out / "phase_prov.json").write_text(json.dumps(gpu_provenance("smsp_phase.py", stdout=text)))
    groups, offs, trip = hw_phases(where, rel)
    print(json.dumps({"trip_cycles_median": trip, **summarize(groups), **summarize_offsets(offs)}, indent=1))


def record(dir_: Path, dest: Path):
    prov = json.loads((dir_ / "phase_prov.json").read_text())
    z = np.load(dir_ / "phase_stamps.npz")
    where, stamps = z["where"], z["stamps"].astype(np.int64)
    groups, offs, trip = hw_phases(where, stamps)
    ms = [float(ln.split(" ms ")[1]) for ln in prov["stdout"].splitlines() if ln.startswith("launch")]
    # one SM's co-resident pair of CTAs kept whole: the engine's comparison and a reader's look
    sm0 = np.flatnonzero(where[:, 0] == where[0, 0])
    keep = [int(w) for w in sm0 if stamps[w, 0] <= stamps[sm0[:WARPS_PER_CTA], -1].max()][:2 * WARPS_PER_CTA]
    rec = {
        "schema": "gpusim.hw.micro/1", "bench": "smsp_phase",
        "what": "whether the warps of one SMSP run regtile2d's dotIdx trips together or take turns: the phase "
                "of each warp's trip starts within another warp's trips on the same SM, by same / different "
                "SMSP and CTA",
        "how": "calibrate/smsp_phase.cu: regtile2d at its defaults, 4096^3, lane 0 of every warp writes "
               "clock64 at the top of each dotIdx trip of slabs 16-31 and its %smid / %warpid once; the second of "
               "two launches is kept; phase = (t_a - t_b[k]) / (t_b[k+1] - t_b[k]) folded to [0, 0.5] "
               "(calibrate/smsp_phase.py)",
        "command": prov["command"] + " (on the H200), then --record DIR here",
        "source": "calibrate/smsp_phase.cu:smsp_phase",
        **provenance(prov),
        "unit": "trip phase (0 = together, 0.5 = half a trip apart), offsets in cycles; value: median phase "
                "of warps on the same SMSP and CTA",
        "value": summarize(groups).get("same SMSP, same CTA", {}).get("median"),
        "details": {"kernel_ms": ms, "trip_cycles_median": trip, "phases": summarize(groups),
                    "same_trip_offsets_same_cta": summarize_offsets(offs),
                    "one_sm": {"warps": keep, "smid_warpid": where[keep].tolist(),
                               "stamps": stamps[keep].tolist()}},
    }
    dest.write_text(json.dumps(rec, indent=1))
    print(f"wrote {dest}")
    print(json.dumps(rec["details"]["phases"], indent=1), json.dumps(rec["details"]["same_trip_offsets_same_cta"]),
          trip, ms)


if __name__ == "__main__":
    out_or_record(run_on_gpu, record, "smsp_phase.json")
