"""Design-space sweeps: `simulate` + `predict` over the Cartesian product of tile parameters, sizes, GPU
presets and preset fields (`gpusim sweep`), one row per point.

A point the kernel refuses (its check, the launch limits, a twin that does not compile) is a row with
status "refused" and the reason, never dropped. The points run through Dask's distributed scheduler:
a LocalCluster of processes on this machine (one point at a time per process), or the cluster behind
`scheduler` (an address such as tcp://host:8786, whose workers must have gpusim installed); with one
worker and no scheduler they run here, one after another, and dask is not needed.
"""
from __future__ import annotations

import itertools
import logging
import os

from gpusim.arch import arch_overrides, get_arch, override
from gpusim.errors import GpusimError
from gpusim.pages import MALLOC

SWEEP_EXTRA = "pip install 'gpusim[sweep]'"

# the speed-of-light figures predict() gives (% of each unit's peak), as `gpusim run`'s SpeedOfLight section
# shows them: the unit nearest its peak is the point's binding limit
SPEED_OF_LIGHT = (("smsp__issue_active.avg.pct_of_peak_sustained_active", "issue"),
                  ("gpusim__pipe_fma_issue.pct", "FMA pipe"),
                  ("gpusim__pipe_alu_issue.pct", "ALU pipe"),
                  ("gpusim__shared_pipe_busy.pct", "shared pipe"),
                  ("gpusim__l1tex_busy.pct", "L1TEX"),
                  ("gpusim__dram_read.pct_of_achieved_peak", "DRAM"))


