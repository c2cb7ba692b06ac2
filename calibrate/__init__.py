"""The microbenchmarks that measure the timing model's parameters on the H200: each a CUDA source and the
Python driver that builds, runs and records it (calibrate/README.md). `python3 -m calibrate` runs them all
(calibrate.runner). Not part of the installed gpusim package: they need a GPU, nvcc and ncu, and they write
the records under traces/hw/h200/micro/ that the model is checked against."""
