// How close in time do the CTAs that share a tile reach it? regtile1d (kernels_cuda/regtile1d.cu at its
// defaults: 64x64x8 tiles, 8 results per thread, 512 threads) with one change: thread 0 of every CTA
// writes %globaltimer (ns, chip-wide) at the top of every slab, before the slab's global loads, and its
// SM id (%smid) once. The CTAs of one grid row read the same A rows, those of one grid column the same B
// columns: the stamps say how far apart in time the sharers of each slab's lines ask for them, which is
// what decides whether an L2 hit finds the line still being filled by a sharer's miss.
// Usage: sharer_phase N OUT.bin  (N x N x N, one untimed launch, then the stamped one; prints the kernel
// time of both and writes int32 [CTAs][2] smid, 0, then int64 [CTAs][N / 8] stamps)
// Build: nvcc -arch=sm_90 -O3 -o sharer_phase kernels_cuda/micro/sharer_phase.cu
#include <cstdio>
#include <cstdlib>
#include "sgemm_twin_host.cuh"

#define BM 64
#define BN 64
#define BK 8
#define TM 8
#define THREADS ((BM * BN) / TM)

__device__ __forceinline__ long long globaltimer() {
  long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
  return t;
}

extern "C" __global__ void sharer_phase(int M, int N, int K, float alpha, const float *A, const float *B,
                                        float beta, float *C, long long *stamps, int *where) {
  const int cRow = blockIdx.y, cCol = blockIdx.x;
  const int cta = blockIdx.y * gridDim.x + blockIdx.x;
  long long *mine = stamps + (long long)cta * (K / BK);
  if (threadIdx.x == 0) {
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    where[2 * cta] = smid;
    where[2 * cta + 1] = 0;
  }
  const int threadCol = threadIdx.x % BN, threadRow = threadIdx.x / BN;
  __shared__ float As[BM * BK];
  __shared__ float Bs[BK * BN];
  A += cRow * BM * K;
  B += cCol * BN;
  C += cRow * BM * N + cCol * BN;
  const int innerColA = threadIdx.x % BK, innerRowA = threadIdx.x / BK;
  const int innerColB = threadIdx.x % BN, innerRowB = threadIdx.x / BN;
  float threadResults[TM] = {0.0f};
  for (int bkIdx = 0; bkIdx < K; bkIdx += BK) {
    if (threadIdx.x == 0) mine[bkIdx / BK] = globaltimer();
    As[innerRowA * BK + innerColA] = A[innerRowA * K + innerColA];
    Bs[innerRowB * BN + innerColB] = B[innerRowB * N + innerColB];
    __syncthreads();
    A += BK;
    B += BK * N;
    for (int dotIdx = 0; dotIdx < BK; ++dotIdx) {
      float tmpB = Bs[dotIdx * BN + threadCol];
      for (int resIdx = 0; resIdx < TM; ++resIdx)
        threadResults[resIdx] += As[(threadRow * TM + resIdx) * BK + dotIdx] * tmpB;
    }
    __syncthreads();
  }
  for (int resIdx = 0; resIdx < TM; ++resIdx)
    C[(threadRow * TM + resIdx) * N + threadCol] =
        alpha * threadResults[resIdx] + beta * C[(threadRow * TM + resIdx) * N + threadCol];
}

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: %s N OUT.bin\n", argv[0]); return 2; }
  const int n = atoi(argv[1]);
  if (n % BM || n % BN) { fprintf(stderr, "N must be a multiple of 64\n"); return 2; }
  const int ctas = (n / BN) * (n / BM);
  const TwinBuffers b = twin_buffers(n, (size_t)ctas * (n / BK), (size_t)ctas);
  dim3 grid(n / BN, n / BM), block(THREADS);
  if (time_twice(n, [&] { sharer_phase<<<grid, block>>>(n, n, n, 1.0f, b.A, b.B, 0.0f, b.C, b.stamps, b.where); }))
    return 1;
  write_stamps(argv[2], b);
  printf("ctas %d gridx %d slabs %d\n", ctas, n / BN, n / BK);
  return 0;
}
