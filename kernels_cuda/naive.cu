// naive: one thread per element of C, operands read straight from global memory.
// Row-major A (MxK), B (KxN), C (MxN), fp32. Computes C = alpha*A*B + beta*C.
// Launch: block (BLOCK, BLOCK, 1), grid (ceil(M/BLOCK), ceil(N/BLOCK), 1).
// threadIdx.x walks the ROWS of C here (x = row, y = column), as in the textbook
// naive kernel, so a warp reads one column of C with a stride of N floats.
// Build another instance: nvcc -arch=sm_90 -O3 -cubin -DP_BLOCK=16 kernels_cuda/naive.cu

#ifndef P_BLOCK
#define P_BLOCK 32
#endif

template <int BLOCK>
__device__ __forceinline__ void naive_body(int M, int N, int K, float alpha,
                                           const float *A, const float *B,
                                           float beta, float *C) {
  static_assert(BLOCK > 0, "BLOCK must be positive");
  static_assert(BLOCK * BLOCK <= 1024, "block (BLOCK, BLOCK) must have at most 1024 threads");

  const int x = blockIdx.x * BLOCK + threadIdx.x;  // row of C
  const int y = blockIdx.y * BLOCK + threadIdx.y;  // column of C

  if (x < M && y < N) {
    float tmp = 0.0f;
    for (int i = 0; i < K; ++i) {
      tmp += A[x * K + i] * B[i * N + y];
    }
    C[x * N + y] = alpha * tmp + beta * C[x * N + y];
  }
}

extern "C" __global__ void naive(int M, int N, int K, float alpha,
                                 const float *A, const float *B, float beta,
                                 float *C) {
  naive_body<P_BLOCK>(M, N, K, alpha, A, B, beta, C);
}
