"""The SM's DRAM server (gpusim/timing/memory_path.py): it sits on a read's way, so a lone read takes the
DRAM latency and a run of reads the latency and then their bytes' time (micro/bandwidth_rows.json: a
one-round 64 MB read takes 1.3-2 us more than its bytes at the measured bandwidth)."""
import numpy as np

import gpusim
from gpusim.timing import LEVEL_DRAM, LEVEL_L1, simulate_sm
from tests.timing.hand_trace import HandTrace


def _reads(warps: int, per_warp: int):
    """Each warp loads per_warp distinct lines from DRAM (LDG, 4 sectors of one line), then sums them."""
    ht = HandTrace()
    line = 0
    for w in range(warps):
        add = ht.warp(w)
        acc = add("MOV")
        lds = []
        for _ in range(per_warp):
            lds.append(add("LDG", sec=4, lines=1, line=line))
            line += 1
        for ld in lds:
            acc = add("FADD", (acc, ld))
        add("EXIT")
    t = ht.trace()
    ops = np.array(t.opcodes)[t.rows["op"]].astype(str)
    return t, np.where(np.char.startswith(ops, "LDG"), LEVEL_DRAM, LEVEL_L1).astype(np.int8)


def _cycles(warps, per_warp):
    gpu = gpusim.get_arch("h200")
    t, lvl = _reads(warps, per_warp)
    return simulate_sm(t, gpu, global_level=lvl, active_sms=gpu.sm_count).cycles


def test_a_lone_read_takes_the_dram_latency():
    gpu = gpusim.get_arch("h200")
    lat = gpu.dram_latency_ns * gpu.sm_clock_max_mhz / 1000.0
    assert lat <= _cycles(1, 1) < lat + 60


def test_a_run_of_reads_pays_the_latency_and_then_its_bytes():
    """256 lines (32 KB) at the SM's share of DRAM take about 1,800 cycles of bytes: the run ends a
    latency after that, not when the bytes alone would be through (the server working ahead of the
    latency)."""
    gpu = gpusim.get_arch("h200")
    lat = gpu.dram_latency_ns * gpu.sm_clock_max_mhz / 1000.0
    share = gpu.dram_achieved_bandwidth_gbps * 1e9 / gpu.sm_count / (gpu.sm_clock_max_mhz * 1e6)
    bytes_time = 32 * 8 * 128 / share
    assert bytes_time > 2 * lat               # a run the bandwidth bounds
    got = _cycles(32, 8)
    assert got > bytes_time + 0.9 * lat
    assert got < bytes_time + 1.2 * lat + 200
