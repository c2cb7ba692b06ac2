"""Re-record the microbenchmarks of calibrate/ on a GPU machine, one driver after another.

    PYTHONPATH=. python3 -m calibrate --out DIR [--only NAME ...] [--budget-s S] [--verbose] [--dry-run]
    python3 -m calibrate --list                   # the drivers, one line each (no GPU, cupy or nvcc needed)
    python3 -m gpusim.hw.unpack DIR               # then, in the checkout: DIR's records -> traces/hw/h200/micro/

Each driver is run through its own command line, both of its steps on this machine: `--out RAW` (build,
run, keep the raw results) then `--record RAW --dest DIR/micro/<record>.json`; sched_fairness and
sched_pick run their .sh (which writes $OUT) before `--record`; run_micro.py runs micro.cu's batch of
benches and packs its records itself (its micro.tar.gz is read back). A driver gets --budget-s seconds for
all its steps and is stopped past them. A driver that fails (a non-zero exit, past its budget, or a record
it should leave missing or not valid) is reported and the next one runs; the exit status is 1 if any failed.

What DIR holds afterwards:
    DIR/micro.tar.gz        every record (micro/<name>.json) and SASS listing kept with one (micro/<name>.sass),
                            the file gpusim.hw.unpack reads; re-packed after each driver, so a run cut short
                            still leaves what was done
    DIR/micro/              the same files, unpacked
    DIR/raw/<driver>/       each driver's raw results (`python3 calibrate/<script> --record` reads them again)
    DIR/logs/<driver>.log   what each step printed
    DIR/summary.json        per driver: ok or why not, and the seconds it took

DRIVERS below is the list the runner knows; a driver added to calibrate/ goes there too
(tests/test_calibrate.py checks that every script in calibrate/ is in it).
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_BUDGET_S = 1200.0
TAIL_LINES = 15           # lines of a failed step's output shown with its failure


@dataclass(frozen=True)
class Driver:
    """One unit the runner runs: a driver script with the arguments for one of its records."""
    name: str                                  # what --only picks; its folder under raw/ and logs/
    script: str                                # its file in calibrate/ (or a path): --list shows its docstring
    records: tuple[str, ...]                   # the files under micro/ it must leave
    steps: tuple[tuple[str, ...], ...]         # argv templates, run in turn from the repository root
    note: str = ""                             # said after the docstring in --list

    def path(self) -> Path:
        p = Path(self.script)
        return p if p.is_absolute() else HERE / p

    def argv(self, out: Path) -> list[list[str]]:
        """The steps with {python}, {script}, {raw}, {micro} and {dest} filled in for the folder `out`."""
        values = {"python": sys.executable, "script": str(self.path()), "raw": str(out / "raw" / self.name),
                  "micro": str(out / "micro"), "dest": str(out / "micro" / self.records[0])}
        return [[a.format(**values) for a in step] for step in self.steps]

    def files(self) -> set[str]:
        """The files of calibrate/ it runs (its script, a .sh)."""
        names = {self.path().name} if self.path().parent == HERE else set()
        for step in self.steps:
            names |= {Path(a).name for a in step if a.startswith("calibrate/") and a.endswith((".py", ".sh"))}
        return names


def out_then_record(script: str, record: str | None = None, *flags: str, name: str | None = None) -> Driver:
    """A driver with the micro_cli command line: --out RAW on the GPU, then --record RAW --dest FILE."""
    stem = Path(script).stem
    record = record or f"{stem}.json"
    return Driver(name or stem, script, (record,),
                  (("{python}", "{script}", *flags, "--out", "{raw}"),
                   ("{python}", "{script}", *flags, "--record", "{raw}", "--dest", "{dest}")),
                  note=" ".join(flags))


def sh_then_record(stem: str) -> Driver:
    """A driver whose GPU step is a .sh (writing $OUT), then the .py's --record."""
    return Driver(stem, f"{stem}.py", (f"{stem}.json",),
                  (("bash", f"calibrate/{stem}.sh"),
                   ("{python}", "{script}", "--record", "{raw}", "--dest", "{dest}")),
                  note=f"bash calibrate/{stem}.sh, then --record")


def micro_batch(name: str, records: tuple[str, ...], *only: str) -> Driver:
    """run_micro.py, micro.cu's benches with their ncu views: every bench, or the --only ones."""
    sel = ("--only", *only) if only else ()
    return Driver(name, "run_micro.py", tuple(f"{r}.json" for r in records),
                  (("{python}", "{script}", "--out", "{raw}", "--work", "{raw}/work", *sel, "--ncu"),),
                  note=" ".join(sel + ("--ncu",)) if only else "every bench, --ncu")


