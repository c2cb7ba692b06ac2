"""S2R and SHFL through the MIO queue, against micro/mio_special.json (calibrate/mio_special.py).

The H200: 4 shared loads of 32 wavefronts a warp-step cost 128 cycles of the SM's shared pipe; adding 32
shuffles costs the sum of the two alone (a shuffle takes one cycle of the pipe), adding 16 S2R costs
nothing (their own unit). The engine runs the same steps, built by hand, with as many warps."""
import json
from pathlib import Path

import pytest

from gpusim.arch.presets import H200
from gpusim.timing import simulate_sm
from tests.timing.hand_trace import HandTrace

REC = json.loads((Path(__file__).resolve().parents[2] / "traces/hw/h200/micro/mio_special.json").read_text())
WARPS = 16
N = 12


def _step(add, kind: str, acc: int) -> int:
    """One warp-step of the micro's kernel `kind`; returns the sequence number its accumulator is at."""
    if "lds32" in kind:
        loads = [add("LDS", wf=32) for _ in range(4)]
        acc = add("FADD", srcs=(loads[0], loads[1], acc))
        acc = add("FADD", srcs=(loads[2], loads[3], acc))
    if "s2r" in kind:
        for _ in range(16):
            acc = add("LOP3", srcs=(add("S2R"), acc))
    if "shfl" in kind:
        chains = [acc] * 4
        for _ in range(8):
            chains = [add("SHFL", srcs=(c,)) for c in chains]
        acc = add("LOP3", srcs=tuple(chains[:3]))
    return acc


def _engine(kind: str, arch=H200) -> float:
    """SM cycles per warp-step."""
    ht = HandTrace()
    for w in range(WARPS):
        add = ht.warp(w)
        acc = add("IADD3")
        for _ in range(N):
            acc = _step(add, kind, acc)
        add("EXIT")
    return simulate_sm(ht.trace(), arch).cycles / (WARPS * N)


def _h200(kind: str) -> float:
    return REC["details"]["by_warps"][str(WARPS)]["cycles_per_warp_step"][kind]


def test_the_record_says_what_the_model_takes():
    v = REC["value"]
    assert v["shfl_pipe_cycles"] == pytest.approx(H200.shfl_shared_pipe_cycles, abs=0.05)
    assert v["s2r_pipe_cycles"] == pytest.approx(0.0, abs=0.05)


def test_conflicted_loads_take_the_pipe_as_on_the_h200():
    assert _engine("lds32_only") == pytest.approx(_h200("lds32_only"), rel=0.03)


@pytest.mark.parametrize("kind", ["lds32_s2r", "lds32_shfl"])
def test_a_mixed_step_costs_what_it_costs_the_h200(kind):
    ratio = _engine(kind) / _engine("lds32_only")
    assert ratio == pytest.approx(_h200(kind) / _h200("lds32_only"), rel=0.05)   # sum and larger: 25 % apart


def test_without_the_mio_path_shuffles_would_cost_the_loads_nothing():
    """The rule is what the test above sees: as fixed-latency ops, shuffles overlap the loads."""
    from dataclasses import replace
    off = replace(H200, special_ops_through_mio=False)
    assert _engine("lds32_shfl", off) / _engine("lds32_only", off) < 1.1
