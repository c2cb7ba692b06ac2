// stencil5: B[i][j] = c0*A[i][j] + c1*(A[i-1][j] + A[i+1][j] + A[i][j-1] + A[i][j+1]) with
// c0 = 0.5, c1 = 0.125, for the interior points of row-major A and B (M x N); B's boundary rows
// and columns are not written. One thread per point: a warp reads a row segment of A and the ones
// above, below, one left and one right of it.
// Launch: block (BX, BY, 1) = (32, 8), grid (N/BX, M/BY, 1).
// Constraints: N a multiple of BX, M of BY (the grid covers B exactly; interior checked per thread).
// Build another instance: nvcc -arch=sm_90 -O3 -cubin -DP_BY=4 kernels_cuda/stencil5.cu

#ifndef P_BX
#define P_BX 32
#endif
#ifndef P_BY
#define P_BY 8
#endif

template <int BX, int BY>
__device__ __forceinline__ void stencil5_body(int M, int N, const float *A, float *B) {
  static_assert(BX > 0 && BY > 0 && BX * BY <= 1024, "BX*BY threads must be 1..1024");

  const float c0 = 0.5f;
  const float c1 = 0.125f;
  const int j = blockIdx.x * BX + threadIdx.x;
  const int i = blockIdx.y * BY + threadIdx.y;
  if (i > 0 && i < M - 1 && j > 0 && j < N - 1) {
    B[i * N + j] = c0 * A[i * N + j] +
                   c1 * (A[(i - 1) * N + j] + A[(i + 1) * N + j] + A[i * N + j - 1] + A[i * N + j + 1]);
  }
}

extern "C" __global__ void stencil5(int M, int N, const float *A, float *B) {
  stencil5_body<P_BX, P_BY>(M, N, A, B);
}
