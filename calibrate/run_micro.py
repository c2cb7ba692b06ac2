"""Run the microbenchmarks of micro.cu on this machine's GPU and record each one.

    PYTHONPATH=. python3 calibrate/run_micro.py --out "$OUT" [--only NAME ...] [--ncu]

Builds micro.cu with the twins' NVCC_FLAGS (gpusim.sass.compile), runs every bench,
and writes one record per bench (schema gpusim.hw.micro/1: what was
measured, how, the value and its unit, the raw readings, provenance) to
<work>/micro/<bench>.json, re-packing <out>/micro.tar.gz after each bench so
a timeout still returns what was done. `python3 -m gpusim.hw.unpack <out>`
puts them under traces/hw/h200/micro/. `python3 -m calibrate` runs it (its micro* drivers) with
the other drivers.

Latencies and rates come from clock64() inside the kernels (SM cycles), as
the difference between two trip counts so that fixed costs cancel; bandwidths
from CUDA events. With --ncu, the queue-depth bursts also run under Nsight
Compute (--clock-control none) to read mio_throttle / lg_throttle per burst
length. Nothing here changes a setting of the card.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from gpusim.hw import ncu as ncu_mod          # noqa: E402
from gpusim.hw.devinfo import ClockSampler, cuda_versions, smi_query, utc_now   # noqa: E402
from gpusim.hw.records import MICRO_SCHEMA, dump_record   # noqa: E402

SRC = "calibrate/micro.cu"
BURSTS = (1, 2, 4, 6, 8, 10, 12, 14, 16, 20, 24, 28, 32, 40, 48, 64)
NCU_BURSTS = (2, 4, 8, 16, 32, 64)
BURST_NCU_METRICS = [
    "smsp__inst_executed.sum", "gpu__time_duration.sum", "sm__cycles_elapsed.max",
    "smsp__average_warp_latency_per_inst_issued.ratio",
] + [ncu_mod.stall_metric(r) for r in ("mio_throttle", "lg_throttle", "short_scoreboard",
                                        "long_scoreboard", "selected", "wait", "drain")]


def build(cubin: Path) -> tuple[list[str], str]:
    from gpusim.sass import compile as b          # the twins' build recipe (NVCC_FLAGS)
    cubin.parent.mkdir(parents=True, exist_ok=True)
    args = ["nvcc", *b.NVCC_FLAGS, "-o", str(cubin), SRC]
    r = subprocess.run(args, cwd=REPO, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"nvcc failed:\n{r.stderr}")
    return list(b.NVCC_FLAGS), " ".join(["nvcc", *b.NVCC_FLAGS, "-o", "kernels_cuda/.build/micro.cubin", SRC])


class Bench:
    def __init__(self, cp, mod, prov, out_dir: Path, pack):
        self.cp, self.mod, self.prov, self.out_dir, self.pack = cp, mod, prov, out_dir, pack
        self.written = []
        props = cp.cuda.runtime.getDeviceProperties(0)
        self.sms = int(props["multiProcessorCount"])

    def fn(self, name):
        return self.mod.get_function(name)

    def run1(self, name, grid, block, args, smem=0):
        self.fn(name)((grid,), (block,), args, shared_mem=smem)
        self.cp.cuda.runtime.deviceSynchronize()

    def write(self, bench, what, how, value, unit, details, clocks, source):
        rec = {"schema": MICRO_SCHEMA, "bench": bench, "what": what, "how": how, "value": value,
               "unit": unit, "details": details, "source": source, "date": utc_now(),
               "clocks": clocks, **self.prov}
        dump_record(rec, self.out_dir / f"{bench}.json")
        self.written.append(bench)
        self.pack()
        v = value if not isinstance(value, float) else round(value, 3)
        print(f"  {bench}: {v} {unit}", flush=True)


def _med(xs):
    return float(statistics.median(xs))


def slope_cycles(b: Bench, name, grid, block, make_args, n1, n2, reps=5, cyc_index=0):
    """Median over reps of (cycles(n2) - cycles(n1)) from cyc[cyc_index]."""
    cp, np = b.cp, __import__("numpy")
    cyc = cp.zeros(max(64, 2 * grid + 2), dtype=cp.int64)
    d = []
    for _ in range(reps):
        c = []
        for n in (n1, n2):
            b.run1(name, grid, block, make_args(cyc, np.int32(n)))
            c.append(int(cyc.get()[cyc_index]))
        d.append(c[1] - c[0])
    return _med(d), d


# ------------------------------------------------------------------ benches

def bench_latency_alu(b: Bench):
    cp, np = b.cp, __import__("numpy")
    outf = cp.ones(4, dtype=cp.float32)
    outi = cp.ones(4, dtype=cp.int32)
    U, n1, n2 = 64, 16, 1024
    specs = [
        ("latency_ffma", "lat_ffma", "FFMA", lambda c, n: (outf, c, np.float32(0.999), np.float32(0.001), n)),
        ("latency_imad", "lat_imad", "IMAD", lambda c, n: (outi, c, np.int32(3), np.int32(1), n)),
        ("latency_iadd3", "lat_iadd3", "IADD3", lambda c, n: (outi, c, np.int32(3), np.int32(1), n)),
    ]
    for bench, kern, op, mk in specs:
        with ClockSampler() as clk:
            dc, raw = slope_cycles(b, kern, 1, 1, mk, n1, n2)
        lat = dc / ((n2 - n1) * U)
        det = {"cycles_diff_per_rep": raw, "ops_diff": (n2 - n1) * U, "trips": [n1, n2], "unroll": U}
        if kern == "lat_ffma":
            cyc = cp.zeros(4, dtype=cp.int64)
            b.run1(kern, 1, 1, (outf, cyc, np.float32(0.999), np.float32(0.001), np.int32(20000)))
            c, ns = cyc.get()[:2]
            det["sm_clock_mhz_from_globaltimer"] = round(float(c) / float(ns) * 1000.0, 1) if ns else None
        b.write(bench, f"dependent-issue latency of {op}: cycles from one {op} to the next that reads its result",
                f"one thread, a chain of {U} dependent {op}s per trip (SASS checked: one {op} per step), "
                f"clock64() around the loop, (cycles at {n2} trips - cycles at {n1}) / ({n2 - n1} x {U}); "
                "median of 5", lat, "cycles", det, clk.summary(), f"{SRC}:{kern}")


def bench_latency_lds(b: Bench):
    cp, np = b.cp, __import__("numpy")
    out = cp.zeros(4, dtype=cp.uint32)
    U, n1, n2 = 64, 16, 256
    with ClockSampler() as clk:
        dc, raw = slope_cycles(b, "lat_lds", 1, 32, lambda c, n: (out, c, n, np.int32(1)), n1, n2)
    b.write("latency_lds", "LDS latency: cycles from an LDS.32 to a dependent LDS (shared-memory pointer chase)",
            f"one thread (of one warp) chases 32-bit shared addresses, {U} dependent ld.shared.u32 per trip, "
            f"clock64 slope between {n1} and {n2} trips; median of 5",
            dc / ((n2 - n1) * U), "cycles", {"cycles_diff_per_rep": raw, "loads_diff": (n2 - n1) * U},
            clk.summary(), f"{SRC}:lat_lds")


def _chain(cp, footprint, n_visit=None, seed=1):
    """A pointer chain over 128-B lines of a `footprint`-byte buffer.

    n_visit None: a random cycle through every line; else n_visit distinct
    random lines, each visited once (cold). Returns (buf, start view, lines).
    """
    lines = footprint // 128
    buf = cp.zeros(footprint // 8, dtype=cp.uint64)
    rs = cp.random.RandomState(seed)
    if n_visit is None:
        order = rs.permutation(lines).astype(cp.int64)
    else:
        order = cp.unique(rs.randint(0, lines, size=int(n_visit * 1.3) + 64, dtype=cp.int64))
        order = order[rs.permutation(order.size)][:n_visit]
    nxt = cp.roll(order, -1)
    base = buf.data.ptr
    buf[order * 16] = (base + nxt * 128).astype(cp.uint64)
    start = buf[int(order[0]) * 16:]
    return buf, start, int(order.size)


def _flush_l2(cp):
    junk = cp.empty(256 * 2**20 // 4, dtype=cp.float32)
    junk.fill(1.0)
    cp.cuda.runtime.deviceSynchronize()
    del junk


def chase(b: Bench, kern, footprint, steps=4096, cold=False, warm=None, n_visit=None):
    cp, np = b.cp, __import__("numpy")
    buf, start, n = _chain(cp, footprint, n_visit=n_visit)
    out = cp.zeros(2, dtype=cp.uint64)
    cyc = cp.zeros(4, dtype=cp.int64)
    w = n if warm is None else warm
    if cold:
        _flush_l2(cp)
        w = 0
    b.run1(kern, 1, 1, (start, out, cyc, np.int32(w), np.int32(steps)))
    c, ns = (int(x) for x in cyc.get()[:2])
    del buf, start
    cp.get_default_memory_pool().free_all_blocks()
    return c / steps, (c / ns * 1000.0 if ns else None)


def bench_latency_memory(b: Bench):
    sweep = []
    with ClockSampler() as clk:
        for kern, fps in (("chase_ca", [8 << 10, 32 << 10, 128 << 10, 192 << 10, 256 << 10, 512 << 10]),
                          ("chase_cg", [256 << 10, 2 << 20, 8 << 20, 16 << 20, 24 << 20, 32 << 20,
                                        48 << 20, 64 << 20, 96 << 20])):
            for fp in fps:
                warm = None if fp <= (96 << 20) else 0
                cyc, mhz = chase(b, kern, fp, steps=4096, warm=warm)
                sweep.append({"load": kern.replace("chase_", "ld.global."), "footprint_bytes": fp,
                              "cycles_per_load": round(cyc, 2), "sm_mhz": round(mhz, 1) if mhz else None})
        sweep_clk = clk.summary()
    for row in sweep:
        print(f"    {row['load']} {row['footprint_bytes'] >> 10} KiB: {row['cycles_per_load']} cycles", flush=True)
    b.write("latency_chase_sweep", "pointer-chase latency against footprint (L1, L2, beyond L2)",
            "one thread, random cyclic chain over every 128-B line of the footprint, one full untimed pass, "
            "then 4096 timed dependent 64-bit loads; .ca loads (LDG.E.64.STRONG.SM, cached in L1) and .cg "
            "loads (LDG.E.64.STRONG.GPU, L2 only)", sweep, "cycles per load", {}, sweep_clk, f"{SRC}:chase_ca,chase_cg")

    def pick(load, fp):
        return next(r for r in sweep if r["load"] == load and r["footprint_bytes"] == fp)
    r = pick("ld.global.ca", 32 << 10)
    b.write("latency_l1_hit", "L1 hit latency (global load to dependent global load)",
            "pointer chase, .ca loads, 32 KiB footprint (fits L1), after one warm pass; from latency_chase_sweep",
            r["cycles_per_load"], "cycles", {"row": r}, sweep_clk, f"{SRC}:chase_ca")
    r = pick("ld.global.cg", 8 << 20)
    b.write("latency_l2_hit", "L2 hit latency (global load, L1 bypassed)",
            "pointer chase, .cg loads, 8 MiB footprint (fits L2, not L1), after one warm pass; the lines sit "
            "in both L2 partitions' address ranges, so this mixes near and far hits; from latency_chase_sweep",
            r["cycles_per_load"], "cycles", {"row": r}, sweep_clk, f"{SRC}:chase_cg")
    with ClockSampler() as clk:
        d32 = [chase(b, "chase_cg", 32 << 20, steps=8192, cold=True, n_visit=8192) for _ in range(3)]
        d4g = [chase(b, "chase_cg", 4 << 30, steps=8192, cold=True, n_visit=8192) for _ in range(2)]
    v32 = _med([x[0] for x in d32])
    mhz = _med([x[1] for x in d32 if x[1]])
    b.write("latency_dram", "DRAM latency (L2 miss, TLB hit) of a dependent global load",
            "after writing 256 MiB to evict L2, one thread chases 8192 distinct random lines of a 32 MiB "
            "window, each visited once (cold in L1 and L2; 16 large pages, so TLB misses are rare); .cg loads; "
            "median of 3 runs", v32, "cycles",
            {"runs_cycles": [round(x[0], 1) for x in d32], "sm_mhz_from_globaltimer": round(mhz, 1),
             "ns": round(v32 / mhz * 1000.0, 1),
             "window_4GiB_cycles": [round(x[0], 1) for x in d4g],
             "window_4GiB_note": "same, over a 4 GiB window: adds TLB misses"},
            clk.summary(), f"{SRC}:chase_cg")


def _burst_table(b: Bench, kind, warps, reps=16, bursts=BURSTS):
    cp = b.cp
    np = __import__("numpy")
    g = cp.arange(max(64 * 32 * 4 * 4, 64 * 32 * warps + 2048), dtype=cp.uint32)   # 8 KB per warp (burst_ldg)
    out = cp.zeros(1024, dtype=cp.uint32)
    rows = []
    for B in bursts:
        cyc = cp.zeros(warps * reps * 2, dtype=cp.int64)
        name = f"burst_{kind}_{B}"
        args = (g, out, cyc, np.int32(reps)) if kind == "ldg" else (out, cyc, np.int32(reps))
        b.run1(name, 1, 32 * warps, args)
        c = cyc.get().reshape(warps, reps, 2)[:, 1:, :]          # rep 0 warms L1 / i-cache
        rows.append({"burst": B, "issue_cycles": _med(c[:, :, 0].ravel()),
                     "complete_cycles": _med(c[:, :, 1].ravel())})
    return rows


def _knee(rows):
    """(knee, depth estimate, issue cycles per load, drain cycles per load) of a burst table.

    Unthrottled, the issue time grows linearly (least squares over bursts of
    2..10 loads). knee: the largest burst whose issue time stays within 8
    cycles of that line. Throttled, each further load waits for one to drain:
    drain = slope of issue time over the last two bursts, and the loads in
    flight when the last one issued = B - (issue(B) - complete(1)) / drain.
    """
    pts = [(r["burst"], r["issue_cycles"]) for r in rows if 2 <= r["burst"] <= 10]
    n = len(pts)
    mx, my = sum(p[0] for p in pts) / n, sum(p[1] for p in pts) / n
    per = sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts)
    c0 = my - per * mx
    ok = [r["burst"] for r in rows if r["issue_cycles"] <= c0 + per * r["burst"] + 8]
    a, b = rows[-2], rows[-1]
    drain = (b["issue_cycles"] - a["issue_cycles"]) / (b["burst"] - a["burst"])
    depth = b["burst"] - (b["issue_cycles"] - rows[0]["complete_cycles"]) / drain if drain > 0 else None
    return (max(ok) if ok else None), (round(depth, 1) if depth is not None else None), round(per, 2), round(drain, 1)


CF_BURSTS = (1, 2, 4, 6, 8, 10, 12, 16)


def bench_lds_bursts_cf(b: Bench):
    """Conflict-free LDS.32 / LDS.128 bursts from 1 warp and from 16 (4 per SMSP): where the MIO
    queue stops issue when loads drain at the pipe's own rate (1 / 4 wavefronts each)."""
    tables = {}
    with ClockSampler() as clk:
        for kind in ("lds32cf", "lds128cf"):
            for warps in (1, 16):
                tables[f"{kind}_{warps}w"] = _burst_table(b, kind, warps, bursts=CF_BURSTS)
    b.write("lds_bursts_cf", "issue and completion of bursts of B conflict-free LDS.32 (1 wavefront) or LDS.128 "
            "(4 wavefronts), from 1 warp or 16 warps (4 per SMSP) of one CTA",
            "as mio_queue_depth's bursts (clock64 before, after the last issue, after all values are consumed; "
            "median over warps and 15 bursts after a warm one), but each load of a burst reads its own 512-B "
            "(LDS.128) or 128-B (LDS.32) row with no bank conflict",
            {k: {"issue_cycles_at_16": t[-1]["issue_cycles"], "complete_cycles_at_16": t[-1]["complete_cycles"]}
             for k, t in tables.items()},
            "cycles", tables, clk.summary(), f"{SRC}:burst_lds32cf_*,burst_lds128cf_*")


