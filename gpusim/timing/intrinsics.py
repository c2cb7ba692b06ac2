"""numba helpers of the cycle loop: a CPU prefetch, arrays without reference counts for the units' calls,
and the unit modules whose edits make the compiled loop stale."""
from __future__ import annotations

import os

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def prefetch(typingctx, arr, i):
    """Ask the CPU to bring row i of a C-contiguous array into its caches (LLVM's prefetch: read, keep in
    every level). A warp's rows, and the per-row arrays beside them, are first read when the warp comes
    to them; with 16 or more warps each reading its own stretch of a 50-MB matrix the CPU's own
    prefetchers miss most of those reads (perf: the first read of a row took 1/8 of the loop)."""
    if not isinstance(arr, types.Array):
        return None

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        idx = [context.cast(builder, args[1], signature.args[1], types.intp)]
        idx += [context.get_constant(types.intp, 0)] * (aryty.ndim - 1)
        ptr = cgutils.get_item_pointer2(context, builder, ary.data, cgutils.unpack_tuple(builder, ary.shape),
                                        cgutils.unpack_tuple(builder, ary.strides), aryty.layout, idx,
                                        wraparound=False, boundscheck=False)
        i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
                                            "llvm.prefetch.p0i8")
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()
    return types.void(arr, i), codegen


def _borrowed(context, builder, ty, val):
    if isinstance(ty, types.Array):
        src = context.make_array(ty)(context, builder, val)
        out = context.make_array(ty)(context, builder)
        out.meminfo = cgutils.get_null_value(out.meminfo.type)
        out.parent = cgutils.get_null_value(out.parent.type)
        out.nitems, out.itemsize, out.data = src.nitems, src.itemsize, src.data
        out.shape, out.strides = src.shape, src.strides
        return out._getvalue()
    if isinstance(ty, types.BaseTuple):
        return context.make_tuple(builder, ty, [_borrowed(context, builder, t, builder.extract_value(val, i))
                                                for i, t in enumerate(ty)])
    return val


@intrinsic
def borrow(typingctx, x):
    """x (an array, or a tuple or namedtuple holding arrays) as views without numba's reference count: the
    cycle loop passes each unit its state arrays, and numba counts a reference at every call for every
    array argument (an atomic add and a release, even in a function inlined at the IR level: the bookkeeping
    of a state change as a helper made the loop 2.2x slower). The views must not outlive the arrays:
    borrow only what the caller keeps alive while the views are used (engine.run's arrays: run borrows them
    before its loop and keeps the owners in a tuple that it unpacks again after the loop)."""
    if not (isinstance(x, (types.Array, types.BaseTuple))):
        return None

    def codegen(context, builder, signature, args):
        return _borrowed(context, builder, signature.args[0], args[0])
    return x(x), codegen


# the modules whose njit functions make up the cycle loop (inlined into it, or called by it): an edit to any
# of them must compile the loop and the units' cached functions again (unit_sources)
UNIT_MODULES = ("states", "rows", "intrinsics", "accounting", "waiter_groups", "scheduler", "scoreboard",
                "math_pipes", "lsu", "l1tex", "memory_path", "barrier", "engine")


def unit_sources() -> tuple:
    """The unit modules' files, the sources (gpusim.jit.guard_cache) of every cached numba function of the
    units and the loop: an edit to any of them compiles those again, not only an edit to the function's own
    file, because the units' functions are inlined into the cycle loop from other files and numba freezes
    the constants it reads from other modules (rows.py's, states.py's) into the code."""
    here = os.path.dirname(os.path.abspath(__file__))
    return tuple(os.path.join(here, name + ".py") for name in UNIT_MODULES)
