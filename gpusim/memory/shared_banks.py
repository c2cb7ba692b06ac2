"""Shared-memory banks: wavefronts, ideal wavefronts and bank conflicts.

Bank = (byte address / 4) mod 32; threads reading the same 32-bit word share
it (broadcast) [PG]. The rule below reproduces every pattern measured on the
H200 in shared/HARDWARE.md s.3:
  * 32- and 64-bit accesses: wavefronts = the largest number of distinct 32-bit
    words that any one bank must deliver to the warp;
  * 128-bit accesses: the same count for each half-warp (lanes 0-15, 16-31),
    added;
  * ideal wavefronts = ceil(distinct bytes / 128), per half-warp for 128-bit
    (each half with an active lane costs at least one);
  * bank conflicts = wavefronts - ideal (as ncu defines them).
"""
import numpy as np

from gpusim.memory.rows import unique_mask_sorted

BANKS = 32


def _per_group(addr: np.ndarray, words_per_lane: int):
    """Max distinct words per bank and distinct word count, per row of lanes."""
    rows = addr.shape[0]
    valid = addr >= 0
    w0 = addr // 4
    keys = np.concatenate([w0 + j for j in range(words_per_lane)], axis=1)
    ok = np.concatenate([valid] * words_per_lane, axis=1)
    s, uniq = unique_mask_sorted(keys, ok)
    r = np.broadcast_to(np.arange(rows)[:, None], s.shape)
    bank = np.where(uniq, s % BANKS, 0)
    counts = np.bincount((r * BANKS + bank)[uniq], minlength=rows * BANKS).reshape(rows, BANKS)
    return counts.max(axis=1), uniq.sum(axis=1), valid.any(axis=1)


def shared_wavefronts(addr: np.ndarray, nbytes: int):
    """addr: (rows, 32) byte addresses, -1 inactive. Returns (wavefronts, ideal) per row."""
    addr = np.asarray(addr, np.int64)
    rows = addr.shape[0]
    if rows == 0:
        z = np.zeros(0, np.int64)
        return z, z
    words = nbytes // 4
    if nbytes == 16:
        halves = addr.reshape(rows * 2, 16)
        wf, nwords, any_act = _per_group(halves, words)
        ideal = np.where(any_act, np.maximum(1, -(-nwords * 4 // 128)), 0)
        return wf.reshape(rows, 2).sum(axis=1), ideal.reshape(rows, 2).sum(axis=1)
    wf, nwords, any_act = _per_group(addr, words)
    ideal = np.where(any_act, np.maximum(1, -(-nwords * 4 // 128)), 0)
    return wf, ideal
