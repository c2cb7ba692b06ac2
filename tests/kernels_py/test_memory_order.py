"""The order of a kernel's global loads and shared stores within a K-loop trip is ptxas's.

The engine times the trace in its own order, so where the Python kernel puts a load matters, not only
how many it issues: vectorized once stored A's tile before loading B's, where its SASS loads both first,
and each trip paid two L2 latencies instead of one (+12.7 % at 1024). For each kernel whose K loop
stages tiles through shared memory in one basic block, the LDG / STS sequence before a warp's first
barrier must equal that block's in the recorded SASS (traces/static/<kernel>.sass, the block with the
most global loads)."""
import numpy as np
import pytest

import gpusim
from gpusim.timing.control_codes import _record, _trips, barriers, trace_name

STAGING = ("smemtile", "regtile1d", "regblock", "regtile2d", "vectorized")


def _staging(names):
    """LDG / STS names up to the first barrier."""
    out = []
    for nm in names:
        if nm.startswith("BAR"):
            break
        if nm.split(".")[0] in ("LDG", "STS"):
            out.append(nm)
    return out


def sass_order(kernel: str, params: dict) -> list:
    rec, text, _ = _record(kernel, tuple(sorted(params.items())))
    ins = barriers(text)
    best = None
    for b in rec["outline"]:
        lo, hi = int(b["start"], 16), int(b["end"], 16)
        names = [trace_name(op) for off, op, _, _, _ in ins if lo <= off <= hi]
        loads = sum(nm.startswith("LDG") for nm in names) * _trips(b, 4096, 4096, 4096)
        if loads and (best is None or loads > best[0]):
            best = (loads, names)
    return _staging(best[1])


def trace_order(kernel: str) -> tuple[list, dict]:
    res = gpusim.simulate(kernel, 256, mode="full", keep_trace=True)
    rows = res.trace.rows
    mine = np.flatnonzero((rows["cta"] == rows["cta"][0]) & (rows["warp"] == 0))
    mine = mine[np.argsort(rows["seq"][mine], kind="stable")]
    names = [res.trace.opcodes[o] for o in rows["op"][mine]]
    return _staging(names), res.params


@pytest.mark.parametrize("kernel", STAGING)
def test_staging_order_follows_the_sass(kernel):
    got, params = trace_order(kernel)
    assert got and got == sass_order(kernel, params)