STAMP_BURSTS = (4, 8, 16)


def _sass_ops(cubin: Path, kern: str) -> list[str]:
    """The kernel's SASS instructions, one string each."""
    from gpusim.hw.pcsamp import sass_text
    return list(sass_text(cubin, kern).values())


# (kernel, warps launched, mask of the warps that run bursts): 16 warps, 4 per SMSP; one warp; 2 or 4
# warps on SMSP 0 (warp w runs on SMSP w % 4)
STAMP_RUNS = [(k, 16, 0xFFFF) for k in ("stamp_lds32cf", "stamp_lds64cf", "stamp_lds128cf", "stamp_lds128bc",
                                        "stamp_lds32cf_sync", "stamp_lds128cf_sync")] + \
             [(k, 1, 0x1) for k in ("stamp_lds64cf", "stamp_lds128bc")] + \
             [(k, w, m) for k in ("stamp_lds32cf", "stamp_lds128cf", "stamp_lds128bc")
              for w, m in ((5, 0x11), (13, 0x1111))]
STAMP_NCU = [("stamp_lds32cf_sync_16", 16, 0xFFFF), ("stamp_lds128cf_sync_16", 16, 0xFFFF),
             ("stamp_lds32cf_16", 13, 0x1111), ("stamp_lds128cf_16", 13, 0x1111), ("stamp_lds128bc_16", 13, 0x1111)]


