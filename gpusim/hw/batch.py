"""One device call's worth of hardware recording, packed for the trip back.

    PYTHONPATH=. python3 -m gpusim.hw.batch --out "$OUT" [--sizes 1024 2048 4096]
        [--ncu-sizes 1024 4096 2048] [--budget-s 420] [--repro regtile2d:4096]
        [--param KERNEL:NAME=VALUE ...] [--no-cublas] [--shapes MxNxK ...]

Prints the card's nvidia-smi state, builds every twin with kernels_cuda/build.py's
flags, checks and times every twin and cuBLAS at each size, then profiles them
with ncu one size at a time while the time budget lasts (--budget-s: no ncu
size starts after it, and a running one is stopped at budget + 120 s). After
every step it re-packs what exists so far into $OUT/hw_records.tar.gz
(records/<kernel>_<size>.json, ncu/ CSVs and logs), so a timeout still brings
data back; ncu's report files go to $OUT/ncu_reps.tar.gz. Unpack with
`python3 -m gpusim.hw.unpack`.
"""
from __future__ import annotations

import argparse
import json
import sys
import tarfile
import tempfile
import time
from pathlib import Path


def pack(work: Path, out: Path):
    tmp = out / "hw_records.tar.gz.tmp"
    with tarfile.open(tmp, "w:gz") as tf:
        for sub in ("records", "ncu", "info"):
            d = work / sub
            if d.is_dir():
                for f in sorted(d.iterdir()):
                    if f.is_file() and not f.name.endswith(".ncu-rep"):
                        tf.add(f, arcname=f"{sub}/{f.name}")
    tmp.replace(out / "hw_records.tar.gz")


def pack_reps(work: Path, out: Path, limit=15 * 2**20):
    reps = sorted((work / "ncu").glob("*.ncu-rep"))
    if not reps:
        return
    tmp = out / "ncu_reps.tar.gz.tmp"
    with tarfile.open(tmp, "w:gz") as tf:
        for f in reps:
            tf.add(f, arcname=f"ncu/{f.name}")
    if tmp.stat().st_size <= limit:
        tmp.replace(out / "ncu_reps.tar.gz")
    else:
        tmp.unlink()


def repro(kernel: str, size: int, records_dir: Path, info_dir: Path):
    """Time one twin again in this process and compare with its record (the 3 % check)."""
    from gpusim.hw import gpu, twins
    from gpusim.hw.runner import BUILD_DIR, measure_twin
    from gpusim.hw.records import load_record
    rec = load_record(records_dir / f"{kernel}_{size}.json")
    cp = gpu.cupy()
    p = twins.resolve_params(kernel, None)
    cubin, _, _ = twins.build(kernel, p, BUILD_DIR)
    again = measure_twin(cp, kernel, p, size, size, size, cubin)
    d = again["time_ms_median"] / rec["time_ms_median"] - 1.0
    res = {"kernel": kernel, "size": size, "recorded_ms": rec["time_ms_median"],
           "again_ms": again["time_ms_median"], "rel_diff": d, "within_3pct": abs(d) <= 0.03,
           "clocks_again": again["clocks"], "check_again": again["check"]}
    (info_dir / f"repro_{kernel}_{size}.json").write_text(json.dumps(res, indent=1))
    return res


def parse_params(items) -> dict:
    """["tiled32:BM=16", "tiled32:BN=64"] -> {"tiled32": {"BM": 16, "BN": 64}}."""
    out: dict = {}
    for item in items:
        kernel, sep, nv = item.partition(":")
        name, eq, value = nv.partition("=")
        if not (sep and eq and kernel and name) or not value.lstrip("-").isdigit():
            raise SystemExit(f"--param takes KERNEL:NAME=INTEGER, got {item!r}")
        out.setdefault(kernel, {})[name] = int(value)
    return out


