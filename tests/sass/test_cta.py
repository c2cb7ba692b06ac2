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


def _launch(spec, M, N, K):
    grid, block = spec.launch(M, N, K, **spec.params)
    return tuple(grid) + (1,) * (3 - len(grid)), tuple(block) + (1,) * (3 - len(block))


def _traces(kernel, M, N, K, ctas, monkeypatch, lanes, **kw):
    spec = gpusim.kernel.get_kernel(kernel)
    prog, _ = F.program(kernel, tuple(sorted(spec.params.items())))
    bases = gpusim.estimate.simulate.layout(M, N, K, spec)
    mem = F.memory(gpusim.estimate.simulate.array_bytes(spec, M, N, K), bases)
    grid, block = _launch(spec, M, N, K)
    monkeypatch.setattr(F, "BATCH_LANES", lanes)
    return F.run_ctas(prog, grid, block, ctas, mem, (M, N, K, *spec.launch_scalars()), bases, 0,
                      args=spec.arguments, **kw)


@pytest.mark.parametrize("kernel,size,window", [("regtile2d", (512, 512, 1024), None),
                                                ("regtile2d", (512, 512, 1024), 16),
                                                ("reduce_shfl", (512, 4096, 1), None),
                                                ("transpose_pad", (256, 256, 1), None),
                                                ("naive", (37, 45, 23), None)])
