"""Run a kernel over its grid and count what the hardware would execute.

Two ways, with the same totals:
  * full: every CTA, every loop iteration (used to check values and as the
    reference for the fast path);
  * sampled: CTAs grouped into classes (first, last, and middle ones by their
    residue modulo the grid's 128-B alignment period) and periodic loops run
    for a few iterations standing for the rest (`Sampler`). Every row carries
    the weight of what it stands for, so totals stay exact for kernels whose
    addresses are affine in blockIdx and the loop counter; tests compare the
    two ways at small sizes for every kernel.
"""
from __future__ import annotations

import functools
import itertools
import os
import time
from dataclasses import dataclass, field

import numpy as np

from gpusim.arch import arch_overrides, get_arch, GPU
from gpusim.errors import KernelConfigError
from gpusim.estimate.occupancy import occupancy, Occupancy
from gpusim.sass.registers import ptxas_info
from gpusim.kernel.context import Ctx, Sampler
from gpusim.kernel.spec import gemm_args, get_kernel, KernelSpec
from gpusim.memory.counters import cost_trace, count_metrics
from gpusim.memory import attribution
from gpusim.trace.trace import Trace, trace_from_ctx

ALIGN = 1 << 21           # cudaMalloc returns at least 256-B aligned blocks; we use 2 MiB
BASE = 0x7F00_0000_0000
INT_INDEX = 2 ** 31       # the CUDA twins index A, B and C with int
# the full mode's seconds per FMA and per thread per K (the emulator, one core; fitted to naive at 256
# and 512 and regtile2d at 512, 9.6, 73 and 23 s, within 1.5x for the other kernels), and when to warn
FULL_S_PER_FMA, FULL_S_PER_THREAD_K, FULL_WARN_S = 1.7e-7, 4e-7, 60


@dataclass
class SimResult:
    kernel: str
    arch: str
    M: int
    N: int
    K: int
    params: dict
    grid: tuple
    block: tuple
    mode: str
    metrics: dict
    inst_executed_per_opcode: dict
    occupancy: Occupancy
    registers_source: str | None
    ctas_simulated: int
    wall_s: float
    bases: dict = field(default_factory=dict)   # array name -> base byte address
    # memory counters per array (global arrays by their argument names; shared ones by the Python kernel's
    # names, or "shared" for the SASS) and per memory instruction: gpusim.memory.attribution
    by_array: dict = field(default_factory=dict)
    by_instruction: list = field(default_factory=list)
    max_rel_error: float | None = None       # full mode: ||out - ref|| / ||ref||, the worst output
    trace: Trace | None = None
    notes: list = field(default_factory=list)
    frontend: str = "python"                 # "sass": the compiled twin's instruction stream; "python": the source's
    warnings: list = field(default_factory=list)   # one line each: the run's cost, a damaged record, ...
    # the GPU it ran on, a preset or one with fields changed (--set): the timing and the cache model read
    # this one, not the preset of its name
    gpu: GPU | None = field(default=None, repr=False)
    loop_trips: int = 0        # the SASS front-end's longest loop's trips in the simulated CTAs (0: none or unknown)

    def to_json(self) -> dict:
        out = {"kernel": self.kernel, "arch": self.arch, "M": self.M, "N": self.N, "K": self.K,
               "params": self.params, "grid": list(self.grid), "block": list(self.block),
               "mode": self.mode, "frontend": self.frontend, "metrics": self.metrics,
               "inst_executed_per_opcode": self.inst_executed_per_opcode,
               "time_ms": None, "cycles": None, "stalls": None, "notes": list(self.notes),
               "warnings": list(self.warnings)}
        changed = arch_overrides(self.gpu) if self.gpu is not None else {}
        if changed:     # only where --set changed fields: a preset's output stays as it was
            out["arch_overrides"] = changed
        return out


