"""GPU presets: frozen dataclasses of plain fields, each with its unit and source."""
from gpusim.arch.presets import GPU, PRESETS, arch_overrides, get_arch, override

__all__ = ["GPU", "PRESETS", "arch_overrides", "get_arch", "override"]
