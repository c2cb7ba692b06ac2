"""Stores in the timing model: their sectors go to the L2 at the measured write rates (by how they fill
their sectors), and, once the working set outgrows the L2, back to DRAM at the copy bandwidth's cost."""
import json
from pathlib import Path

import numpy as np
import pytest

import gpusim
from gpusim.arch import override
from gpusim.timing import engine as E
from gpusim.estimate.kernel_time import predict
from gpusim.timing.lower import lower


def _store_kinds(kernel, size):
    r = gpusim.simulate(kernel, size, mode="full", keep_trace=True)
    lw = lower(r.trace, r.gpu, ctas=[0])
    return set(lw.write_kind[lw.cls == E.C_STG].tolist())


def test_store_kinds_follow_the_bytes_in_each_sector():
    assert _store_kinds("copy4", 256) == {E.W_FULL}             # float4: whole sectors
    # 4 B into one sector of each of 32 lines, the CTA's 8 warps filling those sectors
    assert _store_kinds("transpose_naive", 256) == {E.W_FILL}
    assert _store_kinds("regtile2d", 256) == {E.W_SECTOR}       # 4 B into each of 8 sectors of 4 lines


def test_a_partial_line_store_is_filled_only_where_the_ctas_stores_cover_its_sectors():
    """transpose_naive's stores with warp 0's alone left in the trace: nothing else writes their sectors,
    so they are W_LINE (micro/l2_write.json's rate), not W_FILL (micro/l2_write_fill.json's)."""
    from gpusim.kernel.opcodes import TABLE
    from gpusim.trace.trace import Trace
    r = gpusim.simulate("transpose_naive", 256, mode="full", keep_trace=True)
    t = r.trace
    is_store = TABLE.arrays()[1][t.rows["op"].astype(np.int64)]
    keep = ~is_store | (t.rows["warp"] == 0)
    alone = Trace(t.rows[keep], t.addr, list(TABLE.ids))
    lw = lower(alone, r.gpu, ctas=[0])
    assert set(lw.write_kind[lw.cls == E.C_STG].tolist()) == {E.W_LINE}


def _time(kernel, size, **sets):
    r = gpusim.simulate(kernel, size, keep_trace=True, arch=override("h200", sets) if sets else "h200")
    return predict(r).time_ms


def test_partial_line_stores_cost_what_the_l2_takes_for_them():
    """transpose_naive at 1024 (L2-resident): without the L2's write rates its strided stores are nearly free;
    at half the measured rate of stores the CTA fills it takes longer than at the rate."""
    free = _time("transpose_naive", 1024, l2_write_gsectors_per_s=0)
    measured = _time("transpose_naive", 1024)
    slower = _time("transpose_naive", 1024, l2_filled_line_write_gsectors_per_s=30.0)
    assert free < measured < slower


def test_write_backs_take_dram_bandwidth():
    """copy4 at 4096 writes 64 MB back to DRAM: a slower copy bandwidth makes it slower, and the prediction
    stays above the time the bytes need at the measured rates."""
    base = _time("copy4", 4096)
    slow = _time("copy4", 4096, dram_copy_bandwidth_gbps=3000.0)
    assert slow > base
    gpu = gpusim.get_arch("h200")
    floor_ms = 2 * 64 * 2**20 / (gpu.dram_copy_bandwidth_gbps * 1e9) * 1e3
    assert base > floor_ms
    assert np.isfinite(base)


def _l2_stream(arch, copy: bool, warps: int = 32, trips: int = 6) -> float:
    """Each warp loads lines the L2 holds (LDG: 128 B, 4 sectors of one line) and, for a copy, stores each
    where it goes (STG: whole sectors); else sums them. The SM's bytes per cycle, reads plus writes."""
    from gpusim.timing import LEVEL_L1, LEVEL_L2, simulate_sm
    from tests.timing.hand_trace import HandTrace
    ht = HandTrace()
    line = 0
    for w in range(warps):
        add = ht.warp(w)
        acc = add("MOV")
        for _ in range(trips):
            lds = []
            for _ in range(8):              # 8 loads in flight a warp: bandwidth, not latency, bounds it
                lds.append(add("LDG", sec=4, lines=1, line=line))
                line += 1
            for ld in lds:
                if copy:
                    add("STG", (ld,), sec=4, lines=1)
                else:
                    acc = add("FADD", (acc, ld))
        add("EXIT")
    t = ht.trace()
    ops = np.array(t.opcodes)[t.rows["op"]].astype(str)
    lvl = np.where(np.char.startswith(ops, "LDG"), LEVEL_L2, LEVEL_L1).astype(np.int8)
    res = simulate_sm(t, arch, global_level=lvl, active_sms=arch.sm_count)
    return warps * trips * 8 * 128 * (2 if copy else 1) / res.cycles


def test_a_copy_in_the_l2_reads_and_writes_what_loads_alone_read():
    """micro/l2_write.json: a copy within the L2 moves 8,192 GB/s read plus written, what its loads alone
    read: the stores' bytes take the bandwidth the reads' fills go through. The engine's copy moves
    within 10 % of its own loads alone; with the writes on a server of their own it moved more."""
    rec = json.loads((Path(__file__).resolve().parents[2] / "traces/hw/h200/micro/l2_write.json").read_text())
    d = rec["details"]
    assert d["copy_full_gbps_read_plus_write"] == pytest.approx(d["load_full_gbps"], rel=0.05)
    h200 = gpusim.get_arch("h200")
    assert _l2_stream(h200, True) == pytest.approx(_l2_stream(h200, False), rel=0.10)
    apart = override("h200", {"l2_writes_share_read_bandwidth": False})
    assert _l2_stream(apart, True) > 1.15 * _l2_stream(apart, False)
