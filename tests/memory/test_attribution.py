"""Counters by array and by instruction: they add up to the whole-kernel counters, on both front-ends."""
import pytest

import gpusim
from gpusim.testing import (array_counters, assert_no_bank_conflicts, assert_sectors_per_request,
                            assert_wavefronts_per_request)

TOTALS = {   # (space, kind) -> (by_array counter, whole-kernel metric)
    ("global", "loads"): [("instructions", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
                          ("sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")],
    ("global", "stores"): [("instructions", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"),
                           ("sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum")],
    ("global", "reductions"): [("sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum")],
    ("shared", "loads"): [("instructions", "smsp__sass_inst_executed_op_shared_ld.sum"),
                          ("wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"),
                          ("bank_conflicts", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum")],
    ("shared", "stores"): [("instructions", "smsp__sass_inst_executed_op_shared_st.sum"),
                           ("wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum")],
}


@pytest.mark.parametrize("kernel,frontend", [("regtile2d", "sass"), ("regtile2d", "python"),
                                             ("transpose_pad", "python"), ("reduce_atomic", "sass")])
def test_arrays_and_instructions_add_up_to_the_totals(kernel, frontend):
    r = gpusim.simulate(kernel, 256, frontend=frontend)
    for (space, kind), pairs in TOTALS.items():
        for counter, metric in pairs:
            arrays = sum(a[kind][counter] for a in r.by_array.values() if a["space"] == space and kind in a)
            instrs = sum(i[counter] for i in r.by_instruction if i["space"] == space and i["kind"] == kind)
            assert arrays == instrs == r.metrics.get(metric, 0), (space, kind, counter)


def test_global_arrays_by_their_argument_names():
    r = gpusim.simulate("transpose_naive", 256)
    assert set(r.by_array) == {"A", "B"}
    assert_sectors_per_request(r, "A", 4)                      # rows read along: 32 floats, 4 sectors
    assert_sectors_per_request(r, "B", 32, kind="stores")      # columns written: a sector per lane


def test_shared_arrays_by_the_python_kernels_names():
    pad = gpusim.simulate("transpose_pad", 256, frontend="python")
    plain = gpusim.simulate("transpose_smem", 256, frontend="python")
    assert_wavefronts_per_request(pad, "tile", 1)
    assert_no_bank_conflicts(pad, "tile")
    assert_wavefronts_per_request(plain, "tile", 32)           # a column of a 32-wide tile: one bank
    sass = gpusim.simulate("transpose_pad", 256)
    assert "tile" not in sass.by_array and sass.by_array["shared"]["space"] == "shared"


def test_instructions_say_where():
    sass = gpusim.simulate("copy4", 256)
    assert [i["opcode"] for i in sass.by_instruction] == ["LDG.E.128", "STG.E.128"]
    assert all(i["where"].startswith("0x") and i["sass"].startswith(i["opcode"]) for i in sass.by_instruction)
    py = gpusim.simulate("copy4", 256, frontend="python")
    assert [i["where"].split(":")[0] for i in py.by_instruction] == ["copy4.py", "copy4.py"]


def test_helpers_fail_saying_what_was_found():
    r = gpusim.simulate("coalesced", 256)
    with pytest.raises(AssertionError, match=r"B loads: 4 sectors per request, claimed 8 \(instructions"):
        assert_sectors_per_request(r, "B", 8)
    with pytest.raises(AssertionError, match="no accesses to an array 'X'; arrays accessed: A, B, C"):
        array_counters(r, "X")
    with pytest.raises(AssertionError, match="B has no stores; it has loads"):
        array_counters(r, "B", "stores")
    with pytest.raises(AssertionError, match="in global memory: it has sectors"):
        assert_wavefronts_per_request(r, "B", 1)
