"""lower(): rows grouped by warp in program order, sources remapped to rows, warps to SMSPs."""
from dataclasses import replace

import numpy as np
import pytest

from gpusim.errors import GpusimError
from gpusim.timing import lower
from gpusim.timing.lower import engine_params
from gpusim.timing import engine as E
from tests.timing.test_engine import ARCH, make_trace, row


def test_lower_groups_remaps_and_assigns_smsp():
    """Rows arrive CTA-major in seq order with warps interleaved (as trace_from_ctx writes
    them); lower() sorts them by SM warp slot (CTA slot * 6 + warp) then seq, maps each source
    seq to the producing row of the same warp (-1 if that warp did not run it), and puts SM
    warp slot w on SMSP w % 4."""
    t = make_trace([row(0, "LDS", 0, wf=2, cta=7), row(5, "LDS", 0, wf=1, cta=7),
                    row(0, "FFMA", 1, (0,), cta=7), row(5, "FFMA", 2, (0, 1), cta=7),
                    row(1, "LDG.E", 0, sectors=4, cta=3), row(1, "IMAD", 1, (0,), cta=3)])
    lw = lower(t, ARCH, ctas=[7, 3])
    assert lw.warp_sm.tolist() == [0, 5, 7]            # CTA 7 is slot 0, CTA 3 slot 1 (6 warps a CTA)
    assert lw.warp_smsp.tolist() == [0, 1, 3]
    assert lw.warp_start.tolist() == [0, 2, 4, 6]
    assert lw.trace_row.tolist() == [0, 2, 1, 3, 4, 5]
    assert lw.dep[:, 0].tolist() == [-1, 0, -1, 2, -1, 4]
    assert lw.dep[3, 1] == -1                          # seq 1 was not executed by warp 5
    assert lw.cls.tolist() == [E.C_LDS, E.C_FIXED, E.C_LDS, E.C_FIXED, E.C_LDG, E.C_FIXED]
    assert lw.unit.tolist()[1::2] == [E.U_FMA, E.U_FMA, E.U_HEAVY]
    assert lw.wf.tolist()[:3] == [2, 0, 1] and lw.sectors[4] == 4
    assert lw.cta_warp_start.tolist() == [0, 2, 3]


def test_rows_out_of_program_order_are_sorted_as_those_in_it():
    """A trace whose rows do not come in seq order within a warp (a hand-made one) is lowered as the same
    rows in order: the counting sort by warp (_take_by_warp) notices and sorts by seq."""
    spec = [row(0, "LDS", 0, wf=2), row(1, "LDS", 0, wf=1), row(0, "FFMA", 1, (0,)), row(1, "FFMA", 1, (0,)),
            row(0, "IMAD", 2, (1,)), row(1, "STS", 2, (1,), wf=1)]
    shuffled = [spec[i] for i in (4, 1, 2, 5, 0, 3)]
    a, b = lower(make_trace(spec), ARCH), lower(make_trace(shuffled), ARCH)
    for name in ("warp_start", "cls", "unit", "wf", "dep", "op", "row_warp"):
        assert getattr(a, name).tolist() == getattr(b, name).tolist(), name
    assert b.trace_row.tolist() == [4, 2, 0, 1, 5, 3]


def test_a_source_past_every_row_is_refused():
    with pytest.raises(IndexError):
        lower(make_trace([row(0, "FFMA", 0), row(0, "FFMA", 1, (9,))]), ARCH)


def test_read_waits_match_blocks_per_warp_left_to_right():
    """Memory rows of each warp are matched against a block's sequence without overlap and never
    across warps; within a match the row d memory rows after the i-th waits for it, also past the
    match's end; integer rows between are skipped (the wait moves to the memory instruction)."""
    spec = []
    for w in range(2):
        seqs = ["LDG.E", "IADD3", "LDG.E", "STS", "LDG.E", "LDG.E", "STS"] if w == 0 else ["LDG.E", "LDG.E"]
        spec += [row(w, op, i) for i, op in enumerate(seqs)]
    lw = lower(make_trace(spec), ARCH, read_barriers=((("LDG.E", "LDG.E", "STS"), ((0, 2), (1, 3))),))
    assert [lw.opcodes[o] for o in lw.op[:7]] == ["LDG.E", "IADD3", "LDG.E", "STS", "LDG.E", "LDG.E", "STS"]
    # warp 0's memory rows 0, 2, 3 | 4, 5, 6 match twice; the second match's (1, 3) would land in warp 1
    assert {i: int(p) for i, p in enumerate(lw.rb_wait) if p >= 0} == {3: 0, 5: 2, 6: 4}
    assert (lower(make_trace(spec), ARCH).rb_wait == -1).all()


def test_engine_params_refuse_a_zero_rate():
    """The engine divides by the L1TEX and shared-pipe rates: a preset with a zero one is refused."""
    with pytest.raises(GpusimError, match="l1_sectors_per_sm_cycle"):
        engine_params(replace(ARCH, l1_sectors_per_sm_cycle=0.0))


