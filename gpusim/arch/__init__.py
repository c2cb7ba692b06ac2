"""GPU presets: frozen dataclasses of plain fields, each with its unit and source."""
from gpusim.arch.presets import GPU, PRESETS, get_arch

__all__ = ["GPU", "PRESETS", "get_arch"]
