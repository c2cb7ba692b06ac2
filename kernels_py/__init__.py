"""The ladder of SGEMM kernels, one file per kernel, each the twin of kernels_cuda/<name>.cu."""
