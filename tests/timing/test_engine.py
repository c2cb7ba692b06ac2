"""The cycle engine on tiny hand-built traces, with exact cycles derived from its rules.

The rules (gpusim/timing/engine.py and the units it calls): a result is ready `latency` cycles after issue and a
dependent may issue in that cycle; each SMSP issues one instruction per cycle; FMA-lite and
FMA-heavy each take one instruction per 2 cycles (FP32 ops take lite when both are free);
the shared pipe takes the oldest MIO queue head in the cycle it was issued at the earliest,
busy `wavefronts` cycles, and a load is ready at start + wavefronts - 1 + LDS latency; a
global load is ready at start + ceil(sectors/16) - 1 + level latency, and no earlier than the
L2->L1 fill path (128 B/cycle, in order) delivers it; a warp retires at max(last issue + 1,
its last memory completion) and sits in `drain` until then. Latencies are pinned in ARCH so
these numbers do not move when a preset is re-measured.
"""
from dataclasses import replace

import numpy as np
import pytest

import gpusim
from gpusim.arch.presets import H200
from gpusim.errors import GpusimError
from gpusim.kernel.context import Ctx, Sampler
from gpusim.kernel.opcodes import TABLE
from gpusim.estimate import kernel_time as KT
from gpusim.timing import engine as E, lower, run_lowered, simulate_sm, STATES, LEVEL_DRAM, \
    LEVEL_L1, LEVEL_L2
from gpusim.trace.trace import ROW_DTYPE, Trace, trace_from_ctx
from tests.timing.ladder_window import first_round_window

ARCH = replace(H200, ffma_dependent_latency_cycles=4.0, imad_latency_cycles=4, lds_latency_cycles=23.0,
               l2_hit_latency_cycles=282.0, dram_latency_ns=335.0, sm_clock_max_mhz=1980.0,
               fma_subpipe_issue_interval_cycles=2, mio_queue_depth=8, lg_queue_depth=8,
               l1_sectors_per_sm_cycle=16.0, l2_to_l1_bytes_per_sm_cycle=128, bar_sync_release_cycles=1,
               bar_sync_arrive_cycles=0, mio_sm_queue_depth=32, lg_sm_queue_depth=32,
               l2_bandwidth_gbps=1e9, dram_achieved_bandwidth_gbps=1e9,
               fma_warp_switch_bubble=False, mem_issue_interval_cycles=1, warp_shared_cycles_per_wavefront=1,
               smsp_l1_cycles_per_line=1, queue_entry_until_return=False)


def row(warp, op, seq, srcs=(), wf=0, sectors=0, cta=0):
    return (cta, warp, op, seq, srcs, wf, sectors)


def make_trace(spec) -> Trace:
    """spec: (cta, warp, opcode name, seq, source seqs, wavefronts, sectors) per row."""
    rows = np.zeros(len(spec), ROW_DTYPE)
    for i, (cta, warp, op, seq, srcs, wf, sec) in enumerate(spec):
        s = list(srcs) + [-1] * (3 - len(srcs))
        rows[i] = (cta, warp, TABLE.id(op), 0xFFFFFFFF, 1, seq, s[0], s[1], s[2], -1, sec, 0, wf, 0, -1)
    return Trace(rows, np.zeros((0, 32), np.int64), list(TABLE.ids))


def states(res, i):
    """Nonzero state cycles of warp i."""
    return {STATES[k]: int(v) for k, v in enumerate(res.warp_state_cycles[i]) if v}


def check_invariants(res):
    """Every active cycle of every warp is in exactly one state; selected = issued; the cycles by
    opcode waited at add up to the same state totals."""
    assert np.array_equal(res.warp_state_cycles.sum(axis=1), res.warp_retire - res.warp_launch)
    for k, name in enumerate(STATES):
        assert sum(d.get(name, 0) for d in res.op_state_cycles.values()) == res.warp_state_cycles[:, k].sum()
    assert np.array_equal(res.warp_state_cycles[:, STATES.index("selected")], res.warp_issued)
    total = sum(v for k, v in res.metrics.items() if k.startswith("smsp__average_warps_issue_stalled"))
    assert total == pytest.approx(res.metrics["smsp__average_warp_latency_per_inst_issued.ratio"])


def test_dependent_ffma_chain():
    """8 dependent FFMAs in one warp issue every 4 cycles (0, 4, ..., 28); the warp retires
    at 29 after 8 selected and 21 wait cycles: 29/8 warp cycles per instruction."""
    n = 8
    res = simulate_sm(make_trace([row(0, "FFMA", i, (i - 1,) if i else ()) for i in range(n)]), ARCH)
    assert res.issue_cycle.tolist() == [4 * i for i in range(n)]
    assert res.cycles == 29
    assert states(res, 0) == {"selected": 8, "wait": 21}
    assert res.metrics["smsp__average_warp_latency_per_inst_issued.ratio"] == 29 / 8
    assert res.metrics[f"smsp__average_warps_issue_stalled_wait_per_issue_active.ratio"] == 21 / 8
    check_invariants(res)


def test_independent_ffma_alternate_lite_heavy():
    """8 independent FFMAs: lite at 0, heavy at 1, lite at 2 ... one per cycle, no stall."""
    res = simulate_sm(make_trace([row(0, "FFMA", i) for i in range(8)]), ARCH)
    assert res.issue_cycle.tolist() == list(range(8))
    assert res.cycles == 8
    assert states(res, 0) == {"selected": 8}
    assert res.metrics["smsp__inst_executed_pipe_fmalite.sum"] == 4
    assert res.metrics["smsp__inst_executed_pipe_fmaheavy.sum"] == 4
    check_invariants(res)


def test_independent_imad_heavy_only():
    """4 independent IMADs use FMA-heavy alone: one per 2 cycles (0, 2, 4, 6), the cycles
    between in math_pipe_throttle; retires at 7."""
    res = simulate_sm(make_trace([row(0, "IMAD", i) for i in range(4)]), ARCH)
    assert res.issue_cycle.tolist() == [0, 2, 4, 6]
    assert res.cycles == 7
    assert states(res, 0) == {"selected": 4, "math_pipe_throttle": 3}
    check_invariants(res)


