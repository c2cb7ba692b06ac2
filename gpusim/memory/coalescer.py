"""Global-memory coalescing: requests, 32-byte sectors and 128-byte lines.

Rules [PG][M] (shared/HARDWARE.md s.3): one request per warp-level LDG/STG
with at least one active lane; its sectors are the distinct aligned 32-byte
chunks that the active lanes' bytes touch; lines are the distinct 128-byte
chunks (4 sectors each).
"""
import numpy as np

from gpusim.memory.rows import distinct_per_row


def global_sectors_and_lines(addr: np.ndarray, nbytes: int, sector_bytes: int = 32,
                             line_bytes: int = 128):
    """addr: (rows, 32) byte addresses, -1 for inactive lanes. Returns (sectors, lines) per row.

    A lane's access [a, a+nbytes) may straddle a sector when misaligned, so both
    its first and last byte are counted.
    """
    addr = np.asarray(addr, np.int64)
    valid = addr >= 0
    last = addr + (nbytes - 1)
    both_valid = np.concatenate([valid, valid], axis=1)
    sec = distinct_per_row(np.concatenate([addr // sector_bytes, last // sector_bytes], axis=1), both_valid)
    lines = distinct_per_row(np.concatenate([addr // line_bytes, last // line_bytes], axis=1), both_valid)
    return sec, lines
