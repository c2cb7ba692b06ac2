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
