"""Hardware records under traces/hw/<device>/: the versioned schema and its one loader.

Pure Python (json only): any machine reads the records, with or without a GPU.

Two kinds of record share the loader:

* kernel records, schema ``gpusim.hw/1``, one file per kernel and size
  (``traces/hw/h200/<kernel>_<size>.json``; cuBLAS as ``cublas_<size>.json``;
  a non-default parameter set as ``<kernel>-<P><v>..._<size>.json``);
* microbenchmark records, schema ``gpusim.hw.micro/1``, one file per bench
  (``traces/hw/h200/micro/<bench>.json``).

Every record carries its provenance: the command that made it, the date, the
device, driver and CUDA versions, the clocks read during the run and the build
flags. ``load_record`` refuses a file that is not JSON, lacks a required field
or has another schema version, with a RecordError that names the file and the
problem.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

from gpusim.errors import RecordError

SCHEMA = "gpusim.hw/1"
MICRO_SCHEMA = "gpusim.hw.micro/1"
SCHEMAS = (SCHEMA, MICRO_SCHEMA)

REPO = Path(__file__).resolve().parents[2]
from gpusim.paths import HW_DIR, device_dir  # noqa: E402  (found the same way in a checkout and a wheel)

# field -> accepted types (None: any JSON value)
PROVENANCE = {
    "command": (str,),
    "date": (str,),
    "device": (str,),
    "driver": (str,),
    "cuda": (dict, str),
    "clocks": (dict,),
    "build_flags": (list,),
}
KERNEL_FIELDS = {
    "kernel": (str,),
    "params": (dict,),
    "M": (int,),
    "N": (int,),
    "K": (int,),
    "check": (dict,),
    "time_ms_median": (int, float),
}
CHECK_FIELDS = {"rel_err": (int, float, type(None)), "unwritten": (int,), "passed": (bool,)}
NCU_FIELDS = {"cache_control": (str,), "clock_control": (str,), "metrics": (dict,)}
MICRO_FIELDS = {
    "bench": (str,),
    "what": (str,),
    "how": (str,),
    "value": (int, float, dict, list),
    "unit": (str,),
}


class RecordMissing(RecordError):
    """No record of that launch exists (not an error of the records: a launch nobody measured)."""


class HwRecord(dict):
    """A validated record: the JSON object itself, plus a few conveniences."""

    path: str | None = None

    @property
    def kind(self) -> str:
        return "micro" if self["schema"] == MICRO_SCHEMA else "kernel"

    @property
    def size(self) -> int | None:
        """M when M == N == K (the ladder's sizes), else None."""
        if self.kind != "kernel":
            return None
        return self["M"] if self["M"] == self["N"] == self["K"] else None

    @property
    def metrics(self) -> dict:
        """The ncu metrics (ncu names), empty where this size was not profiled."""
        return dict(self.get("ncu", {}).get("metrics", {}))

    @property
    def passed(self) -> bool:
        return bool(self.get("check", {}).get("passed", False))


def _where(path) -> str:
    """The record's path as a user sees it: under traces/ where it lies there."""
    if path is None:
        return "<record>"
    p = Path(path)
    try:
        return str(p.resolve().relative_to(HW_DIR.resolve().parents[1]))
    except ValueError:
        return str(p)


def _need(obj: dict, fields: dict, where: str, ctx: str = ""):
    for key, types in fields.items():
        if key not in obj:
            raise RecordError(f"{where}: missing field {ctx}{key!r}")
        val = obj[key]
        if types and not (isinstance(val, types) and not (isinstance(val, bool) and bool not in types)):
            raise RecordError(f"{where}: field {ctx}{key!r} should be "
                              f"{' or '.join(t.__name__ for t in types)}, got {type(val).__name__}")


def validate_record(obj, path=None) -> HwRecord:
    """Check a parsed record against its schema; return it as an HwRecord."""
    where = _where(path)
    if not isinstance(obj, dict):
        raise RecordError(f"{where}: a record is a JSON object, got {type(obj).__name__}")
    schema = obj.get("schema")
    if schema is None:
        raise RecordError(f"{where}: no 'schema' field (expected one of {', '.join(SCHEMAS)})")
    if schema not in SCHEMAS:
        raise RecordError(f"{where}: schema {schema!r} is not one this gpusim reads "
                          f"({', '.join(SCHEMAS)}); re-record it or update gpusim")
    _need(obj, PROVENANCE, where)
    if schema == SCHEMA:
        _need(obj, KERNEL_FIELDS, where)
        for nm in ("M", "N", "K"):
            if obj[nm] <= 0:
                raise RecordError(f"{where}: {nm} must be positive, got {obj[nm]}")
        _need(obj["check"], CHECK_FIELDS, where, "check.")
        t = obj["time_ms_median"]
        if not (math.isfinite(t) and t > 0):
            raise RecordError(f"{where}: time_ms_median must be a positive number, got {t!r}")
        if "time_ms_all" not in obj and "time_ms_quantiles" not in obj:
            raise RecordError(f"{where}: needs 'time_ms_all' or 'time_ms_quantiles'")
        if "ncu" in obj:
            if not isinstance(obj["ncu"], dict):
                raise RecordError(f"{where}: field 'ncu' should be an object")
            _need(obj["ncu"], NCU_FIELDS, where, "ncu.")
            for k, v in obj["ncu"]["metrics"].items():
                if not (v is None or isinstance(v, (int, float, str))):
                    raise RecordError(f"{where}: ncu metric {k!r} has a {type(v).__name__} value")
    else:
        _need(obj, MICRO_FIELDS, where)
    rec = HwRecord(obj)
    rec.path = None if path is None else str(path)
    return rec


def load_record(path) -> HwRecord:
    """Read and validate one record file (kernel or microbenchmark)."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as e:
        raise RecordError(f"{_where(p)}: cannot read record ({e.strerror or e})") from None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        raise RecordError(f"{_where(p)}: not valid JSON (line {e.lineno}: {e.msg})") from None
    return validate_record(obj, p)


def dump_record(rec: dict, path) -> Path:
    """Validate and write a record (compact, sorted keys, one trailing newline)."""
    validate_record(rec, path)
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(rec, indent=1, sort_keys=True, allow_nan=False) + "\n")
    return p


def record_name(kernel: str, size: int, params: dict | None = None, defaults: dict | None = None) -> str:
    """File name of a kernel record; parameters that differ from the defaults go in the name."""
    extra = {k: v for k, v in (params or {}).items() if defaults is None or defaults.get(k) != v}
    tag = kernel + ("-" + "".join(f"{k}{v}" for k, v in sorted(extra.items())) if extra else "")
    return f"{tag}_{size}.json"


def shape_record_name(kernel: str, M: int, N: int, K: int) -> str:
    """File name of a non-square record (default parameters), under traces/hw/<device>/shapes/."""
    return f"{kernel}_{M}x{N}x{K}.json"



def hw_record(kernel: str, size: int, device: str = "h200", params: dict | None = None) -> HwRecord:
    """The committed record of `kernel` at M = N = K = size: with its default parameters, or with
    `params` where they differ from the defaults (a held-out variant, under traces/hw/<device>/variants/,
    or a set of the parameter sweep, sweep/; named by records.record_name)."""
    defaults = None
    if params:
        from gpusim.kernel.spec import get_kernel
        defaults = dict(get_kernel(kernel).params)
    full = {**(defaults or {}), **(params or {})}
    if defaults is not None and full != defaults:
        name = record_name(kernel, size, full, defaults)
        p = device_dir(device) / "variants" / name
        if not p.exists() and (device_dir(device) / "sweep" / name).exists():
            p = device_dir(device) / "sweep" / name      # the parameter sweep (counts of on-demand SASS)
    else:
        p = device_dir(device) / f"{kernel}_{int(size)}.json"
    if not p.exists():
        have = sorted(f.stem for f in p.parent.glob(f"{kernel}*_*.json"))
        hint = f"; recorded: {', '.join(have)}" if have else ""
        raise RecordMissing(f"no hardware record for {kernel} at size {size} on {device} "
                          f"(looked for {_where(p)}){hint}")
    return load_record(p)


def list_hw_records(device: str = "h200", micro: bool = False) -> list[HwRecord]:
    """Every kernel record of a device (or its microbenchmark records), in a stable order."""
    d = device_dir(device) / "micro" if micro else device_dir(device)
    if not d.is_dir():
        return []
    recs = [load_record(f) for f in sorted(d.glob("*.json"))]
    if micro:
        return sorted(recs, key=lambda r: r["bench"])
    from gpusim.kernel.spec import LADDER
    order = {k: i for i, k in enumerate(LADDER)}
    return sorted(recs, key=lambda r: (order.get(r["kernel"], len(order)), r["kernel"],
                                       r["M"], r["N"], r["K"], r.path or ""))
