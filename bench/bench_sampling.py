"""The sampling error of the whole-kernel prediction: windowed against every trip timed, engine against
engine (no hardware figure enters, so this is where kernel_time's W1, W2 are chosen).

For every point (the ladder at --sizes, and with --shapes the held-out non-square shapes too) the
prediction with each window pair of --windows, and the full run (predict(..., full=True)); per point the
error of each pair against the full run, then per pair the mean and max |error|. A full run times every
trip of every round: minutes for the whole set (2048x2048x8192 alone about a minute a kernel).
Usage: python bench/bench_sampling.py [--kernels a,b] [--sizes 1024,2048] [--shapes] [--windows 8,16 16,48]
"""
import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import gpusim  # noqa: E402
from gpusim.estimate.kernel_time import predict, W1, W2  # noqa: E402

LADDER = ("naive", "coalesced", "smemtile", "tiled32", "regtile1d", "regblock", "regtile2d", "vectorized")


def window_pair(text: str) -> tuple:
    try:
        w1, w2 = (int(x) for x in text.split(","))
    except ValueError:
        raise SystemExit(f"--windows takes trip-count pairs W1,W2 (e.g. 8,16), got {text!r}")
    if not 0 < w1 < w2:
        raise SystemExit(f"--windows needs 0 < W1 < W2, got {text}")
    return w1, w2


def points(kernels, sizes, with_shapes):
    out = [(k, n, n, n) for k in kernels for n in sizes]
    if with_shapes:
        for f in sorted((ROOT / "traces/hw/h200/shapes").glob("*.json")):
            r = json.loads(f.read_text())
            if r["kernel"] in kernels:
                out.append((r["kernel"], r["M"], r["N"], r["K"]))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", default=",".join(LADDER))
    ap.add_argument("--sizes", default="1024,2048")
    ap.add_argument("--shapes", action="store_true", help="also the held-out shapes (traces/hw/h200/shapes/)")
    ap.add_argument("--windows", nargs="+", default=[f"{W1},{W2}"],
                    help=f"window pairs W1,W2 to compare with the full run (default {W1},{W2}, the prediction's)")
    a = ap.parse_args()
    pairs = [window_pair(w) for w in a.windows]
    kernels = a.kernels.split(",")
    unknown = sorted(set(kernels) - set(LADDER))
    if unknown:
        raise SystemExit(f"unknown kernels {unknown}; the ladder is {', '.join(LADDER)}")
    sizes = [int(s) for s in a.sizes.split(",") if s]
    pts = points(kernels, sizes, a.shapes)
    print(f"{'kernel':11s} {'M x N x K':>16s} {'trips':>6s} {'full ms':>9s} "
          + " ".join(f"{f'{w1},{w2}':>9s}" for w1, w2 in pairs))
    errs = {p: [] for p in pairs}
    for k, M, N, K in pts:
        r = gpusim.simulate(k, M=M, N=N, K=K, keep_trace=True)
        full = predict(r, full=True)
        row = []
        for p in pairs:
            e = 100 * (predict(r, windows=p).cycles / full.cycles - 1)
            errs[p].append(e)
            row.append(f"{e:+8.1f}%")
        print(f"{k:11s} {f'{M}x{N}x{K}':>16s} {full.rounds[0].trips:6d} {full.time_ms:9.4f} " + " ".join(row),
              flush=True)
    for p, e in errs.items():
        print(f"windows {p[0]},{p[1]}: mean |error| {sum(map(abs, e)) / len(e):.2f} %, "
              f"max |error| {max(map(abs, e)):.2f} % over {len(e)} points (against every trip timed)")


if __name__ == "__main__":
    main()
