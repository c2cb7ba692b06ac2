"""kernels_py/_common.py's row_dot_col issue order against the SASS: the shared loads ptxas issues
before a tile's first FFMA, and the FFMAs it moves below the tile's trailing BAR.SYNC, read from
the committed cuobjdump text (traces/static/*.sass) and from the Python kernel's trace."""
import re
from pathlib import Path

import numpy as np
import pytest

import gpusim
from kernels_py._common import interleave_loads

STATIC = Path(__file__).resolve().parents[2] / "traces" / "static"


def sass_order(name: str):
    """(loads before the first FFMA after the first BAR, FFMAs between the second BAR and the
    next branch) in the SASS's first tile."""
    ops = [m.group(1) for m in re.finditer(r"/\*[0-9a-f]{4}\*/\s+(?:@!?P\d\s+)?([A-Z0-9]+)", (STATIC / name).read_text())]
    b = ops.index("BAR")
    lead = ops[b + 1:].index("FFMA")
    assert all(o == "LDS" for o in ops[b + 1:b + 1 + lead] if o not in ("UIADD3", "IADD3"))
    b2 = b + 1 + ops[b + 1:].index("BAR")
    after = ops[b2 + 1:b2 + 1 + ops[b2 + 1:].index("BRA")]
    return sum(o == "LDS" for o in ops[b + 1:b + 1 + lead]), after.count("FFMA")


@pytest.mark.parametrize("kernel,sass", [("smemtile", "smemtile.sass"), ("tiled32", "tiled32.sass"),
                                         ("tiled32", "tiled32__BM16_BN64_BK16.sass")])
def test_issue_order_follows_the_sass(kernel, sass):
    params = {"BM": 16, "BN": 64, "BK": 16} if "BK16" in sass else {}
    want = sass_order(sass)
    r = gpusim.simulate(kernel, 128, params=params, mode="full", keep_trace=True)
    t = r.trace
    rows = t.rows[(t.rows["cta"] == 0) & (t.rows["warp"] == 0)]
    ops = [t.opcodes[o].split(".")[0] for o in rows["op"][np.argsort(rows["seq"])]]
    b = ops.index("BAR")
    lead = sum(o == "LDS" for o in ops[b + 1:b + 1 + ops[b + 1:].index("FFMA")])
    b2 = b + 1 + ops[b + 1:].index("BAR")
    nxt = [i for i, o in enumerate(ops[b2 + 1:]) if o in ("LDG", "BAR", "STG", "LDS")][0]
    assert (lead, ops[b2 + 1:b2 + 1 + nxt].count("FFMA")) == want


def test_interleave_loads_leads_then_spreads_and_never_uses_a_value_before_its_load():
    """Two loads ahead, then one after each FFMA; a load an FFMA needs comes just before it."""
    ffmas = ["f0", "f1", "f2", "f3"]
    first = {"x": 0, "y": 0, "z": 1, "w": 1, "v": 3}
    got = interleave_loads(ffmas, first, lead=2)
    assert got == [("ld", "x"), ("ld", "y"), ("ffma", "f0"), ("ld", "z"), ("ld", "w"), ("ffma", "f1"),
                   ("ld", "v"), ("ffma", "f2"), ("ffma", "f3")]
    assert interleave_loads(ffmas, first, lead=0)[:3] == [("ld", "x"), ("ld", "y"), ("ffma", "f0")]