def test_engine_params_refuse_a_negative_untaken_cap():
    """lg_sm_untaken_depth is 0 (no cap) or a count: a negative one is refused, not taken as no cap."""
    with pytest.raises(GpusimError, match="lg_sm_untaken_depth"):
        engine_params(replace(ARCH, lg_sm_untaken_depth=-1))
    assert engine_params(replace(ARCH, lg_sm_untaken_depth=0)) is not None


def test_miss_entries_must_be_counts():
    """lg_sm_miss_depth is 0 (no miss entries) or a count, and with entries lg_sm_miss_sectors must be at least 1:
    a negative depth or an empty sector cap is refused rather than run as a cap the engine never frees."""
    for bad in ({"lg_sm_miss_depth": -1}, {"lg_sm_miss_sectors": 0}):
        with pytest.raises(GpusimError, match="lg_sm_miss_depth"):
            engine_params(replace(ARCH, **bad))
    assert engine_params(replace(ARCH, lg_sm_miss_depth=0, lg_sm_miss_sectors=0)) is not None


def _lowered_equal(a, b) -> list:
    """The fields (and the packed rows) in which two Lowered differ."""
    from dataclasses import fields
    bad = []
    for f in fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        same = np.array_equal(x, y) if isinstance(x, np.ndarray) or isinstance(y, np.ndarray) else x == y
        if not same:
            bad.append(f.name)
    return bad + ([] if np.array_equal(a.rows, b.rows) else ["rows"])


@pytest.mark.parametrize("longest_first", [True, False])
def test_shared_row_columns_lower_each_list_as_on_its_own(longest_first, monkeypatch):
    """lower(share=True) makes the per-row work of a window's joined trace once and cuts it for the
    traces of its first CTAs (Trace.prefix_of): every array equals lowering each trace on its own, with
    levels, ptxas's facts and slots, whichever list is lowered first."""
    import sys
    import gpusim
    from gpusim.estimate import round_inputs as RI
    from gpusim.timing.lower import release_shared
    r = gpusim.simulate("regtile2d", 512)
    gpu = gpusim.get_arch("h200")
    eight, _, _ = RI.window_trace(r, RI._resident(r, gpu, 8), 4)
    two, _, _ = RI.window_trace(r, RI._resident(r, gpu, 2), 4)
    four, _, _ = RI.window_trace(r, RI._resident(r, gpu, 4), 4)
    assert two.prefix_of is eight and four.prefix_of is eight
    level = np.random.default_rng(1).integers(0, 4, len(eight.rows)).astype(np.int8)
    facts = RI.ptxas_facts(r)
    assert facts is not None and all(f is not None for f in facts)
    L = sys.modules["gpusim.timing.lower"]      # (gpusim.timing.lower is also the function's name)
    made = []
    monkeypatch.setattr(L, "_row_columns", lambda t, *a, real=L._row_columns: made.append(len(t.rows)) or real(t, *a))
    runs = [(eight, 2), (four, 2), (two, None), (two, 1)]
    for tr, slots in (runs if longest_first else runs[::-1]):
        args = (tr, gpu, None, level[:len(tr.rows)], 132.0, *facts, slots)
        assert _lowered_equal(lower(*args, share=True), lower(*args)) == []
    # the shared columns were made once, for the eight CTAs; each lowering on its own made its own
    assert made.count(len(eight.rows)) == 2 and sorted(made) == sorted([len(eight.rows)] * 2 + [
        len(four.rows), len(two.rows), len(two.rows)])
    release_shared(eight)


def test_shared_row_columns_refuse_a_trace_that_is_not_a_prefix():
    """A trace that names a longer one it does not begin (other CTAs' rows, as many of them) is lowered on
    its own, not cut from that one's columns."""
    import gpusim
    from gpusim.estimate import round_inputs as RI
    from gpusim.timing.lower import release_shared
    from gpusim.trace.trace import Trace
    r = gpusim.simulate("regtile2d", 512)
    gpu = gpusim.get_arch("h200")
    eight, _, _ = RI.window_trace(r, RI._resident(r, gpu, 8), 4)
    gx, gy, _ = r.grid
    two, _, _ = RI.window_trace(r, RI._resident(r, gpu, 2), 4)
    other, _, _ = RI.window_trace(r, [(gx - 1, gy - 1, 0), (gx - 2, gy - 1, 0)], 4)
    # as many rows as eight's first two CTAs, other addresses: only the rows' place tells them apart
    assert two.prefix_of is eight and len(other.rows) == len(two.rows)
    own = lower(other, gpu)
    assert _lowered_equal(own, lower(two, gpu)) != []
    named = Trace(other.rows.copy(), other.addr.copy(), other.opcodes, prefix_of=eight)
    lower(eight, gpu, share=True)           # eight's columns made and kept
    assert _lowered_equal(lower(named, gpu, share=True), own) == []
    release_shared(eight)
