// coalesced: one thread per element of C, operands from global memory, with a
// 1-D block whose consecutive threads walk consecutive COLUMNS of C, so a warp
// reads a contiguous row segment of B and C (and broadcasts one element of A).
// Row-major A (MxK), B (KxN), C (MxN), fp32. Computes C = alpha*A*B + beta*C.
// Launch: block (BLOCKSIZE*BLOCKSIZE, 1, 1), grid (ceil(M/BLOCKSIZE), ceil(N/BLOCKSIZE), 1).
// Build another instance: nvcc -arch=sm_90 -O3 -cubin -DP_BLOCKSIZE=16 kernels_cuda/coalesced.cu

#ifndef P_BLOCKSIZE
#define P_BLOCKSIZE 32
#endif

template <int BLOCKSIZE>
__device__ __forceinline__ void coalesced_body(int M, int N, int K, float alpha,
                                               const float *A, const float *B,
                                               float beta, float *C) {
  static_assert(BLOCKSIZE > 0, "BLOCKSIZE must be positive");
  static_assert(BLOCKSIZE * BLOCKSIZE <= 1024, "BLOCKSIZE*BLOCKSIZE threads must be at most 1024");

  const int row = blockIdx.x * BLOCKSIZE + threadIdx.x / BLOCKSIZE;
  const int col = blockIdx.y * BLOCKSIZE + threadIdx.x % BLOCKSIZE;

  if (row < M && col < N) {
    float tmp = 0.0f;
    for (int i = 0; i < K; ++i) {
      tmp += A[row * K + i] * B[i * N + col];
    }
    C[row * N + col] = alpha * tmp + beta * C[row * N + col];
  }
}

extern "C" __global__ void coalesced(int M, int N, int K, float alpha,
                                     const float *A, const float *B, float beta,
                                     float *C) {
  coalesced_body<P_BLOCKSIZE>(M, N, K, alpha, A, B, beta, C);
}
