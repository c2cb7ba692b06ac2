// regtile1d: 1-D register blocking. Each thread computes a column of TM results
// of C, so one value of Bs read into a register feeds TM multiply-adds.
// Row-major A (MxK), B (KxN), C (MxN), fp32. Computes C = alpha*A*B + beta*C.
// Launch: block ((BM*BN)/TM, 1, 1) = 512 at the defaults, grid (ceil(N/BN), ceil(M/BM), 1).
// No bounds checks: M must be a multiple of BM, N of BN, K of BK.
// Each thread stages exactly one element of As and one of Bs per K step, so
// the thread count must equal BM*BK and BN*BK.
// Build another instance: nvcc -arch=sm_90 -O3 -cubin -DP_TM=4 -DP_BK=16 kernels_cuda/regtile1d.cu

#ifndef P_BM
#define P_BM 64
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

template <int BM, int BN, int BK, int TM>
__device__ __forceinline__ void regtile1d_body(int M, int N, int K, float alpha,
                                               const float *A, const float *B,
                                               float beta, float *C) {
  constexpr int NUM_THREADS = (BM * BN) / TM;
  static_assert(BM > 0 && BN > 0 && BK > 0 && TM > 0, "tile sizes must be positive");
  static_assert(BM % TM == 0, "BM must be a multiple of TM");
  static_assert(NUM_THREADS <= 1024, "(BM*BN)/TM threads must be at most 1024");
  static_assert(BM * BK == NUM_THREADS, "one element of As per thread: BM*BK must equal (BM*BN)/TM");
  static_assert(BN * BK == NUM_THREADS, "one element of Bs per thread: BN*BK must equal (BM*BN)/TM");

  const int cRow = blockIdx.y;
  const int cCol = blockIdx.x;

  // each thread computes TM consecutive rows of one column of the block's tile
  const int threadCol = threadIdx.x % BN;
  const int threadRow = threadIdx.x / BN;

  __shared__ float As[BM * BK];
  __shared__ float Bs[BK * BN];

  // move the pointers to the block's tiles
  A += cRow * BM * K;
  B += cCol * BN;
  C += cRow * BM * N + cCol * BN;

  // the element of each slab this thread stages
  const int innerColA = threadIdx.x % BK;
  const int innerRowA = threadIdx.x / BK;
  const int innerColB = threadIdx.x % BN;
  const int innerRowB = threadIdx.x / BN;

  float threadResults[TM] = {0.0f};

  for (int bkIdx = 0; bkIdx < K; bkIdx += BK) {
    // GMEM -> SMEM, one element of A and one of B per thread
    As[innerRowA * BK + innerColA] = A[innerRowA * K + innerColA];
    Bs[innerRowB * BN + innerColB] = B[innerRowB * N + innerColB];
    __syncthreads();

    // advance to the next slabs
    A += BK;
    B += BK * N;

    // per-thread results; the B value is held in a register across TM rows
    for (int dotIdx = 0; dotIdx < BK; ++dotIdx) {
      float tmpB = Bs[dotIdx * BN + threadCol];
      for (int resIdx = 0; resIdx < TM; ++resIdx) {
        threadResults[resIdx] += As[(threadRow * TM + resIdx) * BK + dotIdx] * tmpB;
      }
    }
    __syncthreads();
  }

  for (int resIdx = 0; resIdx < TM; ++resIdx) {
    C[(threadRow * TM + resIdx) * N + threadCol] =
        alpha * threadResults[resIdx] + beta * C[(threadRow * TM + resIdx) * N + threadCol];
  }
}

extern "C" __global__ void regtile1d(int M, int N, int K, float alpha,
                                     const float *A, const float *B, float beta,
                                     float *C) {
  regtile1d_body<P_BM, P_BN, P_BK, P_TM>(M, N, K, alpha, A, B, beta, C);
}