def test_lds_latency_short_scoreboard():
    """LDS at 0 (1 wavefront) is ready at 0 + 1 - 1 + 23; the dependent FFMA issues at 23 and
    the warp retires at 24 after 22 short_scoreboard cycles."""
    res = simulate_sm(make_trace([row(0, "LDS", 0, wf=1), row(0, "FFMA", 1, (0,))]), ARCH)
    assert res.issue_cycle.tolist() == [0, 23]
    assert res.cycles == 24
    assert states(res, 0) == {"selected": 2, "short_scoreboard": 22}
    check_invariants(res)


def test_lds_burst_fills_mio_queue():
    """Warps 0, 4, 8, 12 (all on SMSP 0) each issue one LDS of 4 wavefronts; MIO depth 1. The scheduler
    takes the youngest first (greedy-then-youngest).
    t0: w12 issues, the pipe starts it at once (busy to 4, ready 0+3+23 = 26).
    t1: w8 issues into the queue (now full). t2-4: w4, w0 mio_throttle (the pipe takes w8's
    LDS at 4 only after issue: ready 30). t5: w4 issues (both waiters began at 2: the younger goes
    first). t6-8: w0 mio_throttle (pipe takes w4's at 8: ready 34). t9: w0 issues; the pipe takes it
    at 12: ready 38. Each warp drains until its load returns: retire at 38, 34, 30, 26."""
    arch = replace(ARCH, mio_queue_depth=1)
    res = simulate_sm(make_trace([row(w, "LDS", 0, wf=4) for w in (0, 4, 8, 12)]), arch)
    assert res.issue_cycle.tolist() == [9, 5, 1, 0]
    assert res.warp_retire.tolist() == [38, 34, 30, 26]
    assert res.cycles == 38
    assert states(res, 3) == {"selected": 1, "drain": 25}
    assert states(res, 2) == {"not_selected": 1, "selected": 1, "drain": 28}
    assert states(res, 1) == {"not_selected": 2, "mio_throttle": 3, "selected": 1, "drain": 28}
    assert states(res, 0) == {"not_selected": 3, "mio_throttle": 6, "selected": 1, "drain": 28}
    assert res.state_cycles["mio_throttle"] == 9
    check_invariants(res)


def test_mio_throttle_from_the_sm_pool_is_counted_apart():
    """The same four 4-wavefront LDS throttle on SMSP 0's own queue (depth 1: warps 0, 4, 8, 12) or
    on the SM-wide pool (depth 1, one warp on each SMSP, queues of 8): the same issue times, and only the second's mio_throttle is the pool's (gpusim__mio_throttle_sm_pool). (In another order:
    the SMSP takes its youngest warp first, the pool's arbiter the lowest SMSP among equals.)"""
    smsp_q = simulate_sm(make_trace([row(w, "LDS", 0, wf=4) for w in (0, 4, 8, 12)]),
                         replace(ARCH, mio_queue_depth=1))
    pool = simulate_sm(make_trace([row(w, "LDS", 0, wf=4) for w in (0, 1, 2, 3)]),
                       replace(ARCH, mio_sm_queue_depth=1))
    assert smsp_q.issue_cycle.tolist() == [9, 5, 1, 0] and pool.issue_cycle.tolist() == [0, 1, 5, 9]
    for res in (smsp_q, pool):
        check_invariants(res)
    assert smsp_q.state_cycles["mio_throttle"] == 9
    assert smsp_q.metrics["gpusim__mio_throttle_sm_pool_cycles"] == 0
    assert pool.state_cycles["mio_throttle"] > 0
    assert pool.metrics["gpusim__mio_throttle_sm_pool_cycles"] == pool.state_cycles["mio_throttle"]
    assert pool.metrics["gpusim__mio_throttle_sm_pool.ratio"] == pytest.approx(
        pool.metrics["smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio"])


def test_bank_conflicted_lds_costs_32_pipe_cycles():
    """Warp 0 (SMSP 0) and warp 1 (SMSP 1) both issue an LDS at 0; warp 0's has 32 wavefronts
    and wins the tie (lowest SMSP): pipe busy 0-31, ready 0+31+23 = 54. Warp 1's 1-wavefront
    LDS starts at 32: ready 32+0+23 = 55. Dependent FFMAs issue at 54 and 55."""
    res = simulate_sm(make_trace([row(0, "LDS", 0, wf=32), row(0, "FFMA", 1, (0,)),
                                  row(1, "LDS", 0, wf=1), row(1, "FFMA", 1, (0,))]), ARCH)
    assert res.issue_cycle.tolist() == [0, 54, 0, 55]
    assert res.cycles == 56
    assert states(res, 0) == {"selected": 2, "short_scoreboard": 53}
    assert states(res, 1) == {"selected": 2, "short_scoreboard": 54}
    assert res.metrics["l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed"] == \
        pytest.approx(100 * 33 / 56)
    check_invariants(res)


@pytest.mark.parametrize("release, w0_issue, w1_issue, cycles", [
    (1, [0, 4, 8, 9, 12], [0, 1, 10], 13),
    (5, [0, 4, 8, 9, 12], [0, 1, 14], 15),
])
def test_barrier_across_warps(release, w0_issue, w1_issue, cycles):
    """Warp 0: FFMA chain at 0, 4, 8, then BAR at 9, then an FFMA reading the chain's end
    (ready at 12). Warp 1: BAR at 0, an IADD3, then a BRA. The last arrival (9) releases both at
    9 + release. BAR.SYNC.DEFER_BLOCKING: a warp goes on past a pending barrier until a memory or
    control instruction, so warp 1's IADD3 issues at 1 and its BRA waits in `barrier` until the
    release; warp 0's FFMA does not wait for it."""
    arch = replace(ARCH, bar_sync_release_cycles=release)
    res = simulate_sm(make_trace([
        row(0, "FFMA", 0), row(0, "FFMA", 1, (0,)), row(0, "FFMA", 2, (1,)), row(0, "BAR.SYNC", 3),
        row(0, "FFMA", 4, (2,)),
        row(1, "BAR.SYNC", 3), row(1, "IADD3", 4), row(1, "BRA", 5)]), arch)
    assert res.issue_cycle.tolist() == w0_issue + w1_issue
    assert res.cycles == cycles
    rel = 9 + release
    assert states(res, 1) == {"selected": 3, "barrier": rel - 2}
    assert states(res, 0) == {"selected": 5, "wait": 8}
    check_invariants(res)


