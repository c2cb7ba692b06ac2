"""Which warp an SMSP picks when several can issue, the engine against traces/hw/h200/micro/sched_pick.json
(recorded 2026-12-01 for this question). The engine's parameters were not set from it (the run length of
the diagnosis policy "gtl", removed 2026-12-02, was: docs/notes/2026-12-01-scheduler-policy.md).

A warps of SMSP 0 (A = 2, 4, 8) run 24 trips of 48 FFMAs in K independent chains (K = 1..4: a warp can
issue K of every 4 cycles), lane 0 stamping each trip's start; the record also has 8 warps on each of the
four SMSPs and 64-trip runs (the engine's SMSPs do not interact here: these tests take SMSP 0's). The trace
follows the micro's SASS (sched_pick.sass): per trip CS2R, UIADD3, STS of the stamp, ISETP, VIADD, the
FFMAs, BRA."""
import json
import re
from pathlib import Path

import numpy as np
import pytest

from gpusim.arch.presets import H200
from gpusim.timing import simulate_sm, LEVEL_L1
from tests.timing.hand_trace import HandTrace

MICRO = Path(__file__).resolve().parents[2] / "traces" / "hw" / "h200" / "micro"
REC = {(c["chains"], c["warps"]): c for c in json.loads((MICRO / "sched_pick.json").read_text())["configs"].values()
       if c["smsps"] == 1 and c["trips"] == 24}
TRIPS, FMAS = 24, 48


def pick_trace(K: int, A: int):
    ht = HandTrace()
    for s in range(A):
        add = ht.warp(4 * s)
        b = add("MOV")                       # (the SASS's FADD: an FP32 row would take the loop's first reads)
        acc = [add("MOV") for _ in range(K)]
        i = add("MOV")
        for _ in range(TRIPS):
            add("CS2R")
            i = add("UIADD3", (i,))
            add("STS", wf=1)
            p = add("ISETP", (i,))
            add("VIADD")
            for _ in range(FMAS // K):
                for c in range(K):
                    acc[c] = add("FFMA", (acc[c], b))
            add("BRA", (p,))
        add("CS2R")
        add("EXIT")
    return ht.trace()


def loop_banks(K: int) -> tuple:
    """The packed register reads of the loop's 48 FFMAs in sched_pick.sass's pick<K> (two registers and an
    immediate each: micro/fma_operands.json's kind without the warp-switch bubble), with the reuse its back
    edge carries."""
    from gpusim.timing.register_banks import fp32_reads, pack
    text = (MICRO / "sched_pick.sass").read_text()
    fn = text[text.index(f"Function : _Z4pickILi{K}E"):]
    fn = fn[:fn.index("Function", 10)] if "Function" in fn[10:] else fn
    listing = [(int(m.group(1), 16), m.group(2)) for m in re.finditer(r"/\*([0-9a-f]{4})\*/\s+(.*?)\s*;", fn)]
    back, head = next((o, int(m.group(1), 16)) for o, x in listing          # the loop's back edge
                      if (m := re.match(r"@!?P\d BRA 0x([0-9a-f]+)", x)) and int(m.group(1), 16) < o)
    loop = [x for x in listing if head <= x[0] <= back]
    reads = fp32_reads(loop + loop)[len(fp32_reads(loop)):]
    assert len(reads) == FMAS
    return tuple(pack(x) for x in reads)


def engine_stamps(K: int, A: int, banks: bool = True) -> np.ndarray:
    """[A, TRIPS + 1] cycles of each warp's CS2R rows (trip starts, then the loop's end). banks: the FFMAs
    carry the SASS's register reads (else every FP32 row gets the warp-switch bubble)."""
    t = pick_trace(K, A)
    res = simulate_sm(t, H200, global_level=np.full(len(t), LEVEL_L1, np.int8),
                      register_banks=loop_banks(K) if banks else None)
    ops = np.array(t.opcodes)[t.rows["op"][res.trace_row]]
    wrp = t.rows["warp"][res.trace_row]
    st = np.array([res.issue_cycle[np.flatnonzero((ops == "CS2R") & (wrp == 4 * s))] for s in range(A)])
    return st - st[:, 0].min()


def summary(st: np.ndarray) -> tuple[float, float]:
    """(cycles per trip per warp, earliest finish as a fraction of the span)."""
    end = st[:, -1]
    return float(end.max() / TRIPS), float(end.min() / end.max())


CONFIGS = [(k, a) for k in (1, 2, 3, 4) for a in (2, 4, 8)]

# the configurations where several warps compete (A > 2): none can issue every cycle (K < 4), or each can
SHARED = [(k, a) for k, a in CONFIGS if a > 2 and k < 4]
RUNNERS = [(4, 4), (4, 8)]


@pytest.mark.parametrize("K, A", CONFIGS)
def test_engine_trip_time_with_the_sass_reads(K, A):
    """With the FFMAs' register reads (two registers and an immediate: no warp-switch bubble) the engine's
    trip takes within 12 % of the H200's in every configuration (K = 4 with 8 warps -11.5 %, the others
    within 9 %), whichever warp it picks."""
    trip, _ = summary(engine_stamps(K, A))
    assert trip == pytest.approx(REC[(K, A)]["cycles_per_trip_per_warp_median"], rel=0.12)


@pytest.mark.parametrize("K, A", SHARED)
def test_h200_warps_that_cannot_issue_every_cycle_finish_nearly_together(K, A):
    """The record: 4 or 8 warps of one SMSP that cannot issue every cycle; the first finishes at 0.90-0.99
    of the last, the younger ones a little first in most configurations."""
    assert REC[(K, A)]["earliest_finish_fraction_median"] > 0.85


@pytest.mark.parametrize("K, A", RUNNERS)
def test_h200_warps_that_can_issue_every_cycle_run_in_pairs(K, A):
    """The record: with K = 4 a warp can issue every cycle, and the warps finish in pairs (the first pair
    at 0.50 of the last with 4 warps, 0.23 with 8). The engine's do the same."""
    want = REC[(K, A)]["earliest_finish_fraction_median"]
    assert want < 0.6
    assert summary(engine_stamps(K, A))[1] == pytest.approx(want, abs=0.1)


@pytest.mark.xfail(strict=True, reason="known gap: greedy-then-youngest falls back to the youngest warp, so "
                   "warps that cannot issue every cycle run in pairs (first finish 0.25-0.50 against the "
                   "H200's 0.91-0.97); the diagnosis policy 'gtl' (the least recently issued warp after the "
                   "greedy one, removed 2026-12-02) fit all twelve configurations within 0.1, but not other "
                   "records, docs/notes/2026-12-01-scheduler-policy.md")
@pytest.mark.parametrize("K, A", [c for c in SHARED if c != (1, 4)])   # (K = 1, A = 4: 0.91 against 0.99)
def test_engine_warps_that_cannot_issue_every_cycle_finish_nearly_together(K, A):
    _, earliest = summary(engine_stamps(K, A))
    assert earliest == pytest.approx(REC[(K, A)]["earliest_finish_fraction_median"], abs=0.1)
