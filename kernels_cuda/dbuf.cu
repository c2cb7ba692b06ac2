// dbuf: double-buffered SGEMM. While the threads compute tile k from one shared buffer, the
// float4 loads of tile k+1 are already on their way from global memory into registers; they are
// stored to the other shared buffer after the compute, and one barrier per tile separates the
// two phases (the buffer written at tile k was last read at tile k-1, before the previous barrier).
// Each thread owns a TM x TN patch of C (outer products of TM values of As and TN of Bs); As is
// kept transposed (k-major) so both operands are read as float4.
// Row-major A (MxK), B (KxN), C (MxN), fp32. Computes C = alpha*A*B + beta*C.
// Launch: block ((BM*BN)/(TM*TN), 1, 1) = 256 at the defaults, grid (ceil(N/BN), ceil(M/BM), 1).
// No bounds checks: M must be a multiple of BM, N of BN, K of BK; A, B, C 16-byte aligned.
// Build another instance: nvcc -arch=sm_90 -O3 -cubin -DP_BK=16 kernels_cuda/dbuf.cu

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
__device__ __forceinline__ void dbuf_body(int M, int N, int K, float alpha, const float *A,
                                          const float *B, float beta, float *C) {
  constexpr int NUM_THREADS = (BM * BN) / (TM * TN);
  constexpr int A_LOADS = (BM * BK / 4) / NUM_THREADS;   // float4 of the A tile per thread
  constexpr int B_LOADS = (BK * BN / 4) / NUM_THREADS;   // float4 of the B tile per thread
  constexpr int ROW_STRIDE_A = NUM_THREADS / (BK / 4);
  constexpr int ROW_STRIDE_B = NUM_THREADS / (BN / 4);
  static_assert(BM % TM == 0 && BN % TN == 0 && TM % 4 == 0 && TN % 4 == 0,
                "TM and TN must be multiples of 4 that divide BM and BN");
  static_assert(NUM_THREADS <= 1024, "(BM*BN)/(TM*TN) threads must be at most 1024");
  static_assert(BK % 4 == 0 && NUM_THREADS % (BK / 4) == 0 && BM % ROW_STRIDE_A == 0 && A_LOADS >= 1,
                "the A tile must be loaded in whole float4 passes of all threads");
  static_assert(BN % 4 == 0 && NUM_THREADS % (BN / 4) == 0 && BK % ROW_STRIDE_B == 0 && B_LOADS >= 1,
                "the B tile must be loaded in whole float4 passes of all threads");

  __shared__ float As[2][BK * BM];
  __shared__ float Bs[2][BK * BN];

  const int threadCol = threadIdx.x % (BN / TN);
  const int threadRow = threadIdx.x / (BN / TN);
  const int innerRowA = threadIdx.x / (BK / 4);
  const int innerColA = threadIdx.x % (BK / 4);
  const int innerRowB = threadIdx.x / (BN / 4);
  const int innerColB = threadIdx.x % (BN / 4);

  A += blockIdx.y * BM * K;
  B += blockIdx.x * BN;
  C += blockIdx.y * BM * N + blockIdx.x * BN;

  float4 nextA[A_LOADS];
  float4 nextB[B_LOADS];
  float threadResults[TM * TN] = {0.0f};
  float regM[TM];
  float regN[TN];

  // prologue: tile 0 into buffer 0
  for (int i = 0; i < A_LOADS; ++i) {
    nextA[i] = reinterpret_cast<const float4 *>(&A[(innerRowA + i * ROW_STRIDE_A) * K + innerColA * 4])[0];
  }
  for (int i = 0; i < B_LOADS; ++i) {
    nextB[i] = reinterpret_cast<const float4 *>(&B[(innerRowB + i * ROW_STRIDE_B) * N + innerColB * 4])[0];
  }
  for (int i = 0; i < A_LOADS; ++i) {
    const int row = innerRowA + i * ROW_STRIDE_A;
    As[0][(innerColA * 4 + 0) * BM + row] = nextA[i].x;
    As[0][(innerColA * 4 + 1) * BM + row] = nextA[i].y;
    As[0][(innerColA * 4 + 2) * BM + row] = nextA[i].z;
    As[0][(innerColA * 4 + 3) * BM + row] = nextA[i].w;
  }
  for (int i = 0; i < B_LOADS; ++i) {
    reinterpret_cast<float4 *>(&Bs[0][(innerRowB + i * ROW_STRIDE_B) * BN + innerColB * 4])[0] = nextB[i];
  }
  __syncthreads();

  for (int bkIdx = 0; bkIdx < K; bkIdx += BK) {
    const int cur = (bkIdx / BK) % 2;
    const bool more = bkIdx + BK < K;

    // tile k+1: global -> registers, in flight while tile k is computed
    if (more) {
      for (int i = 0; i < A_LOADS; ++i) {
        nextA[i] = reinterpret_cast<const float4 *>(
            &A[(innerRowA + i * ROW_STRIDE_A) * K + bkIdx + BK + innerColA * 4])[0];
      }
      for (int i = 0; i < B_LOADS; ++i) {
        nextB[i] = reinterpret_cast<const float4 *>(
            &B[(bkIdx + BK + innerRowB + i * ROW_STRIDE_B) * N + innerColB * 4])[0];
      }
    }

    // tile k from shared memory
    for (int dotIdx = 0; dotIdx < BK; ++dotIdx) {
      for (int i = 0; i < TM; i += 4) {
        const float4 a = reinterpret_cast<const float4 *>(&As[cur][dotIdx * BM + threadRow * TM + i])[0];
        regM[i + 0] = a.x;
        regM[i + 1] = a.y;
        regM[i + 2] = a.z;
        regM[i + 3] = a.w;
      }
      for (int i = 0; i < TN; i += 4) {
        const float4 b = reinterpret_cast<const float4 *>(&Bs[cur][dotIdx * BN + threadCol * TN + i])[0];
        regN[i + 0] = b.x;
        regN[i + 1] = b.y;
        regN[i + 2] = b.z;
        regN[i + 3] = b.w;
      }
      for (int resIdxM = 0; resIdxM < TM; ++resIdxM) {
        for (int resIdxN = 0; resIdxN < TN; ++resIdxN) {
          threadResults[resIdxM * TN + resIdxN] += regM[resIdxM] * regN[resIdxN];
        }
      }
    }

    // registers -> the other buffer (last read before the previous barrier)
    if (more) {
      for (int i = 0; i < A_LOADS; ++i) {
        const int row = innerRowA + i * ROW_STRIDE_A;
        As[1 - cur][(innerColA * 4 + 0) * BM + row] = nextA[i].x;
        As[1 - cur][(innerColA * 4 + 1) * BM + row] = nextA[i].y;
        As[1 - cur][(innerColA * 4 + 2) * BM + row] = nextA[i].z;
        As[1 - cur][(innerColA * 4 + 3) * BM + row] = nextA[i].w;
      }
      for (int i = 0; i < B_LOADS; ++i) {
        reinterpret_cast<float4 *>(&Bs[1 - cur][(innerRowB + i * ROW_STRIDE_B) * BN + innerColB * 4])[0] =
            nextB[i];
      }
    }
    __syncthreads();
  }

  for (int resIdxM = 0; resIdxM < TM; ++resIdxM) {
    for (int resIdxN = 0; resIdxN < TN; resIdxN += 4) {
      float4 *c = reinterpret_cast<float4 *>(&C[(threadRow * TM + resIdxM) * N + threadCol * TN + resIdxN]);
      float4 tmp = c[0];
      tmp.x = alpha * threadResults[resIdxM * TN + resIdxN + 0] + beta * tmp.x;
      tmp.y = alpha * threadResults[resIdxM * TN + resIdxN + 1] + beta * tmp.y;
      tmp.z = alpha * threadResults[resIdxM * TN + resIdxN + 2] + beta * tmp.z;
      tmp.w = alpha * threadResults[resIdxM * TN + resIdxN + 3] + beta * tmp.w;
      c[0] = tmp;
    }
  }
}

extern "C" __global__ void __launch_bounds__((P_BM * P_BN) / (P_TM * P_TN))
    dbuf(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C) {
  dbuf_body<P_BM, P_BN, P_BK, P_TM, P_TN>(M, N, K, alpha, A, B, beta, C);
}