def test_memory_instruction_waits_for_a_pending_barrier():
    """After its BAR at 0, warp 1 issues an IADD3 at 1 but its LDS waits for the release (last
    arrival: warp 0's BAR at 9, after five IADD3 one per alu_issue_interval = 2 cycles; release
    9 + 12 = 21): micro/lds_bursts_order.json's clock read after __syncthreads and ncu's barrier
    samples on the LDS after BAR.SYNC.DEFER_BLOCKING."""
    arch = replace(ARCH, bar_sync_release_cycles=12)
    res = simulate_sm(make_trace([
        row(0, "IADD3", 0), row(0, "IADD3", 1), row(0, "IADD3", 2), row(0, "IADD3", 3), row(0, "IADD3", 4),
        row(0, "BAR.SYNC", 5),
        row(1, "BAR.SYNC", 5), row(1, "IADD3", 6), row(1, "LDS", 7, wf=1)]), arch)
    w1 = res.issue_cycle[res.row_warp == 1].tolist()
    assert w1 == [0, 1, 21]
    assert states(res, 1)["barrier"] == 19
    check_invariants(res)


def test_global_load_l2_hit():
    """LDG of 4 sectors at 0: one L1TEX cycle, data from L2 at 0 + 0 + 282; the dependent
    FFMA issues at 282 after 281 long_scoreboard cycles."""
    res = simulate_sm(make_trace([row(0, "LDG.E", 0, sectors=4), row(0, "FFMA", 1, (0,))]), ARCH)
    assert res.issue_cycle.tolist() == [0, 282]
    assert res.cycles == 283
    assert states(res, 0) == {"selected": 2, "long_scoreboard": 281}
    check_invariants(res)


def test_global_load_bandwidth_and_dram_hook():
    """Two 32-sector loads (warps on SMSPs 0 and 1), both from DRAM via the level hook:
    latency round(335 ns * 1.98 GHz) = 663. Warp 0's: L1TEX 0-1, fill server busy 0-8, ready
    max(0+1+663, 8) = 664. Warp 1's: L1TEX 2-3, fill server 8-16; the DRAM server sits on the way
    (its times the data's arrivals, 8 cycles a KB at the 128 B/cycle cap): its bytes follow warp 0's,
    ready max(2+1+663, 664 + 8) = 672. A lone load takes the latency; a second right behind it, its
    bytes' time more."""
    t = make_trace([row(0, "LDG.E", 0, sectors=32), row(0, "FFMA", 1, (0,)),
                    row(1, "LDG.E", 0, sectors=32), row(1, "FFMA", 1, (0,))])
    res = simulate_sm(t, ARCH, global_level=np.full(len(t), LEVEL_DRAM))
    assert res.issue_cycle.tolist() == [0, 664, 0, 672]
    assert res.cycles == 673
    check_invariants(res)


def test_scheduler_policy():
    """Warps 0 and 4 share SMSP 0, two independent FFMAs each. Greedy-then-youngest issues warp 4 until it
    is done, then warp 0."""
    res = simulate_sm(make_trace([row(0, "FFMA", 0), row(0, "FFMA", 1), row(4, "FFMA", 0),
                                  row(4, "FFMA", 1)]), ARCH)
    assert res.issue_cycle.tolist() == [2, 3, 0, 1]
    check_invariants(res)


def test_barrier_counts_only_warps_still_running():
    """Warp 1 arrives at BAR (0) as its last instruction and retires; warp 0's two BARs at 0
    and 1 each complete when the warps still issuing (warp 1 until its last issue) have
    arrived: released at 1 and 2, its FFMA issues at 2."""
    res = simulate_sm(make_trace([row(0, "BAR.SYNC", 0), row(0, "BAR.SYNC", 1), row(0, "FFMA", 2),
                                  row(1, "BAR.SYNC", 0)]), ARCH)
    assert res.issue_cycle.tolist() == [0, 1, 2, 0]
    assert res.warp_retire.tolist() == [3, 1]
    check_invariants(res)


def _tiny_kernel_trace(n_ctas=2):
    """A small tiled kernel through the real front-end: global loads, shared stores, barrier,
    shared loads, FFMAs, a global store."""
    rng = np.random.default_rng(0)
    data = rng.standard_normal(4096).astype(np.float32)
    traces = []
    for c in range(n_ctas):
        k = Ctx("tiny", (n_ctas, 1, 1), (128, 1, 1), (c, 0, 0), Sampler(False), 49152)
        g = k.global_array("A", data, 1 << 20)
        out = k.global_array("C", np.zeros(4096, np.float32), 1 << 22)
        s = k.shared("S", 256)
        acc = 0.0
        for it in range(4):
            v = g.ld(c * 1024 + it * 128 + k.tid)
            s.st(k.tid, v, srcs=(v,))
            k.syncthreads()
            a = s.ld((k.tid * 2) % 256)
            b = s.ld((k.tid * 32) % 256)
            acc = k.ffma(a, b, acc)
            acc = k.ffma(a, a, acc)
            k.syncthreads()
        out.st(c * 128 + k.tid, acc)
        traces.append(trace_from_ctx(k, c))
    return Trace.concat([replace_cta(t, i) for i, t in enumerate(traces)])


def replace_cta(t, c):
    t.rows["cta"] = c
    return t


def test_deterministic_and_consistent():
    """Same input, identical counters, cycles and issue log; the state cycles of every warp
    add up to its active cycles."""
    t = _tiny_kernel_trace()
    a = simulate_sm(t, ARCH)
    b = simulate_sm(t, ARCH)
    assert a.cycles == b.cycles
    assert a.metrics == b.metrics
    assert np.array_equal(a.warp_state_cycles, b.warp_state_cycles)
    assert np.array_equal(a.issue_cycle, b.issue_cycle)
    assert a.inst_issued == len(t)
    assert (a.issue_cycle >= 0).all()
    check_invariants(a)
    for name in ("long_scoreboard", "short_scoreboard", "barrier", "selected"):
        assert a.state_cycles[name] > 0


