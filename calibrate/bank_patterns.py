"""Measure shared-load wavefronts for lane-address patterns on the GPU (one launch per pattern).

    python3 calibrate/bank_patterns.py --out DIR      # on the GPU machine (needs nvcc, ncu)
    python3 calibrate/bank_patterns.py --record DIR   # here: DIR/bank_patterns.csv -> record

Patterns are those of the ladder kernels' shared loads plus diagnostic ones; each is one
warp-level LDS / LDS.64 / LDS.128 whose wavefronts ncu reads (--clock-control none).
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import subprocess
import sys
from pathlib import Path

from micro_cli import MICRO_RECORDS, provenance, nvcc_build          # (beside this script)

L = list(range(32))


def chunks16(f):       # 16-byte chunk index per lane -> word offsets
    return [4 * f(i) for i in L]


PATTERNS = {
    # name: (bytes per lane, word offset per lane)
    "128_linear": (16, chunks16(lambda i: i)),
    "128_stride32B": (16, chunks16(lambda i: 2 * i)),
    "128_stride128B": (16, chunks16(lambda i: 8 * i)),
    "128_broadcast": (16, chunks16(lambda i: 0)),
    "128_pairs_share": (16, chunks16(lambda i: i // 2)),
    "128_regblock_As": (16, chunks16(lambda i: (i // 8) * 2)),        # threadRow = tid/8, TM=8
    "128_regblock_Bs": (16, chunks16(lambda i: (i % 8) * 2)),         # threadCol = tid%8, TN=8
    "128_regtile2d_Bs": (16, chunks16(lambda i: (i % 16) * 2)),       # threadCol = tid%16
    "128_vectorized_As": (16, chunks16(lambda i: (i // 16) * 2)),     # threadRow = tid/16
    "128_quarter_uniform": (16, chunks16(lambda i: i // 8)),
    "128_quarter_uniform_stride2": (16, chunks16(lambda i: (i // 8) * 2)),
    "128_lanes_i_i8_share": (16, chunks16(lambda i: i % 8)),           # lanes i, i+8 share (consecutive)
    "128_halves_identical": (16, chunks16(lambda i: i % 16)),
    "128_quarter_pairs_stride2": (16, chunks16(lambda i: (i % 8) * 2 + 16 * (i // 16))),
    "128_half_uniform": (16, chunks16(lambda i: i // 16)),
    "128_two_addr_per_half_same_bank": (16, chunks16(lambda i: (i // 8) * 8)),
    "64_linear": (8, [2 * i for i in L]),
    "64_lanes_i_i16_share": (8, [2 * (i % 16) for i in L]),
    "64_lanes_i_i8_share_stride16B": (8, [4 * (i % 8) for i in L]),
    "64_quarter_uniform": (8, [2 * (i // 8) for i in L]),
    "32_lanes_i_i16_share_stride2": (4, [2 * (i % 16) for i in L]),
    # stores, alone on the SM (no competing L1 traffic): the ladder's STS patterns
    "st32_linear": (-4, [i for i in L]),
    "st32_stride8_transposed": (-4, [(i % 2) * 512 + i // 2 for i in L]),   # vectorized's As store
    "st128_linear": (-16, chunks16(lambda i: i)),
}

# the kernel first fills shared memory with 8192 / 32 = 256 linear 32-bit STS (one warp): each
# costs one wavefront and no conflict (the probe st32_linear then reads exactly 1), so a store
# probe's own figures are the totals less those 256
FILL_STS = 256

METRICS = [f"{m}_{op}.sum" for op in ("ld", "st") for m in (
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op",
    "smsp__sass_inst_executed_op_shared")]


def run_on_gpu(out: Path):
    here = Path(__file__).resolve().parent
    exe = out / "bank_patterns_bin"
    nvcc_build(here / "bank_patterns.cu", exe)
    stdin = "\n".join(f"{n} {w} " + " ".join(map(str, offs)) for n, (w, offs) in PATTERNS.items()) + "\n"
    sys.path.insert(0, str(here.parent))
    from gpusim.hw.ncu import find_ncu
    cmd = [find_ncu() or "ncu", "--clock-control", "none", "--kernel-name", "probe", "--csv", "--page", "raw",
           "--metrics", ",".join(METRICS), str(exe)]
    p = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    (out / "bank_patterns.csv").write_text(p.stdout)
    (out / "bank_patterns.err").write_text(p.stderr + "\ncommand: " + " ".join(cmd[:-1]) + " bank_patterns_bin\n")
    exe.unlink(missing_ok=True)
    from gpusim.hw.devinfo import smi_query, utc_now
    ver = subprocess.run([cmd[0], "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    nv = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    (out / "bank_patterns_prov.json").write_text(json.dumps({
        "date": utc_now(), "smi": smi_query(), "ncu": ver[-1] if ver else "", "nvcc": nv[-1] if nv else "",
        "command": "python3 calibrate/bank_patterns.py --out $OUT"}))


def parse(csv_text: str) -> list[dict]:
    lines = [l for l in csv_text.splitlines() if l.startswith('"')]
    rows = list(csv.DictReader(io.StringIO("\n".join(lines))))
    out = []
    for r in rows:
        try:
            int(r["ID"])
        except (KeyError, ValueError):
            continue      # the units row
        out.append({m: float(r[m].replace(",", "")) for m in METRICS})
    return out


def record(dir_: Path, dest: Path):
    vals = parse((dir_ / "bank_patterns.csv").read_text())
    prov = json.loads((dir_ / "bank_patterns_prov.json").read_text())
    names = list(PATTERNS)
    if len(vals) != len(names):
        sys.exit(f"expected {len(names)} profiled launches, got {len(vals)}")
    patterns = {}
    for n, v in zip(names, vals):
        width, offs = PATTERNS[n]
        op = "st" if width < 0 else "ld"
        count = v[f"smsp__sass_inst_executed_op_shared_{op}.sum"]
        wf = v[f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum"]
        bc = v[f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum"]
        fill = FILL_STS if op == "st" else 0
        patterns[n] = {"bytes": abs(width), "op": op, "word_offsets": offs,
                       "wavefronts": (wf - fill) / (count - fill), "bank_conflicts": bc / (count - fill),
                       "raw": {"instructions": count, "wavefronts": wf, "bank_conflicts": bc,
                               "fill_sts": fill}}
    rec = {
        "schema": "gpusim.hw.micro/1", "bench": "bank_patterns",
        "what": "wavefronts and bank conflicts of one warp-level shared load or store per lane-address pattern",
        "how": "one warp, one ld/st.volatile.shared(.v2/.v4) per launch at per-lane word offsets, alone on "
               "the GPU; ncu --clock-control none reads the instruction's wavefronts "
               "(calibrate/bank_patterns.py, bank_patterns.cu)",
        "command": prov["command"] + " (on the H200), then --record DIR here",
        **provenance(prov),
        "unit": "wavefronts per instruction",
        "value": patterns,
    }
    dest.write_text(json.dumps(rec, indent=1))
    print(f"wrote {dest}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--record")
    ap.add_argument("--dest", default=str(MICRO_RECORDS / "bank_patterns.json"))
    a = ap.parse_args()
    if a.out:
        run_on_gpu(Path(a.out))
    if a.record:
        record(Path(a.record), Path(a.dest))