def _classes(g: int, period: int, sampled: bool):
    """(representative index, weight) covering 0..g-1."""
    if not sampled or g <= 2 + period:
        return [(i, 1) for i in range(g)]
    out = [(0, 1), (g - 1, 1)]
    mid = g - 2
    for r in range(period):
        out.append((1 + r, len(range(r, mid, period))))
    return out


@functools.lru_cache(maxsize=1)
def _random_inputs(sizes: tuple, seed: int):
    rng = np.random.default_rng(seed)
    out = tuple(rng.random(n, dtype=np.float32) * 2 - 1 for n in sizes)
    for a in out:
        a.flags.writeable = False
    return out


def _arrays(spec, M: int, N: int, K: int) -> list:
    """[(name, elements, role)] of the kernel's arrays (the SGEMM's A, B, C without a spec)."""
    if spec is None:
        return [(a.name, a.elems(M, N, K), a.role) for a in gemm_args() if a.kind == "ptr"]
    return get_kernel(spec).arrays(M, N, K)


def make_inputs(M: int, N: int, K: int, seed: int = 0, spec=None) -> dict:
    """Every array random in [-1, 1): the read-only ones shared between calls (kernels never write
    them), a fresh copy of each one the kernel writes. Drawing 4096^2 floats takes ~0.5 s, and one
    `gpusim run` asks for them several times."""
    arrs = _arrays(spec, M, N, K)
    vals = _random_inputs(tuple(n for _, n, _ in arrs), seed)
    return {nm: (v if role == "in" else v.copy()) for (nm, _, role), v in zip(arrs, vals)}


def layout(M: int, N: int, K: int, spec=None) -> dict:
    """Base addresses of the kernel's arrays, in argument order (2-MiB aligned with a 2-MiB gap, as
    large cudaMallocs are); without a spec, the SGEMM's A, B, C."""
    bases, addr = {}, BASE
    for nm, n, _ in _arrays(spec, M, N, K):
        bases[nm] = addr
        addr += -(-(n * 4) // ALIGN) * ALIGN + ALIGN
    return bases


def array_bytes(spec, M: int, N: int, K: int) -> dict:
    """{array name: bytes} of the kernel's arrays."""
    return {nm: 4 * n for nm, n, _ in _arrays(spec, M, N, K)}


def available_bytes() -> int | None:
    """Memory this machine can still give (MemAvailable; free pages where /proc has no meminfo)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def allocated_bytes(M: int, N: int, K: int, spec=None) -> int:
    """What `allocate` and a run hold of the arrays: each once, and the arrays the kernel writes twice
    more (the run's copy and the reference's)."""
    return sum(4 * n * (1 if role == "in" else 3) for _, n, role in _arrays(spec, M, N, K))


def check_size(name: str, M: int, N: int, K: int, allocates: bool, spec=None):
    """Refuse a size the twins' int indices overflow, or whose arrays this machine cannot hold."""
    for nm, n, _ in _arrays(spec, M, N, K):
        if n >= INT_INDEX:
            raise KernelConfigError(f"{name}: {M}x{N}x{K}: {nm} has {n:,} elements, over the 2**31 an int "
                                    "index reaches (the CUDA twins index with int)")
    if not allocates:
        return
    need, have = allocated_bytes(M, N, K, spec), available_bytes()
    if have is not None and need > have:
        def size(n):
            return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:.1f} MiB"
        names = [nm for nm, _, _ in _arrays(spec, M, N, K)]
        which = ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]
        raise KernelConfigError(f"{name}: {M}x{N}x{K} needs ~{size(need)} for {which}, and this machine "
                                f"has {size(have)} available")


def full_mode_seconds(M: int, N: int, K: int, grid: tuple, block: tuple) -> float:
    """A rough estimate of the full mode's run: it grows with the FMAs and the threads' K-loop trips."""
    threads = int(np.prod(grid)) * int(np.prod(block))
    return FULL_S_PER_FMA * M * N * K + FULL_S_PER_THREAD_K * threads * K


