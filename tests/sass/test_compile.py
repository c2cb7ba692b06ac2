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


@pytest.mark.skipif(C.find_tool("nvcc") is None or C.find_tool("cuobjdump") is None
                    or C.find_tool("nvdisasm") is None, reason="needs nvcc, cuobjdump and nvdisasm")
def test_a_damaged_cache_entry_is_compiled_again_and_says_so(monkeypatch, tmp_path):
    monkeypatch.setenv("GPUSIM_CACHE_DIR", str(tmp_path))
    p = {**gpusim.kernel.get_kernel("regtile2d").params, **OTHER}
    first = C.compile_twin("regtile2d", p)
    (entry,) = (tmp_path / "sass").iterdir()
    (entry / "k.sass").write_text(first.sass[: len(first.sass) // 2])
    again = C.compile_twin("regtile2d", p)
    assert again.source.startswith("compiled now; the cached copy was damaged") and again.sass == first.sass
    assert C.compile_twin("regtile2d", p).source == "user cache"


@pytest.mark.parametrize("damage", ["truncate", "edit", "drop", "json"])
def test_a_damaged_committed_listing_is_refused_by_name(monkeypatch, tmp_path, damage):
    import shutil
    static = tmp_path / "static"
    shutil.copytree(C.STATIC_DIR, static)
    monkeypatch.setattr(C, "STATIC_DIR", static)
    sass, rec = static / "regtile2d.sass", static / "regtile2d.json"
    if damage == "truncate":
        text = sass.read_text()
        sass.write_text(text[: len(text) * 2 // 3])
        match = "regtile2d.sass: not a readable listing .*truncated"
    elif damage == "edit":          # one FFMA made an FADD: the listing still parses
        sass.write_text(sass.read_text().replace(" FFMA R75, R4, R78, R75 ;", " FADD R75, R4, R78     ;", 1))
        match = "regtile2d.sass: its instructions differ .*FADD 1 against 0, FFMA .*truncated or edited"
    elif damage == "drop":
        sass.unlink()
        match = "regtile2d.json has no listing beside it"
    else:
        rec.write_text(rec.read_text()[:100])
        match = "regtile2d.json: not a readable JSON record"
    with pytest.raises(gpusim.errors.RecordError, match=match):
        C.committed("regtile2d", dict(gpusim.kernel.get_kernel("regtile2d").params))


def test_the_python_front_ends_readers_refuse_a_damaged_record_too(monkeypatch, tmp_path):
    """The ptxas facts (registers) and the control-code tables read traces/static/ as well: a record
    there that is not JSON is refused by name, not skipped (which would leave registers unknown)."""
    import shutil
    from gpusim.sass import registers
    from gpusim.timing import control_codes
    static = tmp_path / "static"
    shutil.copytree(C.STATIC_DIR, static)
    (static / "naive.json").write_text("{")
    monkeypatch.setattr(registers, "STATIC_DIR", static)
    monkeypatch.setattr(control_codes, "STATIC_DIR", static)
    monkeypatch.setattr(control_codes, "_LISTINGS", {})      # no listing a run before this one handed over
    with pytest.raises(gpusim.errors.RecordError, match="traces/static/naive.json: not a readable JSON"):
        registers._records()
    with pytest.raises(gpusim.errors.RecordError, match="traces/static/naive.json: not a readable JSON"):
        control_codes._record("naive", (("BLOCK", 32),))
