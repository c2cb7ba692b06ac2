// softmax: B[r][:] = exp(A[r][:] - max) / sum(exp(A[r][:] - max)) for each row r of row-major A and
// B (M x N), one warp per row, ROWS rows per block. Each lane walks the row with stride 32, three
// times: the row's max (fmaxf), the sum of __expf(a - max), and the store of __expf(a - max) * inv
// with inv = __fdividef(1, sum) computed once; the two warp reductions are __shfl_xor_sync
// butterflies.
// Launch: block (32*ROWS, 1, 1) = 256, grid (M/ROWS, 1, 1).
// Constraints: N a multiple of 32 (every lane the same trips), M a multiple of ROWS (no bounds
// checks).
// Build another instance: nvcc -arch=sm_90 -O3 -cubin -DP_ROWS=4 kernels_cuda/softmax.cu

#ifndef P_ROWS
#define P_ROWS 8
#endif

template <int ROWS>
__device__ __forceinline__ void softmax_body(int M, int N, const float *A, float *B) {
  static_assert(ROWS > 0 && ROWS <= 32, "32*ROWS threads must be 32..1024");

  const int row = blockIdx.x * ROWS + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const float *a = A + row * N;
  float *b = B + row * N;

  float m = -INFINITY;
  for (int j = lane; j < N; j += 32) {
    m = fmaxf(m, a[j]);
  }
  for (int mask = 16; mask > 0; mask >>= 1) {
    m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, mask));
  }

  float s = 0.0f;
  for (int j = lane; j < N; j += 32) {
    s += __expf(a[j] - m);
  }
  for (int mask = 16; mask > 0; mask >>= 1) {
    s += __shfl_xor_sync(0xffffffff, s, mask);
  }

  const float inv = __fdividef(1.0f, s);     // fast 1/s, inline (1.0f / s calls a slow-path subroutine)
  for (int j = lane; j < N; j += 32) {
    b[j] = __expf(a[j] - m) * inv;
  }
}

extern "C" __global__ void softmax(int M, int N, const float *A, float *B) {
  softmax_body<P_ROWS>(M, N, A, B);
}
