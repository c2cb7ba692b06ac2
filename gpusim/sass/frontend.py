"""The SASS front-end as the estimate stage calls it: one CTA of a kernel's compiled twin.

A kernel's twin takes the arguments its spec declares (`KernelSpec.arguments`: the SGEMM's int M,
N, K; float alpha; const float *A, *B; float beta; float *C, or another list); they sit in constant
bank 0 from 0x210 on, in the CUDA ABI's layout (4-byte ints and floats, 8-byte pointers on 8-byte
boundaries).
"""
from __future__ import annotations

import functools
import struct

from gpusim.sass.compile import kernel_sass
from gpusim.sass.cta import CtaRun, Program
from gpusim.sass.state import Allocation, GlobalMemory
from gpusim.sass.listing import parse_listing

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


def run_cta(prog: Program, grid, block, bidx, weight, mem: GlobalMemory, problem, bases, cta_id: int,
            sample_loops: bool, window: int | None = None, loop_trips: bool = False, args=SGEMM_ARGS):
    """Run one CTA; (its trace, the notes of its loop sampler[, (header, trips, trips recorded) per loop]).
    args: the kernel's arguments in order (default the SGEMM's); problem: (M, N, K, alpha, beta)."""
    M, N, K, alpha, beta = problem
    words = param_words(args, {"M": M, "N": N, "K": K, "alpha": alpha, "beta": beta, **bases})
    run = CtaRun(prog, block, bidx, grid, words, mem, weight, sample_loops, window).run()
    if loop_trips:
        return run.trace(cta_id), run.notes, run.loop_trips
    return run.trace(cta_id), run.notes
