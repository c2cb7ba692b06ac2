"""Bad inputs, one table: each is refused with exit code 2 and one line naming its cause, never a traceback.

Every case is refused before anything is simulated (or after a 64^3 count at most), so the table runs in
seconds. {tmp} in an argument is a fresh folder; {tmp}/file is a file in it.
"""
import pytest

import gpusim
import gpusim.estimate.simulate as S
from gpusim.errors import GpusimError, KernelConfigError, UnknownKernel
from gpusim.report.cli import main


def case(argv, msg, avail=None):
    """argv: the command line; msg: what the one-line error must say; avail: the bytes of memory the
    machine is made to have (the memory limit's cases)."""
    return pytest.param(argv, msg, avail, id=" ".join(argv).replace("{tmp}", "TMP"))


SMALL = ["--size", "64", "--no-time"]

CLI = [
    # kernels
    case(["run", "naiv"], "did you mean naive?"),
    case(["run", "regtile"], "did you mean regtile2d, regtile1d"),
    case(["run", "nosuch"], "unknown kernel 'nosuch'"),
    # --param forms
    case(["run", "naive", "--param", "BLOCK"], "naive: --param takes NAME=VALUE, got 'BLOCK'"),
    case(["run", "naive", "--param", "=32"], "--param takes NAME=VALUE, got '=32'"),
    case(["run", "naive", "--param", "BLOCK=abc"], "parameter BLOCK must be an integer, got 'abc'"),
    case(["run", "regtile2d", "--param", "BN=64.7"], "parameter BN must be an integer, got '64.7'"),
    case(["run", "naive", "--param", "BLOCK=-32"], "parameter BLOCK must be positive"),
    case(["run", "naive", "--param", "BLOCK=0"], "parameter BLOCK must be positive"),
    case(["run", "naive", "--param", "FOO=1"], "unknown parameter 'FOO'"),
    case(["run", "naive", "--param", "BLOCK=64"], "exceeds 1024"),
    # sizes
    case(["run", "naive", "--size", "0"], "naive: --size must be a positive integer, got 0"),
    case(["run", "naive", "--size", "-64"], "--size must be a positive integer, got -64"),
    case(["run", "naive", "--M", "0"], "--M must be a positive integer, got 0"),
    case(["run", "naive", "--M", "64", "--K", "-1"], "--K must be a positive integer, got -1"),
    # gpusim check: run's rule for sizes and --param
    case(["check", "naive", "--size", "32", "--M", "64"], "naive: --size sets M = N = K; give it or --M/--N/--K"),
    case(["check", "naive", "--size", "-3"], "naive: --size must be a positive integer, got -3"),
    case(["check", "naive", "--param", "BLOCK"], "naive: --param takes NAME=VALUE, got 'BLOCK'"),
    case(["run", "naive", "--size", "64", "--M", "32"], "--M/--N/--K, not both"),
    case(["run", "naive", "--size", "64", "--K", "32"], "--M/--N/--K, not both"),
    case(["run", "naive", "--size", "abc"], "argument --size: invalid int value: 'abc'"),
    case(["run", "naive", "--size", "64.5"], "argument --size: invalid int value: '64.5'"),
    case(["run", "smemtile", "--size", "48", "--no-time"], "multiples of BLOCKSIZE=32"),
    case(["run", "regtile2d", "--M", "256", "--N", "200", "--K", "32", "--no-time"],
         "N=200 must be a multiple of BN=128"),
    case(["run", "naive", "--M", "65536", "--N", "65536", "--K", "32", "--no-time"],
         "C has 4,294,967,296 elements, over the 2**31"),
    case(["run", "naive", "--M", "32", "--N", "32", "--K", "67108864", "--no-time"], "A has 2,147,483,648 elements"),
    # the Python front-end allocates A, B and C in either mode, the SASS front-end in full mode
    case(["run", "naive", "--size", "1024", "--no-time", "--frontend", "python"],
         "1024x1024x1024 needs ~20.0 MiB for A, B and C, and this machine has 1.0 MiB available", avail=2 ** 20),
    case(["run", "naive", "--size", "256", "--mode", "full", "--no-time"],
         "256x256x256 needs ~1.2 MiB for A, B and C, and this machine has 0.0 MiB available", avail=1),
    # presets, modes, front-ends
    case(["run", "naive", "--arch", "v100"], "unknown arch 'v100'"),
    case(["run", "naive", "--mode", "bogus"], "argument --mode: invalid choice: 'bogus'"),
    case(["run", "naive", "--frontend", "bogus"], "argument --frontend: invalid choice: 'bogus'"),
    # the --trace timeline
    case(["run", "naive", "--trace", "--window", "0"], "--window takes a positive number of loop trips, got 0"),
    case(["run", "naive", "--trace", "--window", "-2"], "--window takes a positive number of loop trips, got -2"),
    case(["run", "naive", "--window", "4"], "add --trace"),
    case(["run", "naive", "--timeline", "{tmp}/t.json"], "add --trace"),
    case(["run", "naive", "--trace", "--no-time"], "cannot go with --no-time"),
    # outputs
    case(["run", "naive", *SMALL, "--save-trace", "{tmp}/no/such/t.npz"], "{tmp}/no/such does not exist"),
    case(["run", "naive", *SMALL, "--save-trace", "{tmp}/file/t.npz"], "{tmp}/file is not a directory"),
    case(["run", "naive", *SMALL, "--save-trace", "{tmp}"], "--save-trace {tmp} is a directory"),
    case(["run", "naive", "--size", "64", "--trace", "--timeline", "{tmp}/no/t.json"], "{tmp}/no does not exist"),
    case(["run", "naive", "--size", "64", "--trace", "--timeline", "{tmp}/file/t.json"], "is not a directory"),
    # argparse's own
    case(["run"], "the following arguments are required: kernel"),
    case(["bogus"], "invalid choice: 'bogus'"),
    case(["run", "naive", "--bogus"], "unrecognized arguments: --bogus"),
    case(["list", "extra"], "unrecognized arguments: extra"),
    # compare
    case(["compare", "nosuch", "--size", "1024", "--no-time"], "unknown kernel 'nosuch'"),
    case(["compare", "smemtil", "--size", "1024", "--no-time"], "did you mean smemtile?"),
    case(["compare", "--size", "0", "--no-time"], "--size must be a positive integer, got 0"),
    case(["compare", "--size", "-1024", "--no-time"], "--size must be a positive integer, got -1024"),
    case(["compare", "naive", "--size", "512", "--no-time"], "recorded sizes: 1024, 2048, 4096"),
    case(["compare", "--size", "x"], "argument --size: invalid int value: 'x'"),
    # hw record: refused before cupy is looked for
    case(["hw", "record", "--sizes", "abc"], "--sizes takes positive integers, got 'abc'"),
    case(["hw", "record", "naive", "--sizes", "0"], "--sizes takes positive integers, got '0'"),
    case(["hw", "record", "naive", "--sizes", "1024.5"], "got '1024.5'"),
    case(["hw", "record", "--sizes", "1024", "--param", "BN=64"], "--param needs the kernel(s) it applies to"),
    case(["hw", "record", "naive", "--param", "BN"], "--param takes NAME=VALUE, got 'BN'"),
    case(["hw"], "the following arguments are required"),
    # --set: preset fields (gpusim.arch.override), checked before anything runs
    case(["run", "naive", *SMALL, "--set", "l2_byte=1"], "no field 'l2_byte'; did you mean l2_bytes"),
    case(["run", "naive", *SMALL, "--set", "sm_count=1.5"], "sm_count takes an integer (H200: 132)"),
    case(["run", "naive", *SMALL, "--set", "dram_bandwidth_gbps=fast"], "dram_bandwidth_gbps takes a number"),
    case(["run", "naive", *SMALL, "--set", "dram_bandwidth_gbps=0"], "dram_bandwidth_gbps must be positive"),
    case(["run", "naive", *SMALL, "--set", "l2_hit_latency_cycles=-5"], "must be positive"),
    case(["run", "naive", *SMALL, "--set", "sm_count"], "--set takes FIELD=VALUE, got 'sm_count'"),
    case(["run", "naive", *SMALL, "--set", "sm_count=66,132"], "one value per --set field"),
    case(["run", "naive", *SMALL, "--arch", "a6000", "--set", "register_stall=pass"], "has no field 'register_stall'"),
    # --plot
    case(["run", "naive", *SMALL, "--plot", "{tmp}/p.png"], "cannot go with --no-time"),
    case(["run", "naive", "--size", "64", "--plot", "{tmp}/no/p.png"], "{tmp}/no does not exist"),
    case(["compare", "naive", "--size", "1024", "--no-time", "--plot", "{tmp}/p.png"], "cannot go with --no-time"),
    # sweep: every name and value, and the outputs, checked before any point runs
    case(["sweep", "nosuch"], "unknown kernel 'nosuch'"),
    case(["sweep", "regtile2d", "--param", "BN"], "--param takes NAME=V1,V2,..., got 'BN'"),
    case(["sweep", "regtile2d", "--param", "BN=64,"], "got 'BN=64,'"),
    case(["sweep", "regtile2d", "--param", "BN=64,x"], "parameter BN must be an integer, got 'x'"),
    case(["sweep", "regtile2d", "--param", "BX=64"], "unknown parameter 'BX'"),
    case(["sweep", "regtile2d", "--param", "BN=64", "--param", "BN=128"], "--param BN given twice"),
    case(["sweep", "regtile2d", "--sizes", "512,0"], "--sizes takes positive integers N1,N2,..., got '0'"),
    case(["sweep", "regtile2d", "--size", "512", "--sizes", "1024"], "not --size and --sizes"),
    case(["sweep", "regtile2d", "--size", "-512"], "--size must be a positive integer, got -512"),
    case(["sweep", "regtile2d", "--arch", "h200,v100"], "unknown arch 'v100'"),
    case(["sweep", "regtile2d", "--arch", "h200,"], "--arch takes NAME[,NAME...]"),
    case(["sweep", "regtile2d", "--set", "l2_byte=1,2"], "did you mean l2_bytes"),
    case(["sweep", "regtile2d", "--set", "sm_count=66,0"], "sm_count must be positive"),
    case(["sweep", "regtile2d", "--workers", "0"], "--workers takes a positive integer, got 0"),
    case(["sweep", "regtile2d", "--workers", "2", "--scheduler", "tcp://127.0.0.1:1"],
         "with --scheduler the cluster's own workers run the points"),
    case(["sweep", "regtile2d", "--plot", "{tmp}/p.png", "--no-time"], "cannot go with --no-time"),
    case(["sweep", "regtile2d", "--csv", "{tmp}/no/such/r.csv"], "{tmp}/no/such does not exist"),
    case(["sweep", "regtile2d", "--csv", "{tmp}"], "--csv {tmp} is a directory"),
]