def stamp_label(kern, warps, mask):
    n = bin(mask).count("1")
    return f"{kern} {n}w" + (" smsp0" if n > 1 and all(w % 4 == 0 for w in range(32) if mask >> w & 1) else "")


def bench_lds_bursts_order(b: Bench):
    """Shared-load bursts with every warp's absolute clock64 stamps: which warps the SM serves first,
    how fast one SMSP's warps get their loads and data, not only the median."""
    cp = b.cp
    np = __import__("numpy")
    reps = 16
    cubin = REPO / "kernels_cuda" / ".build" / "micro.cubin"
    out = cp.zeros(1024, dtype=cp.uint32)
    runs, sass = {}, {}
    with ClockSampler() as clk:
        for kern, warps, mask in STAMP_RUNS:
            for B in STAMP_BURSTS:
                st = cp.zeros(warps * reps * 3, dtype=cp.int64)
                b.run1(f"{kern}_{B}", 1, 32 * warps, (out, st, np.int32(reps), np.uint32(mask)))
                s = st.get().reshape(warps, reps, 3)[[w for w in range(warps) if mask >> w & 1]]
                runs[f"{stamp_label(kern, warps, mask)} B{B}"] = (s - s[:, :, 0].min()).tolist()
        for kern in ("stamp_lds32cf", "stamp_lds64cf", "stamp_lds128cf", "stamp_lds128bc"):
            sass[f"{kern}_16"] = _sass_ops(cubin, f"{kern}_16")

    def med(v, i, j):
        a = np.asarray(v)
        return float(np.median(a[:, 1:, i] - a[:, 1:, j]))
    b.write("lds_bursts_order", "absolute issue/complete stamps of every warp's bursts of B shared loads (LDS.32 / "
            "LDS.64 / LDS.128 conflict-free, LDS.128 broadcast), 16 warps (4 per SMSP) free-running or with a "
            "__syncthreads before each burst, 1 warp, and 2 or 4 warps on one SMSP",
            f"stamp_*: clock64 before the burst, after its last issue, after its values are consumed; {reps} reps; "
            "stamps[warp][rep] = [t0, t1, t2] in SM cycles from the launch's earliest t0, for the warps that run "
            "bursts; rep 0 is the warm one; value: medians over warps and reps 1.. of t1 - t0 and t2 - t1",
            {k: {"median_issue": med(v, 1, 0), "median_complete_after_issue": med(v, 2, 1)} for k, v in runs.items()},
            "cycles", {"stamps": runs, "sass": sass}, clk.summary(), f"{SRC}:stamp_lds*")


def bench_queues(b: Bench):
    with ClockSampler() as clk:
        lds1 = _burst_table(b, "lds", 1)
        lds4 = _burst_table(b, "lds", 4)
        ldg1 = _burst_table(b, "ldg", 1)
        ldg4 = _burst_table(b, "ldg", 4)
    ck = clk.summary()

    def summary(t1, t4):
        k1, d1, p1, r1 = _knee(t1)
        k4, d4, p4, r4 = _knee(t4)
        return ({"one_warp_knee": k1, "one_warp_in_flight_at_stall": d1,
                 "four_warps_knee_per_warp": k4, "four_warps_in_flight_at_stall_per_warp": d4},
                {"one_warp": {"issue_cycles_per_load": p1, "drain_cycles_per_load_when_full": r1},
                 "four_warps": {"issue_cycles_per_load": p4, "drain_cycles_per_load_per_warp_when_full": r4}})
    how = ("1 warp (and 4 warps, one per SMSP, in one CTA) issue bursts of B independent {op} with no use in "
           "between; clock64 before the burst and right after its last load issues (issue_cycles), and after "
           "all values are consumed (complete_cycles); median of 15 bursts after a warm one. {why} knee: largest "
           "B whose issue time stays within 8 cycles of the unthrottled line (least squares over B = 2..10); "
           "in_flight_at_stall: B - (issue(B) - complete(1)) / drain at the largest B, i.e. loads issued but "
           "not yet returned when the warp could issue again: the queue depth as the issue stage sees it")
    v, rates = summary(lds1, lds4)
    b.write("mio_queue_depth", "how many LDS a warp can have in flight before the MIO queue stops its issue "
            "(mio_throttle)",
            how.format(op="LDS.32", why="Every LDS has its 32 lanes in bank 0 (32 wavefronts), so the shared "
                       "pipe drains slowly and the queue fills."),
            v, "instructions", {"rates": rates, "one_warp": lds1, "four_warps": lds4}, ck, f"{SRC}:burst_lds_<B>")
    v, rates = summary(ldg1, ldg4)
    b.write("lg_queue_depth", "how many LDG a warp can have in flight before the LSU/LG queue stops its issue "
            "(lg_throttle)",
            how.format(op="LDG.32 (ld.global.ca)", why="Every LDG has its 32 lanes on 32 different 128-B lines "
                       "(L1 hits after the warm burst), so L1 drains slowly and the queue fills."),
            v, "instructions", {"rates": rates, "one_warp": ldg1, "four_warps": ldg4}, ck, f"{SRC}:burst_ldg_<B>")


