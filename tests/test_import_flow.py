"""The data flows one way through gpusim's stages; no module imports a stage after its own.

    kernel -> trace -> sass -> memory -> timing -> estimate -> hw -> report

`kernel` holds the kernel specs, the Python front-end and the opcode table; `trace` the trace format
both front-ends write; `sass` the SASS front-end (the compiled kernel run warp by warp into a trace);
`memory` costs a trace's memory rows and runs the caches; `timing` lowers a trace and runs the cycle
engine on it; `estimate` orchestrates (runs the front-end for the sampled CTAs and trips, hands their
traces to the caches and the engine, extrapolates); `hw` records and reads the GPU's measurements;
`report` prints and compares. The base modules (errors, paths, jit, arch, pages) may be imported by any
stage and import no stage; the package root and gpusim.testing (the pytest helpers for a user's
claims) sit above every stage. Every import counts, those inside functions too.
"""
import ast
import sys
from pathlib import Path

import gpusim

PACKAGE = Path(gpusim.__file__).resolve().parent
ORDER = ["kernel", "trace", "sass", "memory", "timing", "estimate", "hw", "report"]
BASE = {"errors", "paths", "jit", "arch", "pages"}
TOP = {"__init__", "testing"}


def stage_of(module: str) -> str | None:
    """'gpusim.timing.engine' -> 'timing'; the package root -> None (it may import anything)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def imports_of(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module) of every gpusim import in the file."""
    here = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    package = here if path.name == "__init__.py" else here.rsplit(".", 1)[0]
    if path.name == "__init__.py":
        package = here.rsplit(".", 1)[0] if here.endswith(".__init__") else here
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module
            if mod == "gpusim":      # `from gpusim import x`: x is a stage or a name of the root
                out += [(node.lineno, f"gpusim.{a.name}") for a in node.names]
            else:
                out.append((node.lineno, mod))
    return [(line, m) for line, m in out if m and (m == "gpusim" or m.startswith("gpusim."))]


def backward_imports() -> list[str]:
    bad = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        mine = rel.parts[0] if len(rel.parts) > 1 else rel.stem
        if mine in TOP:
            continue
        for line, mod in imports_of(path):
            theirs = stage_of(mod)
            where = f"gpusim/{rel.as_posix()}:{line}"
            if theirs is None or theirs in TOP:
                bad.append(f"{where} imports {mod}, above every stage")
            elif mine in BASE and theirs not in BASE:
                bad.append(f"{where}: a base module imports the stage {theirs} ({mod})")
            elif mine in ORDER and theirs in ORDER and ORDER.index(theirs) > ORDER.index(mine):
                bad.append(f"{where}: {mine} imports {mod}, a later stage")
    return bad


def test_every_module_belongs_to_a_stage():
    top = {p.name if p.is_dir() else p.stem for p in PACKAGE.iterdir()
           if (p.is_dir() and (p / "__init__.py").exists()) or p.suffix == ".py"}
    assert top <= set(ORDER) | BASE | TOP, top - set(ORDER) - BASE - TOP


def test_imports_follow_the_data_flow():
    assert backward_imports() == []


def test_the_check_sees_a_backward_import(tmp_path, monkeypatch):
    """The checker itself: a timing module importing the estimate is reported."""
    fake = tmp_path / "gpusim"
    (fake / "timing").mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "timing" / "__init__.py").write_text("")
    (fake / "timing" / "x.py").write_text("def f():\n    from gpusim.estimate.simulate import simulate\n")
    (fake / "paths.py").write_text("from gpusim.report import cli\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", fake)
    got = backward_imports()
    assert any("timing/x.py:2" in b and "later stage" in b for b in got), got
    assert any("paths.py:1" in b and "base module" in b for b in got), got
