"""Trace files: save/load round trip and clear errors for bad files."""
import numpy as np
import pytest

import gpusim
from gpusim.errors import RecordError
from gpusim.trace.trace import Trace


def test_save_load_round_trip(tmp_path):
    """A saved trace loads back identical."""
    r = gpusim.simulate("naive", 64, 64, 16, mode="full", keep_trace=True)
    p = tmp_path / "t.npz"
    r.trace.save(p)
    t = Trace.load(p)
    assert np.array_equal(t.rows, r.trace.rows)
    assert np.array_equal(t.addr, r.trace.addr)
    assert t.opcodes == r.trace.opcodes


def test_bad_file_is_a_record_error(tmp_path):
    p = tmp_path / "bad.npz"
    p.write_bytes(b"not a trace")
    with pytest.raises(RecordError):
        Trace.load(p)


def test_wrong_schema_is_a_record_error(tmp_path):
    p = tmp_path / "old.npz"
    np.savez(p, schema=np.array("gpusim.trace/0"), rows=np.zeros(0), addr=np.zeros(0), opcodes=np.array([]))
    with pytest.raises(RecordError, match="schema"):
        Trace.load(p)


def test_simulation_is_deterministic():
    """Same input, same counters and the same trace."""
    a = gpusim.simulate("naive", 96, 64, 40, keep_trace=True)
    b = gpusim.simulate("naive", 96, 64, 40, keep_trace=True)
    assert a.metrics == b.metrics
    assert np.array_equal(a.trace.rows, b.trace.rows)