MICRO_BENCH_RECORDS = (
    "latency_ffma", "latency_imad", "latency_iadd3", "latency_lds", "latency_chase_sweep", "latency_l1_hit",
    "latency_l2_hit", "latency_dram", "mio_queue_depth", "lg_queue_depth", "shared_pipe_rate", "lds_writeback",
    "fma_issue_rate", "barrier_cost", "bandwidth_l2", "bandwidth_dram", "fma_operands", "lds_bursts_cf",
    "lds_bursts_order", "queue_warps", "queue_stalls_ncu", "fma_pipes_ncu", "fma_operands_ncu")

# In run order. run_micro.py's ncu views beyond its default three each need an --only of their own (it
# picks one view per run), as the committed records were made.
DRIVERS: tuple[Driver, ...] = (
    micro_batch("micro", MICRO_BENCH_RECORDS),
    micro_batch("micro_queue_warps", ("queue_warps", "queue_warps_ncu"), "queue_warps"),
    micro_batch("micro_queue_warps_lsu", ("queue_warps_lsu_ncu",), "queue_warps_lsu"),
    micro_batch("micro_lds_writeback", ("lds_writeback", "lds_writeback_ncu"), "lds_writeback"),
    micro_batch("micro_lds_bursts_order", ("lds_bursts_order", "lds_bursts_order_ncu"), "lds_bursts_order"),
    micro_batch("micro_l2_loaded", ("l2_loaded_ncu",), "l2_loaded"),
    micro_batch("micro_l2_light", ("l2_light_ncu",), "l2_light"),
    micro_batch("micro_l1_shared", ("l1_shared_ncu",), "l1_shared"),
    out_then_record("bank_patterns.py"),
    out_then_record("barrier_wait.py"),
    out_then_record("coalesced_wait.py"),
    out_then_record("dot_lockstep.py"),
    out_then_record("dot_pair.py"),
    out_then_record("dot_pair_delay.py"),
    out_then_record("dot_pair_ncu.py"),
    out_then_record("ffma_dispatch.py"),
    out_then_record("l1_dense.py"),
    out_then_record("l1_misses.py"),
    out_then_record("l1_pending.py"),
    out_then_record("l1_phase.py"),
    out_then_record("l1_request_cost.py"),
    out_then_record("l2_merge.py"),
    out_then_record("l2_near_far.py"),
    out_then_record("l2_requests.py"),
    out_then_record("l2_resident.py"),
    out_then_record("l2_write.py"),
    out_then_record("launch_overhead.py"),
    out_then_record("cta_turnaround.py"),
    out_then_record("cta_gap_memory.py"),
    out_then_record("bandwidth_copy.py"),
    out_then_record("bandwidth_pattern.py"),
    out_then_record("bandwidth_rows.py"),
    out_then_record("one_round.py"),
    out_then_record("launch_end.py"),
    out_then_record("atomic_contention.py"),
    out_then_record("l2_write_fill.py"),
    out_then_record("icache_fill.py"),
    out_then_record("lds_wide_return.py"),
    out_then_record("lg_throughput.py"),
    out_then_record("loaded_latency.py"),
    out_then_record("loaded_latency_writes.py"),
    out_then_record("masked_shared.py"),
    out_then_record("lg_throughput.py", "lg_throughput_lsu.json", "--lsu", name="lg_throughput_lsu"),
    out_then_record("mio_capacity.py"),
    out_then_record("mio_special.py"),
    out_then_record("store_load_wait.py"),
    out_then_record("l2_write_sms.py"),
    out_then_record("mio_capacity_ncu.py"),
    out_then_record("mio_capacity_ncu.py", "mio_capacity_lsu_ncu.json", "--lsu", name="mio_capacity_lsu_ncu"),
    out_then_record("pending_fill.py"),
    sh_then_record("sched_fairness"),
    sh_then_record("sched_pick"),
    out_then_record("sharer_phase.py"),
    out_then_record("shfl_mufu.py"),
    out_then_record("special_regs.py"),
    out_then_record("branch_cost.py"),
    out_then_record("smsp_phase.py"),
    out_then_record("tile_loads.py"),
    out_then_record("wb_mix.py"),
)

# The files of calibrate/ that are not drivers (the test that every driver is known skips these).
HELPERS = ("__init__.py", "__main__.py", "runner.py", "micro_cli.py")


