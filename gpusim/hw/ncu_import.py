"""A user's own Nsight Compute export made into a gpusim record (pure Python, no GPU).

`ncu --csv --page raw` prints one row per profiled launch. `import_export`
reads such a file (plain or .gz, ncu's default units or `--print-units base`,
with or without `--print-metric-instances details`), converts every metric to
the base units the project's records use (bytes, ns, Hz), tells which gpusim
kernel and size each launch is, and builds a record of schema gpusim.hw/1
that `gpusim compare --record` and every other reader take as they take the
project's own.

Which kernel: the user names it (`kernel=`), or the launch's kernel name is
matched against the kernels gpusim knows (the identifier before any template
or argument list). Which size: the user gives it, or it is the one power of
two whose launch shape (grid and block) is that kernel's at M = N = K; where
none or several fit, the launch is refused with the reason. The time is the
user's own event timing where given; otherwise ncu's gpu__time_duration of
the profiled launch, and the record says so.
"""
from __future__ import annotations

import datetime as _dt
import gzip
import hashlib
import re
from pathlib import Path

from gpusim.errors import KernelConfigError, RecordError
from gpusim.hw import ncu as ncu_mod
from gpusim.hw.records import SCHEMA, validate_record

# SI prefixes as ncu prints them in its default ("auto") units: Mbyte = 1e6 bytes, Ghz = 1e9 Hz
_PREFIX = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
_TIME_NS = {"ns": 1.0, "nsecond": 1.0, "us": 1e3, "usecond": 1e3, "ms": 1e6, "msecond": 1e6,
            "s": 1e9, "second": 1e9}
# sizes tried when the user gives none: M = N = K a power of two
_SIZES = [2 ** e for e in range(5, 17)]


def unit_scale(unit: str) -> tuple[float, str]:
    """(factor, base unit) turning a value printed in `unit` into the base unit the records use."""
    u = (unit or "").strip()
    if u in _TIME_NS:
        return _TIME_NS[u], "ns"
    num, _, den = u.partition("/")
    if den in _TIME_NS and num:                       # a rate such as Gbyte/second or Kinst/ms
        f, base = unit_scale(num)
        return f * 1e9 / _TIME_NS[den], f"{base}/second"
    m = re.fullmatch(r"([KMGTP]?)(byte|hz|Hz|inst|sector|request|cycle|warp|thread|block|wavefront)(.*)", u)
    if m:
        rest = m.group(3)
        return _PREFIX[m.group(1)], ("hz" if m.group(2).lower() == "hz" else m.group(2)) + rest
    return 1.0, u


def _open_text(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise RecordError(f"{path}: cannot read ({e.strerror or e})") from None
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as e:
            raise RecordError(f"{path}: a damaged gzip file ({e})") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise RecordError(f"{path}: not text (an .ncu-rep? export it first: "
                          "ncu --import REPORT --csv --page raw > FILE.csv)") from None


def read_export(path) -> tuple[list[dict], list[str]]:
    """The launches of a raw-page CSV, metrics in base units; and the warnings reading it raised.

    A row whose cell count differs from the header's is refused (a cut or edited file), naming the
    launch; a metric whose cell is not a number is dropped with a warning naming it.
    """
    p = Path(path)
    text = _open_text(p)
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith('"ID"') or ln.startswith("ID,")), None)
    if start is None:
        raise RecordError(f"{p}: no ncu raw-page header (a line starting \"ID\"); export with "
                          "`ncu --import REPORT --csv --page raw`")
    import csv
    import io
    csv.field_size_limit(2**31 - 1)
    table = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    header = table[0]
    for col in ("Kernel Name", "Grid Size", "Block Size"):
        if col not in header:
            raise RecordError(f"{p}: the header has no {col!r} column; is this `--page raw`?")
    for i, r in enumerate(table[1:], start=start + 2):
        if r and len(r) != len(header):
            raise RecordError(f"{p}: line {i} has {len(r)} cells where the header has {len(header)} "
                              "(a cut or edited export)")
    rows = ncu_mod.parse_raw_csv(text)
    if not rows:
        raise RecordError(f"{p}: the export holds no profiled launch")
    warnings = []
    for row in rows:
        bad = []
        for name, v in list(row["metrics"].items()):
            if v is None:
                del row["metrics"][name]
            elif not isinstance(v, (int, float)):
                if name.startswith(ncu_mod.UNLISTED_PREFIXES) or name in ncu_mod.INSTANCED:
                    continue                  # names and modes (a display name, 'CachePreferNone')
                bad.append(name)
                del row["metrics"][name]
            else:
                f, base = unit_scale(row["units"].get(name, ""))
                if f != 1.0:
                    row["metrics"][name] = v * f
                    v2 = row["metrics"][name]
                    if abs(v2 - round(v2)) < 1e-6 * max(1.0, abs(v2)):
                        row["metrics"][name] = int(round(v2))
                if base:
                    row["units"][name] = base
        if bad:
            warnings.append(f"{p.name}: launch {row['id']} ({row['kernel']}): not a number, left out: "
                            + ", ".join(sorted(bad)))
    return rows, warnings


