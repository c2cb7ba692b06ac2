"""Where a one-round launch's time goes around its CTAs: how long after the kernel before it its first CTA
starts, and how long after its last CTA ends the next kernel starts, on 1 to 1056 CTAs.

    python3 calibrate/launch_end.py --out DIR      # on the GPU machine (nvcc, cupy)
    python3 calibrate/launch_end.py --record DIR   # here: -> traces/hw/h200/micro/launch_end.json

calibrate/one_round.cu's kernels (spin, chase, sgemv_x) between two launches of its one-thread `marker`,
which stamps %globaltimer at its start, all three queued behind a 0.2 ms spin so that the GPU runs them
back to back: pre = the first CTA's start stamp - the first marker's, post = the second marker's - the
last CTA's end stamp, span = the CTAs' last end - first start; medians of 30 launches a point.
micro/one_round.json found a launch's time growing by 0.1-0.35 us more than its CTAs' span by 128 CTAs;
this says at which end.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from micro_cli import BUILD_FLAGS, provenance, gpu_provenance, out_or_record  # noqa: E402  (beside this script)

GRIDS = (1, 33, 66, 128, 132, 264, 528, 1056)     # up to 8 CTAs an SM, all resident at once
REPEATS = 30
LINES = 65536            # chase's buffer, as micro/one_round.json's


def run_on_gpu(out: Path):
    import subprocess
    import numpy as np
    from gpusim.hw import gpu
    cubin = out / "one_round.cubin"
    subprocess.run(["nvcc", *BUILD_FLAGS, "-cubin", "-o", str(cubin), str(HERE / "one_round.cu")], check=True)
    cp = gpu.cupy()
    mod = cp.RawModule(path=str(cubin))
    stamp = cp.ndarray((3 * 2048,), dtype=cp.uint64, memptr=mod.get_global("one_round_stamp"))
    mark = cp.ndarray((2,), dtype=cp.uint64, memptr=mod.get_global("one_round_marker"))
    spin, chase, sgemv_x, marker = (mod.get_function(n) for n in ("spin", "chase", "sgemv_x", "marker"))
    order = np.random.default_rng(0).permutation(LINES).astype(np.uint32)
    succ = np.empty(LINES, np.uint32)
    succ[order] = np.roll(order, -1)
    nxt = cp.asarray(np.repeat(succ, 32))
    sink = cp.zeros(2048 * 32, dtype=cp.float32)
    A = cp.asarray(np.random.default_rng(1).uniform(-1, 1, 8 * max(GRIDS) * 1024).astype(np.float32))
    xs = cp.asarray(np.random.default_rng(2).uniform(-1, 1, max(GRIDS) * 1024).astype(np.float32))
    cases = {"spin 2500": lambda g: spin((g,), (256,), (np.int64(2500), sink)),
             "chase 8": lambda g: chase((g,), (256,), (nxt, np.int32(8), np.uint32(LINES), sink)),
             "chase 32": lambda g: chase((g,), (256,), (nxt, np.int32(32), np.uint32(LINES), sink)),
             "sgemv_x own x": lambda g: sgemv_x((g,), (256,), (np.int32(8 * g), np.int32(1024), A, xs,
                                                             np.int32(1024), sink)),
             "sgemv_x shared x": lambda g: sgemv_x((g,), (256,), (np.int32(8 * g), np.int32(1024), A, xs,
                                                                np.int32(0), sink))}
    rows = []
    for name, launch in cases.items():
        for g in GRIDS:
            pre, post, span, starts = [], [], [], []
            for _ in range(REPEATS):
                launch(g)                                             # warm: the chase's and x's lines in the L2
                spin((1,), (32,), (np.int64(400000), sink))           # the next three queue behind it
                marker((1,), (1,), (np.int32(0),))
                launch(g)
                marker((1,), (1,), (np.int32(1),))
                cp.cuda.runtime.deviceSynchronize()
                s = stamp[: 3 * g].get().reshape(g, 3).astype(np.int64)
                m = mark.get().astype(np.int64)
                pre.append(int(s[:, 0].min() - m[0]))
                post.append(int(m[1] - s[:, 1].max()))
                span.append(int(s[:, 1].max() - s[:, 0].min()))
                starts.append(int(s[:, 0].max() - s[:, 0].min()))
            row = {"kernel": name, "grid": g, "pre_ns": float(np.median(pre)), "post_ns": float(np.median(post)),
                   "span_ns": float(np.median(span)), "start_spread_ns": float(np.median(starts))}
            rows.append(row)
            print(row, flush=True)
    cubin.unlink()
    (out / "launch_end_rows.json").write_text(json.dumps(rows, indent=1))
    (out / "launch_end_prov.json").write_text(json.dumps(gpu_provenance("launch_end.py")))


def first_round_fit(rows: list) -> float:
    """ns a CTA between a launch's first and last CTA starts: least squares through zero over the chase
    launches of 264 CTAs or more (all resident at once; fewer reach only some SMs, one CTA each)."""
    pts = [(r["grid"], r["start_spread_ns"]) for r in rows if r["kernel"].startswith("chase") and r["grid"] >= 264]
    return sum(g * t for g, t in pts) / sum(g * g for g, _ in pts)


def record(dir_: Path, dest: Path):
    prov = json.loads((dir_ / "launch_end_prov.json").read_text())
    rows = json.loads((dir_ / "launch_end_rows.json").read_text())
    lone = {r["kernel"]: r for r in rows if r["grid"] == 1}
    for r in rows:
        r["post_growth_ns"] = r["post_ns"] - lone[r["kernel"]]["post_ns"]
        r["pre_growth_ns"] = r["pre_ns"] - lone[r["kernel"]]["pre_ns"]
    mem = [r["post_growth_ns"] for r in rows if r["grid"] >= 128 and not r["kernel"].startswith("spin")]
    burst = first_round_fit(rows)
    rec = {
        "schema": "gpusim.hw.micro/1", "bench": "launch_end",
        "what": "how long a launch takes to start its first CTA after the kernel before it (pre) and to let the next "
                "kernel start after its last CTA ends (post), on 1-1056 CTAs: spin, chase and sgemv's loop",
        "how": "calibrate/one_round.cu's kernels between two launches of its one-thread marker (%globaltimer at its "
               "start), queued behind a 0.2 ms spin; medians of 30 launches a point (calibrate/launch_end.py)",
        "command": prov["command"] + " (on the H200), then --record DIR here",
        "source": "calibrate/one_round.cu:spin,chase,sgemv_x,marker",
        **provenance(prov),
        "unit": "ns; value: the median growth of post from 1 to 128-1056 CTAs over the kernels that touch memory",
        "value": sorted(mem)[len(mem) // 2],
        "details": {"first_round_ns_per_cta": round(burst, 3), "rows": rows},
    }
    dest.write_text(json.dumps(rec, indent=1))
    print(f"wrote {dest}: post grows {rec['value']} ns; the first round starts {burst:.3f} ns a CTA")


if __name__ == "__main__":
    out_or_record(run_on_gpu, record, "launch_end.json")
