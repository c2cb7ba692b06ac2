// transpose_pad: B = A^T for row-major A (M x N) and B (N x M), through a TILE x (TILE+1) shared
// tile. The padding column shifts each row by one bank, so a warp's 32 reads of one column fall in
// 32 different banks (no conflicts).
// Both global accesses are row segments: the loads read A's rows, the stores write B's rows.
// Launch: block (TILE, ROWS, 1) = (32, 8), grid (N/TILE, M/TILE, 1); each thread TILE/ROWS rows.
// Constraints: M and N multiples of TILE (no bounds checks); TILE a multiple of ROWS.
// Build another instance: nvcc -arch=sm_90 -O3 -cubin -DP_ROWS=16 kernels_cuda/transpose_pad.cu

#ifndef P_TILE
#define P_TILE 32
#endif
#ifndef P_ROWS
#define P_ROWS 8
#endif

template <int TILE, int ROWS>
__device__ __forceinline__ void transpose_pad_body(int M, int N, const float *A, float *B) {
  static_assert(TILE > 0 && ROWS > 0 && TILE % ROWS == 0, "TILE must be a multiple of ROWS");
  static_assert(TILE * ROWS <= 1024, "TILE*ROWS threads must be at most 1024");

  __shared__ float tile[TILE][TILE + 1];

  int x = blockIdx.x * TILE + threadIdx.x;
  int y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS) {
    tile[threadIdx.y + j][threadIdx.x] = A[(y + j) * N + x];
  }
  __syncthreads();

  x = blockIdx.y * TILE + threadIdx.x;     // the tile's place in B: blocks swap x and y
  y = blockIdx.x * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS) {
    B[(y + j) * M + x] = tile[threadIdx.x][threadIdx.y + j];
  }
}

extern "C" __global__ void transpose_pad(int M, int N, const float *A, float *B) {
  transpose_pad_body<P_TILE, P_ROWS>(M, N, A, B);
}
