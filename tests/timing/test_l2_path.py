"""The L1-miss / L2-hit path against traces/hw/h200/micro/l2_requests.json (calibration, not the
ladder): one warp per SMSP issues 8 independent 4-byte loads per trip whose lanes touch D distinct
lines of an L2-resident buffer (one 32-B sector per line for D >= 4), then sums them. Every line is
an L2 request; the SM's share of the chip's L2 bandwidth (l2_bandwidth_gbps / 132 SMs: 28 B per
cycle, from micro/bandwidth_l2.json) prices them, with the L2 hit latency in front.

Measured and not reproduced (docs/notes/2026-11-30-l1-miss-entries.md): D = 1 and 2 with 4 warps are latency-bound
and the engine runs them 12-17 % fast (loaded L2 latency above the idle chase's); with 64 warps per
SM whole-line requests (D = 1: 4 sectors) go at 40 B per cycle, above the 28 B share, so the engine
is slow there.
"""
import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from gpusim.arch.presets import H200
from gpusim.timing import simulate_sm, LEVEL_L1, LEVEL_L2, LEVEL_DRAM
from tests.timing.hand_trace import HandTrace

REC = json.loads((Path(__file__).resolve().parents[2] / "traces/hw/h200/micro/l2_requests.json").read_text())


def l2_trace(warps: int, D: int, trips: int = 32):
    """calibrate/l2_requests.cu's loop: 8 loads of D lines (D sectors; 4 / D per line below
    4 lines), the FADDs that sum them, the loop's IADD3 / ISETP / BRA."""
    ht = HandTrace()
    for w in range(warps):
        add = ht.warp(w)
        acc = add("MOV")
        add("BAR.SYNC")
        for _ in range(trips):
            ld = [add("LDG", sec=max(D, 4 // D * D), lines=D) for _ in range(8)]
            for x in ld:
                acc = add("FADD", (acc, x))
            add("IADD3"); add("ISETP"); add("BRA")
        add("BAR.SYNC")
        add("EXIT")
    return ht.trace()


@pytest.mark.parametrize("D", [4, 8, 16, 32])
def test_one_warp_per_smsp_l2_requests(D):
    """4 warps per SM (one block of 128 threads; clock64 is then the SM's own time): the engine's
    cycles per request within 10 % of the record for D = 4..32 (11.8 / 13.0 / 16.9 / 36.3)."""
    row = next(r for r in REC["details"]["rows"] if r["load"] == "ld.global.ca" and r["warps_per_sm"] == 4
               and r["distinct_lines_per_request"] == D)
    t = l2_trace(4, D)
    ops = np.array(t.opcodes)[t.rows["op"]]
    lvl = np.where(np.char.startswith(ops.astype(str), "LDG"), LEVEL_L2, LEVEL_L1).astype(np.int8)
    res = simulate_sm(t, H200, global_level=lvl, active_sms=H200.sm_count)
    assert res.cycles / (4 * 32 * 8) == pytest.approx(row["cycles_per_request_clock64"], rel=0.10)


# --- streams under light load: micro/l2_light_ncu.json (run_micro.py --only l2_light --ncu) -----------------

LIGHT = json.loads((Path(__file__).resolve().parents[2] / "traces/hw/h200/micro/l2_light_ncu.json").read_text())
LAT = "sm__average_inst_latency_pipe_lsu_mem_lg_cmd_read.ratio"


def stream_trace(warps: int, f32: bool, dram: bool, trips: int = 40):
    """One SM's warps of read_bw (float4: each load 4 lines, 16 sectors) or read_bw_f32 (1 line, 4 sectors),
    after their SASS (traces/hw/h200/micro/read_bw.sass, read_bw_f32.sass): per trip the address adds, 4
    independent LDG, then the FADDs that consume them and the loop test. Returns (trace, level per row): the
    2 GiB stream's loads all DRAM; the 16 MiB one's all L2 but one in 32 (its first pass, after ncu's flush)."""
    ht, lv = HandTrace(), []
    sec, lines = (4, 1) if f32 else (16, 4)
    n_ld = 0
    for w in range(warps):
        add = ht.warp(w)
        acc, ad = add("MOV"), add("IADD3")
        lv += [LEVEL_L1, LEVEL_L1]
        for it in range(trips):
            a1 = add("IADD3", (ad,)); a2 = add("IMAD.X", (a1,)); a3 = add("IADD3", (a2,))
            loads = [add("LDG", (ad,), sec=sec, lines=lines), add("IADD3", (a3,)),
                     add("LDG", (a2,), sec=sec, lines=lines), add("IADD3", (a3,)),
                     add("LDG", (a3,), sec=sec, lines=lines), add("LDG", (a3,), sec=sec, lines=lines)]
            l0, l1, l2, l3 = loads[0], loads[2], loads[4], loads[5]
            lv += [LEVEL_L1] * 3
            for k in range(len(loads)):
                if k in (0, 2, 4, 5):           # the LDGs (the others are the address adds between them)
                    lv.append(LEVEL_DRAM if dram or (n_ld + 7 * w) % 32 == 0 else LEVEL_L2)
                    n_ld += 1
                else:
                    lv.append(LEVEL_L1)
            n0 = len(ht.spec)
            if f32:
                for _ in range(9):
                    add("IMAD", (a3,))
                acc = add("FADD", (add("FADD", (add("FADD", (l0, l1)), add("FADD", (l2, l3)))), acc))
            else:       # 16 FADDs in two trees over the 16 loaded values, among the loop's integer work
                x = [add("FADD", (l0, l1)) for _ in range(4)]
                y = [add("FADD", (l2, l3)) for _ in range(4)]
                for _ in range(6):
                    add("IADD3")
                s = add("FADD", (x[0], y[0]))
                for v in x[1:] + y[1:]:
                    s = add("FADD", (s, v))
                acc = add("FADD", (s, acc))
                add("ISETP"); add("ISETP")
            ad = add("IADD3", (a3,))
            add("BRA")
            lv += [LEVEL_L1] * (len(ht.spec) - n0)
        add("EXIT")
        lv.append(LEVEL_L1)
    return ht.trace(), np.array(lv, np.int8)


def _light_rows():
    """(label, warps, SMs, float32?, DRAM?, ncu latency) of the light-load rows: chip-wide traffic under a
    quarter of the DRAM bandwidth (the DRAM stream of 4 float4 warps on all 132 SMs, 1.94 TB/s, is not)."""
    out = []
    for v in LIGHT["value"]:
        name = v["kernel"]
        w = int(name.split("(")[1].split()[0])
        sms = int(name.split(", ")[1].split()[0])
        dram = "2048 MiB" in name
        gbps = v["l1tex__m_xbar2l1tex_read_bytes.sum"] / v["gpu__time_duration.sum"]
        if dram and gbps > 0.25 * H200.dram_achieved_bandwidth_gbps:
            continue
        out.append((name, w, sms, "f32" in name, dram, v[LAT]))
    return out


def _stream_latency(gpu, w, sms, f32, dram):
    t, lv = stream_trace(w, f32, dram)
    return simulate_sm(t, gpu, global_level=lv, active_sms=sms).metrics[LAT]


@pytest.mark.parametrize("row", _light_rows(), ids=lambda r: r[0])
def test_stream_latency_under_light_load(row):
    """The engine's global-load latency from issue to retirement (ncu's LSU-pipe figure) within 10 % of the
    H200's for read_bw's and read_bw_f32's streams at light load, L2 and DRAM alike. The DRAM rows are what
    the preset's DRAM latency comes from (the f32 ones: one line a load, 766-787 cycles whatever the load);
    the float4 rows (four lines a load, 838-846) and the L2 rows are checked by the same trace."""
    name, w, sms, f32, dram, hw = row
    assert _stream_latency(H200, w, sms, f32, dram) == pytest.approx(hw, rel=0.10)


def test_the_idle_chase_latency_misses_the_streams():
    """With the idle pointer chase's DRAM latency (micro/latency_dram.json, 683.8 cycles: one sector, one
    load in flight on the chip) the one-line DRAM streams come out 9.8-12.8 % short, and farther from the
    H200 than with the preset's figure: a stream's line takes longer, at any light load (8 to 132 SMs),
    which is why the preset takes the stream's figure. (The busiest row, 4 warps on 132 SMs, queues a few
    cycles a line at the SM's DRAM server, which sits on the read's way: 9.8 % short, not 10.)"""
    chase = dataclasses.replace(H200, dram_latency_ns=683.8 / H200.sm_clock_max_mhz * 1000.0)
    rows = [r for r in _light_rows() if r[3] and r[4]]
    assert len(rows) == 5
    for name, w, sms, f32, dram, hw in rows:
        got = _stream_latency(chase, w, sms, f32, dram)
        assert got < 0.91 * hw, name
        assert abs(_stream_latency(H200, w, sms, f32, dram) - hw) < abs(got - hw), name