def test_ctas_subset_and_errors():
    """ctas picks the resident CTAs; unknown CTAs and over-full SMs are refused."""
    t = _tiny_kernel_trace()
    one = simulate_sm(t, ARCH, ctas=[1])
    assert set(one.warps[:, 0].tolist()) == {1}
    assert one.inst_issued == int((t.rows["cta"] == 1).sum())
    with pytest.raises(GpusimError):
        simulate_sm(t, ARCH, ctas=[5])
    with pytest.raises(GpusimError):
        simulate_sm(t, replace(ARCH, max_warps_per_sm=4))


def test_l1_hit_on_a_line_still_in_flight_waits_for_the_fill():
    """Warp 0 misses line X to L2 (L1TEX at 0, data at 282); warp 1 (SMSP 1) hits the same line
    in L1 per the cache model, L1TEX at 1: alone it would return at 1 + 32, but the line is
    still on its way, so its FFMA issues at 282 like warp 0's. A hit on another line returns
    at 1 + 32 as before."""
    def trace(line_of_warp1):
        rows = np.zeros(4, ROW_DTYPE)
        for i, (w, op, seq, src, mem) in enumerate([(0, "LDG.E", 0, -1, 0), (0, "FFMA", 1, 0, -1),
                                                    (1, "LDG.E", 0, -1, 1), (1, "FFMA", 1, 0, -1)]):
            rows[i] = (0, w, TABLE.id(op), 0xFFFFFFFF, 1, seq, src, -1, -1, mem, 4 if mem >= 0 else 0,
                       1 if mem >= 0 else 0, 0, 0, -1)
        addr = np.stack([4 * np.arange(32) + 4096, 4 * np.arange(32) + 4096 + 128 * line_of_warp1])
        return Trace(rows, addr.astype(np.int64), list(TABLE.ids))

    arch = replace(ARCH, l1_hit_latency_cycles=32.0)
    levels = np.array([1, 0, 0, 0], np.int8)            # warp 0's load from L2, warp 1's an L1 hit
    res = simulate_sm(trace(0), arch, global_level=levels)
    assert res.issue_cycle.tolist() == [0, 282, 0, 282]
    assert states(res, 1)["long_scoreboard"] == 281
    res = simulate_sm(trace(5), arch, global_level=levels)
    assert res.issue_cycle.tolist() == [0, 282, 0, 33]
    check_invariants(res)


def test_state_cycles_by_opcode():
    """LDS at 0 then its dependent FFMA: the 22 short_scoreboard cycles are the FFMA's (the row the
    warp waits to issue, where ncu's PC samples put them); each row's selected cycle is its own."""
    res = simulate_sm(make_trace([row(0, "LDS", 0, wf=1), row(0, "FFMA", 1, (0,))]), ARCH)
    assert res.op_state_cycles == {"LDS": {"selected": 1}, "FFMA": {"selected": 1, "short_scoreboard": 22}}
    check_invariants(res)


def test_fp32_switch_bubble_states():
    """Warps 0 and 4 (both SMSP 0), 8 independent FFMAs each, with the FP32 warp-switch bubble: warp 4
    (the younger) issues at 0..7 while warp 0 waits not_selected (warp 4 keeps the slot: ncu's PC
    samples put such warps in not_selected, micro/fma_pipes_ncu.json); at 8 the scheduler must switch,
    the bubble is warp 0's dispatch_stall, and it issues at 9..16."""
    arch = replace(ARCH, fma_warp_switch_bubble=True)
    res = simulate_sm(make_trace([row(w, "FFMA", i) for w in (0, 4) for i in range(8)]), arch)
    assert res.issue_cycle.tolist() == list(range(9, 17)) + list(range(8))
    assert states(res, 1) == {"selected": 8}
    assert states(res, 0) == {"selected": 8, "not_selected": 8, "dispatch_stall": 1}
    check_invariants(res)


def test_loads_sharing_a_dependency_barrier_are_waited_for_together():
    """Four L2-hit LDGs issued at 0-3 (ready at 282-285), then one FFMA reading each. Each load its
    own barrier: the FFMAs issue at 282-285. With ptxas's two global-load barriers per warp
    (control_codes.scoreboard_table), loads 1-3 share the second: the FFMA reading load 1 waits
    for all three (285), and the barrier is then clear for the other two (286, 287)."""
    spec = [row(0, "LDG.E", i, sectors=4) for i in range(4)] + [row(0, "FFMA", 4 + i, (i,)) for i in range(4)]
    own = simulate_sm(make_trace(spec), ARCH)
    assert own.issue_cycle.tolist() == [0, 1, 2, 3, 282, 283, 284, 285]
    shared = simulate_sm(make_trace(spec), ARCH, scoreboards={"global": 2})
    assert shared.issue_cycle.tolist() == [0, 1, 2, 3, 282, 285, 286, 287]
    assert states(shared, 0) == {"selected": 8, "long_scoreboard": 280}
    check_invariants(shared)


def test_row_flags_carry_each_producers_load_class():
    """pack_rows writes, beside the barrier hold (bit 0), the class of each of a row's three producers
    (LDG, LDS, else 0): the loop reads a producer's dependency-barrier tag only for a load, and names
    a wait long or short scoreboard from these bits without reading the producer's row."""
    spec = [row(0, "LDG.E", 0, sectors=4), row(0, "LDS", 1, wf=1), row(0, "FFMA", 2),
            row(0, "FFMA", 3, (0, 1, 2)), row(0, "FFMA", 4, (2, 1)), row(0, "FFMA", 5)]
    lw = lower(make_trace(spec), ARCH)
    dep_cls = [[(int(f) >> (1 + 2 * j)) & 3 for j in range(3)] for f in lw.rows[:, E.R_FLAGS]]
    assert dep_cls[3] == [E.DEP_LDG, E.DEP_LDS, 0]
    assert dep_cls[4] == [0, E.DEP_LDS, 0]
    assert dep_cls[5] == [0, 0, 0]
    assert np.array_equal(lw.rows[:, E.R_FLAGS] & 1, lw.bar_hold)
    res = run_lowered(lw, ARCH)
    assert res.state_cycles["long_scoreboard"] > 0 and res.state_cycles["short_scoreboard"] == 0


