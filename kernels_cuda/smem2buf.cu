// smem2buf: 2-D register tiling with double-buffered shared memory. Two shared buffers of each
// tile: while the threads compute tile t from buffer t%2, they store tile t+1 from global memory
// into the other buffer, so one barrier per tile suffices (regtile2d has two). Each thread owns a
// TM x TN patch of C, accumulated as an outer product of TM values of As and TN of Bs per k.
// Row-major A (MxK), B (KxN), C (MxN), fp32. Computes C = alpha*A*B + beta*C.
// Launch: block ((BM*BN)/(TM*TN), 1, 1) = 256 at the defaults, grid (ceil(N/BN), ceil(M/BM), 1).
// No bounds checks: M must be a multiple of BM, N of BN, K of BK.
// Build another instance: nvcc -arch=sm_90 -O3 -cubin -DP_BN=64 -DP_TM=4 kernels_cuda/smem2buf.cu

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
__device__ __forceinline__ void smem2buf_body(int M, int N, int K, float alpha,
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

  __shared__ float As[2 * BM * BK];
  __shared__ float Bs[2 * BK * BN];

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

  // tile 0 into buffer 0
  for (int offset = 0; offset < BM; offset += ROW_STRIDE_A) {
    As[(innerRowA + offset) * BK + innerColA] = A[(innerRowA + offset) * K + innerColA];
  }
  for (int offset = 0; offset < BK; offset += ROW_STRIDE_B) {
    Bs[(innerRowB + offset) * BN + innerColB] = B[(innerRowB + offset) * N + innerColB];
  }
  __syncthreads();

  for (int bkIdx = 0; bkIdx < K; bkIdx += BK) {
    const int cur = (bkIdx / BK) % 2;
    const int nxt = 1 - cur;

    if (bkIdx + BK < K) {     // tile t+1 into the other buffer, read by nobody during tile t
      for (int offset = 0; offset < BM; offset += ROW_STRIDE_A) {
        As[nxt * BM * BK + (innerRowA + offset) * BK + innerColA] =
            A[(innerRowA + offset) * K + innerColA + bkIdx + BK];
      }
      for (int offset = 0; offset < BK; offset += ROW_STRIDE_B) {
        Bs[nxt * BK * BN + (innerRowB + offset) * BN + innerColB] =
            B[(innerRowB + offset + bkIdx + BK) * N + innerColB];
      }
    }

    for (int dotIdx = 0; dotIdx < BK; ++dotIdx) {
      for (int i = 0; i < TM; ++i) {
        regM[i] = As[cur * BM * BK + (threadRow * TM + i) * BK + dotIdx];
      }
      for (int i = 0; i < TN; ++i) {
        regN[i] = Bs[cur * BK * BN + dotIdx * BN + threadCol * TN + i];
      }
      for (int resIdxM = 0; resIdxM < TM; ++resIdxM) {
        for (int resIdxN = 0; resIdxN < TN; ++resIdxN) {
          threadResults[resIdxM * TN + resIdxN] += regM[resIdxM] * regN[resIdxN];
        }
      }
    }
    __syncthreads();          // tile t+1 stored; tile t read: the buffers swap roles
  }

  for (int resIdxM = 0; resIdxM < TM; ++resIdxM) {
    for (int resIdxN = 0; resIdxN < TN; ++resIdxN) {
      const int cIdx = (threadRow * TM + resIdxM) * N + threadCol * TN + resIdxN;
      C[cIdx] = alpha * threadResults[resIdxM * TN + resIdxN] + beta * C[cIdx];
    }
  }
}

extern "C" __global__ void smem2buf(int M, int N, int K, float alpha,
                                    const float *A, const float *B, float beta,
                                    float *C) {
  smem2buf_body<P_BM, P_BN, P_BK, P_TM, P_TN>(M, N, K, alpha, A, B, beta, C);
}
