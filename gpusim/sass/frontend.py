"""The SASS front-end as the estimate stage calls it: one CTA of a kernel's compiled twin.

A kernel's twin takes the arguments its spec declares (`KernelSpec.arguments`: the SGEMM's int M,
N, K; float alpha; const float *A, *B; float beta; float *C, or another list); they sit in constant
bank 0 from 0x210 on, in the CUDA ABI's layout (4-byte ints and floats, 8-byte pointers on 8-byte
boundaries).
"""
from __future__ import annotations

import functools
import struct

import numpy as np

from gpusim.kernel.opcodes import TABLE
from gpusim.sass.compile import kernel_sass
from gpusim.sass.cta import CtaRun, NotUniform, Program
from gpusim.sass.loop_sampling import SynthesisMismatch
from gpusim.sass.state import Allocation, GlobalMemory
from gpusim.sass.listing import parse_listing
from gpusim.trace.trace import ROW_DTYPE, Trace

PARAM_BASE = 0x210
SGEMM_ARGS = (("M", "i32"), ("N", "i32"), ("K", "i32"), ("alpha", "f32"), ("A", "ptr"), ("B", "ptr"),
              ("beta", "f32"), ("C", "ptr"))


def param_words(args, values: dict) -> dict:
    """{constant-bank offset: 32-bit word} of the kernel arguments ((name, kind) pairs or `Arg`s)."""
    out, off = {}, PARAM_BASE
    for a in args:
        name, kind = (a.name, a.kind) if hasattr(a, "kind") else a
        v = values[name]
        if kind == "ptr":
            off = -(-off // 8) * 8
            out[off], out[off + 4] = v & 0xFFFFFFFF, (v >> 32) & 0xFFFFFFFF
            off += 8
        elif kind == "f32":
            out[off] = struct.unpack("<I", struct.pack("<f", float(v)))[0]
            off += 4
        else:
            out[off] = int(v) & 0xFFFFFFFF
            off += 4
    return out


@functools.lru_cache(maxsize=32)
def program(kernel: str, params_items: tuple) -> tuple[Program, object]:
    """(Program, Compiled) of the kernel's twin at these parameters (cached per process)."""
    comp = kernel_sass(kernel, dict(params_items))
    instrs = parse_listing(comp.sass, kernel)
    return Program(kernel, instrs, int(comp.ptxas.get("shared_bytes", 0))), comp


def memory(arrays: dict, bases: dict) -> GlobalMemory:
    """arrays: name -> float32 ndarray (values) or int (bytes, addresses only)."""
    allocs = []
    for name, a in arrays.items():
        if isinstance(a, int):
            allocs.append(Allocation(name, bases[name], a, None))
        else:
            allocs.append(Allocation(name, bases[name], a.nbytes, a.reshape(-1).view("<u4")))
    return GlobalMemory(allocs)


SYNTHESIZE = True       # timing windows: periodic trips written from the last period's (loop_sampling)
BATCH_LANES = 4096      # threads of the CTAs run side by side at most (the loop sampler keeps 34 copies
                        # of their registers: at 4096 lanes, about 170 MB)


def _runs(prog: Program, grid, block, ctas: list, mem: GlobalMemory, problem, bases, first_id: int,
          sample_loops: bool, window, args, progress):
    """The runs of run_ctas: (CtaRun, CTA ids, weights) for each batch run side by side or CTA run alone."""
    M, N, K, alpha, beta = problem
    words = param_words(args, {"M": M, "N": N, "K": K, "alpha": alpha, "beta": beta, **bases})
    threads = block[0] * block[1] * block[2]
    step = max(1, BATCH_LANES // (-(-threads // 32) * 32))
    if mem.has_values or prog.uses_local:
        step = 1
    done = 0

    def one(blocks, weight):
        """The run; a window whose synthesized trips the run contradicts is run again in full."""
        try:
            return CtaRun(prog, block, blocks, grid, words, mem, weight, sample_loops, window, SYNTHESIZE).run()
        except SynthesisMismatch:
            return CtaRun(prog, block, blocks, grid, words, mem, weight, sample_loops, window, False).run()

    for i in range(0, len(ctas), step):
        part = ctas[i:i + step]
        ids = list(range(first_id + i, first_id + i + len(part)))
        if len(part) > 1:
            try:
                run = one([b for b, _ in part], 1)
            except NotUniform:
                run = None
            if run is not None:
                yield run, ids, [w for _, w in part]
                done += len(part)
                if progress:
                    progress(done)
                continue
        for (b, w), cid in zip(part, ids):
            yield one(b, w), [cid], [1]
            done += 1
            if progress:
                progress(done)


def run_ctas(prog: Program, grid, block, ctas: list, mem: GlobalMemory, problem, bases, first_id: int,
             sample_loops: bool, window: int | None = None, args=SGEMM_ARGS, progress=None, by_warp: bool = False):
    """Run the CTAs `ctas` ((block index, weight) pairs; ids first_id, first_id + 1, ...): [(trace, notes,
    (header, trips, trips recorded) per loop)] per CTA. Without values in memory (addresses only) and
    without local memory, they run side by side, as many as BATCH_LANES threads hold, as long as they
    execute alike (else one by one: the same traces, only slower). progress(done) after each. by_warp:
    each trace's rows warp by warp (CtaRun.traces), as run_ctas_joined's."""
    out = []
    for run, ids, weights in _runs(prog, grid, block, ctas, mem, problem, bases, first_id, sample_loops,
                                   window, args, progress):
        out += [(t, run.notes, run.loop_trips) for t in run.traces(ids, weights, by_warp)]
    return out


def run_ctas_joined(prog: Program, grid, block, ctas: list, mem: GlobalMemory, problem, bases, first_id: int,
                    sample_loops: bool, window: int | None = None, args=SGEMM_ARGS, progress=None):
    """run_ctas with the CTAs' traces as one (Trace.concat of run_ctas' traces with by_warp, the same rows
    and addresses; a batch run side by side makes its part in place, CtaRun.joined): (trace, each CTA's end
    in its rows, in its addresses, [(notes, loops)] per CTA)."""
    parts, info = [], []
    for run, ids, weights in _runs(prog, grid, block, ctas, mem, problem, bases, first_id, sample_loops,
                                   window, args, progress):
        parts.append(run.join_part(ids, weights))
        info += [(run.notes, run.loop_trips)] * len(ids)
    # every run's part written into one trace's arrays (a trace per run, then their concatenation, copied
    # each row and address twice)
    rows_at = np.cumsum([0] + [p.n_rows for p in parts])
    addr_at = np.cumsum([0] + [p.n_mem for p in parts])
    rows, addr = np.empty(int(rows_at[-1]), ROW_DTYPE), np.empty((int(addr_at[-1]), 32), np.int64)
    for p, r0, r1, a0, a1 in zip(parts, rows_at, rows_at[1:], addr_at, addr_at[1:]):
        p.fill(rows[r0:r1], addr[a0:a1], int(a0))
    return (Trace(rows, addr, list(TABLE.ids), costed=False),
            np.concatenate([p.row_ends + r0 for p, r0 in zip(parts, rows_at)]) if parts else np.zeros(0, np.int64),
            np.concatenate([p.addr_ends + a0 for p, a0 in zip(parts, addr_at)]) if parts else np.zeros(0, np.int64),
            info)


def run_cta(prog: Program, grid, block, bidx, weight, mem: GlobalMemory, problem, bases, cta_id: int,
            sample_loops: bool, window: int | None = None, loop_trips: bool = False, args=SGEMM_ARGS):
    """Run one CTA; (its trace, the notes of its loop sampler[, (header, trips, trips recorded) per loop]).
    args: the kernel's arguments in order (default the SGEMM's); problem: (M, N, K, alpha, beta)."""
    trace, notes, loops = run_ctas(prog, grid, block, [(bidx, weight)], mem, problem, bases, cta_id,
                                   sample_loops, window, args)[0]
    return (trace, notes, loops) if loop_trips else (trace, notes)