def test_a_read_barrier_holds_the_next_memory_instruction_until_the_pipe_takes_its_producer():
    """Warp 1's 160-sector LDG holds the L1TEX stage for cycles 0-9. Warp 0 issues an FFMA and three
    LDGs at 1, 2, 3; its first is taken at 10. Were a load's registers read only when its pipe takes
    it (lsu_queue_read_ahead 0), ptxas's read barrier on that load waited on before the third
    (control_codes.read_barrier_table's (0, 2)) would hold the third until 11, its warp in
    long_scoreboard for the 8 cycles between (ncu's PC samples put read-barrier waits there)."""
    spec = [row(1, "LDG.E", 0, sectors=160), row(0, "FFMA", 0)] + [row(0, "LDG.E", 1 + i, sectors=4) for i in range(3)]
    at_take = replace(ARCH, lsu_queue_read_ahead=0)
    free = simulate_sm(make_trace(spec), at_take)
    assert free.issue_cycle.tolist()[:4] == [0, 1, 2, 3]
    held = simulate_sm(make_trace(spec), at_take, read_barriers=((("LDG.E",) * 3, ((0, 2),)),))
    assert held.issue_cycle.tolist()[:4] == [0, 1, 2, 11]
    assert states(held, 0)["long_scoreboard"] == 8
    check_invariants(held)


def test_the_lsu_queue_reads_the_registers_of_its_oldest_six():
    """The same with eight loads and the H200's read-ahead (GPU.lsu_queue_read_ahead = 6: an SMSP's
    queue reads the registers of its 6 oldest untaken memory instructions): the first load's registers
    are read at its issue, so (0, 2) holds nothing; the 7th load (6th index) is 7th in the queue until
    the first is taken at 10, so the 8th, waiting on it ((6, 1)), issues at 11, not at 8."""
    spec = [row(1, "LDG.E", 0, sectors=160), row(0, "FFMA", 0)] + [row(0, "LDG.E", 1 + i, sectors=4) for i in range(8)]
    held = simulate_sm(make_trace(spec), replace(ARCH, lsu_queue_read_ahead=6),
                       read_barriers=((("LDG.E",) * 8, ((0, 2), (6, 1))),))
    assert held.issue_cycle.tolist()[:9] == [0, 1, 2, 3, 4, 5, 6, 7, 11]
    assert states(held, 0)["long_scoreboard"] == 3
    check_invariants(held)


def test_shared_and_global_wavefronts_share_the_data_pipe():
    """L1TEX has one data pipe for shared wavefronts and global lines (ncu: l1tex__data_pipe_lsu_
    wavefronts = _mem_shared + _mem_lgds; traces/hw/h200/breakdown/). Warp 0's 8-wavefront LDS and
    warp 1's 4-line L1-hit LDG issue at 0: the LDS takes the pipe for cycles 0-7 (a tie goes to the
    shared queue), so the LDG's data, taken at 8, is ready at 8 + 3 + 32 = 43, not 35. The other way
    round, an LDG at 0 holds the pipe for its 4 lines and an LDS issued at 1 waits until 4."""
    lvl = LEVEL_L1
    spec = [row(0, "LDS", 0, wf=8), row(0, "FFMA", 1, (0,)), row(1, "LDG.E", 0, sectors=4), row(1, "FFMA", 1, (0,))]
    t = make_trace(spec)
    t.rows["lines"][2] = 4
    one = simulate_sm(t, ARCH, global_level=np.full(len(t), lvl, np.int8))
    two = simulate_sm(t, replace(ARCH, shared_and_global_share_data_pipe=False), global_level=np.full(len(t), lvl, np.int8))
    assert one.issue_cycle.tolist() == [0, 30, 0, 43]
    assert two.issue_cycle.tolist() == [0, 30, 0, 35]
    spec = [row(0, "FFMA", 0), row(0, "LDS", 1, wf=1), row(0, "FFMA", 2, (1,)), row(1, "LDG.E", 0, sectors=4)]
    t = make_trace(spec)
    t.rows["lines"][3] = 4
    res = simulate_sm(t, ARCH, global_level=np.full(len(t), lvl, np.int8))
    alone = simulate_sm(t, replace(ARCH, shared_and_global_share_data_pipe=False), global_level=np.full(len(t), lvl, np.int8))
    assert res.issue_cycle[2] - alone.issue_cycle[2] == 3      # the LDS taken at 4 instead of 1
    check_invariants(res)


def addr_trace(spec, lines):
    """spec: (warp, opcode, seq, source seqs, load index or -1); load i reads 128-B line lines[i] (every
    lane the same word)."""
    rows = np.zeros(len(spec), ROW_DTYPE)
    for i, (w, op, seq, srcs, mem) in enumerate(spec):
        s = list(srcs) + [-1] * (3 - len(srcs))
        on = 1 if mem >= 0 else 0
        rows[i] = (0, w, TABLE.id(op), 0xFFFFFFFF, 1, seq, s[0], s[1], s[2], mem, on, on, 0, 0, -1)
    addr = np.repeat(np.asarray(lines, np.int64)[:, None] * 128, 32, axis=1)
    return Trace(rows, addr, list(TABLE.ids))


def test_the_first_load_to_reach_l1tex_fetches_a_missing_line():
    """The cache model calls warp 0's load of a line the miss and warp 1's the hit (its order: sequence
    number, then warp), but warp 1's load reaches L1TEX first (cycle 3; warp 0's waits on an FFMA until
    4). The line is not in L1 yet, so warp 1's load fetches it (ready at 3 + 282) and warp 0's becomes
    a hit on that fill (ready at 285, not 4 + 282). No load returns data the L1 does not hold."""
    spec = [(0, "FFMA", 0, (), -1), (0, "LDG.E", 1, (0,), 0), (0, "FFMA", 2, (1,), -1),
            (1, "IADD3", 0, (), -1), (1, "IADD3", 1, (), -1), (1, "LDG.E", 2, (), 1), (1, "FFMA", 3, (2,), -1)]
    lvl = np.array([LEVEL_L1, LEVEL_L2, LEVEL_L1, LEVEL_L1, LEVEL_L1, LEVEL_L1, LEVEL_L1], np.int8)
    res = simulate_sm(addr_trace(spec, [5, 5]), ARCH, global_level=lvl)
    assert res.issue_cycle.tolist() == [0, 4, 285, 0, 2, 3, 285]
    check_invariants(res)


