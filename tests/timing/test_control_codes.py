"""ptxas's stall counts (gpusim/timing/control_codes.py): decoding, the per-opcode table, the
per-row gaps, the engine honouring them, and the SASS's wait against ncu's on the H200."""
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import gpusim
from gpusim.arch.presets import H200
from gpusim.kernel.spec import get_kernel
from gpusim.timing import simulate_sm, STATES
from gpusim.timing.control_codes import (barriers, parse_sass, read_barrier_table, row_gaps, sass_wait_per_inst,
                                         scoreboard_table, global_scoreboards, stall_count, stall_table, trace_name)
from tests.timing.hand_trace import HandTrace

HW = Path(__file__).resolve().parents[2] / "traces" / "hw" / "h200"
LADDER = ("naive", "coalesced", "smemtile", "tiled32", "regtile1d", "regblock", "regtile2d", "vectorized")


def test_stall_count_bits():
    """Bits 41-44 of the second word; the yield and barrier bits above do not leak in."""
    assert stall_count(0x000ff00000000800) == 8            # tiled32.sass 0x0000, LDC R1
    assert stall_count(5 << 41) == 5
    assert stall_count((0x7F << 45) | (3 << 41)) == 3
    assert stall_count(0xF << 41) == 15


def test_regblock_tile_loads_share_a_barrier():
    """traces/static/regblock.sass: the K loop's 12 LDG set write barriers 2, 3, 4 and then 5 nine
    times; the 4th STS waits on barrier 5 (all nine); scoreboard_table gives 4 global barriers (and
    3 for the 32 LDS.128 of the same block), global_scoreboards the global ones alone."""
    text = (Path(__file__).resolve().parents[2] / "traces" / "static" / "regblock.sass").read_text()
    ins = [x for x in barriers(text) if 0x05c0 <= x[0] <= 0x0760]
    assert [wr for _, op, wr, _, _ in ins if op.startswith("LDG")] == [2, 3, 4] + [5] * 9
    sts = [wait for _, op, _, _, wait in ins if op == "STS"]
    assert sts[:4] == [1 << 2, 1 << 3, 1 << 4, 1 << 5]
    params = gpusim.simulate("regblock", 256).params
    assert scoreboard_table("regblock", params) == {"global": 4, "shared": 3}
    assert global_scoreboards("regblock", params) == {"global": 4}


def test_regblock_read_barriers():
    """traces/static/regblock.sass: in the K loop only the 5th LDG sets a read barrier (0x0650, SB0)
    and the IMAD.WIDE at 0x0680, just before the 7th LDG, waits on it: the block (12 LDG, 12 STS, 32
    LDS.128) gets the pair (4, 2). The store block's 64 STG carry read barriers too."""
    text = (Path(__file__).resolve().parents[2] / "traces" / "static" / "regblock.sass").read_text()
    ins = [x for x in barriers(text) if 0x05c0 <= x[0] <= 0x0720]
    assert [(off, rd) for off, op, _, rd, _ in ins if rd != 7] == [(0x0650, 0)]
    assert next(wait for off, _, _, _, wait in ins if off == 0x0680) == 1
    table = dict(read_barrier_table("regblock", gpusim.simulate("regblock", 256).params))
    kloop = ("LDG.E",) * 12 + ("STS",) * 12 + ("LDS.128",) * 32
    assert table[kloop] == ((4, 2),)
    assert any(names == ("STG.E",) * 64 for names in table)
    assert read_barrier_table("no-such-kernel", {}) is None


def test_parse_sass_listing():
    text = ("        /*0360*/                   LDS R24, [R0] ;          /* 0x0000000000187984 */\n"
                                                            "                        /* 0x000e280000000800 */\n"
            "        /*0370*/                   @!P0 BRA 0x2c0 ;          /* 0x0000000000007947 */\n"
            "                                                             /* 0x000fea000383ffff */\n")
    got = parse_sass(text)
    assert [(o, op) for o, op, _ in got] == [(0x360, "LDS"), (0x370, "BRA")]
    assert [s for _, _, s in got] == [(0x000e280000000800 >> 41) & 15, (0x000fea000383ffff >> 41) & 15]


@pytest.mark.parametrize("sass, name", [("LDG.E.128.CONSTANT", "LDG.E.128"), ("LDS.64", "LDS.64"),
                                        ("STS.128", "STS.128"), ("BAR.SYNC.DEFER_BLOCKING", "BAR.SYNC"),
                                        ("IMAD.WIDE", "IMAD.WIDE"), ("LDG.E", "LDG.E")])
def test_trace_name(sass, name):
    assert trace_name(sass) == name


