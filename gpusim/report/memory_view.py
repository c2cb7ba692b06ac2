"""`gpusim run --by-array` and `--source`: the memory counters per array and per instruction, as tables
that fit 80 columns (in the spirit of Nsight Compute's Memory Workload and Source pages)."""
from __future__ import annotations

from rich.table import Table

LEGEND = ("instr: warp-level instructions with an active lane (ncu's requests); traffic: sectors (global) "
          "or wavefronts (shared); per req: traffic per instruction; confl.: wavefronts over the ideal (ncu's bank "
          "conflicts); values: 32-bit values the threads move")


SHORT = {"loads": "ld", "stores": "st", "reductions": "red", "atomics": "atom"}


def _traffic(c: dict) -> tuple[str, str, str]:
    if "sectors" in c:
        return f"{c['sectors']:,}", f"{c['sectors_per_request']:.2f}", "-"
    return f"{c['wavefronts']:,}", f"{c['wavefronts_per_request']:.2f}", f"{c['bank_conflicts']:,}"


def by_array_table(r) -> Table:
    t = Table(title=f"{r.kernel}: memory by array", title_justify="left")
    for name, just in (("array", "left"), ("space", "left"), ("kind", "left"), ("instr", "right"),
                       ("traffic", "right"), ("per req", "right"), ("confl.", "right"),
                       ("values", "right")):
        t.add_column(name, justify=just, overflow="fold")
    for name, entry in r.by_array.items():
        for kind, c in entry.items():
            if kind == "space":
                continue
            t.add_row(name, entry["space"], SHORT[kind], f"{c['instructions']:,}", *_traffic(c), f"{c['values']:,}")
    return t


def source_table(r) -> Table:
    sass = r.frontend == "sass"
    t = Table(title=f"{r.kernel}: memory instructions ({'SASS' if sass else 'Python source'})",
              title_justify="left")
    t.add_column("pc" if sass else "line", no_wrap=True)
    t.add_column("instruction" if sass else "opcode", overflow="fold")
    for name in ("array", "instr", "per req", "confl."):
        t.add_column(name, justify="left" if name == "array" else "right", overflow="fold")
    for i in r.by_instruction:
        _, per, conflicts = _traffic(i)
        t.add_row(i["where"], i.get("sass") or i["opcode"], f"{i['array']} {SHORT[i['kind']]}",
                  f"{i['instructions']:,}", per, conflicts)
    return t


def print_memory_views(r, by_array: bool, source: bool):
    from gpusim.report.render import console
    if by_array:
        console.print(by_array_table(r))
    if source:
        console.print(source_table(r))
    if by_array or source:
        console.print("ld: loads, st: stores, red: reductions, atom: atomics. " + LEGEND)
        if r.frontend == "sass" and any(e["space"] == "shared" for e in r.by_array.values()):
            console.print("shared: the SASS keeps no names for __shared__ arrays; --frontend python names "
                          "them as the Python kernel declares them")