def test_the_lg_pool_holds_at_most_the_untaken_cap_of_global_instructions_l1tex_has_not_taken():
    """One LDG of 64 sectors (4 cycles of the L1TEX tag stage) on each SMSP, L1 hits, pool entries held
    until return. With no cap all four issue at 0 and L1TEX takes them at 0, 4, 8, 12. With a cap of 1
    untaken instruction each waits in lg_throttle until L1TEX has taken the one before, and issues the
    cycle after: 0, 1, 5, 9; a cap of 2 lets two in: 0, 0, 1, 5. The data returns as before (L1TEX is
    the bottleneck either way: retire at 35, 39, 43, 47)."""
    t = make_trace([row(w, "LDG", 0, sectors=64) for w in (0, 1, 2, 3)])
    issue = {}
    for cap in (0, 1, 2):
        res = simulate_sm(t, replace(ARCH, queue_entry_until_return=True, lg_sm_untaken_depth=cap),
                          global_level=np.full(len(t), LEVEL_L1, np.int8))
        issue[cap] = res.issue_cycle.tolist()
        assert res.warp_retire.tolist() == [35, 39, 43, 47]
        check_invariants(res)
    assert issue == {0: [0, 0, 0, 0], 1: [0, 1, 5, 9], 2: [0, 0, 1, 5]}
    assert states(res, 3) == {"selected": 1, "lg_throttle": 5, "drain": 41}


def test_a_hit_on_a_line_in_flight_frees_its_queue_entry_at_its_own_return():
    """An LG entry counts until its load's data returns (queue_entry_until_return); for an L1 hit on a
    line an earlier miss is still fetching, until the hit's own return from L1TEX, not the fill
    (pending_hit_entry_until_fill False: micro/l1_pending.json). With 2 entries per SMSP and no miss
    entries (lg_sm_miss_depth 0: the miss's queue entry, too, counts until its return): the miss (0)
    holds one until 282, the hit on its line (1) the other until 1 + 32, so the third load issues at 33
    (at 282 when the hit holds its entry until the fill); the hit's data still comes with the fill."""
    spec = [(0, "LDG.E", 0, (), 0), (0, "LDG.E", 1, (), 1), (0, "LDG.E", 2, (), 2)]
    lvl = np.array([LEVEL_L2, LEVEL_L1, LEVEL_L1], np.int8)
    for until_fill, third in ((False, 33), (True, 282)):
        arch = replace(ARCH, queue_entry_until_return=True, lg_queue_depth=2, pending_hit_entry_until_fill=until_fill,
                       lg_sm_miss_depth=0)
        res = simulate_sm(addr_trace(spec, [5, 5, 9]), arch, global_level=lvl)
        assert res.issue_cycle.tolist() == [0, 1, third]
        assert res.ready_cycle[1] >= res.ready_cycle[0]
        check_invariants(res)


def test_a_miss_takes_the_data_pipe_when_its_fill_lands():
    """A miss goes to L2 without waiting for the data pipe (warp 1's 4-line L2 load beside warp 0's
    8-wavefront LDS: ready at 0 + 3 + 282 = 285, not after the LDS); its lines pass the pipe when the
    fill lands (cycles 281-284), so an LDS issued at 281 is taken at 285 and its consumer issues at
    308 instead of 304."""
    spec = [row(0, "LDS", 0, wf=8), row(0, "FFMA", 1, (0,)), row(1, "LDG.E", 0, sectors=4), row(1, "FFMA", 1, (0,))]
    t = make_trace(spec)
    t.rows["lines"][2] = 4
    res = simulate_sm(t, ARCH, global_level=np.array([LEVEL_L1, LEVEL_L1, LEVEL_L2, LEVEL_L1], np.int8))
    assert res.issue_cycle.tolist() == [0, 30, 0, 285]
    spec = [row(0, "LDG.E", 0, sectors=4), row(0, "FFMA", 1, (0,)), row(1, "FFMA", 0)]
    spec += [row(1, "FFMA", i, (i - 1,)) for i in range(1, 71)]
    spec += [row(1, "LDS", 71, wf=1), row(1, "FFMA", 72, (71,))]
    t = make_trace(spec)
    t.rows["lines"][0] = 4
    lvl = np.full(len(spec), LEVEL_L1, np.int8)
    lvl[0] = LEVEL_L2
    one = simulate_sm(t, ARCH, global_level=lvl)
    two = simulate_sm(t, replace(ARCH, shared_and_global_share_data_pipe=False), global_level=lvl)
    assert one.issue_cycle.tolist()[-2:] == [281, 308]
    assert two.issue_cycle.tolist()[-2:] == [281, 304]
    check_invariants(one)


def test_a_miss_is_taken_when_l1tex_frees_though_the_data_pipe_is_busy():
    """Skipped cycles must not delay a miss: warp 0's 32-wavefront LDS holds the data pipe to 31;
    warp 1's L2 loads of 160 and 32 sectors issue at 0 and 1, the first holding the tag stage to 9.
    No warp can issue from 2 on, so the engine skips ahead; the second load is taken when the tag
    stage frees (10), not when the data pipe does (32): its FFMA issues at 10 + 1 + 282."""
    spec = [row(0, "LDS", 0, wf=32), row(1, "LDG.E", 0, sectors=160), row(1, "LDG.E", 1, sectors=32),
            row(1, "FFMA", 2, (1,))]
    lvl = np.array([LEVEL_L1, LEVEL_L2, LEVEL_L2, LEVEL_L1], np.int8)
    res = simulate_sm(make_trace(spec), ARCH, global_level=lvl)
    assert res.issue_cycle.tolist()[1:] == [0, 1, 293]
    check_invariants(res)


# two kernels in the default run, the other three (2-5 s each) in the slow one
@pytest.mark.parametrize("kernel", ["coalesced", "smemtile"] + [pytest.param(k, marks=pytest.mark.slow)
                                                         for k in ("regtile1d", "regblock", "vectorized")])
