// smemtile: shared-memory tiling, one output per thread (seed 004, sgemm_smem_tiling).
// Row-major A (MxK), B (KxN), C (MxN), fp32. Computes C = alpha*A*B + beta*C.
// Launch: block (BLOCKSIZE*BLOCKSIZE, 1, 1), grid (ceil(M/BLOCKSIZE), ceil(N/BLOCKSIZE), 1);
// note the order: blockIdx.x walks M here, not N.
// No bounds checks: M, N and K must be multiples of BLOCKSIZE.
// Build another instance: nvcc -arch=sm_90 -O3 -cubin -DP_BLOCKSIZE=16 kernels_cuda/smemtile.cu

#ifndef P_BLOCKSIZE
#define P_BLOCKSIZE 32
#endif

template <int BLOCKSIZE>
__device__ __forceinline__ void smemtile_body(int M, int N, int K, float alpha,
                                              const float *A, const float *B,
                                              float beta, float *C) {
  static_assert(BLOCKSIZE > 0, "BLOCKSIZE must be positive");
  static_assert(BLOCKSIZE * BLOCKSIZE <= 1024, "BLOCKSIZE*BLOCKSIZE threads must be at most 1024");

  // block position within the grid
  const int cRow = blockIdx.x;
  const int cCol = blockIdx.y;

  // the two tiles this block stages in shared memory
  __shared__ float As[BLOCKSIZE * BLOCKSIZE];
  __shared__ float Bs[BLOCKSIZE * BLOCKSIZE];

  // thread position within the block's tile of C
  const int threadRow = threadIdx.x / BLOCKSIZE;
  const int threadCol = threadIdx.x % BLOCKSIZE;

  // move each pointer to the top left corner of this block's tile
  A += cRow * BLOCKSIZE * K;
  B += cCol * BLOCKSIZE;
  C += cRow * BLOCKSIZE * N + cCol * BLOCKSIZE;

  float acc = 0.0f;
  for (int bkIdx = 0; bkIdx < K; bkIdx += BLOCKSIZE) {
    // one element per thread, GMEM -> SMEM
    As[threadRow * BLOCKSIZE + threadCol] = A[threadRow * K + threadCol];
    Bs[threadRow * BLOCKSIZE + threadCol] = B[threadRow * N + threadCol];

    // block all threads until the shared memory is fully populated
    __syncthreads();

    // advance A right by one tile, B down by one tile
    A += BLOCKSIZE;
    B += BLOCKSIZE * N;

    // partial dot product over the cached tile
    for (int k = 0; k < BLOCKSIZE; ++k) {
      acc += As[threadRow * BLOCKSIZE + k] * Bs[k * BLOCKSIZE + threadCol];
    }

    // sync again so a fast thread cannot overwrite a tile a slow one still reads
    __syncthreads();
  }

  C[threadRow * N + threadCol] =
      alpha * acc + beta * C[threadRow * N + threadCol];
}

extern "C" __global__ void smemtile(int M, int N, int K, float alpha,
                                    const float *A, const float *B, float beta,
                                    float *C) {
  smemtile_body<P_BLOCKSIZE>(M, N, K, alpha, A, B, beta, C);
}
