"""Where the SASS comes from: committed, cached, compiled now; and the one-line refusals."""
import pytest

import gpusim
from gpusim.sass import compile as C
from gpusim.sass.compile import CompilerMissing

OTHER = {"BM": 64, "BN": 64, "BK": 16, "TM": 4, "TN": 8}     # regtile2d: no committed listing


def test_committed_listing_of_the_defaults():
    spec = gpusim.kernel.get_kernel("regtile2d")
    comp = C.kernel_sass("regtile2d", dict(spec.params))
    assert comp.source == "traces/static/regtile2d" and comp.ptxas["registers"] == 94
    assert "Function : regtile2d" in comp.sass


def test_no_compiler_refuses_or_falls_back_in_one_line(monkeypatch, tmp_path):
    monkeypatch.setattr(C, "find_tool", lambda tool: None)
    monkeypatch.setenv("GPUSIM_CACHE_DIR", str(tmp_path))
    from gpusim.sass import frontend
    frontend.program.cache_clear()
    p = {**gpusim.kernel.get_kernel("regtile2d").params, **OTHER}
    with pytest.raises(CompilerMissing, match="no committed SASS.*pip install 'gpusim\\[cuda\\]'"):
        C.kernel_sass("regtile2d", p)
    with pytest.raises(CompilerMissing):
        gpusim.simulate("regtile2d", 256, params=OTHER, frontend="sass")
    r = gpusim.simulate("regtile2d", 256, params=OTHER)
    assert r.frontend == "python"
    assert any(n.startswith("instruction stream: the Python kernel's own (no SASS") for n in r.notes)
    frontend.program.cache_clear()


@pytest.mark.skipif(C.find_tool("nvcc") is None or C.find_tool("cuobjdump") is None
                    or C.find_tool("nvdisasm") is None, reason="needs nvcc, cuobjdump and nvdisasm")
def test_compiled_now_then_from_the_user_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("GPUSIM_CACHE_DIR", str(tmp_path))
    p = {**gpusim.kernel.get_kernel("regtile2d").params, **OTHER}
    first = C.compile_twin("regtile2d", p)
    again = C.compile_twin("regtile2d", p)
    assert (first.source, again.source) == ("compiled now", "user cache")
    assert first.sass == again.sass and first.ptxas == again.ptxas
    assert len(list((tmp_path / "sass").iterdir())) == 1


def test_describe_names_a_foreign_compiler():
    comp = C.Compiled("k", {}, "", {}, "compiled now", "13.2.78")
    assert "not the 13.0.88" in C.describe(comp)
