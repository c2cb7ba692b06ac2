"""`gpusim` command line: run, check, list, compare, sweep, hw record, hw import (the parser; the
commands' bodies are in gpusim.report.commands)."""
from __future__ import annotations

import argparse
import os
import sys

from gpusim.errors import GpusimError
from gpusim.estimate.kernel_time import W1
from gpusim.report.commands import (DEFAULT_SIZE, cmd_check, cmd_compare, cmd_hw_import, cmd_hw_record, cmd_list,
                                     cmd_run, cmd_sweep)

class _Parser(argparse.ArgumentParser):
    """argparse whose refusals are one line like every other error (not a usage block); exit code 2."""
    def error(self, message):
        raise GpusimError(f"{message} (see {self.prog} --help)")


def build_parser():
    ap = _Parser(prog="gpusim", description="warp-level GPU simulator, checked against an NVIDIA H200")
    from gpusim import __version__
    from gpusim.report.render import SECTIONS
    ap.add_argument("--version", action="version", version=f"gpusim {__version__}")
    sub = ap.add_subparsers(dest="cmd", required=True, metavar="COMMAND", help="what to do (gpusim COMMAND "
                            "--help for its options)")

    r = sub.add_parser("run", help="simulate a kernel and print its counters")
    r.add_argument("kernel", help="a kernel of `gpusim list`")
    r.add_argument("--size", type=int, help=f"M = N = K (default {DEFAULT_SIZE})")
    r.add_argument("--M", type=int, help="rows of C, for a launch that is not square (default: --size)")
    r.add_argument("--N", type=int, help="columns of C (default: M)")
    r.add_argument("--K", type=int, help="the inner dimension (default: M)")
    r.add_argument("--arch", default="h200", help="GPU preset: h200, a6000, rtx5080")
    r.add_argument("--param", action="append", metavar="NAME=VALUE", help="tile parameter, repeatable")
    r.add_argument("--set", action="append", metavar="FIELD=VALUE", help="change a field of the GPU preset "
                   "(e.g. l2_bytes=100663296; gpusim.arch.GPU's fields), repeatable")
    r.add_argument("--plot", metavar="PATH.png", help="draw the predicted stall breakdown (beside the H200's "
                   "where it has this launch) and the kernel on the preset's roofline")
    r.add_argument("--mode", default="auto", choices=("auto", "full", "sampled"),
                   help="full: every CTA and iteration (checks C); sampled: exact totals from classes")
    r.add_argument("--json", action="store_true", help="print one JSON object")
    r.add_argument("--trace", action="store_true",
                   help="time the first SM's resident CTAs: stall breakdown, per-warp table, Perfetto timeline")
    r.add_argument("--window", type=int, help="loop trips of the --trace timeline (default: the prediction's "
                   f"first window, {W1} trips)")
    r.add_argument("--timeline", metavar="PATH.json", help="where --trace writes the timeline "
                   "(default traces/sim/KERNEL_MxNxK.json)")
    r.add_argument("--save-trace", metavar="PATH.npz", help="save the simulated CTAs' per-warp trace")
    r.add_argument("--no-time", action="store_true", help="counts only: skip the whole-kernel time prediction")
    r.add_argument("--by-array", action="store_true", help="memory counters per array: requests, sectors or "
                   "wavefronts per request, bank conflicts, loads and stores apart")
    r.add_argument("--source", action="store_true", help="memory counters per instruction: each SASS "
                   "instruction (pc and text), or each line of the Python kernel with --frontend python")
    r.add_argument("--frontend", default="auto", choices=("auto", "sass", "python"),
                   help="instruction stream: the twin's SASS (committed, cached or compiled now; auto falls back "
                        "to the Python kernel's own, and says so) or the Python kernel's own")
    r.add_argument("--section", action="append", metavar="NAME",
                   help="a section of the report, as Nsight Compute names them, repeatable: "
                        + "; ".join(f"{k}: {v}" for k, v in SECTIONS.items())
                        + "; all: every one. Default: SpeedOfLight and WarpStateStats (with --no-time: "
                        "Occupancy and MemoryWorkloadAnalysis), and warps with --trace")
    r.set_defaults(func=cmd_run)

    ck = sub.add_parser("check", help="sanitize a Python kernel: out-of-bounds and misaligned accesses, "
                        "shared-memory races, divergent barriers, uninitialised shared reads, wrong results "
                        "(exit 1 when anything is found)")
    ck.add_argument("kernel", help="a kernel of `gpusim list`, or a Python file that defines SPEC")
    ck.add_argument("--size", type=int, help="M = N = K (default: the first of 256, 512, 128, 1024, 64 "
                    "the kernel takes)")
    ck.add_argument("--M", type=int, help="rows of C, for a launch that is not square")
    ck.add_argument("--N", type=int, help="columns of C (default: M)")
    ck.add_argument("--K", type=int, help="the inner dimension (default: M)")
    ck.add_argument("--arch", default="h200", help="GPU preset (its shared-memory limit applies)")
    ck.add_argument("--param", action="append", metavar="NAME=VALUE", help="tile parameter, repeatable")
    ck.add_argument("--tol", type=float, help="largest ||out - ref|| / ||ref|| taken as right (default: the "
                    "kernel's own tolerance where it declares one, else 1e-4)")
    ck.add_argument("--json", action="store_true", help="print one JSON object with the findings")
    ck.set_defaults(func=cmd_check)

    ls = sub.add_parser("list", help="list the kernels and their parameters")
    ls.set_defaults(func=cmd_list)

    c = sub.add_parser("compare", help="simulated counters against the committed H200 records")
    c.add_argument("kernels", nargs="*", help="kernels of `gpusim list` (default: every kernel with records)")
    c.add_argument("--size", type=int, help="one recorded M = N = K size (default: 1024, 2048 and 4096)")
    c.add_argument("--json", action="store_true", help="print the rows (and the timing summary) as JSON")
    c.add_argument("--no-time", action="store_true", help="counts only (no time and stall rows)")
    c.add_argument("--detail", action="store_true", help="also every metric of every point, simulated beside "
                   "recorded (the summary table comes last)")
    c.add_argument("--variants", action="store_true", help="the held-out set: the kernels with other tile "
                   "parameters (traces/hw/h200/variants/), none of which the model's parameters saw")
    c.add_argument("--plot", metavar="PATH.png", help="draw predicted against measured time (log-log)")
    c.add_argument("--record", action="append", metavar="PATH", help="compare against this record instead of "
                   "the committed ones: a record's .json (gpusim hw import) or a raw ncu CSV export; repeatable")
    c.set_defaults(func=cmd_compare)

    sw = sub.add_parser("sweep", help="design-space sweep: predict every combination of tile parameters, sizes, "
                        "GPU presets and preset fields, ranked fastest first")
    sw.add_argument("kernel", help="a kernel of `gpusim list`")
    sw.add_argument("--param", action="append", metavar="NAME=V1,V2,...", help="a tile parameter's values, "
                    "repeatable (the kernel's defaults for the others)")
    sw.add_argument("--size", type=int, help=f"M = N = K (default {DEFAULT_SIZE})")
    sw.add_argument("--sizes", metavar="N1,N2,...", help="several M = N = K sizes")
    sw.add_argument("--M", type=int, help="rows of C, for one launch shape that is not square")
    sw.add_argument("--N", type=int, help="columns of C (default: M)")
    sw.add_argument("--K", type=int, help="the inner dimension (default: M)")
    sw.add_argument("--arch", default="h200", help="GPU presets, NAME[,NAME...] (h200, a6000, rtx5080)")
    sw.add_argument("--set", action="append", metavar="FIELD=V1,V2,...", help="a preset field's values, repeatable")
    sw.add_argument("--workers", type=int, help="worker processes of the local Dask cluster (default: this "
                    "machine's CPUs); 1: run the points here, one after another, without Dask")
    sw.add_argument("--scheduler", metavar="ADDRESS", help="a Dask scheduler (e.g. tcp://host:8786) whose "
                    "workers, with gpusim installed, run the points")
    sw.add_argument("--json", action="store_true", help="print the rows as one JSON object")
    sw.add_argument("--csv", metavar="PATH", help="write the rows as CSV")
    sw.add_argument("--plot", metavar="PATH.png", help="draw the predicted time of each point against each axis")
    sw.add_argument("--no-time", action="store_true", help="counts and occupancy only (no time prediction)")
    sw.set_defaults(func=cmd_sweep)

    hw = sub.add_parser("hw", help="hardware records: record them on a GPU (needs cupy and nvcc), or import a user's ncu export")
    hsub = hw.add_subparsers(dest="hwcmd", required=True, metavar="HWCOMMAND", help="record or import")
    rec = hsub.add_parser("record", help="build, check, time and profile the CUDA twins")
    rec.add_argument("kernels", nargs="*", help="kernels of `gpusim list` (default: every kernel)")
    rec.add_argument("--sizes", nargs="+", help="M = N = K sizes (default: 1024 2048 4096)")
    rec.add_argument("--ncu", action="store_true", help="also collect Nsight Compute counters")
    rec.add_argument("--param", action="append", metavar="NAME=VALUE", help="tile parameter of the kernels "
                     "named, repeatable")
    rec.add_argument("--out", help="where records go (default traces/hw/<device>)")
    rec.set_defaults(func=cmd_hw_record)
    imp = hsub.add_parser("import", help="make records of a user's own `ncu --csv --page raw` export (no GPU "
                          "needed); compare them with `gpusim compare --record`")
    imp.add_argument("csv", help="the export (.csv or .csv.gz): one or many profiled launches")
    imp.add_argument("-o", "--out", required=True, help="a folder (one record per launch, named like the "
                     "project's) or one PATH.json")
    imp.add_argument("--kernel", help="the gpusim kernel the launch runs (default: matched by its name)")
    imp.add_argument("--param", action="append", metavar="NAME=VALUE", help="the launch's tile parameter, "
                     "repeatable (default: the kernel's defaults)")
    imp.add_argument("--size", type=int, help="M = N = K of the launch (default: the one power of two whose "
                     "launch shape is the launch's)")
    imp.add_argument("--M", type=int, help="M of a non-square launch")
    imp.add_argument("--N", type=int, help="N of a non-square launch")
    imp.add_argument("--K", type=int, help="K of a non-square launch")
    imp.add_argument("--time-ms", type=float, help="your own CUDA-event time of the launch in ms (default: "
                     "ncu's gpu__time_duration, and the record says so)")
    imp.add_argument("--launch", type=int, metavar="ID", help="only the launch with this ncu ID")
    imp.set_defaults(func=cmd_hw_import)
    return ap


def main(argv=None) -> int:
    try:
        a = build_parser().parse_args(argv)
        return a.func(a)
    except GpusimError as e:
        print(f"gpusim: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("gpusim: interrupted", file=sys.stderr)
        return 130


def entry() -> None:
    """The `gpusim` command: glibc's malloc set for large arrays (gpusim.pages.large_block_malloc: the
    process is the command's own), main(), its output flushed, then the process ends without tearing the
    interpreter down (os._exit): freeing a prediction's objects and numba's compiled code one by one took
    0.15-0.3 s of every run, and the OS reclaims them at once. An exception main() does not handle still
    propagates as usual (traceback, exit status 1)."""
    from gpusim.pages import large_block_malloc
    large_block_malloc()
    rc = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, ValueError):     # a reader that went away, a closed stream: nothing to flush
            pass
    os._exit(rc)


if __name__ == "__main__":
    entry()