def test_skipping_idle_cycles_changes_nothing(kernel):
    """The engine jumps over cycles in which nothing can change; visiting every cycle instead (P_NO_SKIP)
    must give the same cycles and warp states. A two-trip window of each kernel's first round at 256^3,
    with the cache model's levels, ptxas's stall counts, barriers and read barriers as predict() uses."""
    _, lw, gpu = first_round_window(kernel, 256, 2)
    lw.params[E.P_NOT_ISSUED] = 1         # the not-issued count adds the skipped cycles itself
    skip = run_lowered(lw, gpu)
    lw.params[E.P_NO_SKIP] = 1
    every = run_lowered(lw, gpu)
    assert every.cycles == skip.cycles
    assert every.state_cycles == skip.state_cycles
    assert every.not_issued_cycles == skip.not_issued_cycles
    assert (every.issue_cycle == skip.issue_cycle).all()


def test_not_issued_cycles_are_those_in_which_the_warps_smsp_issued_nothing():
    """ncu's "not issued" PC samples, per state: warp 0 (SMSP 0) runs a chain of 8 dependent FFMAs, whose
    21 wait cycles are all cycles in which SMSP 0 issues nothing, although warp 1 (SMSP 1) issues 16
    independent FFMAs meanwhile; warp 1 never waits. With the switch bubble on SMSP 0 (warps 0 and 4,
    test_fp32_switch_bubble_states) warp 0's 8 not_selected cycles are warp 4's issues and its
    dispatch_stall cycle holds a warp at dispatch (ncu counts the scheduler as having selected one):
    none is a not-issued cycle. Off unless asked for."""
    chain = [row(0, "FFMA", i, (i - 1,) if i else ()) for i in range(8)]
    res = simulate_sm(make_trace(chain + [row(1, "FFMA", i) for i in range(16)]), ARCH, not_issued=True)
    assert res.not_issued_cycles == {**{s: 0 for s in STATES}, "wait": 21}
    assert res.metrics["gpusim__wait_not_issued.pct"] == 100.0
    assert res.metrics["gpusim__selected_not_issued.pct"] == 0.0
    check_invariants(res)
    arch = replace(ARCH, fma_warp_switch_bubble=True)
    res = simulate_sm(make_trace([row(w, "FFMA", i) for w in (0, 4) for i in range(8)]), arch, not_issued=True)
    assert states(res, 0) == {"selected": 8, "not_selected": 8, "dispatch_stall": 1}
    assert not any(res.not_issued_cycles.values())
    assert simulate_sm(make_trace(chain), ARCH).not_issued_cycles == {}


@pytest.mark.parametrize("kernel", ["smemtile", pytest.param("regtile2d", marks=pytest.mark.slow)])
def test_stall_intervals_tile_each_warps_life(kernel):
    """With log_states (the --trace timeline) the engine keeps each warp's stall intervals: kept or not,
    the run is the same; per warp they do not overlap each other or its issue cycles, and together with
    them they cover every cycle from launch to retirement, each interval's cycles in its state's count.
    A capacity below the run's intervals keeps the first that end."""
    res = gpusim.simulate(kernel, 256)
    gpu = gpusim.get_arch("h200")
    tr, _ = KT.build_window(res, KT._resident(res, gpu, res.occupancy.blocks_per_sm), 2)
    counts = KT.ptxas_facts(res)[0]
    plain = simulate_sm(tr, gpu, stall_counts=counts)
    logged = simulate_sm(tr, gpu, stall_counts=counts, log_states=10 ** 7)
    assert plain.state_log.shape == (0, 5)
    assert logged.cycles == plain.cycles and logged.state_cycles == plain.state_cycles
    assert (logged.issue_cycle == plain.issue_cycle).all()
    log = logged.state_log
    sel = STATES.index("selected")
    assert (log[:, 1] != sel).all() and (log[:, 3] > log[:, 2]).all()
    for w in range(len(logged.warps)):
        mine = log[log[:, 0] == w]
        busy = np.zeros(int(logged.warp_retire[w]), np.int64)
        for _, s, t0, t1, at in mine:
            busy[t0:t1] += 1
            # where it waited: the row it is about to issue (its next), or its last when it drains
            assert logged.row_warp[at] == w and logged.issue_cycle[at] >= t1 - (s == STATES.index("drain")) * t1
        busy[logged.issue_cycle[logged.row_warp == w]] += 1
        assert (busy == 1).all()
        by_state = np.bincount(mine[:, 1], weights=mine[:, 3] - mine[:, 2], minlength=len(STATES))
        expect = logged.warp_state_cycles[w].copy()
        expect[sel] = 0
        assert (by_state == expect).all()
    part = simulate_sm(tr, gpu, stall_counts=counts, log_states=100)
    assert (part.state_log == log[:100]).all()


@pytest.mark.parametrize("kernel", ["coalesced", "smemtile", "naive"])
def test_waiter_groups_change_nothing(kernel):
    """Queue waiters kept in groups (engine.run's GROUPS_ON: only the earliest waiter of an SMSP and queue
    class is evaluated, the others follow its state) give every output of the loop as evaluating each
    waiter every cycle: cycles, each warp's state cycles, issue cycles, cycles by opcode and the not-issued
    counts. The 64-warp kernels, whose warps wait on the LG (coalesced, naive) and MIO (smemtile) pools, in
    a two-trip window of their first round at 256^3 as predict() times it."""
    _, lw, _ = first_round_window(kernel, 256, 2)
    lw.params[E.P_NOT_ISSUED] = 1
    args = (lw.warp_start, lw.warp_smsp, lw.warp_cta, lw.cta_warp_start, lw.smsp_warps, lw.smsp_start,
            lw.rows, lw.line_id, lw.params, lw.rb_wait, lw.provider, len(lw.opcodes), np.zeros(1, np.int64))
    off, on = E.run(*args, E.GROUPS_OFF, lw.cta_next), E.run(*args, E.GROUPS_ON, lw.cta_next)
    pool = E.S_LG_POOL if kernel != "smemtile" else E.S_MIO_POOL
    assert off[1][:, pool].sum() > 0          # the warps did wait on the pool
    for a, b in zip(off, on):
        assert np.array_equal(np.asarray(a), np.asarray(b))


