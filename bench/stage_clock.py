"""Clocks around the stages of a prediction, for the benchmarks (bench_ladder.py --stages,
bench_critical_path.py): the counting run, the first-round probe, the window traces, the memory levels
(L1 replay), the lowering, the engine and the chip-wide L2 model, each timed on whichever thread runs it.
A stage inside another counts as the outer one's. The wrappers cost well under 1 % of a prediction.

install(record) wraps them in this process and returns the wrapped `simulate`; record(thread, stage,
start, end, cpu, faults) gets each call: its wall interval (perf_counter), the CPU seconds (user and
system) and the minor page faults of the thread that ran it (getrusage per thread where the OS has it,
else thread_time and no faults)."""
from __future__ import annotations

import resource
import threading
import time

STAGES = {
    "count": "counting run (simulate)",
    "probe": "first-round probe (trace, lowering, engine)",
    "wtrace": "window traces (SASS front-end, costing)",
    "L1": "memory levels (L1 replay)",
    "lower": "lowering",
    "engine": "engine (with packing its rows)",
    "L2": "chip-wide L2 model",
}
_PER_THREAD = getattr(resource, "RUSAGE_THREAD", None)


def _usage() -> tuple[float, int]:
    """This thread's CPU seconds and minor page faults so far."""
    if _PER_THREAD is None:
        return time.thread_time(), 0
    r = resource.getrusage(_PER_THREAD)
    return r.ru_utime + r.ru_stime, r.ru_minflt


def install(record):
    """Wrap gpusim's stage functions so that each call is recorded; the wrapped simulate (call it in place
    of gpusim.simulate: the counting run)."""
    import gpusim
    import gpusim.estimate.cache_model as CM
    import gpusim.estimate.kernel_time as KT
    import gpusim.estimate.round_inputs as RI
    import gpusim.timing as TM
    inside = threading.local()

    def clocked(stage, fn):
        def wrapper(*a, **k):
            if getattr(inside, "stage", None):
                return fn(*a, **k)
            inside.stage = stage
            t0, (c0, f0) = time.perf_counter(), _usage()
            try:
                return fn(*a, **k)
            finally:
                c1, f1 = _usage()
                record(threading.current_thread().name, stage, t0, time.perf_counter(), c1 - c0, f1 - f0)
                inside.stage = None
        return wrapper
    KT.first_round_probe = clocked("probe", KT.first_round_probe)
    KT.window_trace = clocked("wtrace", KT.window_trace)
    RI._Levels.__call__ = clocked("L1", RI._Levels.__call__)
    KT.lower = clocked("lower", KT.lower)
    TM.run_lowered = clocked("engine", TM.run_lowered)
    CM.hit_rates = clocked("L2", CM.hit_rates)
    split = CM._split_sets      # the L2 model's second half runs on a thread of its own
    CM._split_sets = lambda run_part, total: split(clocked("L2", run_part), total)
    return clocked("count", gpusim.simulate)
