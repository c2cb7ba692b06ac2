"""How fast the SMs take up new CTAs: the launch time of CTAs that do nothing, or spin a fixed time,
against the grid size, at the memory ladder's grids (128 to 65536 CTAs of 256 threads).

    python3 calibrate/cta_turnaround.py --out DIR      # on the GPU machine (nvcc, cupy)
    python3 calibrate/cta_turnaround.py --record DIR   # here: -> traces/hw/h200/micro/cta_turnaround.json

calibrate/cta_turnaround.cu's spin_cta: every thread spins for S SM cycles (S = 0: the CTA does nothing),
8 CTAs of 256 threads resident per SM. Each launch is timed between two CUDA events, queued behind a
20 ms spin kernel as launch_overhead.py's "queued" rows (the GPU runs them back to back, as it runs the
ladder's launches). Past one CTA per SM, an empty CTA's time per CTA per SM is what the block scheduler
and the SM need to start and retire one; with S > 0 the rows show whether that overlaps the CTAs' work.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from micro_cli import BUILD_FLAGS, queued_times, provenance, gpu_provenance, out_or_record  # noqa: E402  (beside this script)

GRIDS = (1, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536)
SPINS = (0, 1000, 4000)          # SM cycles each thread spins
BLOCK = 256


def run_on_gpu(out: Path):
    import subprocess
    from gpusim.hw.gpu import cupy, summarize_times
    cubin = out / "cta_turnaround.cubin"
    subprocess.run(["nvcc", *BUILD_FLAGS, "-cubin", "-o", str(cubin), str(HERE / "cta_turnaround.cu")], check=True)
    cp = cupy()
    mod = cp.RawModule(path=str(cubin))
    fn, spin = mod.get_function("spin_cta"), mod.get_function("spin")
    buf = cp.zeros(1024, dtype=cp.float32)
    rows = []
    for s in SPINS:
        for grid in GRIDS:
            times = queued_times(cp, spin, lambda: fn((grid,), (BLOCK,), (cp.int64(s), buf)), 3, 200)
            q = summarize_times(times, 0)
            rows.append({"grid": grid, "block": BLOCK, "spin_cycles": s,
                         "queued_us_median": 1e3 * q["time_ms_median"],
                         "queued_us_p10": 1e3 * q["time_ms_quantiles"]["p10"],
                         "queued_us_p90": 1e3 * q["time_ms_quantiles"]["p90"], "launches": len(times)})
            print(rows[-1], flush=True)
    cubin.unlink()
    (out / "turnaround_rows.json").write_text(json.dumps(rows, indent=1))
    (out / "turnaround_prov.json").write_text(json.dumps(gpu_provenance("cta_turnaround.py")))


def slope_ns(rows: list, spin: int, sms: int = 132) -> float:
    """ns per CTA per SM between the two largest grids' launch times, CTAs spinning `spin` cycles."""
    pts = sorted((r["grid"], r["queued_us_median"]) for r in rows if r["spin_cycles"] == spin)
    (g0, t0), (g1, t1) = pts[-2], pts[-1]
    return (t1 - t0) * 1e3 / ((g1 - g0) / sms)


def record(dir_: Path, dest: Path):
    prov = json.loads((dir_ / "turnaround_prov.json").read_text())
    rows = json.loads((dir_ / "turnaround_rows.json").read_text())
    meta = provenance(prov)
    ghz = meta["clocks"]["clocks.max.sm"] / 1e3
    resident = 2048 // BLOCK            # CTAs of 256 threads an SM holds at once
    # empty CTAs: the SM takes one every `dispatch` ns; spinning ones keep each of the `resident` slots busy
    # for their spin, then the slot stands empty `gap` ns before its next CTA starts
    dispatch = slope_ns(rows, 0)
    gaps = {str(s): slope_ns(rows, s) * resident - s / ghz for s in SPINS if s}
    rec = {
        "schema": "gpusim.hw.micro/1", "bench": "cta_turnaround",
        "what": "how fast the SMs take up new CTAs: launches of 256-thread CTAs that do nothing or spin a fixed "
                "number of cycles, at grids of 1 to 65536 CTAs",
        "how": "calibrate/cta_turnaround.cu's spin_cta, each launch between two CUDA events, 3 x 200 launches "
               "queued behind a 20 ms spin kernel (calibrate/cta_turnaround.py); slopes between the two largest "
               "grids, over 132 SMs",
        "command": prov["command"] + " (on the H200), then --record DIR here",
        "source": "calibrate/cta_turnaround.cu:spin_cta",
        **meta,
        "unit": "ns per CTA per SM; value: empty CTAs (the SM's CTA dispatch interval)",
        "value": dispatch,
        "details": {"dispatch_ns": dispatch,
                    "slot_gap_ns_by_spin_cycles": gaps,
                    "slot_gap_ns": sum(gaps.values()) / len(gaps),
                    "resident_ctas_per_sm": resident, "rows": rows},
    }
    dest.write_text(json.dumps(rec, indent=1))
    print(f"wrote {dest}")


if __name__ == "__main__":
    out_or_record(run_on_gpu, record, "cta_turnaround.json")
