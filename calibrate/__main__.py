"""`python3 -m calibrate --out DIR [--only NAME ...] [--budget-s S]`: re-record every microbenchmark on
this machine's GPU; `python3 -m calibrate --list` shows them (no GPU needed). See calibrate.runner.

Why a package run with -m rather than a script: `python3 -m calibrate` works from the repository root
with no path set up, the runner stays importable (the tests drive it with a driver list of their own),
and the drivers beside it stay plain scripts, each runnable alone as before. The package is not
installed with gpusim (pyproject.toml packages only gpusim* and kernels_py*).
"""
import sys

from calibrate.runner import main

sys.exit(main())