def test_row_gaps_spread_means_exactly():
    """Two warps, opcode 0 with mean 2.5 and opcode 1 with 1: each warp's ten rows of opcode 0
    get 2s and 3s summing to 25, whatever rows lie between them."""
    op = np.array([0, 1] * 10 + [0] * 10, np.int64)
    warp_start = np.array([0, 20, 30])
    g = row_gaps(op, warp_start, ["FFMA", "IMAD"], {"FFMA": 2.5, "IMAD": 1.0})
    assert set(g[op == 0].tolist()) == {2, 3}
    assert g[:20][op[:20] == 0].sum() == 25 and g[20:].sum() == 25
    assert (g[op == 1] == 1).all()
    assert (row_gaps(op, warp_start, ["FFMA", "IMAD"], {}) == 1).all()    # no table: no gaps


def test_row_gaps_are_the_rule_on_random_rows():
    """The compiled walk against the rule as written: the j-th row of an opcode in its warp (j from 0)
    gets round((j + 1) m) - round(j m), at least 1, rounding half up."""
    import math
    rng = np.random.default_rng(7)
    for _ in range(50):
        names = [f"OP{i}" for i in range(int(rng.integers(1, 12)))]
        means = {o: float(rng.choice([0.5, 1.0, 1.333, 2.5, 2.6667, 7.1])) for o in names if rng.random() < 0.8}
        warp_start = np.r_[0, np.cumsum(rng.integers(0, 200, int(rng.integers(1, 5))))]
        op = rng.integers(0, len(names), warp_start[-1])
        want = []
        for w in range(len(warp_start) - 1):
            seen = {}
            for o in op[warp_start[w]:warp_start[w + 1]]:
                m, j = means.get(names[o], 1.0), seen.get(o, 0)
                want.append(max(math.floor((j + 1) * m + 0.5) - math.floor(j * m + 0.5), 1))
                seen[o] = j + 1
        assert row_gaps(op, warp_start, names, means).tolist() == want


def test_engine_waits_out_the_gap():
    """One warp, three independent IADD3 (the ALU pipe takes one per 2 cycles). With stall
    count 1 the pipe sets the pace: issue at 0, 2, 4. With stall count 5 the count does:
    issue at 0, 5, 10, and the 4 + 4 cycles between are wait (checked before the pipe)."""
    arch = replace(H200, alu_issue_interval_cycles=2, fma_warp_switch_bubble=False)
    h = HandTrace()
    add = h.warp(0)
    for _ in range(3):
        add("IADD3")
    tr = h.trace()
    res = simulate_sm(tr, arch, stall_counts={"IADD3": 1.0})
    assert res.issue_cycle.tolist() == [0, 2, 4]
    res = simulate_sm(tr, arch, stall_counts={"IADD3": 5.0})
    assert res.issue_cycle.tolist() == [0, 5, 10]
    st = {STATES[k]: int(v) for k, v in enumerate(res.warp_state_cycles[0]) if v}
    assert st == {"selected": 3, "wait": 8}


# one kernel in the default run, every kernel in the slow one
@pytest.mark.parametrize("kernel", [k if k == "regtile2d" else pytest.param(k, marks=pytest.mark.slow) for k in LADDER])
def test_table_covers_every_opcode_the_kernel_issues(kernel):
    """Every opcode of the kernel's trace has a stall count from its own SASS record (a name the
    SASS spells differently would silently fall back to 1)."""
    tr = gpusim.simulate(kernel, 256, mode="full", keep_trace=True).trace
    table, source = stall_table(kernel, get_kernel(kernel).params, 256, 256, 256)
    assert source.startswith(f"traces/static/{kernel}.sass")
    used = {tr.opcodes[i] for i in np.unique(tr.rows["op"])}
    assert used <= set(table), used - set(table)


# ncu's wait per issue at 4096 (traces/hw/h200/<kernel>_4096.json) against the SASS's mean
# (stall count - 1): the stall counts alone account for it within 0.12 in seven kernels.
# coalesced is the exception: its SASS loop is naive's (same 1.51) but ncu measures 2.22;
# the extra 0.7 is dynamic (not explained yet) and is left out of the assertion, not hidden.
@pytest.mark.parametrize("kernel", [k for k in LADDER if k != "coalesced"])
def test_sass_wait_matches_ncu(kernel):
    rec = json.loads((HW / f"{kernel}_4096.json").read_text())
    ncu = rec["ncu"]["metrics"]["smsp__average_warps_issue_stalled_wait_per_issue_active.ratio"]
    sass = sass_wait_per_inst(kernel, get_kernel(kernel).params, 4096, 4096, 4096)
    assert 0.0 <= ncu - sass <= 0.12, (kernel, sass, ncu)
