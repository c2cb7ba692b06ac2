"""traces/hw/h200/micro/coalesced_wait.json: how alike the warps of a coalesced CTA (no barrier) wait on a global
load, beside barrier_wait.json's regtile1d (barriers). On the H200 each warp's first A load of a 32-wide K chunk
(its own line) takes 353 / 609 / 960 cycles (10th / 50th / 90th percentile) and two thirds of that time's
variance lies within a (CTA, chunk); regtile1d's loads one third. The engine's window gives each such load the
L2's or DRAM's latency, spread row by row (every warp on its own: all the variance within a CTA) or grouped by
load instruction and CTA (none of it): the H200 sits between, nearer the rows for coalesced and nearer the
groups for regtile1d (docs/notes/2026-11-30-dram-rows.md)."""
import json
import re
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
REC = json.loads((ROOT / "traces/hw/h200/micro/coalesced_wait.json").read_text())["details"]
BARRIER = json.loads((ROOT / "traces/hw/h200/micro/barrier_wait.json").read_text())["details"]


def engine_a_load_times(dram_rows: str, trips: int = 64):
    """(A-load latencies, their (CTA, chunk) keys): each warp's A loads that miss L1 in the engine's coalesced
    window at 4096 with the L2 model's levels as predict() gives them, ready cycle - issue cycle."""
    import gpusim
    import gpusim.estimate.kernel_time as KT
    from gpusim.memory import cache as C
    from gpusim.memory.rows import first_active
    from gpusim.timing import run_lowered
    from gpusim.timing.lower import lower
    res = gpusim.simulate("coalesced", 4096, keep_trace=True)
    gpu = gpusim.get_arch("h200")
    bps = res.occupancy.blocks_per_sm
    counts, boards, reads, banks = ptx = KT.ptxas_facts(res)
    tr, _ = KT.build_window(res, KT._resident(res, gpu, bps), trips)
    gidx, _ = C._global_load_rows(tr)
    first = first_active(tr.addr, tr.rows["mem"][gidx])
    lv = KT.prediction_levels(res, gpu, ptx, dram_rows=dram_rows)[0](tr, gpu)
    t = run_lowered(lower(tr, gpu, global_level=lv, stall_counts=counts, scoreboards=boards, read_barriers=reads,
                          register_banks=banks),
                    gpu)
    a_miss = gidx[(first >= res.bases["A"]) & (first < res.bases["B"]) & (lv[gidx] != C.LEVEL_L1)]
    pos = np.full(len(tr), -1)
    pos[t.trace_row] = np.arange(len(t.trace_row))
    lat = (t.ready_cycle[pos[a_miss]] - t.issue_cycle[pos[a_miss]]).astype(np.float64)
    cta, warp, seq = (tr.rows[f][a_miss].astype(np.int64) for f in ("cta", "warp", "seq"))
    order = np.lexsort((seq, warp, cta))
    chunk = np.zeros(len(a_miss), np.int64)          # the miss's index among its warp's
    start = np.r_[True, (cta[order][1:] != cta[order][:-1]) | (warp[order][1:] != warp[order][:-1])]
    run_id = np.cumsum(start) - 1
    chunk[order] = np.arange(len(order)) - np.flatnonzero(start)[run_id]
    return lat, cta * 100000 + chunk


def within_share(lat, keys) -> float:
    groups = [lat[keys == k] for k in np.unique(keys)]
    return float(np.mean([g.var() for g in groups if len(g) > 4]) / lat.var())


def test_the_clock_reads_bracket_the_load_and_a_store_of_its_value():
    """In the SASS the micro ran: clock read, the LDG of A, a shared store of that LDG's register (it cannot
    issue before the data is back), the second clock read."""
    body = [ln.split("*/", 1)[1].split(";")[0].strip()
            for ln in (ROOT / "traces/hw/h200/micro/coalesced_wait.sass").read_text().splitlines()
            if ln.strip().startswith("/*0") and "*/" in ln]
    clocks = [i for i, b in enumerate(body) if "SR_CLOCKLO" in b]
    assert len(clocks) == 2
    between = body[clocks[0] + 1:clocks[1]]
    ldg = [b for b in between if "LDG" in b]
    sts = [b for b in between if "STS" in b]
    assert len(ldg) == 1 and len(sts) == 1
    reg = re.search(r"LDG\S* (R\d+),", ldg[0]).group(1)
    assert sts[0].endswith(reg)


def test_h200_coalesced_warps_wait_less_alike_than_regtile1d_warps():
    assert 0.5 < REC["load_latency_within_cta_share"] < 0.8
    assert BARRIER["load_latency_within_cta_share"] < REC["load_latency_within_cta_share"] - 0.2
    q = REC["load_latency_quantiles_cycles"]
    assert q["10"] > 281 and q["90"] > 784         # past the idle L2 latency, past the DRAM stream's


@pytest.mark.slow        # tens of seconds: .ci/run runs it (`pytest -m slow`)
def test_engine_options_bracket_the_h200():
    """Rows spread: each warp on its own (share near 1); grouped: the CTA's warps alike (near 0)."""
    hw = REC["load_latency_within_cta_share"]
    assert within_share(*engine_a_load_times("spread")) > hw + 0.2
    assert within_share(*engine_a_load_times("grouped")) < hw - 0.2
