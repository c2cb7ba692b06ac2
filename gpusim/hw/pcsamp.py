"""Warp-state samples per SASS instruction (ncu's PC sampling), for the ladder twins.

    PYTHONPATH=. python3 -m gpusim.hw.pcsamp --out "$OUT" --size 4096 [--kernels regtile2d ...]

ncu's SourceCounters section samples, every few thousand cycles, one warp of each SMSP: its PC and
its state (selected, not_selected, short_scoreboard, dispatch_stall, ...). Summed per PC, the
samples say at which instruction a kernel's warps wait, and in which state: the view the per-kernel
stall ratios cannot give (where a dispatch stall or a not_selected falls in the loop). One record
per kernel, `pcsamp_<kernel>_<size>.json`, keyed by PC offset from the kernel's entry like the
`inst_executed_per_pc` table of the ncu records, with the SASS text of each PC from cuobjdump.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from gpusim.kernel.spec import LADDER

SCHEMA = "gpusim.hw.pcsamp/1"


def sass_text(cubin: Path, kernel: str) -> dict:
    """PC offset -> SASS instruction text of the kernel's function."""
    from gpusim.sass import compile as C
    from gpusim.sass.listing import parse_listing
    return {f"0x{i.pc:04x}": i.text for i in parse_listing(C.function_sass(C.sass_text(cubin), kernel), kernel)}


def samples_per_pc(rep: str, ncu: str) -> tuple[str, dict, dict]:
    """(kernel name, {metric: {pc offset: samples}}, {metric: total}) of the report's one launch."""
    from gpusim.hw import ncu as ncu_mod
    ctx = ncu_mod.import_ncu_report(ncu).load_report(rep)
    act = ctx.range_by_idx(0).action_by_idx(0)
    per_pc, totals = {}, {}
    for name in act.metric_names():
        if "pcsamp" not in name:
            continue
        m = act.metric_by_name(name)
        try:
            totals[name] = m.as_double()
        except Exception:      # noqa: BLE001 - a non-numeric metric
            pass
        n = m.num_instances()
        if n <= 0:
            continue
        ids = m.correlation_ids()
        raw = {}
        for i in range(n):
            key = hex(ids.as_uint64(i))
            raw[key] = raw.get(key, 0) + m.as_double(i)
        per_pc[name] = {k: v for k, v in ncu_mod.relative_pcs(raw).items() if v}
    return act.name(), per_pc, totals


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--size", type=int, nargs="+", default=[4096])
    ap.add_argument("--warp-sampling-interval", dest="sampling_interval", default="auto",
                    help="ncu's: auto, or n for one sample per 2^(5+n) cycles per SMSP (short kernels: 0 or 1)")
    ap.add_argument("--cache-control", choices=("all", "none"), default="all",
                    help="all: caches flushed before the profiled launch (as the kernel records); none: "
                         "as the warm-up launch left them (as the timed launches find them)")
    ap.add_argument("--kernels", nargs="*", default=list(LADDER))
    a = ap.parse_args(argv)
    from gpusim.hw import ncu as ncu_mod, ncu_twin
    from gpusim.hw.devinfo import utc_now
    s = ncu_twin.start(a.out, "pcsamp")
    if s is None:
        return 2
    out, ncu, smi, ver = s.out, s.ncu, s.smi, s.version
    for k, size in [(k, n) for k in a.kernels for n in a.size]:
        got = ncu_twin.profile(s, k, size, ["--section", "SourceCounters", "--section", "WarpStateStats",
                                            "--import-source", "no", "--warp-sampling-interval", a.sampling_interval],
                               "pcsamp", a.cache_control)
        if got is None:
            continue
        p, ptxas, cubin, rep, shown = got
        name, per_pc, totals = samples_per_pc(rep, ncu)
        rec = {
            "schema": SCHEMA, "kernel": k, "size": size, "cache_control": a.cache_control, "params": p,
            "ncu_kernel_name": name,
            "date": utc_now(),
            "device": smi, "ncu_version": ncu_mod.ncu_version(ver),
            "command": "PYTHONPATH=. python3 -m gpusim.hw.pcsamp " + " ".join(sys.argv[1:]).replace(str(out), "$OUT"),
            "ncu_command": shown,
            "how": f"one profiled launch after one warm-up (--cache-control {a.cache_control}, --warp-sampling-interval "
                   f"{a.sampling_interval}); samples summed per PC; PCs as offsets from the kernel's first "
                   "instruction; sass from cuobjdump --dump-sass of the same cubin",
            "totals": totals, "samples_per_pc": per_pc, "sass": sass_text(cubin, k), "ptxas": ptxas,
        }
        (out / f"pcsamp_{k}_{size}.json").write_text(json.dumps(rec, indent=0, sort_keys=True))
        top = sorted(((v, n) for n, v in totals.items() if "stalled" in n), reverse=True)[:6]
        print(f"{k} {size}: {len(rec['sass'])} SASS PCs, metrics {len(per_pc)}; " +
              ", ".join(f"{n.replace('smsp__pcsamp_warps_issue_stalled_', '')} {v:.0f}" for v, n in top), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