def test_ctas_side_by_side_equal_one_by_one(kernel, size, window, monkeypatch):
    """CTAs run side by side (one lane vector, a shared window each) give each CTA the trace it has
    alone: rows, weights, addresses and loop trips, with loops sampled or cut to a window. The ragged
    naive launch's last CTA runs a different path, so the run parts and they go one by one."""
    M, N, K = size
    spec = gpusim.kernel.get_kernel(kernel)
    gx, gy, _ = _launch(spec, M, N, K)[0]
    ctas = [((0, 0, 0), 3), ((gx - 1, gy - 1, 0), 1), ((gx // 2, 0, 0), 5)]
    kw = dict(sample_loops=window is None, window=window)
    side = _traces(kernel, M, N, K, ctas, monkeypatch, 4096, **kw)
    alone = _traces(kernel, M, N, K, ctas, monkeypatch, 1, **kw)
    for (a, na, la), (b, nb, lb) in zip(side, alone):
        assert a.rows.tobytes() == b.rows.tobytes()
        assert np.array_equal(a.addr, b.addr)
        assert (na, la) == (nb, lb)


def test_ctas_that_part_are_refused_side_by_side():
    """The ragged naive launch's corner CTA leaves threads out: side by side with an inner one the
    run raises NotUniform (run_ctas then runs them one by one)."""
    from gpusim.sass.cta import CtaRun, NotUniform
    M, N, K = 37, 45, 23
    spec = gpusim.kernel.get_kernel("naive")
    prog, _ = F.program("naive", tuple(sorted(spec.params.items())))
    bases = gpusim.estimate.simulate.layout(M, N, K, spec)
    mem = F.memory(gpusim.estimate.simulate.array_bytes(spec, M, N, K), bases)
    grid, block = _launch(spec, M, N, K)
    words = F.param_words(spec.arguments, {"M": M, "N": N, "K": K, "alpha": 1.0, "beta": 0.5, **bases})
    with pytest.raises(NotUniform):
        CtaRun(prog, block, [(0, 0, 0), (grid[0] - 1, grid[1] - 1, 0)], grid, words, mem).run()


def test_each_cta_has_its_own_shared_window():
    """Two CTAs side by side store to the same shared address and read back their own values."""
    from gpusim.sass.state import SHARED_RESERVED, GlobalMemory, State
    lanes = 64
    cta = np.repeat([0, 1], 32)
    st = State(lanes, {}, {}, 256, GlobalMemory([]), cta)
    on = np.ones(lanes, bool)
    addr = np.full(lanes, SHARED_RESERVED + 16, np.int64)
    st.store("shared", addr, 4, cta.astype(np.uint32)[None, :] + 7, on & (np.arange(lanes) % 32 == 0), None)
    got = st.load("shared", addr, 4, on, None)[0]
    assert list(got[:32]) == [7] * 32 and list(got[32:]) == [8] * 32


@pytest.mark.parametrize("kernel", ["regtile2d", "vectorized", "reduce_shfl"])
def test_the_trimmed_register_file_runs_as_the_whole_one(kernel, monkeypatch):
    """The emulator keeps the R rows the program names (plus room for a 128-bit access), not all 256:
    the traces and loop trips equal those with the whole file, the window-cut and sampled runs alike."""
    import copy
    spec = gpusim.kernel.get_kernel(kernel)
    prog, _ = F.program(kernel, tuple(sorted(spec.params.items())))
    whole = copy.copy(prog)
    whole.n_regs = 256
    assert prog.n_regs < 256
    M, N, K = (512, 512, 1024) if kernel != "reduce_shfl" else (512, 4096, 1)
    bases = gpusim.estimate.simulate.layout(M, N, K, spec)
    mem = F.memory(gpusim.estimate.simulate.array_bytes(spec, M, N, K), bases)
    grid, block = _launch(spec, M, N, K)
    ctas = [((0, 0, 0), 2), ((grid[0] - 1, grid[1] - 1, 0), 1)]
    for kw in (dict(sample_loops=True), dict(sample_loops=False, window=16)):
        a, b = (F.run_ctas(p, grid, block, ctas, mem, (M, N, K, *spec.launch_scalars()), bases, 0,
                           args=spec.arguments, **kw) for p in (prog, whole))
        for (ta, na, la), (tb, nb, lb) in zip(a, b):
            assert ta.rows.tobytes() == tb.rows.tobytes()
            assert np.array_equal(ta.addr, tb.addr)
            assert (na, la) == (nb, lb)


@pytest.mark.parametrize("kernel,size,window,lanes", [("regtile2d", (512, 512, 1024), 16, 4096),
                                                      ("regtile2d", (512, 512, 1024), None, 1),
                                                      ("regtile2d", (512, 512, 1024), 48, 512),
                                                      ("transpose_pad", (256, 256, 1), None, 4096),
                                                      ("naive", (37, 45, 23), None, 4096)])
def test_joined_traces_are_the_concatenated_ones(kernel, size, window, lanes, monkeypatch):
    """run_ctas_joined's one trace (made in place for CTAs run side by side) has the rows and addresses of
    run_ctas' traces (by_warp) concatenated, and each CTA's ends; for CTAs run side by side, one by one, two
    to a run (the runs' parts written into one buffer), and a ragged launch whose CTAs part. Each CTA's
    rows go warp by warp, and run_ctas' without by_warp are the same rows record by record."""
    from gpusim.trace.trace import Trace
    M, N, K = size
    spec = gpusim.kernel.get_kernel(kernel)
    gx, gy, _ = _launch(spec, M, N, K)[0]
    ctas = [((0, 0, 0), 3), ((gx - 1, gy - 1, 0), 1), ((gx // 2, 0, 0), 5)]
    kw = dict(sample_loops=window is None, window=window)
    parts = _traces(kernel, M, N, K, ctas, monkeypatch, lanes, by_warp=True, **kw)
    prog, _ = F.program(kernel, tuple(sorted(spec.params.items())))
    bases = gpusim.estimate.simulate.layout(M, N, K, spec)
    mem = F.memory(gpusim.estimate.simulate.array_bytes(spec, M, N, K), bases)
    grid, block = _launch(spec, M, N, K)
    whole, row_end, addr_end, info = F.run_ctas_joined(prog, grid, block, ctas, mem,
                                                       (M, N, K, *spec.launch_scalars()), bases, 0,
                                                       args=spec.arguments, **kw)
    cat = Trace.concat([t for t, _, _ in parts])
    assert whole.rows.tobytes() == cat.rows.tobytes()
    # each CTA's rows warp by warp, each warp's in program order (the order the lowering reads them in)
    ends = np.cumsum([len(t.rows) for t, _, _ in parts])
    part = np.searchsorted(ends, np.arange(len(cat.rows)), side="right")
    order = np.lexsort((whole.rows["seq"], whole.rows["warp"], part))
    assert np.array_equal(order, np.arange(len(part)))
    plain = Trace.concat([t for t, _, _ in _traces(kernel, M, N, K, ctas, monkeypatch, lanes, **kw)])
    assert plain.rows[np.lexsort((plain.rows["seq"], plain.rows["warp"], part))].tobytes() == cat.rows.tobytes()
    assert np.array_equal(plain.addr, cat.addr)
    assert np.array_equal(whole.addr, cat.addr)
    assert row_end.tolist() == np.cumsum([len(t.rows) for t, _, _ in parts]).tolist()
    assert addr_end.tolist() == np.cumsum([t.addr.shape[0] for t, _, _ in parts]).tolist()
    assert info == [(n, loops) for _, n, loops in parts]


@pytest.mark.parametrize("kernel,size,window", [("regtile2d", (512, 512, 1024), None),
                                                ("regtile2d", (512, 512, 1024), 16),
                                                ("smem2buf", (512, 512, 1024), 48),
                                                ("softmax", (256, 2048, 1), None),
                                                ("reduce_shfl", (512, 4096, 1), None)])
def test_trials_that_leave_data_out_take_the_same_paths(kernel, size, window, monkeypatch):
    """The loop sampler's trials skip the instructions whose results are data (no path they test reads
    any): the sampled and window-cut traces, trips and notes are those of trials that compute them."""
    from gpusim.sass import cta as C
    M, N, K = size
    spec = gpusim.kernel.get_kernel(kernel)
    gx, gy, _ = _launch(spec, M, N, K)[0]
    ctas = [((0, 0, 0), 3), ((gx - 1, gy - 1, 0), 1)]
    kw = dict(sample_loops=window is None, window=window)
    fast = _traces(kernel, M, N, K, ctas, monkeypatch, 4096, **kw)
    monkeypatch.setattr(C, "TRIALS_SKIP_DATA", False)
    full = _traces(kernel, M, N, K, ctas, monkeypatch, 4096, **kw)
    for (a, na, la), (b, nb, lb) in zip(fast, full):
        assert a.rows.tobytes() == b.rows.tobytes() and np.array_equal(a.addr, b.addr)
        assert (na, la) == (nb, lb)
