"""Time the ladders' launches again, without ncu: how far a record's time moves from one session to another.

    PYTHONPATH=. python3 -m gpusim.hw.retime --out "$OUT" [--ladder memory] [--passes 3]

Each launch is built, checked and timed as `gpusim hw record` does it (gpusim.hw.runner.measure_twin:
queued CUDA events, the median of about half a second of launches, inputs as the record's), at the
records' sizes (1024, 2048, 4096), taken in turn and `passes` times over the list, so that a drift of the
machine shows in every launch alike. It writes `retime_<ladder>_<UTC date and time>.json` (schema
gpusim.hw.retime/1): per kernel and size each pass's median. Each device session is a separate file under
traces/hw/h200/retime/; `python bench/bench_timing.py --ladder memory` sets the prediction beside the
record and beside the sessions' medians. The records themselves are not changed.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from gpusim.kernel.spec import LADDERS

SCHEMA = "gpusim.hw.retime/1"
SIZES = (1024, 2048, 4096)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--ladder", choices=sorted(LADDERS), default="memory")
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--target-s", type=float, default=0.5, help="seconds of timed launches per point and pass")
    a = ap.parse_args(argv)
    from gpusim.hw import gpu, twins
    from gpusim.hw.devinfo import cuda_versions, smi_query, utc_now
    from gpusim.hw.runner import BUILD_DIR, measure_twin
    cp = gpu.cupy()
    smi = smi_query()
    names = list(LADDERS[a.ladder])
    built = {}
    for n in names:
        p = twins.resolve_params(n, None)
        built[n] = (p, twins.build(n, p, BUILD_DIR)[0])
    times = {f"{n}_{s}": [] for s in SIZES for n in names}
    checks = {}
    for k in range(a.passes):
        for s in SIZES:
            for n in names:
                p, cubin = built[n]
                m = measure_twin(cp, n, p, s, s, s, cubin, target_s=a.target_s)
                times[f"{n}_{s}"].append(m["time_ms_median"])
                checks[f"{n}_{s}"] = m["check"]
                print(f"pass {k + 1}/{a.passes} {n} {s}: {m['time_ms_median']:.5g} ms", flush=True)
    date = utc_now()
    rec = {"schema": SCHEMA, "ladder": a.ladder, "date": date, "device": smi.get("name"),
           "driver": str(smi.get("driver_version")), "clocks": {k: v for k, v in smi.items() if "clock" in k},
           "cuda": cuda_versions(cp), "build_flags": twins.build_flags(),
           "command": "PYTHONPATH=. python3 -m gpusim.hw.retime --out $OUT " + " ".join(
               x for x in (argv if argv is not None else sys.argv[1:]) if not x.startswith("--out")
               and x != a.out),
           "how": "each launch built, checked and timed as gpusim hw record does (runner.measure_twin: queued CUDA "
                  f"events, the median of about {a.target_s} s of launches), {a.passes} passes over the ladder's "
                  "kernels and sizes in turn",
           "time_ms_median_by_pass": times, "check": checks}
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    stamp = date.replace("-", "").replace(":", "")[:15]
    (out / f"retime_{a.ladder}_{stamp}.json").write_text(json.dumps(rec, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
