"""Property tests of the exact counters against brute force written from the rules' statements, not
from the model's code: misaligned global accesses byte by byte, the textbook 32-bit bank rule, and
random instruction sequences through the whole path (kernel context -> per-warp trace -> counters)."""
import numpy as np
from hypothesis import given, settings, strategies as st

from gpusim.kernel.context import Ctx, Sampler
from gpusim.memory import global_sectors_and_lines, shared_wavefronts
from gpusim.memory.counters import count_metrics
from gpusim.trace.trace import trace_from_ctx


def sectors_lines_by_byte(addr, nbytes):
    """Every byte each active lane touches, and the 32-B sectors and 128-B lines holding them."""
    touched = {b for a in addr if a >= 0 for b in range(a, a + nbytes)}
    return len({b // 32 for b in touched}), len({b // 128 for b in touched})


def textbook_32bit(addr):
    """CUDA's rule for 32-bit accesses: lanes reading one word share it (broadcast); a bank serves one
    distinct word per wavefront, so the wavefronts are the most distinct words any bank holds."""
    words = {a // 4 for a in addr if a >= 0}
    if not words:
        return 0, 0
    per_bank = {}
    for w in words:
        per_bank.setdefault(w % 32, set()).add(w)
    return max(len(v) for v in per_bank.values()), 1


@settings(max_examples=300, deadline=None)
@given(nbytes=st.sampled_from([1, 2, 4, 8, 16]),
       addr=st.lists(st.integers(min_value=-1, max_value=8191), min_size=32, max_size=32))
def test_misaligned_global_accesses_count_every_byte(nbytes, addr):
    """Any byte address, any width: a lane straddling a sector or line boundary touches both."""
    a = np.array(addr, np.int64)
    s, l = global_sectors_and_lines(a[None, :], nbytes)
    assert (int(s[0]), int(l[0])) == sectors_lines_by_byte(addr, nbytes)


@settings(max_examples=300, deadline=None)
@given(words=st.lists(st.integers(min_value=-1, max_value=255), min_size=32, max_size=32))
def test_32bit_shared_accesses_follow_the_textbook_rule(words):
    addr = np.array([-1 if w < 0 else 4 * w for w in words], np.int64)
    wf, ideal = shared_wavefronts(addr[None, :], 4)
    assert (int(wf[0]), int(ideal[0])) == textbook_32bit(addr.tolist())


# one instruction of a random program: (space, store, width in floats, index stride, offset, lanes on)
INSTR = st.tuples(st.sampled_from(["global", "shared"]), st.booleans(), st.sampled_from([1, 2, 4]),
                  st.sampled_from([0, 1, 2, 3, 4, 8, 32, 33]), st.integers(0, 64), st.integers(1, 64))


@settings(max_examples=120, deadline=None)
@given(program=st.lists(INSTR, min_size=1, max_size=12))
def test_instruction_sequences_sum_to_the_brute_force(program):
    """A 64-thread CTA (two warps) runs a random mix of widths, spaces, strides and divergence; the
    counters equal per-warp, per-instruction brute force summed over the program. (64- and 128-bit
    shared rows take the model's per-row rule, which tests/memory/test_shared_banks.py holds to the
    H200's measured patterns: what this tests is the slicing into warps, the masks and the sums.)"""
    k = Ctx("prop", (1, 1, 1), (64, 1, 1), (0, 0, 0), Sampler(False), 48 * 1024)
    G = k.global_array("G", np.zeros(64 * 4 * 33 + 512, np.float32), 1 << 20)
    S = k.shared("S", 64 * 4 * 33 + 512)
    want = {"requests": 0, "sectors": 0, "wavefronts": 0, "shared_inst": 0}
    for space, store, vec, stride, off, on in program:
        idx = vec * (k.tid * stride + off)            # vector-aligned element index
        arr = G if space == "global" else S
        with k.where(k.tid < on):
            if store:
                arr.st(idx, (1.0,) * vec if vec > 1 else 1.0, vec=vec)
            else:
                arr.ld(idx, vec=vec)
        for w in range(2):
            lanes = [t for t in range(32 * w, 32 * w + 32) if t < on]
            if not lanes:
                continue
            byte = [arr.base_addr + 4 * int(idx[t]) if t < on else -1 for t in range(32 * w, 32 * w + 32)]
            if space == "global":
                want["requests"] += 1
                want["sectors"] += sectors_lines_by_byte(byte, 4 * vec)[0]
            else:
                want["shared_inst"] += 1
                wf = textbook_32bit(byte)[0] if vec == 1 else int(shared_wavefronts(np.array([byte]), 4 * vec)[0][0])
                want["wavefronts"] += wf
    m, _ = count_metrics(trace_from_ctx(k, 0))
    got = {"requests": sum(m[f"l1tex__t_requests_pipe_lsu_mem_global_op_{d}.sum"] for d in ("ld", "st")),
           "sectors": sum(m[f"l1tex__t_sectors_pipe_lsu_mem_global_op_{d}.sum"] for d in ("ld", "st")),
           "wavefronts": sum(m[f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{d}.sum"] for d in ("ld", "st")),
           "shared_inst": sum(m[f"smsp__sass_inst_executed_op_shared_{d}.sum"] for d in ("ld", "st"))}
    assert got == want
    assert m["smsp__inst_executed.sum"] == sum(1 + (on > 32) for *_, on in program)
