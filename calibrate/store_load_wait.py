"""Where a naive transpose's warps wait on the H200: at a load's issue (its LG queue or the SM's pool full,
lg_throttle), for a load's data once it issued (long_scoreboard), or at a store's issue.

    python3 calibrate/store_load_wait.py --out DIR      # on the GPU machine (nvcc, cuobjdump, cupy)
    python3 calibrate/store_load_wait.py --record DIR   # here: -> traces/hw/h200/micro/store_load_wait.json (+ .sass)

transpose_naive's four steps (a row load, then a store of its value 32 lines apart) are bound by the L2's
rate for such stores (micro/l2_write_fill.json: store_columns alone takes the kernel's time). The engine
has its warps wait at the loads' issue, the SM's LG pool full of stores the L2 has not yet taken
(lg_throttle); the H200's ncu and PC samples put most of the waiting after the loads issued
(long_scoreboard). calibrate/store_load_wait.cu stamps clock64 around each step's load, the use of its
data and its store, in transpose_naive's launch (32 x 8 threads a CTA, the 32 x 32 tile), at n = 1024 and
2048; the third of three back-to-back launches is kept (L2 warm, as the timed launches find it). Cycles
per warp; medians and means over warps, by step and by the CTA's arrival on its SM.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from micro_cli import build_keeping_sass, gpu_provenance, out_or_record, write_record  # noqa: E402  (beside this script)

SIZES = (1024, 2048)
STEPS = 4
WORDS = 18          # per warp: smid, CTA, then four steps of four stamps


def run_on_gpu(out: Path):
    import numpy as np
    from gpusim.hw.gpu import cupy, time_launches
    cubin = build_keeping_sass(out, "store_load_wait")
    cp = cupy()
    fn = cp.RawModule(path=str(cubin)).get_function("stamped_transpose")
    stamps, times = {}, {}
    for n in SIZES:
        a = cp.arange(n * n, dtype=cp.float32)
        b = cp.zeros(n * n, dtype=cp.float32)
        st = cp.zeros(((n // 32) ** 2 * 8, WORDS), dtype=cp.int64)

        def launch(a=a, b=b, st=st, n=n):
            fn((n // 32, n // 32), (32, 8), (cp.int32(n), cp.int32(n), a, b, st))
        for _ in range(3):
            launch()
        cp.cuda.runtime.deviceSynchronize()
        stamps[str(n)] = cp.asnumpy(st)
        assert float(b[1]) == float(a[n]), "the stamped kernel did not transpose"
        t = time_launches(cp, launch, target_s=0.3)
        times[str(n)] = {"time_us_median": 1e3 * t["time_ms_median"], "launches": t["timing"]["launches"],
                         "method": t["timing"]["method"]}
        print(n, times[str(n)], flush=True)
    cubin.unlink()
    np.savez_compressed(out / "store_load_wait_stamps.npz", **{f"n{k}": v for k, v in stamps.items()})
    (out / "slw_times.json").write_text(json.dumps(times, indent=1))
    (out / "slw_prov.json").write_text(json.dumps(gpu_provenance("store_load_wait.py")))


def waits(st):
    """Per warp and step: (load issue, data after issue, store issue, gap before the next step), cycles;
    and each warp's CTA arrival rank on its SM (0: the SM's first CTA, by its earliest stamp)."""
    import numpy as np
    c = st[:, 2:].reshape(-1, STEPS, 4).astype(np.int64)
    w = np.stack([c[:, :, 1] - c[:, :, 0], c[:, :, 2] - c[:, :, 1], c[:, :, 3] - c[:, :, 2]], axis=2)
    gap = np.zeros(c.shape[:2], np.int64)
    gap[:, 1:] = c[:, 1:, 0] - c[:, :-1, 3]
    sm, cta = st[:, 0], st[:, 1]
    rank = np.zeros(len(st), np.int64)
    for s in np.unique(sm):
        sel = np.flatnonzero(sm == s)
        first = {}
        for i in sel:
            first[cta[i]] = min(first.get(cta[i], 1 << 62), c[i, 0, 0])
        order = {k: r for r, k in enumerate(sorted(first, key=first.get))}
        rank[sel] = [order[cta[i]] for i in sel]
    return w, gap, rank, c


def summary(st) -> dict:
    import numpy as np
    w, gap, rank, c = waits(st)
    names = ("load_issue", "load_data", "store_issue")
    life = c[:, -1, 3] - c[:, 0, 0]
    out = {
        "warps": int(len(st)),
        "mean_cycles_per_warp": {nm: round(float(w[:, :, k].sum(axis=1).mean()), 1) for k, nm in enumerate(names)},
        "mean_cycles_by_step": {nm: [round(float(x), 1) for x in w[:, :, k].mean(axis=0)] for k, nm in enumerate(names)},
        "median_cycles_by_step": {nm: [float(x) for x in np.median(w[:, :, k], axis=0)] for k, nm in enumerate(names)},
        "gap_between_steps_median": [float(x) for x in np.median(gap, axis=0)],
        "warp_life_cycles_median": float(np.median(life)),
        "by_arrival": {},
    }
    for r in range(int(rank.max()) + 1):
        sel = rank == r
        if not sel.any():
            continue
        out["by_arrival"][str(r)] = {
            "warps": int(sel.sum()),
            **{nm: round(float(w[sel, :, k].sum(axis=1).mean()), 1) for k, nm in enumerate(names)},
            "life": round(float(life[sel].mean()), 1)}
    return out


def record(dir_: Path, dest: Path):
    import numpy as np
    prov = json.loads((dir_ / "slw_prov.json").read_text())
    times = json.loads((dir_ / "slw_times.json").read_text())
    z = np.load(dir_ / "store_load_wait_stamps.npz")
    s = {str(n): dict(summary(z[f"n{n}"]), time=times[str(n)]) for n in SIZES}
    write_record(
        dest, prov, "store_load_wait",
        what="where a naive transpose's warps wait: at a global load's issue, for its data after it issued, or at a "
             "strided store's issue (cycles per warp, by step and by the CTA's arrival on its SM)",
        how="calibrate/store_load_wait.cu: transpose_naive's loop with clock64 stamps around each load, the use "
            "of its data and each store, 32 x 8 threads a CTA, n x n floats (n = 1024, 2048), the third of "
            "three back-to-back launches (L2 warm); time: gpusim.hw.gpu.time_launches (calibrate/store_load_wait.py)",
        source="calibrate/store_load_wait.cu:stamped_transpose",
        unit="SM cycles per warp (clock64 differences, each including a stamp's own issue)",
        value={n: v["mean_cycles_per_warp"] for n, v in s.items()},
        details=s,
        sass=dir_ / "store_load_wait.sass",
    )


if __name__ == "__main__":
    out_or_record(run_on_gpu, record, "store_load_wait.json")
