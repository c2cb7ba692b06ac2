// transpose_smem: B = A^T for row-major A (M x N) and B (N x M), through a TILE x TILE shared
// tile. The tile is written by rows and read by columns: a warp's 32 reads of one column all fall
// in one bank (32-way conflicts).
// Both global accesses are row segments: the loads read A's rows, the stores write B's rows.
// Launch: block (TILE, ROWS, 1) = (32, 8), grid (N/TILE, M/TILE, 1); each thread TILE/ROWS rows.
// Constraints: M and N multiples of TILE (no bounds checks); TILE a multiple of ROWS.
// Build another instance: nvcc -arch=sm_90 -O3 -cubin -DP_ROWS=16 kernels_cuda/transpose_smem.cu

#ifndef P_TILE
#define P_TILE 32
#endif
#ifndef P_ROWS
#define P_ROWS 8
#endif

template <int TILE, int ROWS>
__device__ __forceinline__ void transpose_smem_body(int M, int N, const float *A, float *B) {
  static_assert(TILE > 0 && ROWS > 0 && TILE % ROWS == 0, "TILE must be a multiple of ROWS");
  static_assert(TILE * ROWS <= 1024, "TILE*ROWS threads must be at most 1024");

  __shared__ float tile[TILE][TILE + 0];

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

extern "C" __global__ void transpose_smem(int M, int N, const float *A, float *B) {
  transpose_smem_body<P_TILE, P_ROWS>(M, N, A, B);
}