def summary_line(path: Path) -> str:
    """The first paragraph of a script's docstring, on one line (read, not imported: no GPU, cupy or nvcc)."""
    try:
        doc = ast.get_docstring(ast.parse(path.read_text()))
    except (OSError, SyntaxError):
        doc = None
    return " ".join(doc.split("\n\n")[0].split()) if doc else "(no docstring)"


def plan(drivers, only=None) -> list[Driver]:
    """The drivers to run, in order: all, or those --only names (a driver's name, or a script's stem for
    every driver of that script, e.g. run_micro)."""
    if not only:
        return list(drivers)
    names = {d.name for d in drivers}
    picked = set()
    for o in only:
        hit = {o} if o in names else {d.name for d in drivers if d.path().stem == o}
        if not hit:
            raise SystemExit(f"--only {o}: no such driver (python3 -m calibrate --list shows them)")
        picked |= hit
    return [d for d in drivers if d.name in picked]


def list_drivers(drivers) -> str:
    width = max(len(d.name) for d in drivers)
    return "\n".join(f"{d.name:<{width}}  {summary_line(d.path())}" + (f" [{d.note}]" if d.note else "")
                     for d in drivers)


def _stop(proc: subprocess.Popen):
    """Stop a step and whatever it started (its own process group)."""
    for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def run_step(argv, env, log, timeout: float, echo: bool) -> tuple[int | None, list[str]]:
    """Run one step, its output into `log` (and the console with echo); (exit status or None past the
    timeout, the last lines it printed)."""
    log.write(f"$ {' '.join(argv)}\n")
    log.flush()
    # in a process group of its own, so that _stop also ends what it started (nvcc, ncu, the binaries)
    proc = subprocess.Popen(argv, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, errors="replace", preexec_fn=os.setpgrp)
    tail = deque(maxlen=TAIL_LINES)

    def pump():
        for line in proc.stdout:
            log.write(line)
            tail.append(line.rstrip("\n"))
            if echo:
                print("    " + line, end="", flush=True)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        rc = proc.wait(timeout=max(timeout, 1.0))
    except subprocess.TimeoutExpired:
        _stop(proc)
        rc = None
    except KeyboardInterrupt:
        _stop(proc)
        raise
    reader.join(timeout=10)
    log.flush()
    return rc, list(tail)


def _take_packed(raw: Path, micro: Path, since: float):
    """A driver that packs its own micro.tar.gz (run_micro.py): its records into micro/, ncu's raw files
    into raw/ncu/ of its folder."""
    tar = raw / "micro.tar.gz"
    if not tar.exists() or tar.stat().st_mtime < since:
        return
    with tarfile.open(tar, "r:gz") as tf:
        for m in tf.getmembers():
            sub, _, base = m.name.partition("/")
            if not m.isfile() or not base or "/" in base:
                continue
            dest = micro / base if sub == "micro" else raw / "ncu" / base
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(tf.extractfile(m).read())


def check_records(d: Driver, out: Path, since: float) -> str | None:
    """None when every record the driver should leave is there, new and valid; else what is wrong. A record
    that is not valid is moved to rejected/ (gpusim.hw.unpack would refuse the whole archive)."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from gpusim.hw.records import validate_record
    for r in d.records:
        p = out / "micro" / r
        if not p.exists() or p.stat().st_mtime < since:
            return f"left no micro/{r}"
        try:
            validate_record(json.loads(p.read_text()), p.name)
        except Exception as e:     # noqa: BLE001 - any reason it cannot be read is the driver's failure
            (out / "rejected").mkdir(exist_ok=True)
            shutil.move(str(p), out / "rejected" / r)
            return f"micro/{r} is not a valid record ({type(e).__name__}: {e}); moved to rejected/"
    return None


def pack(out: Path):
    """DIR/micro.tar.gz from DIR/micro/ (records, SASS) and the ncu raw files run_micro.py kept."""
    tmp = out / "micro.tar.gz.tmp"
    with tarfile.open(tmp, "w:gz") as tf:
        for f in sorted((out / "micro").glob("*")):
            if f.suffix in (".json", ".sass"):
                tf.add(f, arcname=f"micro/{f.name}")
        for f in sorted((out / "raw").glob("*/ncu/*")):
            tf.add(f, arcname=f"raw/{f.name}")
    tmp.replace(out / "micro.tar.gz")


def run_driver(d: Driver, out: Path, budget_s: float, echo: bool) -> tuple[str | None, float]:
    """Run a driver's steps within budget_s; (None, or why it failed; seconds)."""
    raw = out / "raw" / d.name
    if raw.exists():
        shutil.rmtree(raw)      # no stale raw results for --record to pick up
    raw.mkdir(parents=True)
    env = {**os.environ, "OUT": str(raw),
           "PYTHONPATH": os.pathsep.join([str(REPO)] + [p for p in [os.environ.get("PYTHONPATH")] if p])}
    t0 = time.time()
    steps = d.argv(out)
    with open(out / "logs" / f"{d.name}.log", "w") as log:
        for i, argv in enumerate(steps, 1):
            left = budget_s - (time.time() - t0)
            if left <= 0:
                return f"past its budget of {budget_s:.0f} s before step {i}", time.time() - t0
            ts = time.time()
            rc, tail = run_step(argv, env, log, left, echo)
            what = f"step {i}/{len(steps)} ({' '.join(Path(a).name for a in argv[1:3])})"
            if rc != 0:
                for t in tail:
                    print("    | " + t)
            if rc is None:
                return f"{what} stopped past the budget of {budget_s:.0f} s", time.time() - t0
            if rc != 0:
                last = next((t for t in reversed(tail) if t.strip()), "")
                return f"{what} exited {rc}: {last.strip()[:300]}", time.time() - t0
            print(f"    step {i}/{len(steps)} done in {time.time() - ts:.1f} s", flush=True)
    _take_packed(raw, out / "micro", t0)
    return check_records(d, out, t0), time.time() - t0