def allocate(M: int, N: int, K: int, seed: int, spec=None):
    """Random arrays ({name: values}) and their base addresses (`layout`)."""
    return make_inputs(M, N, K, seed, spec), layout(M, N, K, spec)


def _use_listing(kernel, p, comp, traces, size):
    """Hand the timing stage the SASS that ran, with each instruction's executed count (warp-level)."""
    from gpusim.timing.control_codes import use_listing
    counts: dict = {}
    for t in traces:
        pcs = t.rows["pc"].astype(np.int64)
        c = np.bincount(pcs // 16, weights=t.rows["weight"].astype(np.float64))
        for i in np.flatnonzero(c):
            counts[16 * int(i)] = counts.get(16 * int(i), 0.0) + float(c[i])
    from gpusim.sass.compile import describe
    use_listing(kernel, p, comp.sass, describe(comp), counts, size)


def rel_errors(out: dict, ref: dict) -> dict:
    """{output: its relative Frobenius error ||out - ref|| / ||ref||} (inf where ref is 0 and out is not)."""
    errs = {}
    for nm, want in ref.items():
        diff = float(np.linalg.norm(np.asarray(out[nm], np.float64).reshape(-1) - want))
        den = float(np.linalg.norm(want))
        errs[nm] = diff / den if den else (0.0 if diff == 0 else float("inf"))
    return errs


def scalar_values(M: int, N: int, K: int, alpha: float, beta: float) -> dict:
    return {"M": M, "N": N, "K": K, "alpha": alpha, "beta": beta}


def run_cta(spec, p, gpu, grid, block, bidx, weight, sampler, arrays, bases, problem, cta_id, sanitizer=None):
    """Run one CTA of the kernel; returns its per-warp trace and its static shared bytes."""
    scalars = scalar_values(*problem)
    k = Ctx(spec.name, grid, block, bidx, sampler, gpu.shared_per_block_static_bytes, sanitizer)
    k._weight = weight
    args = [k.global_array(a.name, arrays[a.name], bases[a.name]) if a.kind == "ptr" else scalars[a.name]
            for a in spec.arguments]
    spec.fn(k, *args, **p)
    return cost_trace(trace_from_ctx(k, cta_id)), k.shared_bytes


def simulate(kernel: str | KernelSpec, M: int, N: int | None = None, K: int | None = None, *,
             arch: str | GPU = "h200", params: dict | None = None, mode: str = "auto",
             alpha: float | None = None, beta: float | None = None, seed: int = 0, keep_trace: bool = False,
             progress=None, frontend: str = "auto", sanitizer=None, warn=None) -> SimResult:
    """Simulate `kernel` on an M x N x K problem and return its counters (ncu names).

    What it computes is the kernel's own (its spec's `computes`; an SGEMM's C = alpha*A*B + beta*C).
    The kernel's arrays (its spec's `arguments`: A, B, C of an SGEMM) start random in [-1, 1); its
    i32 arguments are M, N, K and its f32 ones alpha and beta, by default as the recorded CUDA
    launches pass them (KernelSpec.launch_scalars: 1.5 and 0.5; 1 and 0 for an SGEMM computing
    C = A*B). The counts do not depend on them: a kernel that reads C for beta*C reads it whatever
    beta is, in the SASS as in its CUDA source, and its counts include that read.

    mode: "full" (every CTA and iteration, and C checked against numpy),
    "sampled" (exact totals from CTA classes and loop residues), or "auto"
    (full for small launches, sampled otherwise). `progress(done, total)` is
    called after each simulated CTA.

    frontend: "sass" runs the compiled twin's SASS (`gpusim.sass`: committed under traces/static/,
    cached, or compiled now), whose instruction stream is what the hardware executes; "python"
    runs the kernel's Python version and counts what its source does; "auto" (default): the SASS
    where it can be had, else the Python version with a note saying so.
    sanitizer: a `gpusim.kernel.sanitizer.Sanitizer` that watches the Python kernel's accesses
    (needs mode="full" and frontend="python"; `gpusim.estimate.check` drives it).
    warn(text) is called, before the run, with a warning of its cost (the full mode at large sizes);
    the result's `warnings` keeps them.
    """
    t0 = time.perf_counter()
    spec = get_kernel(kernel)
    gpu = get_arch(arch)
    N = M if N is None else N
    K = M if K is None else K
    for nm, v in (("M", M), ("N", N), ("K", K)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v <= 0:
            raise KernelConfigError(f"{spec.name}: size {nm} must be a positive integer, got {v!r}")
    M, N, K = int(M), int(N), int(K)
    check_size(spec.name, M, N, K, allocates=False, spec=spec)
    p = spec.resolve(params)
    if alpha is None or beta is None:
        a0, b0 = spec.launch_scalars()
        alpha, beta = a0 if alpha is None else alpha, b0 if beta is None else beta
    spec.check(M, N, K, **p)
    grid, block = spec.launch(M, N, K, **p)
    grid, block = tuple(grid) + (1,) * (3 - len(grid)), tuple(block) + (1,) * (3 - len(block))
    threads = block[0] * block[1] * block[2]

    if mode == "auto":
        mode = "full" if grid[0] * grid[1] * grid[2] * K <= 4096 else "sampled"
    if mode not in ("full", "sampled"):
        raise KernelConfigError(f"mode must be 'full', 'sampled' or 'auto', got {mode!r}")
    sampled = mode == "sampled"
    sampler = Sampler(sampled)
    warned = []
    if not sampled and (est := full_mode_seconds(M, N, K, grid, block)) > FULL_WARN_S:
        took = f"{est:.0f} s" if est < 120 else f"{est / 60:.0f} min"
        warned.append(f"{spec.name}: --mode full runs every CTA and loop trip: ~{took} at {M}x{N}x{K} "
                      "(--mode sampled: the same counts, without checking C)")
        if warn:
            warn(warned[-1])
    if frontend not in ("auto", "python", "sass"):
        raise KernelConfigError(f"frontend must be 'auto', 'sass' or 'python', got {frontend!r}")
    if sanitizer is not None and (sampled or frontend != "python"):
        raise KernelConfigError("the sanitizer watches the Python kernel's every access: it needs "
                                "mode='full' and frontend='python'")
    notes = []
    if frontend == "python":
        notes.append("instruction stream: the Python kernel's own (frontend='python'): what its source does, "
                     "not what ptxas made of the twin")
    if frontend != "python":
        from gpusim.sass import frontend as sass_fe
        from gpusim.sass.compile import CompilerMissing
        try:
            prog, comp = sass_fe.program(spec.name, tuple(sorted(p.items())))
            frontend = "sass"
        except CompilerMissing as e:
            if frontend == "sass":
                raise
            frontend = "python"
            notes.append(f"instruction stream: the Python kernel's own (no SASS: {e})")

    if frontend == "sass" and sampled:     # addresses only: nothing of the arrays' size is allocated
        bases = layout(M, N, K, spec)
        arrays = initial = None
    else:
        check_size(spec.name, M, N, K, allocates=True, spec=spec)
        arrays, bases = allocate(M, N, K, seed, spec)
        initial = {nm: a.copy() if a.flags.writeable else a for nm, a in arrays.items()}

    px, py = spec.grid_period(M, N, K, **p)
    ctas = [((x, y, z), wx * wy * wz)
            for (x, wx), (y, wy), (z, wz) in itertools.product(
                _classes(grid[0], px, sampled), _classes(grid[1], py, sampled), [(i, 1) for i in range(grid[2])])]

    traces, smem, loop_trips = [], 0, 0
    if frontend == "sass":
        mem = sass_fe.memory(array_bytes(spec, M, N, K) if sampled else arrays, bases)
        smem = prog.shared_bytes
        ran = sass_fe.run_ctas(prog, grid, block, ctas, mem, (M, N, K, alpha, beta), bases, 0,
                               sample_loops=sampled, args=spec.arguments,
                               progress=(lambda done: progress(done, len(ctas))) if progress else None)
        for t, cta_notes, loops in ran:
            traces.append(cost_trace(t))
            loop_trips = max([loop_trips] + [trips for _, trips, _ in loops])
            notes += [n for n in cta_notes if n not in notes]
        from gpusim.sass.compile import describe
        notes.insert(0, f"instruction stream: the SASS of {describe(comp)}")
        _use_listing(spec.name, p, comp, traces, (M, N, K))
    else:
        for n_done, (bidx, w) in enumerate(ctas):
            t, smem = run_cta(spec, p, gpu, grid, block, bidx, w, sampler, arrays, bases,
                              (M, N, K, alpha, beta), n_done, sanitizer)
            traces.append(t)
            if progress:
                progress(n_done + 1, len(ctas))
    trace = Trace.concat(traces)

    if frontend == "sass":
        ptx, reg_src = comp.ptxas, comp.source
    else:
        ptx, reg_src = ptxas_info(spec.name, p)
    regs = ptx.get("registers") if ptx else None
    if regs is not None:         # a launch takes at least the preset's minimum (16 on the H200)
        regs = max(int(regs), gpu.min_regs_per_thread)
    occ = occupancy(gpu, threads, regs, smem, spec.name)
    n_ctas = grid[0] * grid[1] * grid[2]
    metrics, per_op = count_metrics(trace)
    metrics.update({
        "launch__grid_size": n_ctas,
        "launch__block_size": threads,
        "launch__registers_per_thread": regs,
        "launch__shared_mem_per_block_static": smem,
        "launch__occupancy_limit_registers": occ.limit_registers,
        "launch__occupancy_limit_shared_mem": occ.limit_shared_mem,
        "launch__occupancy_limit_warps": occ.limit_warps,
        "launch__occupancy_limit_blocks": occ.limit_blocks,
        "launch__occupancy_per_block_size": occ.blocks_per_sm,
        "sm__maximum_warps_per_active_cycle_pct": occ.theoretical_occupancy_pct,
        "launch__waves_per_multiprocessor": occ.waves(n_ctas, gpu.sm_count),
    })
    regions = {nm: (bases[nm], nb) for nm, nb in array_bytes(spec, M, N, K).items()}
    sass_text = {ins.pc: ins.text for ins in prog.instrs} if frontend == "sass" else None
    arrays_seen = attribution.by_array(trace, regions, trace.shared_regions)
    instructions = attribution.by_instruction(trace, regions, trace.shared_regions, sass_text)
    err = None
    if ptx and (ptx.get("spill_stores") or ptx.get("spill_loads")):
        notes.append(f"ptxas spills {ptx.get('spill_stores', 0)} B of stores and {ptx.get('spill_loads', 0)} B of "
                     "loads per thread: local-memory instructions (LDL/STL) are counted under "
                     "*_mem_local_* and timed as L1 hits on the LG path" if frontend == "sass" else
                     f"ptxas spills {ptx.get('spill_stores', 0)} B per thread, which the Python kernel does not "
                     "issue: its counts leave local memory out")
    if regs is None:
        notes.append("registers per thread unknown (no ptxas record for these parameters, and no compiler to "
                     "make one): "
                     "the register limit on occupancy is left out")
    if not sampled:
        err = max(rel_errors(arrays, spec.expected(initial, M, N, K, alpha, beta)).values())
    return SimResult(spec.name, gpu.name, M, N, K, p, grid, block, mode, metrics, per_op, occ, reg_src,
                     len(ctas), time.perf_counter() - t0, bases, arrays_seen, instructions, err,
                     trace if keep_trace else None, notes, frontend, warned, gpu, loop_trips=loop_trips)
