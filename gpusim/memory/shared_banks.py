"""Shared-memory banks: wavefronts, ideal wavefronts and bank conflicts.

Bank = (byte address / 4) mod 32 [PG]. How the hardware splits a warp's access
into wavefronts depends on the access width; the rule below reproduces every
pattern measured on the H200 (shared/HARDWARE.md s.3 and the 21 patterns of
traces/hw/h200/micro/bank_patterns.json, made by calibrate/bank_patterns.py):

  * lanes are grouped: 32-bit accesses, the whole warp; 64-bit, each half-warp;
    128-bit, each quarter-warp, and the two halves of the warp are served
    separately (their wavefronts add up);
  * a 32-bit word requested by several lanes of one group is read once
    (broadcast); the same word requested by two groups is read once per group;
  * wavefronts (per warp, or per half-warp for 128-bit) = the largest number of
    distinct (group, word) pairs that any one bank must deliver;
  * where every active lane of the warp (of the half-warp, for 128-bit) reads
    the same address, one wavefront serves them all; for 128-bit, a half-warp
    that reads at most two distinct 16-byte words is served as one group (each
    word read once: 1 wavefront, 2 if the two share banks; micro/
    lds_writeback_ncu.json: lanes alternating two words cost 1 a half where the
    group rule gave 2; four words 2);
  * ideal wavefronts = the larger of ceil(distinct (group, word) pairs / 32)
    and the largest number of groups that read one same word; bank conflicts
    = wavefronts - ideal, as ncu defines them.
Measured evidence for the group rule: a 128-bit load where lanes i and i+8
share addresses costs 4 wavefronts (not 2), and a 64-bit load where lanes i and
i+16 share costs 2 (not 1), while lane pairs (2j, 2j+1) sharing cost nothing.
"""
import numpy as np
from numba import njit

from gpusim.jit import guard_cache
from gpusim.memory.rows import EMPTY

BANKS = 32


def _count(words: np.ndarray, group: np.ndarray, valid: np.ndarray):
    """Per row: (max distinct (group, word) per bank, distinct pairs, max groups per word)."""
    rows = words.shape[0]
    out = np.zeros((3, rows), np.int64)
    _count_rows(np.ascontiguousarray(words, np.int64), np.ascontiguousarray(np.broadcast_to(group, words.shape),
                np.int64), np.ascontiguousarray(valid, np.bool_), out)
    return out[0], out[1], out[2]


@njit(cache=True, nogil=True)
def _count_rows(words, group, valid, out):
    """_count row by row: the row's (word, group) keys sorted, each distinct key counted on its word's
    bank, and the longest run of distinct keys of one word (the groups that read it). (numpy sorted and
    compared whole (rows, lanes) matrices twice: 0.4-0.7 s of regtile2d's run at 4096.)"""
    n = words.shape[1]
    key = np.empty(n, np.int64)
    per_bank = np.zeros(BANKS, np.int64)
    for r in range(words.shape[0]):
        k = 0
        for j in range(n):
            if valid[r, j]:
                v = words[r, j] * 8 + group[r, j]               # group < 8
                q = k                 # an insertion sort: the lanes' keys come nearly in order (and numba's
                while q > 0 and key[q - 1] > v:    # np.sort would tie the compiled copy to this machine's paths)
                    key[q] = key[q - 1]
                    q -= 1
                key[q] = v
                k += 1
        s = key
        per_bank[:] = 0
        pairs, best_run, run, prev = 0, 0, 0, np.int64(-1)
        for j in range(k):
            if j > 0 and s[j] == s[j - 1]:
                continue
            pairs += 1
            w = s[j] // 8
            per_bank[w % BANKS] += 1
            run = run + 1 if pairs > 1 and w == prev else 1
            if run > best_run:
                best_run = run
            prev = w
        out[0, r] = per_bank.max()
        out[1, r] = pairs
        out[2, r] = best_run


def _lanes_to_words(addr: np.ndarray, words_per_lane: int, group_size: int):
    rows, lanes = addr.shape
    valid = addr >= 0
    w0 = addr // 4
    words = np.concatenate([w0 + j for j in range(words_per_lane)], axis=1)
    grp = np.tile(np.arange(lanes) // group_size, words_per_lane)[None, :]
    ok = np.concatenate([valid] * words_per_lane, axis=1)
    return words, np.broadcast_to(grp, words.shape), ok


def _few_addresses(addr: np.ndarray, most: int) -> np.ndarray:
    """Rows whose active lanes read at least one and at most `most` distinct addresses."""
    s = np.sort(np.where(addr >= 0, addr, EMPTY), axis=1)
    distinct = (s[:, :1] != EMPTY).sum(axis=1) + ((s[:, 1:] != s[:, :-1]) & (s[:, 1:] != EMPTY)).sum(axis=1)
    return (distinct >= 1) & (distinct <= most)


def _part(addr: np.ndarray, nbytes: int, group_size: int):
    words, grp, ok = _lanes_to_words(addr, nbytes // 4, group_size)
    wf, pairs, gpw = _count(words, grp, ok)
    active = (addr >= 0).any(axis=1)
    ideal = np.where(active, np.maximum(np.maximum(-(-pairs // BANKS), gpw), 1), 0)
    # a part reading one address (128-bit: up to two) is served as one group: no word is read once per
    # group, though two words in one bank still take a wavefront each
    few = _few_addresses(addr, 2 if nbytes == 16 else 1)
    if few.any():
        wf1, pairs1, _ = _count(words[few], np.zeros_like(grp[few]), ok[few])
        wf[few] = wf1
        ideal[few] = np.maximum(-(-pairs1 // BANKS), 1)
    return wf, ideal


def shared_wavefronts(addr: np.ndarray, nbytes: int):
    """addr: (rows, 32) byte addresses, -1 inactive. Returns (wavefronts, ideal) per row."""
    addr = np.asarray(addr, np.int64)
    rows = addr.shape[0]
    if rows == 0:
        z = np.zeros(0, np.int64)
        return z, z
    if nbytes == 16:
        wf, ideal = _part(addr.reshape(rows * 2, 16), 16, 8)
        return wf.reshape(rows, 2).sum(axis=1), ideal.reshape(rows, 2).sum(axis=1)
    return _part(addr, nbytes, 32 if nbytes == 4 else 16)


guard_cache(globals())     # stamped by its source, guarded, seeded from the shipped copy (gpusim.jit)