def default_workers() -> int:
    """The CPUs this process may run on (a container's share, not the host's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:      # (macOS, Windows)
        return os.cpu_count() or 1


def _unique(values) -> list:
    return list(dict.fromkeys(values))


def sweep_points(kernel: str, params: dict | None = None, sizes=(1024,), archs=("h200",),
                 sets: dict | None = None) -> list[dict]:
    """The points of the sweep, in product order (params, then size, arch, preset fields), each
    {"point", "kernel", "params", "M", "N", "K", "arch", "sets"}. params: {NAME: [values]} (the
    kernel's defaults for the others); sizes: ints (M = N = K) or (M, N, K); archs: preset names;
    sets: {FIELD: [values]} of preset fields (gpusim.arch.override). Names and values are checked here,
    before anything runs: an unknown parameter, arch or field, or a value of the wrong kind, is a
    GpusimError."""
    from gpusim.kernel.spec import get_kernel
    spec = get_kernel(kernel)
    params, sets = dict(params or {}), dict(sets or {})
    for axis, what in ((params, "--param"), (sets, "--set")):
        for name, values in axis.items():
            if not values:
                raise GpusimError(f"sweep: {what} {name} has no values")
    # as integers ("64" from the command line is 64); an unknown name or a value that is not a positive
    # integer is refused here
    params = {name: _unique(spec.resolve({name: v})[name] for v in values) for name, values in params.items()}
    shapes = []
    for s in sizes:
        shape = (s, s, s) if isinstance(s, int) else tuple(s)
        if len(shape) != 3 or any(isinstance(n, bool) or not isinstance(n, int) or n <= 0 for n in shape):
            raise GpusimError(f"sweep: a size is a positive integer or (M, N, K), got {s!r}")
        shapes.append(shape)
    if not shapes:
        raise GpusimError("sweep: no sizes")
    arch_names = _unique(archs)
    if not arch_names:
        raise GpusimError("sweep: no arch")
    for a in arch_names:
        get_arch(a)                        # an unknown preset, with the known ones
        for name, values in sets.items():
            for v in values:
                override(a, {name: v})     # each value checked against each preset's field
    # typed as the field is ("100663296" is an int, "4000" a float for a bandwidth)
    sets = {name: _unique(getattr(override(arch_names[0], {name: v}), name) for v in values)
            for name, values in sets.items()}
    names, fields = list(params), list(sets)
    points = []
    for pv in itertools.product(*(params[n] for n in names)):
        for (M, N, K), a, sv in itertools.product(_unique(shapes), arch_names,
                                                  itertools.product(*(sets[f] for f in fields))):
            points.append({"point": len(points), "kernel": spec.name, "params": dict(zip(names, pv)),
                           "M": M, "N": N, "K": K, "arch": a,
                           "sets": dict(zip(fields, sv))})
    return points


def _top_stall(stalls: dict) -> tuple[str | None, float | None]:
    """(reason, its cycles per issue) of a prediction's stalls, keyed by ncu metric name."""
    from gpusim.timing.states import STATES, stall_metric, top_stall
    ratios = {s: stalls.get(stall_metric(s), 0.0) for s in STATES}
    name = top_stall(ratios)
    return name, (ratios[name] if name else None)


def run_point(point: dict, time: bool = True) -> dict:
    """One point's row: simulate (and predict, unless time=False), as `gpusim run --json` does.
    A point the kernel or the preset refuses is a row with status "refused" and the reason."""
    from gpusim.estimate.simulate import simulate
    row = dict(point, status="ok", reason=None, arch_overrides={}, time_ms=None, gflops=None, gbps=None, limit=None,
               limit_pct=None, top_stall=None, top_stall_ratio=None, occupancy_pct=None, blocks_per_sm=None,
               registers=None, frontend=None, warnings=[])
    try:
        gpu = override(point["arch"], point["sets"])
        row["arch_overrides"] = arch_overrides(gpu)
        # the cache model reads the trace: kept when the time is predicted
        r = simulate(point["kernel"], point["M"], point["N"], point["K"], arch=gpu, params=point["params"],
                     keep_trace=time)
    except GpusimError as e:
        return dict(row, status="refused", reason=str(e))
    row.update(occupancy_pct=r.occupancy.theoretical_occupancy_pct, blocks_per_sm=r.occupancy.blocks_per_sm,
               registers=r.occupancy.registers_per_thread, frontend=r.frontend, warnings=list(r.warnings))
    if not time:
        return row
    from gpusim.estimate.kernel_time import predict
    try:
        pred = predict(r)
    except GpusimError as e:
        return dict(row, status="refused", reason=f"timing: {e}")
    sol = [(pred.metrics[k], label) for k, label in SPEED_OF_LIGHT if pred.metrics.get(k) is not None]
    pct, limit = max(sol) if sol else (None, None)
    stall, ratio = _top_stall(pred.stalls)
    row.update(time_ms=pred.time_ms, gflops=pred.gflops, gbps=pred.gbps, limit=limit, limit_pct=pct,
               top_stall=stall, top_stall_ratio=ratio)
    return row


def rank(rows: list[dict]) -> list[dict]:
    """Fastest first within each size (smallest size first); points without a time (--no-time) in
    product order after them, refused points last. Each row gets its "rank" (1 = fastest of its size)."""
    def key(r):
        shape = (r["M"] * r["N"] * r["K"], r["M"], r["N"], r["K"])
        if r["status"] != "ok":
            return (2, (0, 0, 0, 0), 0.0, r["point"])
        if r["time_ms"] is None:
            return (1, shape, 0.0, r["point"])
        return (0, shape, r["time_ms"], r["point"])
    out, ranked = [], {}
    for r in sorted(rows, key=key):
        timed = r["status"] == "ok" and r["time_ms"] is not None
        if timed:
            shape = (r["M"], r["N"], r["K"])
            ranked[shape] = ranked.get(shape, 0) + 1
        out.append(dict(r, rank=ranked[shape] if timed else None))
    return out


CSV_COLUMNS = ("status", "time_ms", "gflops", "gbps", "limit", "limit_pct", "top_stall", "top_stall_ratio", "occupancy_pct",
               "blocks_per_sm", "registers", "frontend")


def to_csv(rows: list[dict]) -> str:
    """The rows as CSV: rank, kernel, one column per swept parameter, M, N, K, arch, one per swept preset
    field, the figures, the fields changed from the preset (FIELD=OLD->NEW;...) and the refusal's reason."""
    import csv
    import io
    params = list(dict.fromkeys(k for r in rows for k in r["params"]))
    fields = list(dict.fromkeys(k for r in rows for k in r["sets"]))
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["rank", "kernel", *params, "M", "N", "K", "arch", *fields, *CSV_COLUMNS, "arch_overrides", "reason"])
    for r in rows:
        changed = ";".join(f"{k}={v['old']}->{v['new']}" for k, v in r["arch_overrides"].items())
        w.writerow([r["rank"], r["kernel"], *(r["params"].get(k) for k in params), r["M"], r["N"], r["K"], r["arch"],
                    *(r["sets"].get(k) for k in fields), *(r[c] for c in CSV_COLUMNS), changed, r["reason"]])
    return out.getvalue()


def _worker_env(workers: int) -> dict:
    """Environment variables the local cluster's workers are started with (the Nanny's env: set in the
    worker's process, not in this one's): GPUSIM_HELPER_THREAD=0 where the workers leave no second CPU
    each, as a prediction's helper thread would only contend with the other workers there."""
    from gpusim.estimate.round_inputs import HELPER_ENV
    return {HELPER_ENV: "0"} if 2 * workers > default_workers() else {}


