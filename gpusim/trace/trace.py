"""The per-warp trace: one row per warp-instruction, as structured numpy arrays.

Rows hold the CTA, the warp, the opcode id, the active mask, the weight (how
many executed instructions the row stands for when loops or CTAs are sampled),
the row's own sequence number within its CTA and the sequence numbers of the
instructions whose results it reads (the scoreboard's read-after-write edges),
and, for memory instructions, an index into `addr`, a (rows, 32) array of byte
addresses (-1 for inactive lanes). The memory stage adds each row's costs
(sectors, lines, wavefronts, ideal wavefronts): that lowered form is all the
timing engine needs.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from gpusim.errors import RecordError
from gpusim.kernel.opcodes import TABLE

ROW_DTYPE = np.dtype([
    ("cta", np.int32), ("warp", np.int16), ("op", np.int16),
    ("mask", np.uint32),                     # lanes on; 0 for a row predicated off in every lane
    ("weight", np.int64), ("seq", np.int32),
    ("src0", np.int32), ("src1", np.int32), ("src2", np.int32),
    ("mem", np.int32),                       # row in addr, -1 for non-memory
    ("sectors", np.int16), ("lines", np.int16),
    ("wavefronts", np.int16), ("ideal_wavefronts", np.int16),
    ("pc", np.int32),                        # SASS byte offset of the instruction, -1 where unknown
])
TRACE_SCHEMA = "gpusim.trace/1"
_BIT = (np.uint64(1) << np.arange(32, dtype=np.uint64))


@dataclass
class Trace:
    rows: np.ndarray                      # ROW_DTYPE
    addr: np.ndarray                      # (n_mem, 32) int64
    opcodes: list[str] = field(default_factory=list)   # opcode id -> name
    # the Python front-end's memory rows: which source line issued each ("file.py:line" in site_names;
    # -1 for other rows). The SASS front-end's rows carry their pc instead.
    site: np.ndarray | None = None
    site_names: list[str] = field(default_factory=list)
    shared_regions: dict = field(default_factory=dict)   # Python kernels: shared array -> (first byte, bytes)
    # whether the rows' sectors, lines and wavefronts are filled: the front-ends leave them to the memory
    # stage (gpusim.memory.cost_trace); a trace built by hand or loaded from a file carries its own
    costed: bool = True
    # a longer trace whose first rows, addresses and CTAs these are (a view of them: a prediction's shorter
    # lists of CTAs in one window), so that the timing's lowering can share that trace's per-row work
    # (gpusim.timing.lower's share); None for a trace of its own
    prefix_of: "Trace | None" = field(default=None, repr=False, compare=False)

    def __len__(self):
        return len(self.rows)

    def save(self, path: str | Path) -> Path:
        """Write the trace to exactly `path` (numpy adds .npz to a bare name; a file object it cannot),
        atomically."""
        from gpusim.paths import write_atomic
        return write_atomic(path, lambda f: np.savez_compressed(
            f, schema=np.array(TRACE_SCHEMA), rows=self.rows, addr=self.addr, opcodes=np.array(self.opcodes)))

    @staticmethod
    def load(path: str | Path) -> "Trace":
        try:
            z = np.load(path, allow_pickle=False)
            schema = str(z["schema"])
        except Exception as e:   # noqa: BLE001 - any unreadable file is a record error
            raise RecordError(f"{path}: not a gpusim trace ({e})") from None
        if schema != TRACE_SCHEMA:
            raise RecordError(f"{path}: trace schema {schema!r}, expected {TRACE_SCHEMA!r}")
        return Trace(z["rows"], z["addr"], [str(s) for s in z["opcodes"]])

    @staticmethod
    def concat(traces: list["Trace"]) -> "Trace":
        if not traces:
            return Trace(np.zeros(0, ROW_DTYPE), np.zeros((0, 32), np.int64), list(TABLE.ids))
        # one copy of the rows: concatenated, then each trace's memory rows moved past the addresses of
        # the traces before it (copying each trace's rows first doubled the memory traffic)
        # as bytes: numpy copies a structured dtype field by field (2.5x slower for the 52-byte rows)
        rows = np.concatenate([np.ascontiguousarray(t.rows, ROW_DTYPE).view(np.uint8).reshape(-1)
                               for t in traces]).view(ROW_DTYPE)
        start = 0
        for shift, t in zip(np.cumsum([0] + [t.addr.shape[0] for t in traces[:-1]]), traces):
            mem = rows["mem"][start:start + len(t.rows)]
            if shift:
                mem[mem >= 0] += shift
            start += len(t.rows)
        site, names = None, []
        if any(t.site is not None for t in traces):      # one table of source lines for all
            index: dict = {}
            parts = []
            for t in traces:
                ids = np.array([index.setdefault(n, len(index)) for n in t.site_names] + [-1], np.int32)
                parts.append(ids[t.site] if t.site is not None else np.full(len(t.rows), -1, np.int32))
            site, names = np.concatenate(parts), list(index)
        regions = {}
        for t in traces:
            regions.update(t.shared_regions)
        return Trace(rows, np.concatenate([t.addr for t in traces]), list(TABLE.ids),
                     site, names, regions, costed=all(t.costed for t in traces))


def _pack(mask: np.ndarray, warps: int) -> np.ndarray:
    padded = np.zeros(warps * 32, bool)
    padded[:mask.shape[0]] = mask
    return (padded.reshape(warps, 32).astype(np.uint64) @ _BIT).astype(np.uint32)


def trace_from_ctx(k, cta: int) -> Trace:
    """Slice a finished CTA's records into warps (memory rows uncosted: gpusim.memory.cost_trace)."""
    n = len(k.r_op)
    T = k.nthreads
    W = -(-T // 32)
    packed: dict[int, np.ndarray] = {}

    def pack_all(masks):
        bits = np.empty((n, W), np.uint32)
        for i, m in enumerate(masks):
            b = packed.get(id(m))
            if b is None:
                b = packed[id(m)] = _pack(m, W)
            bits[i] = b
        return bits
    bits = pack_all(k.r_mask)                         # lanes on
    execd = pack_all(k.r_exec)                        # warps that execute the row
    ii, ww = np.nonzero(execd)                        # row-major: program order, then warp
    rows = np.zeros(len(ii), ROW_DTYPE)
    rows["cta"] = cta
    rows["warp"] = ww
    ops = np.asarray(k.r_op, np.int16)
    rows["op"] = ops[ii]
    rows["mask"] = bits[ii, ww]
    rows["weight"] = np.asarray(k.r_weight, np.int64)[ii]
    rows["seq"] = ii
    rows["pc"] = -1
    src = np.full((n, 3), -1, np.int32)
    for i, s in enumerate(k.r_src):
        if s:
            src[i, :len(s)] = s[:3]
    rows["src0"], rows["src1"], rows["src2"] = src[ii, 0], src[ii, 1], src[ii, 2]

    mem_instr = np.array([a is not None for a in k.r_addr], bool)
    rows["mem"] = -1
    is_mem_row = mem_instr[ii]
    site_names = sorted({s for s in k.r_site if s is not None})
    lookup = {n: i for i, n in enumerate(site_names)}
    site = np.array([lookup[s] if s is not None else -1 for s in k.r_site] or [-1], np.int32)[ii] \
        if len(ii) else np.zeros(0, np.int32)
    if not is_mem_row.any():
        return Trace(rows, np.zeros((0, 32), np.int64), list(TABLE.ids), site, site_names, dict(k.shared_layout),
                     costed=False)
    mem_ids = np.flatnonzero(mem_instr)
    full = np.full((len(mem_ids), W * 32), -1, np.int64)
    full[:, :T] = np.stack([k.r_addr[i] for i in mem_ids])
    slot = np.full(n, -1, np.int64)
    slot[mem_ids] = np.arange(len(mem_ids))
    addr = full.reshape(len(mem_ids), W, 32)[slot[ii[is_mem_row]], ww[is_mem_row]]
    rows["mem"][is_mem_row] = np.arange(addr.shape[0])
    return Trace(rows, addr, list(TABLE.ids), site, site_names, dict(k.shared_layout), costed=False)

