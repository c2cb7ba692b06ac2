"""lower(): rows grouped by warp in program order, sources remapped to rows, warps to SMSPs."""
import numpy as np

from gpusim.timing import lower
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
