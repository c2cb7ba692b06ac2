"""Running a kernel's SASS: values against numpy and the Python kernel, sampled against full runs,
and the memory checks."""
import numpy as np
import pytest

import gpusim
from gpusim.estimate.simulate import allocate
from gpusim.sass import frontend as F
from gpusim.sass.state import SassMemoryError
from tests.kernel_sizes import every_kernel, small_size

# one ragged shape for the bounds-checked kernels
RAGGED = {"naive": (37, 45, 23), "coalesced": (45, 37, 19)}


def _global_accesses(trace, bases, store):
    """{(array, element)} touched by the trace's global loads (store=False) or stores."""
    from gpusim.kernel.opcodes import TABLE, SPACE_GLOBAL
    space, is_store, _, _, _ = TABLE.arrays()
    rows = trace.rows
    op = rows["op"].astype(np.int64)
    sel = (space[op] == SPACE_GLOBAL) & (is_store[op] == store) & (rows["mem"] >= 0) & (rows["mask"] != 0)
    a = trace.addr[rows["mem"][sel]].ravel()
    a = a[a >= 0]
    out = set()
    for name, b in bases.items():
        e = a[(a >= b) & (a < b + (1 << 40))]
        out |= {(name, int(x)) for x in np.unique((e - b) // 4)}
    return out


@pytest.mark.parametrize("kernel", every_kernel() + [f"{k}-ragged" for k in RAGGED])
def test_values_and_addresses_match_the_python_kernel(kernel):
    """Full mode: the compiled kernel's C equals numpy's, and the Python kernel touches the same
    elements of A, B and C (loads and stores) as the SASS does."""
    name, ragged = kernel.split("-")[0], kernel.endswith("ragged")
    M, N, K = RAGGED[name] if ragged else small_size(name)
    s = gpusim.simulate(name, M, N, K, mode="full", keep_trace=True, frontend="sass")
    p = gpusim.simulate(name, M, N, K, mode="full", keep_trace=True, frontend="python")
    tol = gpusim.kernel.get_kernel(name).tolerance or 1e-5
    assert s.max_rel_error < tol
    assert p.max_rel_error < tol
    for store in (False, True):
        assert _global_accesses(s.trace, s.bases, store) == _global_accesses(p.trace, p.bases, store)


# one kernel in the default run (about 10 s each), every kernel in the slow one
@pytest.mark.parametrize("kernel", [k if k == "coalesced" else pytest.param(k, marks=pytest.mark.slow)
                                    for k in every_kernel()])
def test_sampled_counts_equal_full_enumeration(kernel):
    """Loop sampling (whole iterations standing for skipped ones) and CTA classes: every count of
    a sampled run equals the run of every CTA and every trip, at a size where loops are sampled."""
    M, N, K = small_size(kernel)
    K = K * 8
    M, N = 2 * M, 2 * N
    full = gpusim.simulate(kernel, M, N, K, mode="full", frontend="sass")
    samp = gpusim.simulate(kernel, M, N, K, mode="sampled", frontend="sass")
    assert samp.ctas_simulated < full.ctas_simulated
    assert samp.inst_executed_per_opcode == full.inst_executed_per_opcode
    assert samp.metrics == full.metrics


def test_loop_sampling_skips_trips():
    """A sampled CTA records far fewer instructions than it executes (the K loop's iterations stand
    for each other) and its weights add up to the full count."""
    M = N = K = 1024
    prog, _ = F.program("regtile2d", tuple(sorted(gpusim.kernel.get_kernel("regtile2d").params.items())))
    bases = gpusim.estimate.simulate.layout(M, N, K)
    mem = F.memory({"A": M * K * 4, "B": K * N * 4, "C": M * N * 4}, bases)
    full, _ = F.run_cta(prog, (8, 8, 1), (256, 1, 1), (1, 2, 0), 1, mem, (M, N, K, 1.0, 0.5), bases, 0, False)
    samp, _ = F.run_cta(prog, (8, 8, 1), (256, 1, 1), (1, 2, 0), 1, mem, (M, N, K, 1.0, 0.5), bases, 0, True)
    assert len(samp) < len(full) / 5
    assert int(samp.rows["weight"].sum()) == len(full)


def test_out_of_bounds_access_is_an_error():
    """A buffer smaller than the kernel reads: the emulator names the instruction and the address."""
    M = N = K = 256
    prog, _ = F.program("regtile2d", tuple(sorted(gpusim.kernel.get_kernel("regtile2d").params.items())))
    arrays, bases = allocate(M, N, K, 0)
    mem = F.memory({**arrays, "A": arrays["A"][: M * K // 2]}, bases)
    with pytest.raises(SassMemoryError, match="LDG.*outside every buffer"):
        F.run_cta(prog, (2, 2, 1), (256, 1, 1), (0, 1, 0), 1, mem, (M, N, K, 1.0, 0.5), bases, 0, False)
