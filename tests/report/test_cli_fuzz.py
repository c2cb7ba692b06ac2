"""A fuzz test of the command line: random combinations of subcommands, flags and values, well formed
or not, never end in a traceback; every refusal is one line on stderr with exit code 2."""
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from gpusim.report.cli import main

KERNELS = ["naive", "smemtile", "regtile2d", "dbuf", "nope", "navie", "", "../x.py"]
SIZES = ["0", "-4", "32", "64", "128", "48", "abc", "1e3", "2.5", "99999999"]
FLAGS = {
    "run": [("--size", SIZES), ("--M", SIZES), ("--N", SIZES), ("--K", SIZES),
            ("--param", ["BN=64", "BN=64.7", "BN", "=3", "XX=1", "BM=-8", "TM=4", "BK=0"]),
            ("--arch", ["h200", "a6000", "rtx5080", "h100", ""]), ("--mode", ["full", "sampled", "auto", "x"]),
            ("--frontend", ["sass", "python", "auto", "ptx"]), ("--window", ["0", "-1", "4", "x"]),
            ("--timeline", ["{tmp}/t.json", "/nonexistent/t.json", "{tmp}"]),
            ("--save-trace", ["{tmp}/s.npz", "/nonexistent/s.npz"]),
            ("--section", ["SpeedOfLight", "all", "warps", "occupancy,SourceCounters", "Nope", ""]),
            ("--json", None), ("--trace", None), ("--no-time", None), ("--bogus", None)],
    "check": [("--size", SIZES), ("--M", SIZES), ("--param", ["BN=64", "BN", "BM=3"]),
              ("--tol", ["1e-4", "0", "-1", "x", "nan"]), ("--json", None), ("--arch", ["h200", "zz"])],
    "compare": [("--size", ["0", "1024", "777", "x"]), ("--variants", None), ("--json", None), ("--no-time", None),
                ("--detail", None)],
    "list": [],
}


@st.composite
def argv(draw, tmp):
    cmd = draw(st.sampled_from(sorted(FLAGS)))
    out = [cmd]
    if cmd in ("run", "check"):
        out.append(draw(st.sampled_from(KERNELS)))
    elif cmd == "compare":
        out += draw(st.lists(st.sampled_from(KERNELS), max_size=2))
    for flag, values in draw(st.lists(st.sampled_from(FLAGS[cmd]), max_size=4)) if FLAGS[cmd] else []:
        out.append(flag)
        if values is not None:
            out.append(draw(st.sampled_from(values)).format(tmp=tmp))
    if cmd in ("run", "check") and not {"--size", "--M", "--N", "--K"} & set(out):
        out += ["--size", draw(st.sampled_from(["32", "64", "128"]))]     # the default 1024 would take long here
    if cmd in ("run", "compare") and draw(st.booleans()):
        out.append("--no-time")                     # most runs counts-only, to keep the test short
    return out


def _cheap(args) -> bool:
    """Runs whose simulation would take long here: a full-mode or timed run over 128, compare's timing."""
    vals = {args[i]: args[i + 1] for i in range(len(args) - 1)}
    big = any(v.isdigit() and int(v) > 128 for f, v in vals.items() if f in ("--size", "--M", "--N", "--K"))
    sized = any(f in vals for f in ("--size", "--M", "--N", "--K"))
    if args[0] == "compare":
        return "--no-time" in args and vals.get("--size") in ("0", "777", "x")
    if args[0] in ("run", "check"):
        return sized and not big and not ("--mode" in vals and vals["--mode"] == "full" and "--no-time" not in args)
    return True


RAN: list = []


@settings(max_examples=50, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_no_combination_ends_in_a_traceback(data, tmp_path_factory, capsys):
    tmp = tmp_path_factory.mktemp("fuzz")
    args = data.draw(argv(str(tmp)))
    if not _cheap(args):
        return
    RAN.append(args)
    try:
        code = main(args)
    except SystemExit as e:         # argparse's --help; anything else must come back as a return code
        code = e.code
    err = capsys.readouterr().err
    assert "Traceback" not in err, (args, err)
    assert code in (0, 1, 2), (args, code, err)
    if code == 2:
        lines = [ln for ln in err.splitlines() if ln.startswith("gpusim: error: ")]
        assert len(lines) == 1 and lines[0].strip() != "gpusim: error:", (args, err)


def test_the_fuzz_ran_enough_cases():
    """(after the fuzz test, in file order) most drawn combinations were cheap enough to run"""
    assert len(RAN) >= 25, len(RAN)