def parse_shapes(items) -> list[tuple[int, int, int]]:
    """["4096x1024x2048"] -> [(4096, 1024, 2048)]."""
    out = []
    for item in items:
        parts = item.lower().split("x")
        if len(parts) != 3 or not all(x.isdigit() and int(x) > 0 for x in parts):
            raise SystemExit(f"--shapes takes MxNxK with positive integers, got {item!r}")
        out.append(tuple(int(x) for x in parts))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--work", default=None, help="working folder (default: a gpusim_hw_work temp folder)")
    ap.add_argument("--kernels", nargs="*", default=None)
    ap.add_argument("--sizes", nargs="*", type=int, default=[1024, 2048, 4096])
    ap.add_argument("--ncu-sizes", nargs="*", type=int, default=[1024, 4096, 2048])
    ap.add_argument("--no-ncu", action="store_true")
    ap.add_argument("--budget-s", type=float, default=420.0)
    ap.add_argument("--target-s", type=float, default=1.0)
    ap.add_argument("--repro", default=None, help="KERNEL:SIZE to time again at the end")
    ap.add_argument("--param", action="append", default=[], metavar="KERNEL:NAME=VALUE",
                    help="a tile parameter of one kernel (repeatable): records a variant, named by "
                         "its parameters (records.record_name)")
    ap.add_argument("--no-cublas", action="store_true", help="leave out the cuBLAS reference rows")
    ap.add_argument("--shapes", nargs="*", default=None, metavar="MxNxK",
                    help="instead: check and time the twins (default parameters) at these non-square shapes, "
                         "no ncu (records <kernel>_<M>x<N>x<K>.json)")
    a = ap.parse_args(argv)
    params = parse_params(a.param)
    t0 = time.time()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(a.work) if a.work else Path(tempfile.gettempdir()) / "gpusim_hw_work"
    for sub in ("records", "ncu", "info"):
        (work / sub).mkdir(parents=True, exist_ok=True)

    from gpusim.hw import runner
    from gpusim.hw.devinfo import smi_summary
    smi = smi_summary()
    print(smi, flush=True)
    (work / "info" / "nvidia-smi.txt").write_text(smi)

    def progress(done, total, label):
        print(f"[{time.time() - t0:6.1f}s] {done}/{total} {label}", flush=True)
        pack(work, out)

    cmd = ("PYTHONPATH=. python3 -m gpusim.hw.batch " + " ".join(sys.argv[1:])).replace(str(out), "$OUT")
    if a.shapes is not None:
        shapes = parse_shapes(a.shapes)
        recs = runner.record_shapes(a.kernels, shapes, work / "records", progress, command=cmd, target_s=a.target_s)
        pack(work, out)
        for r in recs:
            print(f"{r['kernel']:12s} {r['M']}x{r['N']}x{r['K']}  {r['time_ms_median']:10.4f} ms  check "
                  f"{'passed' if r['check']['passed'] else 'FAILED'}")
        print(f"total {time.time() - t0:.1f} s")
        return 0
    recs = runner.record(a.kernels, a.sizes, ncu=not a.no_ncu, out_dir=work / "records",
                         progress=progress, command=cmd, ncu_sizes=a.ncu_sizes,
                         target_s=a.target_s, work_dir=work / "ncu", deadline=t0 + a.budget_s,
                         params=params or None, cublas=not a.no_cublas)
    pack(work, out)
    pack_reps(work, out)
    if a.repro:
        k, s = a.repro.split(":")
        r = repro(k, int(s), work / "records", work / "info")
        print(f"repro {k} {s}: recorded {r['recorded_ms']:.4g} ms, again {r['again_ms']:.4g} ms, "
              f"diff {100 * r['rel_diff']:+.2f} %", flush=True)
        pack(work, out)

    print(f"\n{'kernel':12s} {'size':>5s} {'ms':>10s} {'GFLOP/s':>9s} {'rel_err':>9s} pass ncu")
    for r in recs:
        c = r["check"]
        print(f"{r['kernel']:12s} {r['M']:5d} {r['time_ms_median']:10.4f} {r.get('gflops', 0):9.1f} "
              f"{c['rel_err'] if c['rel_err'] is not None else float('nan'):9.2e} "
              f"{'yes' if c['passed'] else 'NO '}  {'yes' if 'ncu' in r else '-'}")
    print(f"total {time.time() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