@pytest.mark.parametrize("argv,msg,avail", CLI)
def test_a_bad_command_line_is_one_line_and_exit_2(argv, msg, avail, tmp_path, capsys, monkeypatch):
    (tmp_path / "file").write_text("")
    if avail is not None:
        monkeypatch.setattr(S, "available_bytes", lambda: avail)
    argv = [a.format(tmp=tmp_path) for a in argv]
    assert main(argv) == 2
    cap = capsys.readouterr()
    assert "Traceback" not in cap.err + cap.out
    assert cap.err.startswith("gpusim: error: ") and cap.err.count("\n") == 1, cap.err
    assert msg.format(tmp=tmp_path) in cap.err


API = [
    (dict(kernel="naive", M=64, params=["BLOCK"]), KernelConfigError, "naive: params must be a dict"),
    (dict(kernel="naive", M=64, params="BLOCK=32"), KernelConfigError, "params must be a dict"),
    (dict(kernel="regtile2d", M=256, N=256, K=32, params={"BN": 64.7}), KernelConfigError,
     "parameter BN must be an integer, got 64.7"),
    (dict(kernel="naive", M=64, params={"BLOCK": True}), KernelConfigError, "must be an integer, got True"),
    (dict(kernel="naive", M=64, params={"BLOCK": "32.0"}), KernelConfigError, "must be an integer"),
    (dict(kernel="naive", M=64.0), KernelConfigError, "size M must be a positive integer, got 64.0"),
    (dict(kernel="naive", M="64"), KernelConfigError, "size M must be a positive integer, got '64'"),
    (dict(kernel="naive", M=64, N=0), KernelConfigError, "size N must be a positive integer, got 0"),
    (dict(kernel="naive", M=True), KernelConfigError, "size M must be a positive integer, got True"),
    (dict(kernel="naive", M=65536, N=65536, K=32), KernelConfigError, "over the 2**31"),
    (dict(kernel="naive", M=64, arch="v100"), GpusimError, "unknown arch 'v100'"),
    (dict(kernel="naive", M=64, arch=5), GpusimError, "unknown arch 5"),
    (dict(kernel="naiv", M=64), UnknownKernel, "did you mean naive?"),
    (dict(kernel=None, M=64), UnknownKernel, "got None"),
    (dict(kernel="naive", M=64, mode="bogus"), KernelConfigError, "mode must be"),
    (dict(kernel="naive", M=64, frontend="bogus"), KernelConfigError, "frontend must be"),
]


