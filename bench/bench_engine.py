"""Speed of the timing engine: simulated warp-instructions per second (issue 4's >= 5 M/s target).

Builds a full-mode trace of regtile2d at 256^3 (kernels_py/regtile2d.py when it exists;
otherwise a stand-in below that follows kernels_cuda/regtile2d.cu and the basic blocks of its
SASS in traces/static/regtile2d.json), times the rows of the CTAs resident on one SM (2 at
94 registers x 256 threads), warms numba up once, then prints the best of --repeat runs and a
first look at the result. Times are this thread's CPU time (one core), best of --repeat.
That is the engine bare: no ptxas facts, every global load an L2 hit. It then times the engine as
`gpusim run` runs it: regtile2d at 4096, the first round's CTAs over 64 trips, with the cache model's
memory levels and ptxas's stall counts, dependency and read barriers (the prediction's inputs); the
stall counts make warps wait more cycles per instruction, so this rate is the lower one.
With --ladder it then prints both rates on every ladder kernel (as run: at 1024, 16 trips).
Usage: python bench/bench_engine.py [--size 256] [--repeat 5] [--ctas 2] [--ladder]
"""
import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))     # this checkout's gpusim, not an installed one
import gpusim  # noqa: E402
from gpusim.errors import UnknownKernel  # noqa: E402
from gpusim.kernel import KernelSpec, align_period  # noqa: E402
from gpusim.timing import simulate_sm, lower, run_lowered, STATES  # noqa: E402
from gpusim.estimate.kernel_time import lowered_round, predict  # noqa: E402


