// regblock: register blocking on top of shared-memory tiling (seed 000,
// sgemm_regblock<BM, BN, BK, TM, TN>): each thread accumulates a TM x TN
// microtile as an outer product; As is staged transposed (As[k][m]); grid-stride
// loops over the tiles of C.
// Row-major A (MxK), B (KxN), C (MxN), fp32. Computes C = A*B: alpha and beta
// are accepted only so that all kernels share one argument list, and are ignored.
// Launch: block ((BM/TM)*(BN/TN), 1, 1) = 128 at the defaults,
// grid (ceil(N/BN), ceil(M/BM), 1). No bounds checks: M, N, K multiples of BM, BN, BK.
// The seed elides the store of acc ("// ... store acc[TM][TN] back to C ..."); it is
// written here as C[(bRow+threadRow*TM+i)*N + bCol+threadCol*TN+j] = acc[i][j], i outer.
// Build another instance: nvcc -arch=sm_90 -O3 -cubin -DP_BN=128 kernels_cuda/regblock.cu

#ifndef P_BM
#define P_BM 128
#endif
#ifndef P_BN
#define P_BN 64
#endif
#ifndef P_BK
#define P_BK 8
#endif
#ifndef P_TM
#define P_TM 8
#endif
#ifndef P_TN
#define P_TN 8
#endif

template <int BM, int BN, int BK, int TM, int TN>
__device__ __forceinline__ void regblock_body(int M, int N, int K, float alpha,
                                              const float *A, const float *B,
                                              float beta, float *C) {
  static_assert(BM > 0 && BN > 0 && BK > 0 && TM > 0 && TN > 0, "tile sizes must be positive");
  static_assert(BM % TM == 0 && BN % TN == 0, "BM must be a multiple of TM and BN of TN");
  static_assert((BM / TM) * (BN / TN) <= 1024, "(BM/TM)*(BN/TN) threads must be at most 1024");
  static_assert(((BM / TM) * (BN / TN)) % BK == 0 && BM % (((BM / TM) * (BN / TN)) / BK) == 0,
                "the A staging loop must cover BM rows in whole passes of nThreads/BK rows");
  static_assert(((BM / TM) * (BN / TN)) % BN == 0 && BK % (((BM / TM) * (BN / TN)) / BN) == 0,
                "the B staging loop must cover BK rows in whole passes of nThreads/BN rows");
  (void)alpha;  // C = A*B: alpha and beta are ignored
  (void)beta;

  const int nThreads = (BM / TM) * (BN / TN);
  __shared__ float As[BK][BM];  // transposed: As[k][m]
  __shared__ float Bs[BK][BN];
  const int tid = threadIdx.x;
  const int threadRow = tid / (BN / TN), threadCol = tid % (BN / TN);
  const int rowA = tid / BK, colA = tid % BK, strideA = nThreads / BK;
  const int rowB = tid / BN, colB = tid % BN, strideB = nThreads / BN;

  for (int bRow = blockIdx.y * BM; bRow < M; bRow += gridDim.y * BM) {
    for (int bCol = blockIdx.x * BN; bCol < N; bCol += gridDim.x * BN) {
      float acc[TM][TN] = {};
      for (int k0 = 0; k0 < K; k0 += BK) {
        for (int off = 0; off < BM; off += strideA)  // stage A slab (transposed)
          As[colA][rowA + off] = A[(bRow + rowA + off) * K + (k0 + colA)];
        for (int off = 0; off < BK; off += strideB)  // stage B slab
          Bs[rowB + off][colB] = B[(k0 + rowB + off) * N + (bCol + colB)];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; k++) {
          float rA[TM], rB[TN];
          for (int i = 0; i < TM; i++) rA[i] = As[k][threadRow * TM + i];
          for (int j = 0; j < TN; j++) rB[j] = Bs[k][threadCol * TN + j];
          for (int i = 0; i < TM; i++) {
            for (int j = 0; j < TN; j++) acc[i][j] += rA[i] * rB[j];
          }
        }
        __syncthreads();
      }
      // store acc[TM][TN] back to C (elided in the seed)
      for (int i = 0; i < TM; i++) {
        for (int j = 0; j < TN; j++)
          C[(bRow + threadRow * TM + i) * N + bCol + threadCol * TN + j] = acc[i][j];
      }
    }
  }
}

extern "C" __global__ void regblock(int M, int N, int K, float alpha,
                                    const float *A, const float *B, float beta,
                                    float *C) {
  regblock_body<P_BM, P_BN, P_BK, P_TM, P_TN>(M, N, K, alpha, A, B, beta, C);
}