def _client(workers: int, scheduler: str | None):
    """A Dask client and the cluster it made (None for the user's), or a one-line refusal."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        where = f"the Dask scheduler at {scheduler}" if scheduler else f"{workers} workers"
        raise GpusimError(f"sweep: {where} need dask's distributed scheduler: {SWEEP_EXTRA} "
                          "(or --workers 1 to run the points here, one after another)") from None
    if scheduler:
        try:
            return Client(scheduler, timeout="15s"), None
        except (OSError, TimeoutError, ValueError) as e:
            raise GpusimError(f"sweep: cannot reach the Dask scheduler at {scheduler}: {e}") from None
    # processes, one thread each: a point is CPU-bound Python and numba, and simulate hands the timing
    # stage its SASS through module state, so two points must never share a process at once.
    # Dask starts its workers with MALLOC_TRIM_THRESHOLD_ at 64 KB, which turns off glibc's adaptive mmap
    # threshold: every large numpy temporary is then mapped and unmapped afresh, and the kernel's page
    # faults took half the CPU (two workers ran the ladder 1.1x as fast as one process). gpusim.pages.MALLOC
    # goes the other way. Dask sets these in this process's environment to start the workers (its
    # documented way, for variables a process reads as it starts); it is put back as it was after.
    import dask
    environ = dict(dask.config.get("distributed.nanny.pre-spawn-environ", {}), **MALLOC)
    before = dict(os.environ)
    try:
        with dask.config.set({"distributed.nanny.pre-spawn-environ": environ}):
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                                   silence_logs=logging.ERROR, env=_worker_env(workers))
    finally:
        for k in set(os.environ) - set(before):
            del os.environ[k]
        os.environ.update(before)
    return Client(cluster), cluster


def run_points(points: list[dict], *, workers: int | None = None, scheduler: str | None = None,
               time: bool = True, progress=None) -> tuple[list[dict], str]:
    """(one row per point, in point order; how they ran). workers: processes of the local cluster
    (default: this machine's CPUs); 1 without a scheduler runs them here without Dask. scheduler: a
    Dask scheduler's address, whose workers run them. progress(done, total) after each point."""
    if workers is not None and workers <= 0:
        raise GpusimError(f"sweep: --workers takes a positive integer, got {workers}")
    if scheduler and workers is not None:
        raise GpusimError("sweep: --workers sizes the local cluster; with --scheduler the cluster's own "
                          "workers run the points")
    workers = workers or default_workers()
    total = len(points)
    if not scheduler and workers == 1:
        rows = []
        for p in points:
            rows.append(run_point(p, time))
            if progress:
                progress(len(rows), total)
        return rows, "in this process, one point after another (--workers 1: no Dask)"
    workers = min(workers, total) if not scheduler else workers     # no idle processes to start
    client, cluster = _client(workers, scheduler)
    try:
        from distributed import as_completed
        n_workers = len(client.scheduler_info().get("workers", {}))
        # pure=False: each point is run, never answered from another's result
        futures = client.map(run_point, points, time=time, pure=False)
        by_point, done = {}, 0
        for fut in as_completed(futures):
            row = fut.result()      # a task's exception (a bug, not a refusal) is raised here
            by_point[row["point"]] = row
            done += 1
            if progress:
                progress(done, total)
        rows = [by_point[p["point"]] for p in points]
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    how = (f"on the Dask scheduler at {scheduler} ({n_workers} workers)" if scheduler else
           f"on a Dask LocalCluster of {n_workers} worker processes")
    return rows, how


def sweep(kernel: str, params: dict | None = None, sizes=(1024,), archs=("h200",), sets: dict | None = None, *,
          workers: int | None = None, scheduler: str | None = None, time: bool = True, progress=None) -> list[dict]:
    """The ranked rows of a design-space sweep (see sweep_points, run_point and rank), e.g.
    sweep("regtile2d", params={"BN": [64, 128], "BK": [8, 16]}, sizes=[4096], workers=2)."""
    rows, _ = run_points(sweep_points(kernel, params, sizes, archs, sets), workers=workers, scheduler=scheduler,
                         time=time, progress=progress)
    return rank(rows)


__all__ = ["sweep", "sweep_points", "run_point", "run_points", "rank", "to_csv", "default_workers",
           "SPEED_OF_LIGHT", "SWEEP_EXTRA"]
