"""Where gpusim finds what a prediction reads: the committed SASS (traces/static), the hardware and
microbenchmark records (traces/hw) and the CUDA twins (kernels_cuda/*.cu).

In a source checkout (and an editable install) they are the checkout's own folders; an installed
wheel carries a copy under gpusim/data/ (setup.py copies them in at build time). Both are found the
same way, so a prediction does not depend on how gpusim was installed."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

SOURCE_ROOT = Path(__file__).resolve().parents[1]
PACKAGE_DATA = Path(__file__).resolve().parent / "data"


def data_root() -> Path:
    """The checkout when gpusim runs from one, else the wheel's gpusim/data."""
    if (SOURCE_ROOT / "traces").is_dir() and (SOURCE_ROOT / "kernels_cuda").is_dir():
        return SOURCE_ROOT
    return PACKAGE_DATA


DATA_ROOT = data_root()
STATIC_DIR = DATA_ROOT / "traces" / "static"
HW_DIR = DATA_ROOT / "traces" / "hw"
CUDA_DIR = DATA_ROOT / "kernels_cuda"


def device_dir(device: str = "h200") -> Path:
    """traces/hw/<device>: one GPU's committed records."""
    return HW_DIR / device


def write_atomic(path, write) -> Path:
    """Write `path` whole or not at all: `write(f)` fills a temporary file beside it (the same file
    system, so os.replace is atomic) that then takes its name; a failed write leaves nothing behind."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        mask = os.umask(0)
        os.umask(mask)
        os.fchmod(fd, 0o666 & ~mask)        # mkstemp's 0600 would outlive the rename
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path
