// tiled32: textbook shared-memory tiling with one output per thread and three
// independent tile parameters (seed 000, sgemm_tiled<BM, BN, BK>), with
// grid-stride loops over the tiles of C.
// Row-major A (MxK), B (KxN), C (MxN), fp32. Computes C = A*B: alpha and beta
// are accepted only so that all kernels share one argument list, and are ignored.
// Launch: block (BN, BM, 1), grid (ceil(N/BN), ceil(M/BM), 1), so each grid-stride
// loop runs once per block. No bounds checks: M, N, K multiples of BM, BN, BK.
// Build another instance: nvcc -arch=sm_90 -O3 -cubin -DP_BK=16 kernels_cuda/tiled32.cu

#ifndef P_BM
#define P_BM 32
#endif
#ifndef P_BN
#define P_BN 32
#endif
#ifndef P_BK
#define P_BK 32
#endif

template <int BM, int BN, int BK>
__device__ __forceinline__ void tiled32_body(int M, int N, int K, float alpha,
                                             const float *A, const float *B,
                                             float beta, float *C) {
  static_assert(BM > 0 && BN > 0 && BK > 0, "tile sizes must be positive");
  static_assert(BM * BN <= 1024, "block (BN, BM) must have at most 1024 threads");
  (void)alpha;  // C = A*B: alpha and beta are ignored
  (void)beta;

  __shared__ float As[BM][BK];
  __shared__ float Bs[BK][BN];
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * BN + tx, nThreads = BM * BN;

  for (int brow = blockIdx.y * BM; brow < M; brow += gridDim.y * BM) {
    for (int bcol = blockIdx.x * BN; bcol < N; bcol += gridDim.x * BN) {
      float acc = 0.f;
      for (int k0 = 0; k0 < K; k0 += BK) {
        for (int e = tid; e < BM * BK; e += nThreads)
          As[e / BK][e % BK] = A[(brow + e / BK) * K + (k0 + e % BK)];
        for (int e = tid; e < BK * BN; e += nThreads)
          Bs[e / BN][e % BN] = B[(k0 + e / BN) * N + (bcol + e % BN)];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; k++)
          acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
      }
      C[(brow + ty) * N + (bcol + tx)] = acc;
    }
  }
}

extern "C" __global__ void tiled32(int M, int N, int K, float alpha,
                                   const float *A, const float *B, float beta,
                                   float *C) {
  tiled32_body<P_BM, P_BN, P_BK>(M, N, K, alpha, A, B, beta, C);
}