def comparable(metric: str) -> bool:
    """Whether gpusim's records keep this metric: the ones it profiles (ncu.BASE_METRICS, the launch
    facts and the warp-state ratios). The rest of a user's export (device attributes, the aggregates
    of instanced launch tables) has nothing on the simulator's side."""
    return metric in _KEPT or bool(ncu_mod.STALL_RE.fullmatch(metric.rsplit(".", 1)[0]))


_KEPT = set(ncu_mod.BASE_METRICS) | set(ncu_mod.ALWAYS_KEPT) | set(ncu_mod.REQUIRED) | {ncu_mod.OPCODE_METRIC}


def _dims(cell: str) -> list[int]:
    nums = re.findall(r"\d+", (cell or "").replace(",", ""))
    if len(nums) != 3:
        raise RecordError(f"a launch dimension should be '(x, y, z)', got {cell!r}")
    return [int(n) for n in nums]


def kernel_identifier(name: str) -> str:
    """The kernel's bare name: 'void ns::regtile2d<128>(int, ...)' and '_Z9regtile2diii...' -> 'regtile2d'."""
    n = (name or "").strip()
    m = re.match(r"_Z(\d+)", n)
    if m:
        length = int(m.group(1))
        return n[m.end():m.end() + length]
    n = re.sub(r"^(void|__global__)\s+", "", n)
    n = n.split("(")[0].split("<")[0].strip()
    return n.split("::")[-1]


def identify(row: dict, kernel: str | None = None, params: dict | None = None,
             mnk: tuple | None = None) -> tuple[str, dict, tuple, str]:
    """(kernel, params, (M, N, K), how it was matched) of one launch, or a RecordError saying why not."""
    from gpusim.kernel.spec import get_kernel, list_kernels
    grid, block = _dims(row["launch"].get("Grid Size")), _dims(row["launch"].get("Block Size"))
    name = kernel_identifier(row["kernel"])
    how = []
    if kernel is None:
        if name not in list_kernels():
            raise RecordError(f"launch {row['id']} ({row['kernel']!r}): no gpusim kernel is named {name!r}; "
                              "say which with --kernel")
        kernel, how = name, [f"kernel {name!r} by its name"]
    else:
        how = [f"kernel {kernel!r} as given"]
    spec = get_kernel(kernel)
    p = spec.resolve(params)

    def shape(M, N, K):
        try:
            spec.check(M, N, K, **p)
        except KernelConfigError:
            return None
        g, b = spec.launch(M, N, K, **p)
        return list(g) + [1] * (3 - len(g)), list(b) + [1] * (3 - len(b))

    if mnk is not None:
        got = shape(*mnk)
        if got != (grid, block):
            want = "not a valid size" if got is None else f"grid {tuple(got[0])}, block {tuple(got[1])}"
            raise RecordError(f"launch {row['id']} ({row['kernel']}): grid {tuple(grid)}, block {tuple(block)} "
                              f"is not {kernel} at M, N, K = {mnk} ({want})")
        how.append(f"size {mnk[0]}x{mnk[1]}x{mnk[2]} as given, its launch shape checked")
    else:
        fits = [s for s in _SIZES if shape(s, s, s) == (grid, block)]
        if len(fits) != 1:
            what = "no" if not fits else f"several ({', '.join(map(str, fits))})"
            raise RecordError(f"launch {row['id']} ({row['kernel']}): {what} power-of-two size gives "
                              f"grid {tuple(grid)}, block {tuple(block)} for {kernel}; say which with --size")
        mnk = (fits[0],) * 3
        how.append(f"size {fits[0]} as the one power of two with grid {tuple(grid)}, block {tuple(block)}")
    return kernel, p, tuple(mnk), "; ".join(how)


