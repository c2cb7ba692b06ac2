"""The second ladder's L2 model (gpusim.memory.stream): compulsory misses, re-reads past the L2's reach,
and the stores written back to DRAM."""
import numpy as np

import gpusim
from gpusim.estimate.simulate import array_bytes
from gpusim.memory import cache as C
from gpusim.estimate import cache_model as CM
from gpusim.memory import stream as S


def _loads(r):
    gidx, _ = C._global_load_rows(r.trace)
    return gidx, r.trace.rows["weight"][gidx].astype(np.float64)


def test_a_copy_reads_every_sector_once_from_dram():
    """copy4 sampled at 2048: the first touches, weighted, add up to A's sectors, all of them misses."""
    r = gpusim.simulate("copy4", 2048, keep_trace=True)
    gidx, w = _loads(r)
    new = S.first_touch_sectors(r.trace, gidx, w)
    assert new.sum() == 2048 * 2048 * 4 / 32
    hr = CM.hit_rates(r)
    assert hr["dram__bytes_read.sum"] == 2048 * 2048 * 4
    assert hr["gpusim__l2_miss_fraction_by_array"] == {"A": 1.0}
    assert hr["gpusim__dram_writeback_fraction_by_array"] == {"B": 1.0}


def test_a_row_read_three_times_misses_again_only_past_the_reach():
    """softmax reads each row three times in one CTA: within the L2's reach the second and third passes hit;
    with a reach shorter than a CTA's pass (all CTAs resident, 64 MB between the passes at 4096) they miss."""
    r = gpusim.simulate("softmax", 256, mode="full", keep_trace=True)
    gidx, w = _loads(r)
    near = S.first_touch_sectors(r.trace, gidx, w, reach=np.inf).sum()
    first, far = S.first_touch_sectors(r.trace, gidx, w, reach=10, split=True)
    assert near == first.sum() == 256 * 256 * 4 / 32
    assert far.sum() == 2 * near                 # passes two and three
    assert S.reach_sectors(60 * 2**20, 512) == 60 * 2**20 / 32 / 512


def test_a_sampled_softmax_counts_the_trips_it_jumped():
    """softmax at 4096, sampled: the loop sampler keeps a pass's first trips and one row weighted for the
    trips it jumps. Those trips' sectors are touched too, so every row's second and third pass is a re-read
    past the reach (all 512 CTAs resident, 64 MB a pass, 40 MB of L2), and the DRAM reads are the three
    passes: ncu's dram__bytes_read of the H200 record, within 0.1 %."""
    import json
    from pathlib import Path
    r = gpusim.simulate("softmax", 4096, keep_trace=True)
    assert r.trace.rows["weight"].max() > r.trace.rows["weight"].min()       # it is sampled
    gidx, w = _loads(r)
    first, far = S.first_touch_sectors(r.trace, gidx, w, CM._stream_reach(r, r.gpu), split=True)
    assert first.sum() == 4096 * 4096 * 4 / 32                                # no re-read taken for a first
    hr = CM.hit_rates(r)
    rec = json.loads((Path(__file__).parents[2] / "traces/hw/h200/softmax_4096.json").read_text())
    ncu = rec["ncu"]["metrics"]["dram__bytes_read.sum"]
    assert abs(hr["dram__bytes_read.sum"] / ncu - 1) < 1e-3


def test_skipped_trips_lie_on_the_step():
    """A row weighted for 3 trips, one step of 256 B on from its load's row before: the two trips after it."""
    before = np.arange(32, dtype=np.int64) * 4
    a = before + 256
    assert S._skipped_trips(a, before, 3) == {(x + k * 256) // 32 for x in a for k in (1, 2)}
    assert S._skipped_trips(a, None, 3) == set() and S._skipped_trips(a, before, 1) == set()
    half = before.copy()
    half[16:] = -1                                    # other lanes active: no step to take
    assert S._skipped_trips(a, half, 3) == set()


def test_a_stencil_halo_is_capped_at_the_array():
    """stencil5's CTAs re-read their neighbours' rows: counted per CTA they exceed A, capped they are A."""
    r = gpusim.simulate("stencil5", 512, keep_trace=True)
    gidx, w = _loads(r)
    l1 = CM._l1_whole(r, r.gpu)
    per = S.compulsory_l2(r.trace, gidx, w, (l1[2] - l1[3]).astype(np.float64), r.bases,
                          array_bytes("stencil5", 512, 512, 512))
    assert per["A"]["dram_sectors"] == 512 * 512 * 4 / 32
    assert 0 < per["A"]["miss_fraction"] < 1


def test_writebacks_count_a_stored_sector_once():
    """transpose_naive's strided stores: a sector its 8 stores fill is written back once."""
    r = gpusim.simulate("transpose_naive", 256, mode="full", keep_trace=True)
    wb = S.writeback_fractions(r.trace, r.bases, array_bytes("transpose_naive", 256, 256, 256))
    # each store writes 4 B into 32 sectors; a sector's 8 floats come from 8 stores: 1/8 are write-backs
    assert wb == {"B": 1 / 8}


def test_written_back_sectors_add_up_to_dram_write_bytes():
    """transpose_naive at 256: each of B's sectors is stored 8 times (4 B a store) and written back once;
    dram_write_bytes is those sectors' bytes."""
    r = gpusim.simulate("transpose_naive", 256, mode="full", keep_trace=True)
    sizes = array_bytes("transpose_naive", 256, 256, 256)
    got = S.written_back_sectors(r.trace, r.bases, sizes)
    back, stored = got["B"]
    assert back == 256 * 256 * 4 / 32 and stored == 8 * back
    assert CM.dram_write_bytes(r) == 32 * back
