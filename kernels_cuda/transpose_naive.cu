// transpose_naive: B = A^T for row-major A (M x N) and B (N x M), straight from global memory.
// A block of TILE x ROWS threads covers a TILE x TILE tile, each thread TILE/ROWS rows of it:
// a warp reads a row segment of A (coalesced) and writes a column segment of B (32 rows apart).
// Launch: block (TILE, ROWS, 1) = (32, 8), grid (N/TILE, M/TILE, 1).
// Constraints: M and N multiples of TILE (no bounds checks); TILE a multiple of ROWS.
// Build another instance: nvcc -arch=sm_90 -O3 -cubin -DP_ROWS=16 kernels_cuda/transpose_naive.cu

#ifndef P_TILE
#define P_TILE 32
#endif
#ifndef P_ROWS
#define P_ROWS 8
#endif

template <int TILE, int ROWS>
__device__ __forceinline__ void transpose_naive_body(int M, int N, const float *A, float *B) {
  static_assert(TILE > 0 && ROWS > 0 && TILE % ROWS == 0, "TILE must be a multiple of ROWS");
  static_assert(TILE * ROWS <= 1024, "TILE*ROWS threads must be at most 1024");

  const int x = blockIdx.x * TILE + threadIdx.x;     // column of A, row of B
  const int y = blockIdx.y * TILE + threadIdx.y;     // row of A, column of B
  for (int j = 0; j < TILE; j += ROWS) {
    B[x * M + (y + j)] = A[(y + j) * N + x];
  }
}

extern "C" __global__ void transpose_naive(int M, int N, const float *A, float *B) {
  transpose_naive_body<P_TILE, P_ROWS>(M, N, A, B);
}