def _lds_rate(b: Bench, out, kern: str, wf: int, n1: int, n2: int) -> dict:
    """One LDS_RATE kernel's loads per SM cycle: the slope of the clock64 cycles between n1 and n2 trips of
    32 warps x 8 loads, median over SMs and over 3 runs."""
    cp, np = b.cp, __import__("numpy")
    d = []
    for _ in range(3):
        c = []
        for n in (n1, n2):
            cyc = cp.zeros(b.sms, dtype=cp.int64)
            b.run1(kern, b.sms, 1024, (out, cyc, np.int32(n)))
            c.append(_med(cyc.get()))
        d.append(c[1] - c[0])
    dc = _med(d)
    insts = 32 * (n2 - n1) * 8       # per SM: 32 warps x trips x 8 loads
    return {"lds_per_cycle_per_sm": round(insts / dc, 4), "wavefronts_per_cycle_per_sm": round(insts * wf / dc, 4),
            "cycles_diff": d}


def bench_shared_rate(b: Bench):
    out = b.cp.zeros(b.sms * 1024, dtype=b.cp.uint32)
    res = {}
    with ClockSampler() as clk:
        for kern, wf in (("rate_lds32", 1), ("rate_lds128", 4), ("rate_lds32_conflict32", 32)):
            n1, n2 = (16, 144) if wf < 32 else (4, 36)
            res[kern] = {"wavefronts_per_inst": wf, **_lds_rate(b, out, kern, wf, n1, n2)}
    b.write("shared_pipe_rate", "shared-memory pipe throughput per SM: wavefronts and LDS instructions per cycle",
            f"one 1024-thread CTA per SM ({b.sms} CTAs), every thread issues 8 independent loads per trip; clock64 "
            "between barriers, slope over trip counts, median over SMs and 3 runs; LDS.32 linear (1 wavefront), "
            "LDS.128 linear (4), LDS.32 with all lanes in bank 0 (32)",
            res["rate_lds32_conflict32"]["wavefronts_per_cycle_per_sm"], "wavefronts/cycle/SM", res,
            clk.summary(), f"{SRC}:rate_lds32,rate_lds128,rate_lds32_conflict32")


# l1_shared: shared_line (every warp of a CTA on one line a step) by (CTAs per SM, warps per CTA), from a 2 GiB
# buffer (DRAM), a 16 MiB one read 8 times (127 KB of lines per SM: they stay in L1 between passes) and a 48 MiB
# one read 4 times (372 KB per SM, past L1: each pass's first warp on a line misses L1 and hits L2)
L1SHARED_LAYOUTS = ((1, 4), (1, 8), (1, 16), (1, 32), (2, 32))
L1SHARED_BUFFERS = ((16, 8), (2048, 1), (48, 4))

# lds_writeback: (kernel, wavefronts, 32-bit registers written per lane) of the few-word loads (micro.cu)
WB_KERNELS = (("rate_lds32", 1, 1), ("rate_lds32_k1", 1, 1), ("rate_lds64", 2, 2), ("rate_lds64_k1", 1, 2),
              ("rate_lds128", 4, 4), ("rate_lds128_k1", 1, 4), ("rate_lds128_k2", 1, 4), ("rate_lds128_k4", 1, 4),
              ("rate_lds128_k8", 1, 4), ("rate_lds128_k16", 2, 4))
WB_TRIPS = (16, 144)


def bench_lds_writeback(b: Bench):
    """Shared loads per SM cycle when few distinct words feed many lanes: does the register write-back,
    not the data pipe's wavefronts, set the rate of a broadcast LDS.128?"""
    out = b.cp.zeros(b.sms * 1024, dtype=b.cp.uint32)
    res = {}
    with ClockSampler() as clk:
        for kern, wf, regs in WB_KERNELS:
            res[kern] = {"wavefronts_per_inst": wf, "registers_per_lane": regs, **_lds_rate(b, out, kern, wf, *WB_TRIPS)}
    b.write("lds_writeback", "shared loads per SM cycle for LDS.32/64/128 of 1-32 distinct words (broadcasts): "
            "the data pipe's wavefronts against the registers written",
            f"shared_pipe_rate's loop: one 1024-thread CTA per SM ({b.sms} CTAs), every thread issues 8 independent "
            "ld.volatile.shared per trip, lane i reading word i % K; clock64 between barriers, slope over trip "
            f"counts {WB_TRIPS}, median over SMs and 3 runs", res["rate_lds128_k1"]["lds_per_cycle_per_sm"],
            "LDS/cycle/SM (rate_lds128_k1)", res, clk.summary(), f"{SRC}:rate_lds*")


def _event_ms(cp, fn, warm=3, n=10):
    for _ in range(warm):
        fn()
    ts = []
    for _ in range(n):
        s, e = cp.cuda.Event(), cp.cuda.Event()
        s.record()
        fn()
        e.record()
        e.synchronize()
        ts.append(cp.cuda.get_elapsed_time(s, e))
    return _med(ts), ts


