// sgemv: y = A x for row-major A (M x N), x (N) and y (M), one warp per row, ROWS rows per block.
// Each lane walks the row with stride 32, summing A[row][j] * x[j]; the warp's 32 partial sums
// meet in lane 0 by __shfl_down_sync (offsets 16..1), and lane 0 writes y[row].
// Launch: block (32*ROWS, 1, 1) = 256, grid (M/ROWS, 1, 1).
// Constraints: N a multiple of 32 (every lane the same trips), M a multiple of ROWS (no bounds
// checks).
// Build another instance: nvcc -arch=sm_90 -O3 -cubin -DP_ROWS=4 kernels_cuda/sgemv.cu

#ifndef P_ROWS
#define P_ROWS 8
#endif

template <int ROWS>
__device__ __forceinline__ void sgemv_body(int M, int N, const float *A, const float *x, float *y) {
  static_assert(ROWS > 0 && ROWS <= 32, "32*ROWS threads must be 32..1024");

  const int row = blockIdx.x * ROWS + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;

  float sum = 0.0f;
  for (int j = lane; j < N; j += 32) {
    sum += A[row * N + j] * x[j];
  }
  for (int offset = 16; offset > 0; offset >>= 1) {
    sum += __shfl_down_sync(0xffffffff, sum, offset);
  }
  if (lane == 0) {
    y[row] = sum;
  }
}

extern "C" __global__ void sgemv(int M, int N, const float *A, const float *x, float *y) {
  sgemv_body<P_ROWS>(M, N, A, x, y);
}
