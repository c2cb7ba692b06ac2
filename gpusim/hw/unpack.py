"""Unpack what a device batch brought back into traces/hw/<device>/ (pure Python).

    python3 -m gpusim.hw.unpack FOLDER [--dest traces/hw/h200] [--reparse]

FOLDER holds hw_records.tar.gz (from gpusim.hw.batch) and/or micro.tar.gz
(from `python3 -m calibrate`, or calibrate/run_micro.py alone). Every record is
validated before it is written, and a micro record's SASS listing (micro/*.sass)
goes beside it; ncu's raw CSVs, jobs and manifests go to kernels_cuda/.build/hw/raw/
(ignored), where --reparse reads them to rebuild each record's ncu metrics
with this checkout's parser (for a parser fixed after the run).
"""
from __future__ import annotations

import argparse
import json
import sys
import tarfile
from pathlib import Path

from gpusim.hw import ncu as ncu_mod
from gpusim.hw.records import dump_record, validate_record

REPO = Path(__file__).resolve().parents[2]
RAW = REPO / "kernels_cuda" / ".build" / "hw" / "raw"


def _members(tar: Path):
    with tarfile.open(tar, "r:gz") as tf:
        for m in tf.getmembers():
            if m.isfile():
                yield m.name, tf.extractfile(m).read()


def _requested(records: dict, size: int, row: dict) -> list[str]:
    """The metric list a record at this size asked for (else every metric of the row)."""
    for rec in records.values():
        if rec.get("M") == size and "ncu" in rec and rec["ncu"].get("metrics_requested"):
            return rec["ncu"]["metrics_requested"]
    return [m for m in row["metrics"] if "__" in m]


def reparse(records: dict, raw: Path):
    """Rebuild records' ncu metrics and opcode histograms from the raw CSVs."""
    from gpusim.hw.runner import assign_rows
    for csv_path in sorted(raw.glob("ncu_*.csv")):
        size = int(csv_path.stem.split("_")[1])
        jobs_p, man_p = raw / f"jobs_{size}.json", raw / f"manifest_{size}.json"
        if not (jobs_p.exists() and man_p.exists()):
            continue
        jobs = json.loads(jobs_p.read_text())
        rows = ncu_mod.parse_raw_csv(csv_path.read_text())
        api_p = raw / f"ncu_{size}_api.json"
        api = json.loads(api_p.read_text()) if api_p.exists() else None
        api = api if api and len(api) == len(rows) else None
        for job, res in zip(jobs, assign_rows(
                [ncu_mod.compact(r, _requested(records, size, r), api[i] if api else None)
                 for i, r in enumerate(rows)], json.loads(man_p.read_text()), jobs)):
            key = f"{job['kernel']}_{size}.json"
            if res is None or key not in records or "ncu" not in records[key]:
                continue
            records[key]["ncu"].update(res)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("folder")
    ap.add_argument("--dest", default=str(REPO / "traces" / "hw" / "h200"))
    ap.add_argument("--reparse", action="store_true")
    a = ap.parse_args(argv)
    src, dest = Path(a.folder), Path(a.dest)
    RAW.mkdir(parents=True, exist_ok=True)
    records, micro, micro_sass = {}, {}, {}
    for tar in (src / "hw_records.tar.gz", src / "micro.tar.gz"):
        if not tar.exists():
            continue
        for name, data in _members(tar):
            sub, base = name.split("/", 1) if "/" in name else ("", name)
            if sub == "records" and base.endswith(".json"):
                records[base] = json.loads(data)
            elif sub == "micro" and base.endswith(".json"):
                micro[base] = json.loads(data)
            elif sub == "micro" and base.endswith(".sass"):
                micro_sass[base] = data
            else:
                (RAW / base).write_bytes(data)
    if a.reparse:
        reparse(records, RAW)
    n = 0
    for base, rec in sorted(records.items()):
        validate_record(rec, base)
        dump_record(rec, dest / base)
        n += 1
    for base, rec in sorted(micro.items()):
        validate_record(rec, base)
        dump_record(rec, dest / "micro" / base)
        n += 1
    for base, data in sorted(micro_sass.items()):
        (dest / "micro").mkdir(parents=True, exist_ok=True)
        (dest / "micro" / base).write_bytes(data)
    sass = f" and {len(micro_sass)} SASS listings" if micro_sass else ""
    print(f"{n} records{sass} written under {dest.relative_to(REPO) if dest.is_relative_to(REPO) else dest}; "
          f"raw files in {RAW.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
