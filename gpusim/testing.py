"""pytest helpers for claims about one array of a simulated kernel.

    r = gpusim.simulate("coalesced", 256)
    assert_sectors_per_request(r, "B", 4)          # a warp's 32 consecutive floats: 4 sectors
    assert_sectors_per_request(r, "A", 1)          # one float for the whole warp: 1 sector
    assert_no_bank_conflicts(r, "As", kind="stores", frontend_note=False)

Each reads `r.by_array` (gpusim.memory.attribution.by_array) and fails with a message that shows what
the array did, so a failing claim says at once how far off it is. `kind` is "loads" (default),
"stores", "reductions" or "atomics". The SASS front-end names global arrays only (its shared accesses
are under "shared"); pass frontend="python" to simulate to name shared arrays as the kernel declares them.
"""
from __future__ import annotations

__all__ = ["array_counters", "assert_sectors_per_request", "assert_wavefronts_per_request",
           "assert_no_bank_conflicts"]


def array_counters(r, array: str, kind: str = "loads") -> dict:
    """The counters of `array`'s `kind` accesses in a simulate() result; AssertionError naming the arrays
    there are where it has none."""
    arrays = r.by_array
    if array not in arrays:
        raise AssertionError(f"{r.kernel}: no accesses to an array {array!r}; arrays accessed: "
                             f"{', '.join(arrays) or 'none'}")
    got = arrays[array]
    if kind not in got:
        kinds = [k for k in got if k != "space"]
        raise AssertionError(f"{r.kernel}: {array} has no {kind}; it has {', '.join(kinds)}")
    return got[kind]


def _show(c: dict) -> str:
    return ", ".join(f"{k} {v:g}" if isinstance(v, float) else f"{k} {v:,}" for k, v in c.items())


def _assert_per_request(r, array: str, expected: float, kind: str, unit: str, other: str):
    c = array_counters(r, array, kind)
    field = f"{unit}_per_request"
    if field not in c:
        where = "in shared memory" if unit == "sectors" else "in global memory"
        raise AssertionError(f"{r.kernel}: {array} is {where}: it has {other}, not {unit}")
    if c[field] != expected:
        raise AssertionError(f"{r.kernel}: {array} {kind}: {c[field]:g} {unit} per request, "
                             f"claimed {expected:g} ({_show(c)})")


def assert_sectors_per_request(r, array: str, expected: float, kind: str = "loads"):
    """`array`'s global `kind` average exactly `expected` 32-byte sectors per request."""
    _assert_per_request(r, array, expected, kind, "sectors", "wavefronts")


def assert_wavefronts_per_request(r, array: str, expected: float, kind: str = "loads"):
    """`array`'s shared `kind` average exactly `expected` wavefronts per instruction."""
    _assert_per_request(r, array, expected, kind, "wavefronts", "sectors")


def assert_no_bank_conflicts(r, array: str, kind: str = "loads"):
    """`array`'s shared `kind` take no more wavefronts than the ideal (ncu's bank conflicts are 0)."""
    c = array_counters(r, array, kind)
    if c.get("bank_conflicts", 0):
        raise AssertionError(f"{r.kernel}: {array} {kind}: {c['bank_conflicts']:,} bank conflicts ({_show(c)})")
