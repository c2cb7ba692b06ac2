"""Same-address atomics queued at the L2: which requests count, the queue's end, and the rule against
its microbenchmark."""
import json

import pytest

import gpusim
from gpusim.estimate.atomic_queue import queue_end_cycles, shared_address_atomics
from gpusim.paths import SOURCE_ROOT

MICRO = SOURCE_ROOT / "traces" / "hw" / "h200" / "micro"


def test_only_atomics_every_cta_makes_to_one_address_count():
    """reduce_atomic: one RED per CTA to out[0], 1024 CTAs; reduce_shfl: plain stores, none; copy4: none."""
    r = gpusim.simulate("reduce_atomic", 1024, keep_trace=True)
    assert r.grid[0] * r.grid[1] == 1024
    assert shared_address_atomics(r.trace) == 1024
    for k in ("reduce_shfl", "copy4"):
        assert shared_address_atomics(gpusim.simulate(k, 1024, keep_trace=True).trace) == 0


def test_the_queue_starts_with_the_first_batch_and_takes_each_in_turn():
    # all at once at 100: the last one done at 100 + 10 x 2
    assert queue_end_cycles([(100.0, 1.0)], 10, 2.0) == pytest.approx(120.0)
    # half at 0, half at 1000: the first half is done by 10, the second takes 10 from 1000
    assert queue_end_cycles([(0.0, 0.5), (1000.0, 0.5)], 10, 2.0) == pytest.approx(1010.0)
    # half at 0, half at 5: the second half waits behind the first
    assert queue_end_cycles([(0.0, 0.5), (5.0, 0.5)], 10, 2.0) == pytest.approx(20.0)


def test_the_queue_reproduces_its_microbenchmark():
    """One atomic per CTA on one address: the launch ends when the queue does, G atomics after the first
    (the empty CTAs' own rounds, r dispatches each, end long before), so its time is the launch overhead
    the prediction adds (micro/launch_overhead.json) plus G x the preset's interval, within 5 % from 1024
    CTAs on."""
    rec = json.loads((MICRO / "atomic_contention.json").read_text())
    gpu = gpusim.get_arch("h200")
    assert gpu.atomic_same_address_ns == pytest.approx(rec["details"]["slope_ns_per_cta"]["atomic_shared"], abs=0.01)
    rows = rec["details"]["rows"]
    base = gpu.launch_overhead_us
    shared = [r for r in rows if r["mode"] == "atomic_shared" and r["grid"] >= 1024]
    assert len(shared) >= 7
    for r in shared:
        per = gpu.atomic_same_address_ns * gpu.sm_clock_max_mhz * 1e-3
        us = base + queue_end_cycles([(0.0, 1.0)], r["grid"], per) / gpu.sm_clock_max_mhz
        assert us == pytest.approx(r["queued_us_median"], rel=0.05), r
