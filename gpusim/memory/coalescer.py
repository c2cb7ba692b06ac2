"""Global-memory coalescing: requests, 32-byte sectors and 128-byte lines.

Rules [PG][M] (shared/HARDWARE.md s.3): one request per warp-level LDG/STG
with at least one active lane; its sectors are the distinct aligned 32-byte
chunks that the active lanes' bytes touch; lines are the distinct 128-byte
chunks (4 sectors each).
"""
import numpy as np
from numba import njit

from gpusim.jit import guard_cache
from gpusim.memory import rows as _rows
from gpusim.memory.rows import distinct


def global_sectors_and_lines(addr: np.ndarray, nbytes: int, sector_bytes: int = 32,
                             line_bytes: int = 128):
    """addr: (rows, 32) byte addresses, -1 for inactive lanes. Returns (sectors, lines) per row.

    A lane's access [a, a+nbytes) may straddle a sector when misaligned, so both
    its first and last byte are counted.
    """
    addr = np.ascontiguousarray(addr, np.int64)
    if addr.ndim != 2:
        raise ValueError(f"addr must be (rows, lanes), got shape {addr.shape}")
    sec = np.zeros(addr.shape[0], np.int64)
    lines = np.zeros(addr.shape[0], np.int64)
    _count_chunks(addr, np.int64(nbytes - 1), np.int64(sector_bytes), np.int64(line_bytes), sec, lines)
    return sec, lines


@njit(cache=True, nogil=True)
def _count_chunks(addr, last, sector_bytes, line_bytes, sec, lines):
    """Per row: the distinct sectors and lines that the active lanes' first and last bytes (a, a + last)
    fall in, each counted once (a small list per row: numpy sorted two (rows, 64) copies of the addresses
    per call, a tenth of a window's front-end time). A chunk equal to the one before is dropped as it
    comes; where the rest came in ascending order (lanes in address order, the usual case) they are all
    distinct, else the list is cut to its distinct values (distinct)."""
    sbuf = np.empty(2 * addr.shape[1], np.int64)
    lbuf = np.empty(2 * addr.shape[1], np.int64)
    for r in range(addr.shape[0]):
        ns = 0
        nl = 0
        s_up = True
        l_up = True
        for lane in range(addr.shape[1]):
            a = addr[r, lane]
            if a < 0:
                continue
            for b in (a, a + last):
                # (the sector's and the line's steps written out: as a helper function returning the
                # new length and order, numba's loop ran 6.5x slower on strided rows)
                v = b // sector_bytes
                if ns == 0 or v != sbuf[ns - 1]:
                    if ns > 0 and v < sbuf[ns - 1]:
                        s_up = False
                    sbuf[ns] = v
                    ns += 1
                v = b // line_bytes
                if nl == 0 or v != lbuf[nl - 1]:
                    if nl > 0 and v < lbuf[nl - 1]:
                        l_up = False
                    lbuf[nl] = v
                    nl += 1
        sec[r] = ns if s_up else distinct(sbuf, ns)
        lines[r] = nl if l_up else distinct(lbuf, nl)


guard_cache(globals(), (_rows.__file__,))     # stamped by its source and rows.py's (distinct), guarded, seeded (gpusim.jit)
