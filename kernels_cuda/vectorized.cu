// vectorized: regtile2d with 128-bit accesses. A is loaded from global memory
// as float4 and stored TRANSPOSED into As (As[k][m]), so the per-thread column
// of A becomes a contiguous row of As; B is copied float4 to float4; C is read
// and written as float4.
// Row-major A (MxK), B (KxN), C (MxN), fp32. Computes C = alpha*A*B + beta*C.
// Launch: block ((BM*BN)/(TM*TN), 1, 1) = 256 at the defaults, grid (ceil(N/BN), ceil(M/BM), 1).
// No bounds checks: M must be a multiple of BM, N of BN, K of BK; K % 4 == 0 and
// N % 4 == 0 (with 16-byte aligned A, B, C) for the float4 accesses.
// Build another instance: nvcc -arch=sm_90 -O3 -cubin -DP_BM=64 kernels_cuda/vectorized.cu

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
__device__ __forceinline__ void vectorized_body(int M, int N, int K, float alpha,
                                                const float *A, const float *B,
                                                float beta, float *C) {
  constexpr int NUM_THREADS = (BM * BN) / (TM * TN);
  static_assert(BM > 0 && BN > 0 && BK > 0 && TM > 0 && TN > 0, "tile sizes must be positive");
  static_assert(BM % TM == 0 && BN % TN == 0, "BM must be a multiple of TM and BN of TN");
  static_assert(NUM_THREADS <= 1024, "(BM*BN)/(TM*TN) threads must be at most 1024");
  static_assert(BK % 4 == 0 && BN % 4 == 0 && TN % 4 == 0, "BK, BN and TN must be multiples of 4 (float4)");
  static_assert(NUM_THREADS % (BK / 4) == 0 && BM % (NUM_THREADS / (BK / 4)) == 0,
                "the A staging loop must cover BM rows in whole passes of NUM_THREADS/(BK/4) rows");
  static_assert(NUM_THREADS % (BN / 4) == 0 && BK % (NUM_THREADS / (BN / 4)) == 0,
                "the B staging loop must cover BK rows in whole passes of NUM_THREADS/(BN/4) rows");

  const int cRow = blockIdx.y;
  const int cCol = blockIdx.x;

  __shared__ float As[BM * BK];  // transposed: As[k * BM + m]
  __shared__ float Bs[BK * BN];

  const int threadCol = threadIdx.x % (BN / TN);
  const int threadRow = threadIdx.x / (BN / TN);

  A += cRow * BM * K;
  B += cCol * BN;
  C += cRow * BM * N + cCol * BN;

  // each thread stages 4 consecutive floats per pass
  const int innerRowA = threadIdx.x / (BK / 4);
  const int innerColA = threadIdx.x % (BK / 4);
  constexpr int ROW_STRIDE_A = NUM_THREADS / (BK / 4);
  const int innerRowB = threadIdx.x / (BN / 4);
  const int innerColB = threadIdx.x % (BN / 4);
  constexpr int ROW_STRIDE_B = NUM_THREADS / (BN / 4);

  float threadResults[TM * TN] = {0.0f};
  float regM[TM] = {0.0f};
  float regN[TN] = {0.0f};

  for (int bkIdx = 0; bkIdx < K; bkIdx += BK) {
    // A: float4 from GMEM, stored transposed into As
    for (int offset = 0; offset < BM; offset += ROW_STRIDE_A) {
      float4 tmp = reinterpret_cast<const float4 *>(
          &A[(innerRowA + offset) * K + innerColA * 4])[0];
      As[(innerColA * 4 + 0) * BM + innerRowA + offset] = tmp.x;
      As[(innerColA * 4 + 1) * BM + innerRowA + offset] = tmp.y;
      As[(innerColA * 4 + 2) * BM + innerRowA + offset] = tmp.z;
      As[(innerColA * 4 + 3) * BM + innerRowA + offset] = tmp.w;
    }

    // B: float4 from GMEM to float4 in SMEM
    for (int offset = 0; offset < BK; offset += ROW_STRIDE_B) {
      reinterpret_cast<float4 *>(&Bs[(innerRowB + offset) * BN + innerColB * 4])[0] =
          reinterpret_cast<const float4 *>(&B[(innerRowB + offset) * N + innerColB * 4])[0];
    }
    __syncthreads();

    A += BK;
    B += BK * N;

    for (int dotIdx = 0; dotIdx < BK; ++dotIdx) {
      for (int i = 0; i < TM; ++i) {
        regM[i] = As[dotIdx * BM + threadRow * TM + i];
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

  // C: float4 read-modify-write
  for (int resIdxM = 0; resIdxM < TM; ++resIdxM) {
    for (int resIdxN = 0; resIdxN < TN; resIdxN += 4) {
      float4 tmp = reinterpret_cast<float4 *>(
          &C[(threadRow * TM + resIdxM) * N + threadCol * TN + resIdxN])[0];
      tmp.x = alpha * threadResults[resIdxM * TN + resIdxN + 0] + beta * tmp.x;
      tmp.y = alpha * threadResults[resIdxM * TN + resIdxN + 1] + beta * tmp.y;
      tmp.z = alpha * threadResults[resIdxM * TN + resIdxN + 2] + beta * tmp.z;
      tmp.w = alpha * threadResults[resIdxM * TN + resIdxN + 3] + beta * tmp.w;
      reinterpret_cast<float4 *>(
          &C[(threadRow * TM + resIdxM) * N + threadCol * TN + resIdxN])[0] = tmp;
    }
  }
}

extern "C" __global__ void vectorized(int M, int N, int K, float alpha,
                                      const float *A, const float *B, float beta,
                                      float *C) {
  vectorized_body<P_BM, P_BN, P_BK, P_TM, P_TN>(M, N, K, alpha, A, B, beta, C);
}
