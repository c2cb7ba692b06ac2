// regtile2d: 2-D register tiling (seed 003, sgemm_register_tiling_2d). Each
// thread owns a TM x TN patch of C and accumulates it as an outer product of
// TM values of As and TN values of Bs per step of K.
// Row-major A (MxK), B (KxN), C (MxN), fp32. Computes C = alpha*A*B + beta*C.
// Launch: block ((BM*BN)/(TM*TN), 1, 1) = 256 at the defaults, grid (ceil(N/BN), ceil(M/BM), 1).
// No bounds checks: M must be a multiple of BM, N of BN, K of BK.
// Build another instance: nvcc -arch=sm_90 -O3 -cubin -DP_BN=64 -DP_TM=4 kernels_cuda/regtile2d.cu

#ifndef P_BM
#define P_BM 128
#endif
#ifndef P_BN
#define P_BN 128
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
__device__ __forceinline__ void regtile2d_body(int M, int N, int K, float alpha,
                                               const float *A, const float *B,
                                               float beta, float *C) {
  constexpr int NUM_THREADS = (BM * BN) / (TM * TN);
  static_assert(BM > 0 && BN > 0 && BK > 0 && TM > 0 && TN > 0, "tile sizes must be positive");
  static_assert(BM % TM == 0 && BN % TN == 0, "BM must be a multiple of TM and BN of TN");
  static_assert(NUM_THREADS <= 1024, "(BM*BN)/(TM*TN) threads must be at most 1024");
  static_assert(NUM_THREADS % BK == 0 && BM % (NUM_THREADS / BK) == 0,
                "the A staging loop must cover BM rows in whole passes of NUM_THREADS/BK rows");
  static_assert(NUM_THREADS % BN == 0 && BK % (NUM_THREADS / BN) == 0,
                "the B staging loop must cover BK rows in whole passes of NUM_THREADS/BN rows");

  const int cRow = blockIdx.y;
  const int cCol = blockIdx.x;

  __shared__ float As[BM * BK];
  __shared__ float Bs[BK * BN];

  const int threadCol = threadIdx.x % (BN / TN);
  const int threadRow = threadIdx.x / (BN / TN);

  A += cRow * BM * K;
  B += cCol * BN;
  C += cRow * BM * N + cCol * BN;

  const int innerColA = threadIdx.x % BK;
  const int innerRowA = threadIdx.x / BK;
  constexpr int ROW_STRIDE_A = NUM_THREADS / BK;

  const int innerColB = threadIdx.x % BN;
  const int innerRowB = threadIdx.x / BN;
  constexpr int ROW_STRIDE_B = NUM_THREADS / BN;

  float threadResults[TM * TN] = {0.0f};

  float regM[TM] = {0.0f};
  float regN[TN] = {0.0f};

  for (int bkIdx = 0; bkIdx < K; bkIdx += BK) {

    for (int offset = 0; offset < BM; offset += ROW_STRIDE_A) {
      As[(innerRowA + offset) * BK + innerColA] =
          A[(innerRowA + offset) * K + innerColA];
    }

    for (int offset = 0; offset < BK; offset += ROW_STRIDE_B) {
      Bs[(innerRowB + offset) * BN + innerColB] =
          B[(innerRowB + offset) * N + innerColB];
    }
    __syncthreads();

    A += BK;
    B += BK * N;

    for (int dotIdx = 0; dotIdx < BK; ++dotIdx) {

      for (int i = 0; i < TM; ++i) {
        regM[i] = As[(threadRow * TM + i) * BK + dotIdx];
      }

      for (int i = 0; i < TN; ++i) {
        regN[i] = Bs[dotIdx * BN + threadCol * TN + i];
      }

      for (int resIdxM = 0; resIdxM < TM; ++resIdxM) {
        for (int resIdxN = 0; resIdxN < TN; ++resIdxN) {
          threadResults[resIdxM * TN + resIdxN] += regM[resIdxM] * regN[resIdxN];
        }
      }
    }
    __syncthreads();
  }

  for (int resIdxM = 0; resIdxM < TM; ++resIdxM) {
    for (int resIdxN = 0; resIdxN < TN; ++resIdxN) {
      const int cIdx = (threadRow * TM + resIdxM) * N + threadCol * TN + resIdxN;
      C[cIdx] = alpha * threadResults[resIdxM * TN + resIdxN] + beta * C[cIdx];
    }
  }
}

extern "C" __global__ void regtile2d(int M, int N, int K, float alpha,
                                     const float *A, const float *B, float beta,
                                     float *C) {
  regtile2d_body<P_BM, P_BN, P_BK, P_TM, P_TN>(M, N, K, alpha, A, B, beta, C);
}