def run(drivers, out: Path, budget_s: float = DEFAULT_BUDGET_S, echo: bool = False) -> int:
    out = out.resolve()
    for sub in ("micro", "raw", "logs"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    missing = [t for t in ("nvcc", "cuobjdump", "ncu", "nvidia-smi") if shutil.which(t) is None]
    if missing:     # a note only: ncu may sit outside the PATH (gpusim.hw.ncu.find_ncu looks further)
        print(f"not on the PATH: {', '.join(missing)} (the drivers that use them will fail)", flush=True)
    results, t_all = {}, time.time()
    try:
        for n, d in enumerate(drivers, 1):
            print(f"[{n}/{len(drivers)}] {d.name} ({d.path().name}{' ' + d.note if d.note else ''}; "
                  f"budget {budget_s:.0f} s, {time.time() - t_all:.0f} s so far)", flush=True)
            why, secs = run_driver(d, out, budget_s, echo)
            results[d.name] = {"ok": why is None, "seconds": round(secs, 1), **({"why": why} if why else {})}
            print(f"[{n}/{len(drivers)}] {d.name}: " + (f"ok in {secs:.1f} s ({', '.join(d.records)})" if why is None
                  else f"FAILED after {secs:.1f} s: {why}"), flush=True)
            pack(out)
            (out / "summary.json").write_text(json.dumps(results, indent=1) + "\n")
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        pack(out)
        results["(interrupted)"] = {"ok": False, "why": "interrupted"}
    failed = {k: v["why"] for k, v in results.items() if not v["ok"]}
    n_ok = sum(v["ok"] for v in results.values())
    print(f"\n{n_ok} of {len(drivers)} drivers ok in {time.time() - t_all:.0f} s; records in "
          f"{out / 'micro.tar.gz'} (then, in the checkout: python3 -m gpusim.hw.unpack {out})")
    if failed:
        print(f"{len(failed)} failed (logs in {out / 'logs'}):")
        for k, why in failed.items():
            print(f"  {k}: {why}")
    return 1 if failed else 0


def main(argv=None, drivers=DRIVERS) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m calibrate", description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, metavar="DIR", help="the folder the records and raw results go to")
    ap.add_argument("--only", nargs="+", metavar="NAME", help="run these drivers only (names from --list)")
    ap.add_argument("--list", action="store_true", help="list the drivers and exit (no GPU needed)")
    ap.add_argument("--budget-s", type=float, default=DEFAULT_BUDGET_S,
                    help=f"seconds each driver may take, all its steps together (default {DEFAULT_BUDGET_S:.0f})")
    ap.add_argument("--verbose", "-v", action="store_true", help="echo what the drivers print (else logs/ only)")
    ap.add_argument("--dry-run", action="store_true", help="print the commands the drivers would run, run none")
    a = ap.parse_args(argv)
    chosen = plan(drivers, a.only)
    if a.list:
        print(list_drivers(chosen))
        return 0
    if a.out is None:
        ap.error("--out DIR is needed (or --list)")
    if a.dry_run:
        for d in chosen:
            for step in d.argv(a.out.resolve()):
                print(f"{d.name}: {' '.join(step)}")
        return 0
    return run(chosen, a.out, a.budget_s, a.verbose)


if __name__ == "__main__":
    sys.exit(main())
