"""Row-wise distinct counting over (rows, lanes) integer arrays, fully vectorised."""
import numpy as np

EMPTY = np.iinfo(np.int64).max


def distinct_per_row(keys: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Number of distinct values among the valid entries of each row."""
    if keys.shape[0] == 0:
        return np.zeros(0, np.int64)
    s = np.sort(np.where(valid, keys, EMPTY), axis=1)
    first = s[:, :1] != EMPTY
    new = (s[:, 1:] != s[:, :-1]) & (s[:, 1:] != EMPTY)
    return first[:, 0].astype(np.int64) + new.sum(axis=1)


def unique_mask_sorted(keys: np.ndarray, valid: np.ndarray):
    """Sorted keys per row and a mask marking the first occurrence of each valid value."""
    s = np.sort(np.where(valid, keys, EMPTY), axis=1)
    uniq = np.ones_like(s, bool)
    uniq[:, 1:] = s[:, 1:] != s[:, :-1]
    uniq &= s != EMPTY
    return s, uniq
