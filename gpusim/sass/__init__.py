"""The SASS front-end: the compiled kernel as the instruction stream.

listing: a `cuobjdump -sass` function parsed into instructions with their operands and control
codes; cta: a functional emulator that runs one CTA of that SASS, warp by warp, and records the
trace the memory and timing stages consume.
"""