def test_a_miss_holds_one_of_the_sms_miss_entries_until_its_fill_not_its_queue_entry():
    """With lg_sm_miss_depth > 0 an L1 miss leaves its LG queue and pool entry when L1TEX sends it on to
    the L2 and holds one of the SM's miss entries until its fill lands (micro/l1_dense.json's G = 1
    rows: about 235 misses in flight per SM, the pool holds 92). Three L2 misses and an L1 hit of one
    warp: with 2 miss entries the third miss waits at L1TEX for the first fill (282), and the hit behind
    it with it; with none the loads go through as they issue."""
    spec = [(0, "LDG.E", i, (), i) for i in range(4)]
    lvl = np.array([LEVEL_L2, LEVEL_L2, LEVEL_L2, LEVEL_L1], np.int8)
    tr = addr_trace(spec, [5, 6, 7, 8])
    capped = simulate_sm(tr, replace(ARCH, lg_sm_miss_depth=2), global_level=lvl)
    free = simulate_sm(tr, replace(ARCH, lg_sm_miss_depth=0), global_level=lvl)
    assert capped.issue_cycle.tolist() == free.issue_cycle.tolist() == [0, 1, 2, 3]
    assert free.ready_cycle.tolist() == [282, 283, 284, 3 + 32]
    assert capped.ready_cycle.tolist() == [282, 283, 282 + 282, 283 + 32]
    check_invariants(capped)
    # the queue entries: 2 per SMSP, held until return without the cap, until L1TEX's take with it
    q2 = replace(ARCH, lg_queue_depth=2, queue_entry_until_return=True)
    assert simulate_sm(tr, replace(q2, lg_sm_miss_depth=0), global_level=lvl).issue_cycle.tolist()[2] == 282
    assert simulate_sm(tr, replace(q2, lg_sm_miss_depth=8), global_level=lvl).issue_cycle.tolist()[2] == 2


def test_the_compiled_loop_goes_stale_with_any_unit():
    """numba stamps a function's cache with its own source file only; the loop inlines the units' functions
    from other files and freezes rows.py's constants, so its cache (and each unit's) is stamped with the
    contents of every unit module (gpusim.jit.guard_cache with intrinsics.unit_sources): an edit to any of
    them compiles the loop again."""
    from gpusim.jit import content_stamp
    from gpusim.timing.intrinsics import UNIT_MODULES, unit_sources
    from gpusim.timing import lsu
    for fn in (E.run, lsu.clear_recheck):
        cache_file = getattr(getattr(fn, "_cache", None), "_cache_file", None)
        if cache_file is None:
            pytest.skip("this numba keeps its cache otherwise")
        stamp = cache_file._source_stamp
        assert sorted(name for name, _ in stamp) == sorted(m + ".py" for m in UNIT_MODULES)
        assert set(stamp) == set(content_stamp(unit_sources()))


def _chain_trace(lengths):
    """One warp a CTA (CTA c on SM warp slot c), CTA c a chain of lengths[c] dependent FFMAs."""
    return make_trace([row(0, "FFMA", i, (i - 1,) if i else (), cta=c)
                       for c, n in enumerate(lengths) for i in range(n)])


def test_a_cta_that_follows_another_starts_a_slot_gap_after_its_last_warp_retires():
    """One slot, two one-warp CTAs: CTA 0's 8 dependent FFMAs issue at 0 .. 28 and it retires at 29; CTA 1
    starts 10 cycles (the slot gap) later, at 39, and issues at 39, 43, 47. Before its start its warp is
    in no state: its cycles are its own 3 selected and 2 x 3 wait."""
    arch = replace(ARCH, cta_slot_gap_ns=10 / 1.98, cta_dispatch_ns=0.0)
    res = simulate_sm(_chain_trace([8, 3]), arch, slots=1)
    assert res.issue_cycle.tolist() == [4 * i for i in range(8)] + [39, 43, 47]
    assert res.warp_launch.tolist() == [0, 39]
    assert res.cycles == 48
    assert states(res, 1) == {"selected": 3, "wait": 6}
    check_invariants(res)


def test_followers_start_no_closer_than_the_dispatch_interval_on_their_predecessors_smsps():
    """Two slots whose CTAs (one warp each) end together at 29: their followers start 10 (gap) and 10 + 7
    (the block scheduler's dispatch interval) cycles later, each on its predecessor's SMSP."""
    arch = replace(ARCH, cta_slot_gap_ns=10 / 1.98, cta_dispatch_ns=7 / 1.98)
    lw = lower(_chain_trace([8, 8, 2, 2]), arch, slots=2)
    assert lw.cta_next.tolist() == [2, 3, -1, -1]
    assert lw.warp_smsp.tolist() == [0, 1, 0, 1]
    res = run_lowered(lw, arch)
    assert sorted(res.warp_launch.tolist()) == [0, 0, 39, 46]
    assert res.cycles == 46 + 5
    check_invariants(res)


def test_slots_are_checked():
    with pytest.raises(GpusimError, match="slots"):
        simulate_sm(_chain_trace([2, 2]), ARCH, slots=3)
    with pytest.raises(GpusimError, match="slots"):
        simulate_sm(_chain_trace([2, 2]), ARCH, slots=0)


def test_a_follower_that_starts_before_an_older_slots_follower_on_its_smsp_is_scanned_from_its_start():
    """Eight one-warp slots, two on each SMSP (slots 0 and 4 on SMSP 0): slot 4's short CTA hands its slot
    over long before slot 0's, so CTA 12 starts while CTA 8, scanned before it on SMSP 0, has not; the
    scheduler's scan bounds (scheduler.Smsps lo / hi) must reach CTA 12 at once and CTA 8 when it starts,
    and pass the retired CTAs by: each follower issues its first FFMA the cycle it starts, and all retire."""
    arch = replace(ARCH, cta_slot_gap_ns=10 / 1.98, cta_dispatch_ns=0.0)
    lengths = [20, 2, 2, 2, 2, 2, 2, 2] + [3] * 8
    lw = lower(_chain_trace(lengths), arch, slots=8)
    assert lw.cta_next.tolist()[:8] == list(range(8, 16))
    assert lw.warp_smsp.tolist()[:8] == [0, 1, 2, 3, 0, 1, 2, 3]
    res = run_lowered(lw, arch)
    launch = res.warp_launch.tolist()
    assert launch[12] < launch[8]
    first = [int(res.issue_cycle[lw.warp_start[w]]) for w in range(16)]
    assert first[8:] == launch[8:]
    assert (res.issue_cycle >= 0).all()
    assert res.cycles == launch[8] + 4 * 2 + 1
    check_invariants(res)
