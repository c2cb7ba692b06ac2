"""Profile many parameter sets of the twins in one device call (counts for on-demand SASS).

    PYTHONPATH=. python3 -m gpusim.hw.sweep --out "$OUT" --size 2048 \\
        --set regtile2d:BM=64,BN=64,BK=8,TM=4,TN=4 --set regblock:BK=16 ...

Each --set is one kernel with parameter overrides; each is built, checked, timed and profiled
with ncu at one size (`runner.record`), and the records so far are re-packed into
$OUT/hw_records.tar.gz after every set, so a timeout still brings data back. Unpack with
`python3 -m gpusim.hw.unpack` as for `gpusim.hw.batch`.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from gpusim.hw.batch import pack


def parse_set(item: str) -> tuple[str, dict]:
    """"regblock:BK=16,TM=4" -> ("regblock", {"BK": 16, "TM": 4})."""
    kernel, sep, rest = item.partition(":")
    out = {}
    for nv in filter(None, rest.split(",")):
        name, eq, value = nv.partition("=")
        if not (eq and name and value.isdigit()):
            raise SystemExit(f"--set takes KERNEL:NAME=INT[,NAME=INT...], got {item!r}")
        out[name] = int(value)
    if not (sep and kernel):
        raise SystemExit(f"--set takes KERNEL:NAME=INT[,NAME=INT...], got {item!r}")
    return kernel, out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--size", type=int, default=2048)
    ap.add_argument("--set", action="append", default=[], metavar="KERNEL:NAME=INT,...")
    ap.add_argument("--budget-s", type=float, default=480.0, help="no new set starts after this")
    a = ap.parse_args(argv)
    sets = [parse_set(s) for s in a.set]
    t0 = time.time()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.gettempdir()) / "gpusim_sweep_work"
    for sub in ("records", "ncu", "info"):
        (work / sub).mkdir(parents=True, exist_ok=True)
    from gpusim.hw import runner
    from gpusim.hw.devinfo import smi_summary
    smi = smi_summary()
    print(smi, flush=True)
    (work / "info" / "nvidia-smi.txt").write_text(smi)
    cmd = ("PYTHONPATH=. python3 -m gpusim.hw.sweep " + " ".join(sys.argv[1:])).replace(str(out), "$OUT")
    for n, (kernel, params) in enumerate(sets):
        if time.time() - t0 > a.budget_s:
            print(f"budget spent: {len(sets) - n} sets left out", flush=True)
            break
        recs = runner.record([kernel], [a.size], ncu=True, out_dir=work / "records", command=cmd,
                             ncu_sizes=[a.size], target_s=0.5, work_dir=work / "ncu",
                             params={kernel: params}, cublas=False)
        pack(work, out)
        r = recs[0]
        print(f"[{time.time() - t0:6.1f}s] {kernel} {params}: {r['time_ms_median']:.4g} ms, check "
              f"{'passed' if r['check']['passed'] else 'FAILED'}, ncu {'yes' if 'ncu' in r else 'no'}", flush=True)
    print(f"total {time.time() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