def regtile2d_standin(k, M, N, K, alpha, A, B, beta, C, BM=128, BN=128, BK=8, TM=8, TN=8):
    T = (BM * BN) // (TM * TN)
    cRow, cCol = k.blockIdx.y, k.blockIdx.x
    As, Bs = k.shared("As", BM * BK), k.shared("Bs", BK * BN)
    tcol, trow = k.tid % (BN // TN), k.tid // (BN // TN)
    A, B, C = A + cRow * BM * K, B + cCol * BN, C + cRow * BM * N + cCol * BN
    icA, irA, icB, irB = k.tid % BK, k.tid // BK, k.tid % BN, k.tid // BN
    k.ops({"S2R": 1, "S2UR": 2, "UIMAD.WIDE": 2, "ULDC.64": 2, "USHF.L.U32": 2, "MOV": 1})
    k.op("CS2R", 32)
    acc = [0.0] * (TM * TN)
    for bk in k.loop(0, K, BK, period=align_period(BK, BK * N)):
        k.ops({"LOP3.LUT": 16, "LEA": 14, "MOV": 11, "IMAD.WIDE": 8, "IADD3": 3, "IMAD": 2})
        for off in range(0, BM, T // BK):
            v = A.ld((irA + off) * K + icA + bk)
            As.st((irA + off) * BK + icA, v, srcs=(v,))
        for off in range(0, BK, T // BN):
            v = B.ld((irB + off + bk) * N + icB)
            Bs.st((irB + off) * BN + icB, v, srcs=(v,))
        k.syncthreads()
        for dot in range(BK):
            regM = [As.ld((trow * TM + i) * BK + dot) for i in range(TM)]
            regN = [x for j in range(TN // 4) for x in Bs.ld(dot * BN + tcol * TN + 4 * j, vec=4)]
            for m in range(TM):
                for n in range(TN):
                    acc[m * TN + n] = k.ffma(regM[m], regN[n], acc[m * TN + n])
            k.ops({"LEA": 3, "IADD3": 1, "MOV": 1, "PLOP3.LUT": 1, "UIADD3": 1, "UISETP.NE.AND": 1, "BRA": 1})
        k.syncthreads()
        k.ops({"UIADD3": 1, "UIADD3.X": 1, "UIMAD.WIDE": 1, "USHF.L.U32": 1, "BRA": 1})
    for m in range(TM):
        for n in range(TN):
            idx = (trow * TM + m) * N + tcol * TN + n
            c = C.ld(idx)
            t = k.fmul(acc[m * TN + n], alpha)
            C.st(idx, k.ffma(c, beta, t))


STANDIN = KernelSpec(
    name="regtile2d", fn=regtile2d_standin, params={"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8},
    launch=lambda M, N, K, BM, BN, BK, TM, TN: ((N // BN, M // BM, 1), ((BM * BN) // (TM * TN), 1, 1)),
    check=lambda M, N, K, **p: None,
    grid_period=lambda M, N, K, BM, BN, BK, TM, TN: (1, 1),
    summary="bench stand-in for regtile2d")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--ctas", type=int, default=2, help="CTAs resident on the SM (2 = regtile2d's occupancy)")
    ap.add_argument("--ladder", action="store_true",
                    help="also the rate on every ladder kernel (the same --size and --ctas, best of 3)")
    a = ap.parse_args()
    try:
        gpusim.get_kernel("regtile2d")
        kernel, which = "regtile2d", "kernels_py/regtile2d.py"
    except UnknownKernel:
        kernel, which = STANDIN, "the stand-in in bench/bench_engine.py"
    t0 = time.perf_counter()
    sim = gpusim.simulate(kernel, a.size, mode="full", keep_trace=True)
    print(f"trace: regtile2d {a.size}^3 full mode from {which}: {len(sim.trace):,} rows "
          f"in {time.perf_counter() - t0:.1f} s")
    arch = gpusim.get_arch("h200")
    lw = lower(sim.trace, arch, ctas=range(a.ctas))
    t0 = time.perf_counter()
    res = run_lowered(lw, arch)
    print(f"first run (numba load or compile): {time.perf_counter() - t0:.2f} s")
    best = min(_timed(lw, arch) for _ in range(a.repeat))
    t0 = time.thread_time()
    simulate_sm(sim.trace, arch, ctas=range(a.ctas))
    wrapper = time.thread_time() - t0
    print(f"engine: {res.inst_issued:,} warp-instructions, {res.cycles:,} cycles, best {best * 1e3:.1f} ms "
          f"-> {res.inst_issued / best / 1e6:.1f} M warp-inst/s (with lowering: "
          f"{res.inst_issued / wrapper / 1e6:.1f} M/s)")
    m = res.metrics
    print(f"{a.ctas} CTAs on one SM: warp cycles per issued instruction "
          f"{m['smsp__average_warp_latency_per_inst_issued.ratio']:.2f}, issue active "
          f"{m['smsp__issue_active.avg.pct_of_peak_sustained_active']:.1f} %")
    ratios = sorted(((res.state_cycles[s] / res.inst_issued, s) for s in STATES), reverse=True)
    print("  " + ", ".join(f"{s} {r:.2f}" for r, s in ratios if r > 0))
    lw_p = as_run("regtile2d", 4096, 64)
    r_p = run_lowered(lw_p, arch)
    best_p = min(_timed(lw_p, arch) for _ in range(a.repeat))
    print(f"as gpusim run times it (regtile2d 4096, first round, 64 trips, cache model and ptxas facts): "
          f"{r_p.inst_issued:,} warp-instructions, {r_p.cycles:,} cycles, best {best_p * 1e3:.1f} ms -> "
          f"{r_p.inst_issued / best_p / 1e6:.1f} M warp-inst/s")
    if a.ladder:
        # the rate depends on the kernel: the engine's work grows with the warps that are eligible or
        # wait on a shared resource each cycle (many-warp, memory-bound kernels are the slow ones)
        print(f"\nevery ladder kernel, best of 3: bare ({a.size}^3 full mode, {a.ctas} CTAs on one SM) and as run "
              f"(1024, the first round over 16 trips, cache model and ptxas facts):")
        for k in gpusim.kernel.LADDER:
            lw_k = lower(gpusim.simulate(k, a.size, mode="full", keep_trace=True).trace, arch, ctas=range(a.ctas))
            r_k = run_lowered(lw_k, arch)
            t_k = min(_timed(lw_k, arch) for _ in range(3))
            lw_q = as_run(k, 1024, 16)
            r_q = run_lowered(lw_q, arch)
            t_q = min(_timed(lw_q, arch) for _ in range(3))
            print(f"  {k:11s} {lw_k.warp_start.shape[0] - 1:3d} warps  bare {r_k.inst_issued / t_k / 1e6:5.1f} M/s   "
                  f"as run {lw_q.warp_start.shape[0] - 1:3d} warps {r_q.inst_issued / t_q / 1e6:5.1f} M/s", flush=True)



def as_run(kernel: str, size: int, trips: int):
    """The first round of a launch over `trips` trips, as `gpusim run` gives it to the engine."""
    r = gpusim.simulate(kernel, size, keep_trace=True)
    return lowered_round(r, predict(r), trips)


def _timed(lw, arch):
    """CPU time of this thread: other processes on a shared machine do not inflate it."""
    t0 = time.thread_time()
    run_lowered(lw, arch)
    return time.thread_time() - t0


if __name__ == "__main__":
    main()
