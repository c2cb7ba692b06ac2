"""traces/hw/h200/micro/l1_request_cost.json (calibration, not the ladder): 64 warps per SM issue
independent L1-hit LDG.E [R+imm], one line per load and no address arithmetic: 32 words of a line (4
sectors), one word for all lanes (1 sector), the two alternately, or 8 words on each of 4 lines. ncu
gives 1.08 SM cycles per request for the first three (L1TEX at 94 % of its peak, lg_throttle 7-8 per
issue) and 4.04 for the last: a one-line request costs the L1TEX stage one cycle whatever its sectors
(coalesced's A and B loads alike), and each further line one more. The engine's rule (max(sectors /
16, lines) cycles per request) must give the same."""
import json
from pathlib import Path

import numpy as np
import pytest

from gpusim.arch.presets import H200
from gpusim.kernel.opcodes import TABLE
from gpusim.timing import simulate_sm, LEVEL_L1
from gpusim.trace.trace import ROW_DTYPE, Trace

REC = json.loads((Path(__file__).resolve().parents[2] / "traces/hw/h200/micro/l1_request_cost.json").read_text())
SHAPES = {"line": [(4, 1)], "bcast": [(1, 1)], "mix": [(4, 1), (1, 1)], "quad": [(4, 4)]}   # (sectors, lines)


def stream(warps: int, loads: int, shapes) -> Trace:
    """Each warp: `loads` independent LDG.E cycling through shapes, then EXIT."""
    rows = np.zeros(warps * (loads + 1), ROW_DTYPE)
    i = 0
    for w in range(warps):
        for j in range(loads + 1):
            sec, lines = shapes[j % len(shapes)] if j < loads else (0, 0)
            rows[i] = (0, w, TABLE.id("LDG.E" if j < loads else "EXIT"), 0xFFFFFFFF, 1, j, -1, -1, -1, -1,
                       sec, lines, 0, 0, -1)
            i += 1
    return Trace(rows, np.zeros((0, 32), np.int64), list(TABLE.ids))


@pytest.mark.parametrize("mode", list(SHAPES))
def test_l1_request_cost_matches_ncu(mode):
    row = next(r for r in REC["details"]["rows"] if r["mode"] == mode and r["warps_per_sm"] == 64)
    t = stream(64, 128, SHAPES[mode])
    res = simulate_sm(t, H200, global_level=np.full(len(t), LEVEL_L1, np.int8))
    assert res.cycles / (64 * 128) == pytest.approx(row["ncu_cycles_per_request"], rel=0.08)
