"""The Python kernels: the readable statement of each algorithm and the functional oracle.

Each reads like its CUDA twin statement for statement, with no SASS in it (the counts come from the
compiled twin, gpusim.sass); here they must compute C, refuse what their twin cannot take, and
count what their own source does consistently between sampled and full runs."""
import re
from pathlib import Path

import pytest

import gpusim
from gpusim.errors import KernelConfigError, LaunchError
from gpusim.kernel import KernelSpec, get_kernel, list_kernels
from gpusim.kernel.opcodes import BASE_PIPE
from gpusim.sass.compile import CompilerMissing, find_tool
from tests.kernel_sizes import PICKED, small_size

KERNELS = list_kernels()
ROOT = Path(__file__).resolve().parents[2]
# one other parameter set of some kernels, with a size it takes
OTHER = {"naive": ({"BLOCK": 16}, (37, 45, 23)), "coalesced": ({"BLOCKSIZE": 16}, (45, 37, 19)),
         "smemtile": ({"BLOCKSIZE": 16}, (48, 32, 64)), "regtile1d": ({"TM": 4, "BK": 16}, (64, 128, 48)),
         "regtile2d": ({"BN": 64, "TM": 4}, (128, 128, 24)), "vectorized": ({"BM": 64}, (128, 256, 16)),
         "tiled32": ({"BM": 16, "BN": 64, "BK": 16}, (32, 128, 48)), "regblock": ({"BN": 128}, (256, 256, 16)),
         "dbuf": ({"BK": 16}, (128, 128, 48))}
# parameter sets and sizes each kernel must refuse, with the words of the refusal
BAD = [("naive", {"BLOCK": 64}, (64, 64, 64), KernelConfigError, "1024"),
       ("coalesced", {"BLOCKSIZE": 33}, (64, 64, 64), KernelConfigError, "1024"),
       ("smemtile", {}, (48, 64, 64), KernelConfigError, "multiples of BLOCKSIZE"),
       ("regtile1d", {"TM": 4}, (128, 128, 64), KernelConfigError, "one element per thread"),
       ("regtile2d", {}, (256, 200, 32), KernelConfigError, "N=200 must be a multiple of BN=128"),
       ("vectorized", {"TN": 2}, (256, 256, 32), KernelConfigError, "multiples of 4"),
       ("tiled32", {"BM": 64}, (64, 64, 64), KernelConfigError, "more than 1024"),
       ("tiled32", {"BK": 256}, (32, 32, 256), LaunchError, "shared memory"),
       ("regblock", {"BK": 3}, (128, 64, 48), KernelConfigError, "staging loop"),
       ("dbuf", {"TM": 2}, (256, 256, 32), KernelConfigError, "multiples of 4"),
       ("regtile2d", {"BN": 64.7}, (256, 256, 32), KernelConfigError, "integer")]


def test_every_ladder_kernel_and_dbuf_is_found():
    assert set(PICKED) <= set(KERNELS)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("which", ["defaults", "other"])
def test_values_match_numpy(kernel, which):
    if which == "other" and kernel not in OTHER:
        pytest.skip(f"{kernel}: no other parameter set picked")
    params, size = ({}, small_size(kernel)) if which == "defaults" else OTHER[kernel]
    r = gpusim.simulate(kernel, *size, params=params, mode="full", frontend="python")
    assert r.max_rel_error < 1e-5


# every kernel in the slow run (about 10 s each; the SASS front-end's twin, tests/sass/test_cta.py, keeps one in the
# default run)
@pytest.mark.parametrize("kernel", [pytest.param(k, marks=pytest.mark.slow) for k in KERNELS])
def test_sampled_equals_full(kernel):
    """The Python source's own counts: sampled loops and CTA classes stand for the rest exactly."""
    M, N, K = small_size(kernel)
    M, N, K = 2 * M, 2 * N, 8 * K
    full = gpusim.simulate(kernel, M, N, K, mode="full", frontend="python")
    samp = gpusim.simulate(kernel, M, N, K, mode="sampled", frontend="python")
    assert samp.ctas_simulated < full.ctas_simulated
    assert samp.inst_executed_per_opcode == full.inst_executed_per_opcode
    assert samp.metrics == full.metrics


@pytest.mark.parametrize("kernel,params,size,err,match", BAD, ids=[f"{b[0]}-{i}" for i, b in enumerate(BAD)])
def test_bad_configurations_are_refused(kernel, params, size, err, match):
    with pytest.raises(err, match=match):
        gpusim.simulate(kernel, *size, params=params, frontend="python")
    # the SASS front-end: the same refusal, or, where the twin must be compiled and this machine has no
    # nvcc, the refusal for want of one (the Python kernel's refusal is then all there is to test)
    expected = err if err is not LaunchError or find_tool("nvcc") else CompilerMissing
    with pytest.raises(expected, match=match if expected is err else "no committed SASS"):
        gpusim.simulate(kernel, *size, params=params, frontend="sass")


@pytest.mark.parametrize("path", sorted((ROOT / "kernels_py").glob("*.py")), ids=lambda p: p.stem)
def test_no_sass_in_a_kernel_file(path):
    """No opcode counts, per-block tables or issue-order rules: the SASS comes from the compiler."""
    src = path.read_text()
    assert "k.op(" not in src and "k.ops(" not in src
    keys = {m.group(1) for m in re.finditer(r'"([A-Z][A-Z0-9]*)(?:\.[A-Z0-9_]+)*"\s*:\s*\d', src)}
    assert not keys & set(BASE_PIPE), f"an opcode count table: {sorted(keys & set(BASE_PIPE))}"


def test_a_kernel_without_a_twin_runs_its_python_source_and_says_so():
    spec = get_kernel("smemtile")
    mine = KernelSpec(name="mytile", fn=spec.fn, params=dict(spec.params), launch=spec.launch,
                      check=spec.check, grid_period=spec.grid_period)
    r = gpusim.simulate(mine, 64, 64, 64, mode="full")
    assert r.frontend == "python" and r.max_rel_error < 1e-5
    assert any("Python kernel" in n and "no CUDA twin" in n for n in r.notes)
