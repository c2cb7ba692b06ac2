"""The SASS listing parser: every committed listing, operands, and refusals of damaged files."""
import pytest

from gpusim.errors import RecordError
from gpusim.sass.compile import STATIC_DIR
from gpusim.sass.listing import back_edges, parse_listing, parse_operand

LISTINGS = sorted(STATIC_DIR.glob("*.sass"))


@pytest.mark.parametrize("path", LISTINGS, ids=[p.stem for p in LISTINGS])
def test_committed_listing_parses(path):
    """Every instruction of every committed listing parses, 16 bytes apart, with a control word."""
    ins = parse_listing(path.read_text())
    assert [i.pc for i in ins] == list(range(0, 16 * len(ins), 16))
    assert any(i.base == "EXIT" for i in ins)
    assert all(0 <= i.stall <= 15 and 0 <= i.wbar <= 7 and 0 <= i.rbar <= 7 for i in ins)
    assert back_edges(ins), "every ladder kernel has a K loop"


def test_operands():
    m = parse_operand("desc[UR12][R2.64+0x100]")
    assert (m.kind, m.n, m.wide, m.offset, m.ureg) == ("mem", 2, True, 0x100, -1)
    m = parse_operand("[R3+UR4+0x20]")
    assert (m.kind, m.n, m.wide, m.ureg, m.offset) == ("mem", 3, False, 4, 0x20)
    r = parse_operand("-R5.reuse")
    assert (r.kind, r.n, r.neg) == ("R", 5, True)
    assert parse_operand("!PT").inv and parse_operand("!PT").n == 7
    assert parse_operand("c[0x0][0x218]").offset == 0x218
    assert parse_operand("0x7f").n == 0x7F
    assert parse_operand("-0x80").n == (-0x80) & 0xFFFFFFFF
    assert parse_operand("RZ").n == 255 and parse_operand("URZ").n == 63


def test_truncated_listing_is_refused():
    text = (STATIC_DIR / "regtile2d.sass").read_text().splitlines()
    cut = "\n".join(text[: len(text) // 2])
    with pytest.raises(RecordError, match="EXIT|truncated"):
        parse_listing(cut)
    # an instruction line whose control word is missing
    lines = [ln for ln in text]
    i = next(n for n, ln in enumerate(lines) if "/*0040*/" in ln)
    del lines[i + 1]
    with pytest.raises(RecordError, match="control word|expected"):
        parse_listing("\n".join(lines))


def test_unknown_function_is_refused():
    with pytest.raises(RecordError, match="not in the SASS listing"):
        parse_listing((STATIC_DIR / "naive.sass").read_text(), "nonesuch")