@pytest.mark.parametrize("kw,err,msg", API, ids=[f"api-{i}" for i in range(len(API))])
def test_a_bad_api_call_is_a_gpusim_error(kw, err, msg):
    kw = dict(kw)
    with pytest.raises(err) as e:
        gpusim.simulate(kw.pop("kernel"), kw.pop("M"), **kw)
    assert isinstance(e.value, GpusimError)
    assert msg in str(e.value) and "\n" not in str(e.value)


def test_the_table_is_at_least_45_cases():
    assert len(CLI) + len(API) >= 45


def test_the_memory_limit_leaves_the_sass_sampled_run_be(monkeypatch):
    """The SASS front-end in sampled mode allocates nothing of the matrices' size: no memory refusal."""
    monkeypatch.setattr(S, "available_bytes", lambda: 1)
    assert gpusim.simulate("naive", 1024, mode="sampled", frontend="sass").frontend == "sass"


def test_a_failing_write_is_one_line(tmp_path, capsys, monkeypatch):
    """A disk that fails under the write (full, removed) gives the one-line error too, and no partial file."""
    from gpusim.trace import trace as T

    def full(f):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(T.np, "savez_compressed", lambda f, **kw: full(f))
    assert main(["run", "naive", *SMALL, "--save-trace", str(tmp_path / "t.npz")]) == 2
    err = capsys.readouterr().err
    assert err == f"gpusim: error: naive: cannot write {tmp_path / 't.npz'}: No space left on device\n"
    assert list(tmp_path.iterdir()) == []
