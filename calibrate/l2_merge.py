"""Whether CTAs that share a tile merge their L2 requests because they run alone on their SMs.

    python3 calibrate/l2_merge.py --out DIR      # on the GPU machine (nvcc, cupy, ncu)
    python3 calibrate/l2_merge.py --record DIR   # here: -> traces/hw/h200/micro/l2_merge.json

At 4096 tiled32's L1 receives 537 M sectors of which the L2 slices look up only 359 M, and its L2
ports are active 0.70x as many cycles per sector as smemtile's, whose 539 M sectors are nearly all
looked up (traces/hw/h200/breakdown/): requests from different SMs for the same sectors are merged
before the L2 and answered once. Both kernels share a 32x32 tile among the 128 CTAs of a grid row;
tiled32 runs one CTA per SM, smemtile two. This runs the ladder twins (kernels_cuda/, default
parameters, gpusim.hw.twins' build) at 4096 as they are, and smemtile with dynamic shared memory
that it does not use but that leaves room for one CTA per SM, timed with CUDA events and profiled
with ncu (L1 sectors received, L2 tex sector lookups and hits, DRAM bytes, L2 port activity).
If smemtile alone on its SMs merges like tiled32, the occupancy is what sets merging apart.
calibrate/l2_merge.cu's share_a / share_b are one 32x32 tiling that differs only in which
tile the CTAs of a grid row share (A: tiled32's layout; B: smemtile's), each at two CTAs per SM and,
with the same unused dynamic shared memory, at one.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))
from micro_cli import BUILD_FLAGS, provenance, out_or_record  # noqa: E402  (beside this script)

SIZE = 4096
ONE_CTA_SMEM = 120 * 1024      # dynamic bytes: two CTAs' (8 KB static + this + 1 KB) exceed 228 KB per SM
VARIANTS = (("smemtile", 0), ("smemtile", ONE_CTA_SMEM), ("tiled32", 0),
            ("share_a", 0), ("share_a", ONE_CTA_SMEM), ("share_b", 0), ("share_b", ONE_CTA_SMEM))
MICRO_KERNELS = ("share_a", "share_b")     # from calibrate/l2_merge.cu
METRICS = ("gpu__time_duration.sum", "sm__cycles_elapsed.avg", "l1tex__m_xbar2l1tex_read_sectors.sum",
           "lts__t_sectors_srcunit_tex_op_read.sum", "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum",
           "lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum", "dram__bytes_read.sum",
           "lts__lts2xbar_cycles_active.avg.pct_of_peak_sustained_elapsed",
           "lts__xbar2lts_cycles_active.avg.pct_of_peak_sustained_elapsed",
           "sm__warps_active.avg.pct_of_peak_sustained_active", "launch__occupancy_limit_shared_mem",
           "launch__shared_mem_per_block_dynamic")


def _micro_cubin() -> Path:
    from gpusim.hw.runner import BUILD_DIR
    BUILD_DIR.mkdir(parents=True, exist_ok=True)
    out = BUILD_DIR / "l2_merge.cubin"
    subprocess.run(["nvcc", *BUILD_FLAGS, "-cubin", "-o", str(out), str(HERE / "l2_merge.cu")], check=True)
    return out


def _launch(cp, name: str, dyn: int):
    """(a launch function, the problem it holds) for one variant at SIZE."""
    from gpusim.hw import gpu, twins
    from gpusim.hw.runner import BUILD_DIR
    if name in MICRO_KERNELS:
        cubin, grid, block, ab_only = _micro_cubin(), (SIZE // 32, SIZE // 32, 1), (32, 32, 1), True
    else:
        p = twins.resolve_params(name, None)
        cubin, _, _ = twins.build(name, p, BUILD_DIR)
        grid, block, _ = twins.geometry(name, p, SIZE, SIZE, SIZE)
        ab_only = not twins.uses_alpha_beta(name)
    fn = cp.RawModule(path=str(cubin)).get_function(name)
    if dyn:
        fn.max_dynamic_shared_size_bytes = dyn
    prob = gpu.Problem(cp, SIZE, SIZE, SIZE, seed=0, ab_only=ab_only)
    prob.reset_c()
    args = prob.args()

    def launch():
        fn(grid, block, args, shared_mem=dyn)
    return launch, prob


def child():
    """What ncu runs: per variant one warm-up and one profiled launch."""
    from gpusim.hw import gpu
    from gpusim.hw.profile import _profiler, warm_then_profile
    cp = gpu.cupy()
    start, stop = _profiler(cp)
    for name, dyn in VARIANTS:
        launch, prob = _launch(cp, name, dyn)
        warm_then_profile(cp, launch, start, stop)
        del prob
        cp.get_default_memory_pool().free_all_blocks()


def run_on_gpu(out: Path):
    from gpusim.hw import gpu, ncu as ncu_mod
    from gpusim.hw.devinfo import smi_query, utc_now
    from micro_cli import nvcc_version
    out.mkdir(parents=True, exist_ok=True)
    cp = gpu.cupy()
    times = []
    for name, dyn in VARIANTS:
        launch, prob = _launch(cp, name, dyn)
        times.append({"kernel": name, "dynamic_smem": dyn, **gpu.time_launches(cp, launch)})
        print(times[-1]["kernel"], dyn, {k: v for k, v in times[-1].items() if "median" in k}, flush=True)
        del prob
        cp.get_default_memory_pool().free_all_blocks()
    (out / "merge_times.json").write_text(json.dumps(times))
    ncu = ncu_mod.find_ncu()
    rep = out / "merge"
    cmd = [ncu, "--clock-control", "none", "--cache-control", "all", "--replay-mode", "kernel",
           "--profile-from-start", "off", "--metrics", ",".join(METRICS), "-f", "-o", str(rep),
           sys.executable, str(Path(__file__).resolve()), "--child"]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=500,
                       env={**__import__("os").environ, "PYTHONPATH": str(REPO)})
    print(r.stdout[-1500:], r.stderr[-1500:])
    ex = subprocess.run(ncu_mod.export_command(ncu, str(rep) + ".ncu-rep"), capture_output=True, text=True)
    (out / "merge_ncu.csv").write_text(ex.stdout)
    ver = subprocess.run([ncu, "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    (out / "merge_prov.json").write_text(json.dumps({
        "date": utc_now(), "smi": smi_query(), "nvcc": nvcc_version(), "ncu": ver[-1] if ver else "",
        "command": "python3 calibrate/l2_merge.py --out $OUT",
        "ncu_command": " ".join(["ncu"] + cmd[1:-5] + ["-o", "<out>/merge", "python3",
                                                       "calibrate/l2_merge.py", "--child"])}))


def record(dir_: Path, dest: Path):
    from gpusim.hw import ncu as ncu_mod, twins
    prov = json.loads((dir_ / "merge_prov.json").read_text())
    times = json.loads((dir_ / "merge_times.json").read_text())
    rows = ncu_mod.parse_raw_csv((dir_ / "merge_ncu.csv").read_text())
    if len(rows) != len(VARIANTS):
        raise SystemExit(f"{len(rows)} profiled launches in the ncu export, expected {len(VARIANTS)}")
    out = []
    for (name, dyn), t, r in zip(VARIANTS, times, rows):
        m = {k: r["metrics"].get(k) for k in METRICS}
        l1, tex = m["l1tex__m_xbar2l1tex_read_sectors.sum"], m["lts__t_sectors_srcunit_tex_op_read.sum"]
        cyc = m["sm__cycles_elapsed.avg"]
        out.append({"kernel": name, "dynamic_smem": dyn, "time_ms_median": t["time_ms_median"],
                    "ncu": m, "merged_sectors": l1 - tex, "merged_fraction": (l1 - tex) / l1 if l1 else None,
                    "lts2xbar_active_cycles_per_l1_sector":
                        m["lts__lts2xbar_cycles_active.avg.pct_of_peak_sustained_elapsed"] / 100 * cyc / l1 * 1e6
                        if l1 else None})
    rec = {
        "schema": "gpusim.hw.micro/1", "bench": "l2_merge",
        "what": "L2 request merging by occupancy and by the shared tile: smemtile at 2 and at 1 CTA per SM, tiled32 "
                "at 1; one 32x32 tiling whose grid rows share A (share_a) or B (share_b), at 2 and 1 per SM; 4096",
        "how": "ladder twins (default parameters) at 4096; smemtile also with 120 KB of unused dynamic shared "
               "memory (one CTA per SM); l2_merge.cu's share_a / share_b (grid 128 x 128, 32 x 32 threads) with "
               "and without it; CUDA-event times (gpusim.hw.gpu.time_launches), then ncu of one launch "
               "each after a warm-up (caches flushed). merged_sectors: sectors L1 receives minus L2 tex sector "
               "lookups (calibrate/l2_merge.py)",
        "command": prov["command"] + " (on the H200), then --record DIR here",
        "ncu_command": prov["ncu_command"],
        "source": "kernels_cuda/smemtile.cu, kernels_cuda/tiled32.cu, calibrate/l2_merge.cu",
        **provenance(prov),
        "build_flags": twins.build_flags(),          # the twins' (kernels_cuda/build.py); l2_merge.cu: below
        "micro_build_flags": BUILD_FLAGS + ["-cubin"],
        "unit": "fraction of the sectors L1 receives that the L2 slices do not look up; value: smemtile at one "
                "CTA per SM",
        "value": out[1]["merged_fraction"],
        "details": {"rows": out, "times": times},
    }
    dest.write_text(json.dumps(rec, indent=1))
    print(f"wrote {dest}")
    for o in out:
        print(o["kernel"], o["dynamic_smem"], f"{o['time_ms_median']:.3f} ms", "merged", o["merged_sectors"],
              f"{o['merged_fraction']:.3f}", "occupancy", o["ncu"]["sm__warps_active.avg.pct_of_peak_sustained_active"])


if __name__ == "__main__":
    if "--child" in sys.argv:
        child()
    else:
        out_or_record(run_on_gpu, record, "l2_merge.json")