def to_record(row: dict, kernel: str, params: dict, mnk: tuple, how: str, source: Path,
              time_ms: float | None = None, command: str = "") -> dict:
    """A gpusim.hw/1 record of one imported launch, with where it came from and what it lacks."""
    M, N, K = mnk
    metrics = row["metrics"]
    kept = [k for k, v in metrics.items() if isinstance(v, (int, float)) and comparable(k)]
    ncu = ncu_mod.compact(row, kept)
    ncu["units"] = {k: row["units"][k] for k in ncu["metrics"] if row["units"].get(k)}
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:16]
    ncu.update({"cache_control": "unknown (not in a CSV export)", "clock_control": "unknown (not in a CSV export)",
                "imported_from": {"file": source.name, "sha256_16": digest, "launch_id": row["id"],
                                  "kernel_name": row["kernel"]}})
    if time_ms is None:
        dur = metrics.get("gpu__time_duration.sum")
        if not isinstance(dur, (int, float)) or dur <= 0:
            raise RecordError(f"launch {row['id']} ({row['kernel']}): no time: the export has no "
                              "gpu__time_duration.sum; give your own event timing with --time-ms")
        time_ms = dur / 1e6
        method = ("ncu's gpu__time_duration of the one profiled launch (no event timing was given; "
                  "ncu's replay flushes caches, so this can read longer than an event timing)")
    else:
        method = "the user's own event timing, given on the command line"
    if not (time_ms > 0):
        raise RecordError(f"--time-ms must be a positive number, got {time_ms}")
    clocks = {k: metrics[m] for k, m in (("sm_hz", "sm__cycles_elapsed.avg.per_second"),
                                         ("dram_hz", "dram__cycles_elapsed.avg.per_second")) if m in metrics}
    rec = {
        "schema": SCHEMA, "kernel": kernel, "params": dict(params), "M": M, "N": N, "K": K,
        "grid": _dims(row["launch"]["Grid Size"]), "block": _dims(row["launch"]["Block Size"]),
        "time_ms_median": float(time_ms), "time_ms_all": [float(time_ms)],
        "timing": {"method": method},
        "check": {"rel_err": None, "unwritten": 0, "passed": False,
                  "how": "not checked: imported from an ncu export, the launch's output is not in it"},
        "command": command or "gpusim hw import",
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "device": str(row["launch"].get("device__attribute_display_name")
                      or metrics.get("device__attribute_display_name") or "unknown (not in the export)"),
        "driver": "unknown (not in an ncu CSV export)", "cuda": {}, "clocks": clocks,
        "build_flags": [], "ncu": ncu,
        "imported": {"from": source.name, "matched": how},
    }
    if "launch__registers_per_thread" in metrics:
        rec["ptxas"] = {"registers": int(metrics["launch__registers_per_thread"])}
    return dict(validate_record(rec))


def import_export(path, kernel: str | None = None, params: dict | None = None, mnk: tuple | None = None,
                  time_ms: float | None = None, launch: int | None = None,
                  command: str = "") -> tuple[list[dict], list[str]]:
    """(records, notes): one record per launch of the export gpusim could identify; a note for each
    launch it could not (and why), for each metric it left out, and for how each was matched.

    kernel, params, mnk: what the user says the launch is (then launches of other kernels are skipped,
    with a note). launch: only the launch with this ncu ID. time_ms: the user's event timing (one launch).
    """
    src = Path(path)
    rows, notes = read_export(src)
    if launch is not None:
        rows = [r for r in rows if r["id"] == launch]
        if not rows:
            raise RecordError(f"{src}: no launch with ID {launch}")
    if kernel is not None:
        named = [r for r in rows if kernel_identifier(r["kernel"]) == kernel]
        if named:
            notes += [f"launch {r['id']} ({r['kernel']}): not {kernel}, skipped" for r in rows if r not in named]
            rows = named
        elif len(rows) > 1:
            raise RecordError(f"{src}: no launch is named {kernel!r} among {len(rows)} "
                              f"({', '.join(sorted({str(r['kernel']) for r in rows}))}); pick one with --launch")
    if time_ms is not None and len(rows) > 1:
        raise RecordError(f"{src}: --time-ms is one launch's time, and {len(rows)} launches match; "
                          "pick one with --launch or --kernel")
    recs = []
    for r in rows:
        name = r["metrics"].get("device__attribute_display_name")     # the device, a text cell
        if isinstance(name, str):
            r["launch"]["device__attribute_display_name"] = name
        try:
            k, p, shape, how = identify(r, kernel, params, mnk)
        except (RecordError, KernelConfigError) as e:
            notes.append(str(e))
            continue
        recs.append(to_record(r, k, p, shape, how, src, time_ms, command))
        have = recs[-1]["ncu"]["metrics"]
        missing = [m for m in ncu_mod.BASE_METRICS if m not in have]
        left = sum(1 for m, v in r["metrics"].items() if isinstance(v, (int, float)) and not comparable(m))
        notes.append(f"launch {r['id']} ({r['kernel']}): {how}; {len(have)} metrics kept, {left} that gpusim "
                     "does not simulate left out" + (f"; not in the export: {len(missing)} of the "
                     f"{len(ncu_mod.BASE_METRICS)} metrics gpusim profiles ({', '.join(missing[:4])}"
                     f"{', ...' if len(missing) > 4 else ''})" if missing else ""))
    if not recs:
        raise RecordError(f"{src}: no launch could be identified: " + " | ".join(notes[-3:]))
    return recs, notes