def bench_bandwidth(b: Bench):
    cp, np = b.cp, __import__("numpy")
    out = cp.zeros(4, dtype=cp.float32)
    grid, block = b.sms * 4, 512
    f = b.fn("read_bw")
    l2 = []
    with ClockSampler() as clk:
        for mb in (8, 16, 32):
            n4 = mb * 2**20 // 16
            buf = cp.ones(n4 * 4, dtype=cp.float32)
            reps = max(1, (4 << 30) // (mb << 20))
            ms, ts = _event_ms(cp, lambda: f((grid,), (block,), (buf, np.int64(n4), np.int32(reps), out)))
            l2.append({"buffer_mib": mb, "passes": reps, "ms_median": round(ms, 4),
                       "gb_per_s": round(mb * 2**20 * reps / (ms * 1e-3) / 1e9, 1)})
            del buf
        cp.get_default_memory_pool().free_all_blocks()
        l2_clk = clk.summary()
    best = max(r["gb_per_s"] for r in l2)
    b.write("bandwidth_l2", "achievable L2 read bandwidth (data resident in L2)",
            f"read_bw: {grid} CTAs x {block} threads, grid-stride float4 .cg loads (4 in flight per thread), "
            "a buffer of 8/16/32 MiB read many times per launch (~4 GiB per launch); CUDA events, median of 10 "
            "after 3 warm-ups; value = best buffer size", best, "GB/s (1e9 B/s)", {"rows": l2}, l2_clk,
            f"{SRC}:read_bw")
    with ClockSampler() as clk:
        n4 = (4 << 30) // 16
        buf = cp.ones(n4 * 4, dtype=cp.float32)
        ms, ts = _event_ms(cp, lambda: f((grid,), (block,), (buf, np.int64(n4), np.int32(1), out)))
        read = (4 << 30) / (ms * 1e-3) / 1e9
        del buf
        cp.get_default_memory_pool().free_all_blocks()
        src = cp.ones((2 << 30) // 4, dtype=cp.float32)
        dst = cp.empty_like(src)
        ms2, ts2 = _event_ms(cp, lambda: cp.copyto(dst, src))
        copy = 2 * (2 << 30) / (ms2 * 1e-3) / 1e9
        del src, dst
        cp.get_default_memory_pool().free_all_blocks()
    b.write("bandwidth_dram", "achievable DRAM read bandwidth (and device-to-device copy)",
            f"read_bw over a 4 GiB buffer once per launch ({grid} x {block}, float4 .cg loads); copy: cupy.copyto "
            "of 2 GiB, counting bytes read plus written; CUDA events, median of 10 after 3 warm-ups",
            round(read, 1), "GB/s (1e9 B/s)",
            {"read_ms": round(ms, 4), "read_gb_per_s": round(read, 1), "copy_ms": round(ms2, 4),
             "copy_gb_per_s_read_plus_write": round(copy, 1)}, clk.summary(), f"{SRC}:read_bw; cupy.copyto")


def bench_barrier(b: Bench):
    cp, np = b.cp, __import__("numpy")
    res = {}
    with ClockSampler() as clk:
        for warps in (1, 2, 4, 8, 16, 32):
            dc, raw = slope_cycles(b, "bar_cost", 1, 32 * warps, lambda c, n: (c, n), 16, 256)
            res[str(warps)] = round(dc / ((256 - 16) * 16), 2)
    b.write("barrier_cost", "cycles per __syncthreads (BAR.SYNC) in a loop of nothing but barriers, by warps per CTA",
            "one CTA on one SM, 16 barriers per trip, clock64 slope between 16 and 256 trips / 16; median of 5",
            res, "cycles per barrier", {"warps_per_cta": [1, 2, 4, 8, 16, 32]}, clk.summary(), f"{SRC}:bar_cost")


def bench_issue_rate(b: Bench):
    cp, np = b.cp, __import__("numpy")
    outf = cp.zeros(4, dtype=cp.float32)
    outi = cp.zeros(4, dtype=cp.int32)
    rows = []
    n1, n2 = 64, 512
    with ClockSampler() as clk:
        for threads in (128, 1024):
            for kern, ch in (("fma_rate_1", 1), ("fma_rate_2", 2), ("fma_rate_4", 4), ("fma_rate_8", 8),
                             ("imad_rate_8", 8), ("iadd3_rate_8", 8)):
                if kern.startswith("fma"):
                    mk = lambda c, n: (outf, c, np.float32(0.999), np.float32(0.001), n)   # noqa: E731
                else:
                    mk = lambda c, n: (outi, c, np.int32(3), np.int32(1), n)               # noqa: E731
                dc, raw = slope_cycles(b, kern, 1, threads, mk, n1, n2)
                warps = threads // 32
                insts = warps * (n2 - n1) * 16 * ch
                op = {"fma": "FFMA", "imad": "IMAD", "iadd3": "IADD3"}[kern.split("_")[0]]
                rows.append({"kernel": kern, "op": op, "chains_per_thread": ch,
                             "warps_per_smsp": warps // 4,
                             "warp_inst_per_cycle_per_smsp": round(insts / dc / 4, 4)})
    dep = next(r for r in rows if r["kernel"] == "fma_rate_1" and r["warps_per_smsp"] == 1)
    ind = next(r for r in rows if r["kernel"] == "fma_rate_8" and r["warps_per_smsp"] == 8)
    b.write("fma_issue_rate", "FFMA (and IMAD, IADD3) warp-instructions issued per cycle per SMSP, dependent vs "
            "independent chains",
            f"one CTA of 128 threads (1 warp per SMSP) or 1024 (8 per SMSP); each thread runs 1/2/4/8 independent "
            f"chains, 16 steps per trip; clock64 between barriers, slope between {n1} and {n2} trips; median of 5",
            {"ffma_dependent_1warp": dep["warp_inst_per_cycle_per_smsp"],
             "ffma_independent_8warps_8chains": ind["warp_inst_per_cycle_per_smsp"]},
            "warp-instructions/cycle/SMSP", {"rows": rows}, clk.summary(), f"{SRC}:fma_rate_<CH>,imad_rate_8,iadd3_rate_8")


FMA_KINDS = [(f"fma_{kind}_{ch}", kind, ch) for kind in ("rate", "reg", "imm") for ch in (1, 2, 4)]


def _fma_kind_args(cp, kern, cyc, n):
    import numpy as np
    outf = cp.zeros(4, dtype=cp.float32)
    if kern.startswith("fma_rate"):
        return (outf, cyc, np.float32(0.999), np.float32(0.001), n)
    return (outf, cyc, cp.asarray([0.999, 0.001], dtype=cp.float32), n)


def _sass_ffma(cubin: Path, kern: str) -> str:
    """The first FFMA of the kernel's SASS (shows where its operands come from)."""
    out = subprocess.run(["cuobjdump", "--dump-sass", "--function", kern, str(cubin)], capture_output=True,
                         text=True).stdout
    return next((ln.split("*/", 1)[1].split(";")[0].strip() for ln in out.splitlines() if " FFMA " in ln), "")


def bench_fma_operands(b: Bench):
    cp = b.cp
    rows = []
    n1, n2 = 64, 512
    cubin = REPO / "kernels_cuda" / ".build" / "micro.cubin"
    with ClockSampler() as clk:
        for threads in (128, 1024):
            for kern, kind, ch in FMA_KINDS:
                dc, raw = slope_cycles(b, kern, 1, threads, lambda c, n: _fma_kind_args(cp, kern, c, n), n1, n2)
                warps = threads // 32
                rows.append({"kernel": kern, "operand": {"rate": "constant bank", "reg": "register",
                                                         "imm": "immediate"}[kind],
                             "chains_per_thread": ch, "warps_per_smsp": warps // 4,
                             "warp_inst_per_cycle_per_smsp": round(warps * (n2 - n1) * 16 * ch / dc / 4, 4),
                             "sass": _sass_ffma(cubin, kern)})
    v = {f"{r['kernel']}_{r['warps_per_smsp']}w": r["warp_inst_per_cycle_per_smsp"] for r in rows}
    b.write("fma_operands", "FFMA warp-instructions per cycle per SMSP by where the second and third operands come "
            "from (constant bank, registers, immediate), 1 or 8 warps per SMSP, 1/2/4 chains",
            f"one CTA of 128 or 1024 threads; each thread runs 1/2/4 independent chains, 16 steps per trip; clock64 "
            f"between barriers, slope between {n1} and {n2} trips; median of 5; sass: the kernel's first FFMA",
            v, "warp-instructions/cycle/SMSP", {"rows": rows}, clk.summary(), f"{SRC}:fma_rate_*,fma_reg_*,fma_imm_*")


# ------------------------------------------------------------------ ncu on the bursts

FMA_NCU_METRICS = [
    "smsp__inst_executed.sum", "smsp__inst_executed_pipe_fma.sum", "smsp__inst_executed_pipe_fmaheavy.sum",
    "smsp__inst_executed_pipe_fmalite.sum", "smsp__inst_executed_pipe_alu.sum", "sm__cycles_elapsed.max",
    "smsp__issue_active.avg.per_cycle_active", "smsp__average_warp_latency_per_inst_issued.ratio",
] + [ncu_mod.stall_metric(r) for r in ("wait", "math_pipe_throttle", "dispatch_stall", "not_selected",
                                       "selected", "barrier", "no_instruction")]
FMA_NCU = [(k, t) for t in (128, 1024) for k in ("fma_rate_1", "fma_rate_2", "fma_rate_4", "fma_rate_8",
                                                  "imad_rate_8", "iadd3_rate_8")]
FMA_KIND_NCU = [(k, 1024) for k, _, _ in FMA_KINDS]


QW_WARPS = (1, 2, 4, 8, 16, 32)
QW_NCU = [(k, w, B) for k in ("ldg", "lds") for w in (4, 8, 16, 32) for B in (8, 16, 32)]
# l2_loaded: read_bw's .cg float4 loads (4 in flight per thread) by 4-64 warps per SM (CTAs of 4 warps), over
# a 16 MiB buffer (L2-resident: 32 passes, the first after ncu's cache flush from DRAM) and a 2 GiB one (DRAM: 1 pass)
L2LOAD_WARPS = (4, 8, 16, 32, 64)
L2LOAD_BUFFERS = ((16, 32), (2048, 1))
# l2_light: the same streams under light chip-wide load, float4 (read_bw: 4 lines a load) and float (read_bw_f32:
# 1 line) loads, as (warps per SM, CTA threads, SMs used): 1 and 2 warps on every SM, 4 warps on a quarter and on
# a sixteenth of the SMs (one CTA per SM), and 4 on all of them (l2_loaded's lightest row, for reference)
L2LIGHT_KERNELS = ("read_bw", "read_bw_f32")
L2LIGHT_LAYOUTS = ((1, 32, 132), (2, 64, 132), (4, 128, 33), (4, 128, 8), (4, 128, 132))
L2LIGHT_BUFFERS = ((16, 32), (2048, 1))


def bench_queue_warps(b: Bench):
    """mio_queue_depth's and lg_queue_depth's bursts (the same kernels) from 1 to 32 warps of one CTA
    (warp w on SMSP w % 4): how many loads the SM holds in flight as the warps per SMSP grow."""
    tables = {}
    with ClockSampler() as clk:
        for kind in ("ldg", "lds"):
            for w in QW_WARPS:      # (1024 threads leave 64 registers each: bursts of 40+ do not launch)
                tables[f"{kind}_{w}w"] = _burst_table(b, kind, w, bursts=BURSTS if w < 32 else
                                                      tuple(B for B in BURSTS if B <= 32))
    b.write("queue_warps", "issue and completion of bursts of B independent loads by 1-32 warps: the MIO / LG "
            "queue capacity as the warps per SMSP grow",
            "the burst_lds_<B> (LDS.32, 32 lanes in bank 0: 32 wavefronts) and burst_ldg_<B> (LDG.32 "
            "ld.global.ca, 32 lanes on 32 lines, L1 hits after the warm burst) kernels of mio_queue_depth / "
            "lg_queue_depth, one CTA of 32 x W threads (W = 1, 2, 4, 8, 16, 32 warps; warp w on SMSP w % 4; "
            "32 warps only up to B = 32, the larger bursts' registers do not fit); "
            "clock64 before each burst, after its last load issues (issue_cycles) and after all values are "
            "consumed (complete_cycles); median over warps and 15 bursts after a warm one",
            {k: max(r["issue_cycles"] for r in t) for k, t in tables.items()}, "cycles (issue of the largest "
            "burst, per table)", tables, clk.summary(), f"{SRC}:burst_lds_<B>, burst_ldg_<B>")


def ncu_child(cubin, which):
    """Under ncu: each kernel once, between cudaProfilerStart/Stop (after an unprofiled warm launch)."""
    import numpy as np
    from gpusim.hw.gpu import cupy
    from gpusim.hw.profile import _profiler
    cp = cupy()
    mod = cp.RawModule(path=str(cubin))
    start, stop = _profiler(cp)
    launches = []
    if which == "bursts":
        g = cp.arange(64 * 32 * 4 * 4, dtype=cp.uint32)
        out = cp.zeros(1024, dtype=cp.uint32)
        cyc = cp.zeros(64 * 2, dtype=cp.int64)
        for kind in ("lds", "ldg"):
            for B in NCU_BURSTS:
                args = (out, cyc, np.int32(64)) if kind == "lds" else (g, out, cyc, np.int32(64))
                launches.append((f"burst_{kind}_{B}", 32, args))
    elif which in ("qwarps", "qwlsu"):      # (qwlsu: the same launches, other metrics)
        g = cp.arange(64 * 32 * 32 + 2048, dtype=cp.uint32)
        out = cp.zeros(1024, dtype=cp.uint32)
        cyc = cp.zeros(32 * 64 * 2, dtype=cp.int64)
        for kind, w, B in QW_NCU:
            args = (out, cyc, np.int32(64)) if kind == "lds" else (g, out, cyc, np.int32(64))
            launches.append((f"burst_{kind}_{B}", 32 * w, args))
    elif which == "l2load":
        sms = cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
        outf = cp.zeros(4, dtype=cp.float32)
        for mib, reps in L2LOAD_BUFFERS:
            n4 = mib * 2**20 // 16
            buf = cp.ones(n4 * 4, dtype=cp.float32)
            for w in L2LOAD_WARPS:
                launches.append(("read_bw", 128, (buf, np.int64(n4), np.int32(reps), outf), sms * w // 4))
    elif which == "l1shared":
        sms = cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
        outf = cp.zeros(4, dtype=cp.float32)
        for mib, reps in L1SHARED_BUFFERS:
            n = mib * 2**20 // 4
            buf = cp.ones(n, dtype=cp.float32)
            for ctas, w in L1SHARED_LAYOUTS:
                launches.append(("shared_line", 32 * w, (buf, np.int64(n // 32), np.int32(reps), outf), sms * ctas))
    elif which == "ldswb":
        sms = cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
        out = cp.zeros(sms * 1024, dtype=cp.uint32)
        cyc = cp.zeros(sms, dtype=cp.int64)
        for k, _, _ in WB_KERNELS:
            launches.append((k, 1024, (out, cyc, np.int32(WB_TRIPS[1])), sms))
    elif which == "l2light":
        outf = cp.zeros(4, dtype=cp.float32)
        for mib, reps in L2LIGHT_BUFFERS:
            n = mib * 2**20 // 4
            buf = cp.ones(n, dtype=cp.float32)
            for k in L2LIGHT_KERNELS:
                count = np.int64(n // 4 if k == "read_bw" else n)
                for w, threads, sms in L2LIGHT_LAYOUTS:
                    launches.append((k, threads, (buf, count, np.int32(reps), outf), sms))
    elif which == "stamps":
        out = cp.zeros(1024, dtype=cp.uint32)
        st = cp.zeros(16 * 16 * 3, dtype=cp.int64)
        for k, w, m in STAMP_NCU:
            launches.append((k, 32 * w, (out, st, np.int32(16), np.uint32(m))))
    elif which == "fmakind":
        cyc = cp.zeros(64, dtype=cp.int64)
        for k, t in FMA_KIND_NCU:
            launches.append((k, t, _fma_kind_args(cp, k, cyc, np.int32(512))))
    else:
        outf, outi = cp.zeros(4, dtype=cp.float32), cp.zeros(4, dtype=cp.int32)
        cyc = cp.zeros(64, dtype=cp.int64)
        for k, t in FMA_NCU:
            args = ((outf, cyc, np.float32(0.999), np.float32(0.001), np.int32(512)) if k.startswith("fma")
                    else (outi, cyc, np.int32(3), np.int32(1), np.int32(512)))
            launches.append((k, t, args))
    for name, threads, args, *grid in launches:
        f = mod.get_function(name)
        g = (grid[0] if grid else 1,)
        f(g, (threads,), args)
        cp.cuda.runtime.deviceSynchronize()
        start()
        f(g, (threads,), args)
        cp.cuda.runtime.deviceSynchronize()
        stop()


def _ncu_table(b: Bench, cubin, work: Path, which, metrics, labels):
    ncu = ncu_mod.find_ncu()
    rep = work / f"{which}_ncu"
    cmd = ncu_mod.profile_command(ncu, metrics, str(rep),
                                  [sys.executable, str(Path(__file__).resolve()), "--ncu-child", which,
                                   str(cubin)])
    env = dict(os.environ, PYTHONPATH=str(REPO))
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=420)
    (work / f"{which}_ncu.log").write_text(r.stdout + r.stderr)
    ex = subprocess.run(ncu_mod.export_command(ncu, str(rep) + ".ncu-rep"), capture_output=True, text=True)
    (work / f"{which}_ncu.csv").write_text(ex.stdout)
    rows = ncu_mod.parse_raw_csv(ex.stdout)
    api = ncu_mod.read_report(str(rep) + ".ncu-rep", ncu)
    api = api if api and len(api) == len(rows) else None
    table = []
    for i, (lab, row) in enumerate(zip(labels, rows)):
        m = ncu_mod.compact(row, metrics, api[i] if api else None, per_pc=False)["metrics"]
        table.append({"kernel": lab, **{k.replace("smsp__average_warps_issue_stalled_", "stall_")
                                        .replace("_per_issue_active.ratio", ""): v for k, v in m.items()}})
    shown = " ".join(["ncu"] + cmd[1:cmd.index("--metrics")] + ["--metrics", "<see metrics>", "-f", "-o",
                      f"<work>/{which}_ncu", "python3", "calibrate/run_micro.py", "--ncu-child",
                      which, "<cubin>"])
    return table, shown


def _stream_metrics(*extra: str) -> list:
    """What the global-load streams under ncu record (l2_loaded, l2_light, l1_shared): the LSU pipe's loads
    in flight and latency (gpusim.hw.breakdown's LSU_METRICS), the kernel's time and where its data came from,
    then `extra`."""
    from gpusim.hw.breakdown import LSU_METRICS
    return LSU_METRICS + ["gpu__time_duration.sum", "lts__t_sectors_srcunit_tex_op_read.sum",
                          "lts__t_sector_op_read_hit_rate.pct", "dram__bytes_read.sum",
                          "l1tex__m_xbar2l1tex_read_bytes.sum", *extra]


def bench_queue_ncu(b: Bench, cubin, work: Path, only=None):
    if not ncu_mod.find_ncu():
        print("  (no ncu: the ncu benches are skipped)")
        return
    if only and "fma_operands" in only:     # just the operand-kind view
        bench_fma_operands_ncu(b, cubin, work)
        return
    if only and "queue_warps" in only:
        _ncu_record(b, cubin, work, "qwarps", BURST_NCU_METRICS + [ncu_mod.stall_metric(r) for r in (
                    "not_selected", "dispatch_stall")],
                    [f"burst_{k}_{B} ({w} warps)" for k, w, B in QW_NCU], "queue_warps_ncu",
                    "ncu's warp states for queue_warps' bursts: how the wait splits between the queue "
                    "(mio_throttle / lg_throttle) and the data (short / long_scoreboard) as the warps grow",
                    "one launch of each burst kernel (one CTA of 4-32 warps, 64 bursts of B loads) after an "
                    "unprofiled one", "ratio (per issue)", f"{SRC}:burst_*")
        return
    if only and "queue_warps_lsu" in only:
        # the same launches with the LSU pipe's pending loads and latencies (gpusim.hw.breakdown --family lsu)
        from gpusim.hw.breakdown import LSU_METRICS
        _ncu_record(b, cubin, work, "qwlsu", BURST_NCU_METRICS + LSU_METRICS + ["sm__cycles_active.max"],
                    [f"burst_{k}_{B} ({w} warps)" for k, w, B in QW_NCU], "queue_warps_lsu_ncu",
                    "how many shared / global loads queue_warps' bursts hold in the LSU pipe (pending per cycle, "
                    "sm__inst_pending_pipe_lsu_*) and their latency from issue to retirement, as the warps grow",
                    "one launch of each burst kernel (one CTA of 4-32 warps, 64 bursts of B loads) after an "
                    "unprofiled one; the one SM's pending per cycle is sm__inst_pending_*.max / sm__cycles_active.max",
                    "as named", f"{SRC}:burst_*")
        return
    if only and "l2_loaded" in only:
        _ncu_record(b, cubin, work, "l2load", _stream_metrics(),
                    [f"read_bw {mib} MiB ({w} warps/SM)" for mib, _ in L2LOAD_BUFFERS for w in L2LOAD_WARPS],
                    "l2_loaded_ncu",
                    "global-load latency under load: read_bw's L2-resident (16 MiB) and DRAM (2 GiB) streams by 4-64 "
                    "warps per SM, with ncu's loads pending in the LSU pipe and their latency from issue to retirement",
                    "one launch of each configuration (132 x warps/4 CTAs of 128 threads) after an unprofiled one",
                    "as named", f"{SRC}:read_bw")
        return
    if only and "l1_shared" in only:
        _ncu_record(b, cubin, work, "l1shared", _stream_metrics(
                        "l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct",
                        "smsp__average_warp_latency_per_inst_issued.ratio",
                        "smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio"),
                    [f"shared_line {mib} MiB ({c} x {w} warps/SM)" for mib, _ in L1SHARED_BUFFERS
                     for c, w in L1SHARED_LAYOUTS],
                    "l1_shared_ncu",
                    "global loads that hit an L1 line another warp's miss is fetching (every warp of a CTA on one "
                    "128-B line a step, as coalesced's B loads): how many the SM holds in the LSU pipe, their latency "
                    "and the wait split, by warps per SM, from DRAM, from the L2 (48 MiB) and from L1 (16 MiB)",
                    "one launch of each configuration (132 x CTAs per SM CTAs of 32 x warps threads) after an "
                    "unprofiled one", "as named", f"{SRC}:shared_line")
        return
    if only and "lds_writeback" in only:
        from gpusim.hw.breakdown import LSU_METRICS
        _ncu_record(b, cubin, work, "ldswb", LSU_METRICS + [
                        "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum", "smsp__sass_inst_executed_op_shared_ld.sum",
                        "sm__cycles_active.avg", "smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio",
                        "smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio"],
                    [f"{k} ({wf} wavefronts, {r} registers)" for k, wf, r in WB_KERNELS], "lds_writeback_ncu",
                    "the register write-back's busy cycles (sm__mio2rf_writeback_active) and the shared loads' latency "
                    "and count in flight for the lds_writeback loads",
                    f"one launch of each kernel ({WB_TRIPS[1]} trips, one 1024-thread CTA per SM) after an unprofiled one",
                    "as named", f"{SRC}:rate_lds*")
        return
    if only and "l2_light" in only:
        _ncu_record(b, cubin, work, "l2light", _stream_metrics(
                        "sm__cycles_active.max", "sm__inst_executed_pipe_lsu_mem_lg_cmd_read.max"),
                    [f"{k} {mib} MiB ({w} warps/SM, {sms} SMs)" for mib, _ in L2LIGHT_BUFFERS
                     for k in L2LIGHT_KERNELS for w, _, sms in L2LIGHT_LAYOUTS],
                    "l2_light_ncu",
                    "global-load latency under light load: read_bw's (float4, 4 lines a load) and read_bw_f32's "
                    "(float, 1 line) L2-resident (16 MiB) and DRAM (2 GiB) streams by 1-2 warps on every SM and "
                    "4 warps on 8, 33 or 132 SMs, with ncu's loads pending in the LSU pipe and their latency from "
                    "issue to retirement",
                    "one launch of each configuration (one CTA of 32 x warps threads per SM used) after an "
                    "unprofiled one; on the SMs used, pending per cycle is sm__inst_pending_*.max / "
                    "sm__cycles_active.max",
                    "as named", f"{SRC}:read_bw,read_bw_f32")
        return
    if only and "lds_bursts_order" in only:
        _ncu_record(b, cubin, work, "stamps", BURST_NCU_METRICS + [ncu_mod.stall_metric(r) for r in (
                    "not_selected", "barrier", "dispatch_stall")],
                    [f"{stamp_label(k, w, m)} B16" for k, w, m in STAMP_NCU], "lds_bursts_order_ncu",
                    "ncu's warp states for stamped shared-load bursts (where the wait for a shared load shows)",
                    "one launch of each kernel (16 reps) after an unprofiled one", "ratio (per issue)",
                    f"{SRC}:stamp_lds*")
        return
    _ncu_record(b, cubin, work, "bursts", BURST_NCU_METRICS,
                [f"burst_{k}_{B} (1 warp)" for k in ("lds", "ldg") for B in NCU_BURSTS], "queue_stalls_ncu",
                "ncu warp-state shares of the burst kernels: where mio_throttle / lg_throttle appear",
                "one launch of each burst kernel (1 warp, 64 bursts of B loads) after an unprofiled one; stall "
                "ratios are warps stalled per issued instruction", "ratio (per issue)", f"{SRC}:burst_*")
    _ncu_record(b, cubin, work, "fma", FMA_NCU_METRICS, [f"{k} ({t // 128} warp(s)/SMSP)" for k, t in FMA_NCU],
                "fma_pipes_ncu", "ncu's view of the issue-rate kernels: FMA-heavy vs FMA-lite split and stalls",
                "one launch of each fma_issue_rate kernel (512 trips) after an unprofiled one, 1 CTA of 128 or "
                "1024 threads", "mixed (counts, ratios)", f"{SRC}:fma_rate_*")
    bench_fma_operands_ncu(b, cubin, work)


def bench_fma_operands_ncu(b: Bench, cubin, work: Path):
    _ncu_record(b, cubin, work, "fmakind", FMA_NCU_METRICS, [f"{k} ({t // 128} warps/SMSP)" for k, t in FMA_KIND_NCU],
                "fma_operands_ncu", "ncu's warp states for the FFMA operand-kind kernels (8 warps per SMSP)",
                "one launch of each fma_operands kernel (512 trips) after an unprofiled one, 1 CTA of 1024 threads",
                "mixed (counts, ratios)", f"{SRC}:fma_rate_*,fma_reg_*,fma_imm_*")


def _ncu_record(b: Bench, cubin, work: Path, which, metrics, labels, bench, what, how, unit, source):
    """One ncu table (_ncu_table) written as a micro record."""
    with ClockSampler() as clk:
        table, shown = _ncu_table(b, cubin, work, which, metrics, labels)
    b.write(bench, what, "ncu --clock-control none --cache-control all, " + how, table, unit,
            {"ncu_command": shown, "metrics": metrics}, clk.summary(), source)


BENCHES = {
    "latency_alu": bench_latency_alu, "latency_lds": bench_latency_lds, "latency_memory": bench_latency_memory,
    "queues": bench_queues, "shared_rate": bench_shared_rate, "lds_writeback": bench_lds_writeback, "issue_rate": bench_issue_rate,
    "barrier": bench_barrier, "bandwidth": bench_bandwidth, "fma_operands": bench_fma_operands,
    "lds_bursts_cf": bench_lds_bursts_cf, "lds_bursts_order": bench_lds_bursts_order,
    "queue_warps": bench_queue_warps,
}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    ap.add_argument("--work", default=None)
    ap.add_argument("--only", nargs="*", default=None, help=f"benches: {', '.join(BENCHES)}")
    ap.add_argument("--ncu", action="store_true", help="also read queue stalls with ncu")
    ap.add_argument("--ncu-child", nargs=2, default=None, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.ncu_child:
        ncu_child(a.ncu_child[1], a.ncu_child[0])
        return 0
    t0 = time.time()
    out = Path(a.out or tempfile.gettempdir())
    work = Path(a.work) if a.work else Path(tempfile.gettempdir()) / "gpusim_micro_work"
    (work / "micro").mkdir(parents=True, exist_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    cubin = REPO / "kernels_cuda" / ".build" / "micro.cubin"
    flags, nvcc_cmd = build(cubin)
    from gpusim.hw.gpu import cupy, device_name
    cp = cupy()
    smi = smi_query()
    cmd = ("PYTHONPATH=. python3 calibrate/run_micro.py " + " ".join(sys.argv[1:])).replace(str(out), "$OUT")
    prov = {"command": cmd, "device": smi.get("name") or device_name(cp),
            "driver": str(smi.get("driver_version", "unknown")), "cuda": cuda_versions(cp),
            "build_flags": flags, "nvcc_command": nvcc_cmd}

    def pack():
        tmp = out / "micro.tar.gz.tmp"
        with tarfile.open(tmp, "w:gz") as tf:
            for f in sorted((work / "micro").glob("*.json")):
                tf.add(f, arcname=f"micro/{f.name}")
            for f in sorted(work.glob("*_ncu.*")):
                if f.suffix in (".csv", ".log"):
                    tf.add(f, arcname=f"raw/{f.name}")
        tmp.replace(out / "micro.tar.gz")

    b = Bench(cp, cp.RawModule(path=str(cubin)), prov, work / "micro", pack)
    for name, fn in BENCHES.items():
        if a.only and name not in a.only:
            continue
        print(f"[{time.time() - t0:6.1f}s] {name}", flush=True)
        try:
            fn(b)
        except Exception as e:      # noqa: BLE001 - one failed bench must not lose the others
            print(f"  {name} FAILED: {type(e).__name__}: {e}", flush=True)
    if a.ncu:
        print(f"[{time.time() - t0:6.1f}s] ncu benches", flush=True)
        try:
            bench_queue_ncu(b, cubin, work, a.only)
        except Exception as e:      # noqa: BLE001
            print(f"  queue_ncu FAILED: {type(e).__name__}: {e}", flush=True)
    pack()
    print(f"done in {time.time() - t0:.1f} s: {', '.join(b.written)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
