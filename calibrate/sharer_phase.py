"""How close in time do the CTAs that share a tile reach each slab of it? (ladder twins, every CTA's slabs)

    python3 calibrate/sharer_phase.py --out DIR      # on the GPU machine (nvcc, cupy, numpy)
    python3 calibrate/sharer_phase.py --record DIR   # here: -> traces/hw/h200/micro/sharer_phase.json

Each twin is the ladder kernel's own source built through calibrate/cta_stamp.cu with
-DSLAB_STAMPS: thread 0 of every CTA stamps %globaltimer (ns) at the end of each K slab (every second
__syncthreads; the next slab's global loads follow), one warm-up launch, then the stamped one. The CTAs
of a grid row of C share A's rows, those of a grid column B's columns. For each array and slab the
sharers' stamps are split into clusters where they come more than CLUSTER_GAP_NS apart (one wave's
sharers against the next wave's); within a cluster the first reader is the one that misses in the
model, and each later one's offset from it says whether it would find the fill still on its way: the
share of later readers within a window (gpusim.timing.lower.l2_pending_window_ns: 254 ns on the H200
preset) is what the cache model's lockstep schedule puts near 1 (docs/notes/2026-12-01-l2-pending-fills.md, the
pending-hit item; tests/memory/test_cache.py).
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
from micro_cli import provenance, gpu_provenance, out_or_record  # noqa: E402  (beside this script)

# (kernel, size, which blockIdx axis walks the rows of C: its CTAs share A's rows)
CASES = [("regtile1d", 4096, "y"), ("regtile1d", 2048, "y"), ("regtile2d", 4096, "y"), ("vectorized", 4096, "y"),
         ("smemtile", 4096, "x"), ("smemtile", 2048, "x"),
         # (2026-12-01: the rest of the ladder's barrier kernels and sizes)
         ("regtile2d", 2048, "y"), ("vectorized", 2048, "y"), ("tiled32", 4096, "y"), ("tiled32", 2048, "y"),
         ("regblock", 4096, "y"), ("regblock", 2048, "y")]
SLAB_MAX, SLAB_CTAS = 512, 16384      # as cta_stamp.cu's SLAB_MAX, SLAB_CTAS
CLUSTER_GAP_NS = 20_000      # sharers further apart than this belong to different waves (a CTA runs 100s of us)
WINDOWS_NS = (128, 254, 512, 1000, 2000, 5000)


def sharer_offsets(t: np.ndarray, gx: int, row_axis: str, array: str) -> np.ndarray:
    """t: [CTAs, slabs] stamps (ns), CTA id = blockIdx.y * gx + blockIdx.x. Each later reader's offset (ns)
    from the first reader of its cluster, over every group of sharers (A: the CTAs of one row of C, B: of
    one column) and slab."""
    grid = t.reshape(t.shape[0] // gx, gx, -1)                     # [y, x, slabs]
    by_y = (array == "A") == (row_axis == "y")                      # the group's CTAs share blockIdx.y
    groups = grid if by_y else grid.transpose(1, 0, 2)              # [groups, sharers, slabs]
    s = np.sort(groups, axis=1)
    gap = np.diff(s, axis=1) > CLUSTER_GAP_NS                       # a new cluster after each such gap
    first = np.concatenate([np.ones_like(gap[:, :1]), gap], axis=1)
    idx = np.maximum.accumulate(np.where(first, np.arange(s.shape[1])[None, :, None], 0), axis=1)
    return (s - np.take_along_axis(s, idx, axis=1))[~first]


def summary(t: np.ndarray, gx: int, row_axis: str) -> dict:
    out = {}
    for arr in "AB":
        off = sharer_offsets(t, gx, row_axis, arr)
        out[arr] = {"later_readers": int(off.size),
                    "share_within_ns": {str(w): round(float((off < w).mean()), 4) for w in WINDOWS_NS},
                    "offset_quantiles_ns": {str(q): float(np.percentile(off, q)) for q in (10, 25, 50, 75, 90)}}
    return out


def occupancy_pad(kernel: str, size: int, threads: int, facts: dict) -> int:
    """Dynamic shared memory (B) that holds the stamped twin to the ladder kernel's CTAs per SM: the stamps
    change ptxas's register count (regtile1d 48 -> 47, regtile2d 94 -> 123; a first build of the hook gave
    regtile1d 32, which would let 4 CTAs share an SM instead of 2). The ladder's registers come from its
    record (traces/hw/h200/<kernel>_<size>.json); 0 when the occupancy is the same (every case recorded)."""
    from gpusim.arch import get_arch
    from gpusim.estimate.occupancy import occupancy
    arch = get_arch("h200")
    rec = json.loads((REPO / "traces/hw/h200" / f"{kernel}_{size}.json").read_text())["ptxas"]
    want = occupancy(arch, threads, rec["registers"], rec["shared_bytes"], kernel).blocks_per_sm
    unit = arch.shared_alloc_unit_bytes

    def ctas(smem: int) -> int:       # (occupancy() holds smem to the static limit; dynamic may exceed it)
        o = occupancy(arch, threads, facts["registers"], 0, kernel)
        per_block = -(-(smem + arch.shared_reserved_per_block_bytes) // unit) * unit
        return min(o.limit_warps, o.limit_blocks, o.limit_registers or o.limit_warps, arch.shared_per_sm_bytes // per_block)
    dyn = 0
    while ctas(facts["shared_bytes"] + dyn) > want:
        dyn += unit
    if ctas(facts["shared_bytes"] + dyn) != want:
        raise SystemExit(f"{kernel}: the stamped twin cannot be held to {want} CTAs per SM")
    return dyn


def run_on_gpu(out: Path):
    from gpusim.hw import gpu, twins
    from gpusim.hw.gpu import cupy
    cp = cupy()
    out.mkdir(parents=True, exist_ok=True)
    build = REPO / "kernels_cuda" / ".build"
    build.mkdir(parents=True, exist_ok=True)
    text, nvcc = [], {}
    for kernel, size, row_axis in CASES:
        cubin = build / f"slab_stamp_{kernel}.cubin"
        cmd = ["nvcc", *twins.build_flags(), "-DSLAB_STAMPS", f"-DTWIN={kernel}",
               f'-DTWIN_SRC="../kernels_cuda/{kernel}.cu"',      # relative to cta_stamp.cu's folder
               "-o", str(cubin), "calibrate/cta_stamp.cu"]
        r = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"nvcc failed for {kernel}: {r.stderr[-800:]}")
        nvcc[kernel] = " ".join(cmd[:-3] + ["-o", f"kernels_cuda/.build/slab_stamp_{kernel}.cubin", cmd[-1]])
        facts = twins.build_module().parse_ptxas(r.stderr + r.stdout)
        (out / f"slab_stamp_{kernel}.sass").write_text(
            subprocess.run(["cuobjdump", "-sass", str(cubin)], capture_output=True, text=True).stdout)
        p = twins.resolve_params(kernel, None)
        grid, block, _ = twins.geometry(kernel, p, size, size, size)
        n, slabs = grid[0] * grid[1], size // p.get("BK", p.get("BLOCKSIZE"))
        if n > SLAB_CTAS or slabs > SLAB_MAX:
            raise SystemExit(f"{kernel} {size}: {n} CTAs x {slabs} slabs exceed the stamp buffer")
        dyn = occupancy_pad(kernel, size, block[0] * block[1] * block[2], facts)
        mod = cp.RawModule(path=str(cubin))
        fn = mod.get_function("stamped")
        if dyn:
            fn.max_dynamic_shared_size_bytes = dyn
        buf = cp.ndarray((SLAB_CTAS * SLAB_MAX,), dtype=cp.uint64, memptr=mod.get_global("gpusim_slab_stamp"))
        prob = gpu.Problem(cp, size, size, size, seed=0, ab_only=not twins.uses_alpha_beta(kernel))
        args = prob.args()
        times = []
        for _ in range(2):            # a warm-up launch, then the one kept
            buf.fill(0)
            prob.reset_c()
            e0, e1 = cp.cuda.Event(), cp.cuda.Event()
            e0.record()
            fn(grid, block, args, shared_mem=dyn)
            e1.record()
            e1.synchronize()
            times.append(cp.cuda.get_elapsed_time(e0, e1))
        s = buf.get().reshape(SLAB_CTAS, SLAB_MAX)[:n, :slabs].astype(np.int64)
        if (s == 0).any():
            raise SystemExit(f"{kernel} {size}: {int((s == 0).sum())} slab stamps missing")
        rel = (s - s.min()).astype(np.int32)                        # ns from the launch's first stamp
        np.savez_compressed(out / f"sharer_{kernel}_{size}.npz", stamps=rel, gx=grid[0], row_axis=row_axis)
        line = (f"{kernel} {size}: {n} CTAs x {slabs} slabs, {facts['registers']} registers, {dyn} B dynamic shared "
                f"memory, launches {times[0]:.3f} / {times[1]:.3f} ms")
        text.append(line)
        sm = summary(rel.astype(np.int64), grid[0], row_axis)
        print(line, "| within 254 ns: A", sm["A"]["share_within_ns"]["254"], "B", sm["B"]["share_within_ns"]["254"],
              flush=True)
        del prob
        cp.get_default_memory_pool().free_all_blocks()
    (out / "sharer_prov.json").write_text(json.dumps(gpu_provenance("sharer_phase.py", stdout="\n".join(text),
                                                                    nvcc_commands=nvcc)))


def record(dir_: Path, dest: Path):
    prov = json.loads((dir_ / "sharer_prov.json").read_text())
    details = {}
    for kernel, size, _ in CASES:
        z = np.load(dir_ / f"sharer_{kernel}_{size}.npz")
        line = next(ln for ln in prov["stdout"].splitlines() if ln.startswith(f"{kernel} {size}:"))
        ms = [float(x) for x in line.split("launches ")[1].replace(" ms", "").split(" / ")]
        details[f"{kernel}_{size}"] = {"launch_ms": ms, "twin": line.split(": ", 1)[1].split(", launches")[0], **summary(z["stamps"].astype(np.int64), int(z["gx"]),
                                                                   str(z["row_axis"]))}
    rec = {
        "schema": "gpusim.hw.micro/1", "bench": "sharer_phase",
        "what": "how far apart in time the CTAs that share a tile of A (a row of C's tiles) or of B (a column) "
                "end each K slab, in the ladder's barrier kernels' twins at 4096 and 2048: whether a sharer's L2 hit can find the line's "
                "fill still on its way",
        "how": "calibrate/cta_stamp.cu -DSLAB_STAMPS around each ladder kernel's own source: thread 0 of "
               "every CTA writes %globaltimer (ns) at every second __syncthreads (a slab's end); the second of two "
               "launches is kept. Per array and slab the sharers' stamps are split where they come more than "
               f"{CLUSTER_GAP_NS} ns apart; each later reader's offset from its cluster's first: the share within "
               "each window and its quantiles (calibrate/sharer_phase.py)",
        "command": prov["command"].replace("python3", "PYTHONPATH=. python3") + " (on the H200), then --record DIR here",
        "nvcc_commands": prov.get("nvcc_commands", {}),
        "source": "calibrate/cta_stamp.cu (SLAB_STAMPS) with kernels_cuda/<kernel>.cu",
        **provenance(prov),
        "unit": "share of later readers; value: regtile1d at 4096, A's later readers within 254 ns of their "
                "cluster's first (the H200 preset's pending window, gpusim.timing.lower.l2_pending_window_ns)",
        "value": details["regtile1d_4096"]["A"]["share_within_ns"]["254"],
        "details": details,
    }
    dest.write_text(json.dumps(rec, indent=1))
    print(f"wrote {dest}")
    print(json.dumps({k: {a: v[a]["share_within_ns"]["254"] for a in "AB"} for k, v in details.items()}, indent=1))


if __name__ == "__main__":
    out_or_record(run_on_gpu, record, "sharer_phase.json")
