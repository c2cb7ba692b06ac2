// Do the warps of one SMSP run regtile2d's dot loop together, or take turns? regtile2d (kernels_cuda/
// regtile2d.cu at its defaults: 128x128x8 tiles, 8x8 per thread, 256 threads, 2 CTAs and 16 warps per
// SM) with one change: lane 0 of every warp writes clock64 at the top of each dotIdx trip of slabs
// S0 <= slab < S0 + SLABS, and once its SM id and warp slot (%warpid; its SMSP is %warpid % 4).
// clock64 is the SM's own counter, so the stamps of one SM's warps compare directly.
// Usage: smsp_phase N OUT.bin  (N x N x N, one untimed launch, then the stamped one; prints the kernel
// time of both and writes the stamps: int64 [CTAs * 8 warps][SLABS * 8] after int32 smid, warpid pairs)
// Build: nvcc -arch=sm_90 -O3 -o smsp_phase calibrate/smsp_phase.cu
#include <cstdio>
#include <cstdlib>
#include "sgemm_twin_host.cuh"

#define BM 128
#define BN 128
#define BK 8
#define TM 8
#define TN 8
#define S0 16
#define SLABS 16
#define TRIPS (SLABS * BK)

extern "C" __global__ void smsp_phase(int M, int N, int K, float alpha, const float *A, const float *B, float beta,
                                      float *C, long long *stamps, int *where) {
  const int cRow = blockIdx.y, cCol = blockIdx.x;
  __shared__ float As[BM * BK];
  __shared__ float Bs[BK * BN];
  const int threadCol = threadIdx.x % (BN / TN);
  const int threadRow = threadIdx.x / (BN / TN);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int cta = blockIdx.y * gridDim.x + blockIdx.x;
  long long *mine = stamps + (long long)(cta * 8 + warp) * TRIPS;
  if (lane == 0) {
    unsigned smid, wid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    asm volatile("mov.u32 %0, %%warpid;" : "=r"(wid));
    where[2 * (cta * 8 + warp)] = smid;
    where[2 * (cta * 8 + warp) + 1] = wid;
  }
  A += cRow * BM * K;
  B += cCol * BN;
  C += cRow * BM * N + cCol * BN;
  const int innerColA = threadIdx.x % BK, innerRowA = threadIdx.x / BK;
  const int innerColB = threadIdx.x % BN, innerRowB = threadIdx.x / BN;
  float threadResults[TM * TN] = {0.0f};
  float regM[TM] = {0.0f};
  float regN[TN] = {0.0f};
  for (int bkIdx = 0; bkIdx < K; bkIdx += BK) {
    for (int offset = 0; offset < BM; offset += 256 / BK)
      As[(innerRowA + offset) * BK + innerColA] = A[(innerRowA + offset) * K + innerColA];
    for (int offset = 0; offset < BK; offset += 256 / BN)
      Bs[(innerRowB + offset) * BN + innerColB] = B[(innerRowB + offset) * N + innerColB];
    __syncthreads();
    A += BK;
    B += BK * N;
    const int slab = bkIdx / BK - S0;
    for (int dotIdx = 0; dotIdx < BK; ++dotIdx) {
      if (lane == 0 && slab >= 0 && slab < SLABS) mine[slab * BK + dotIdx] = clock64();
      for (int i = 0; i < TM; ++i) regM[i] = As[(threadRow * TM + i) * BK + dotIdx];
      for (int i = 0; i < TN; ++i) regN[i] = Bs[dotIdx * BN + threadCol * TN + i];
      for (int m = 0; m < TM; ++m)
        for (int n = 0; n < TN; ++n) threadResults[m * TN + n] += regM[m] * regN[n];
    }
    __syncthreads();
  }
  for (int m = 0; m < TM; ++m)
    for (int n = 0; n < TN; ++n) {
      const int cIdx = (threadRow * TM + m) * N + threadCol * TN + n;
      C[cIdx] = alpha * threadResults[m * TN + n] + beta * C[cIdx];
    }
}

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: %s N OUT.bin\n", argv[0]); return 2; }
  const int n = atoi(argv[1]);
  if (n % BM || n / BK < S0 + SLABS) { fprintf(stderr, "N must be a multiple of %d and at least %d\n", BM, (S0 + SLABS) * BK); return 2; }
  const int ctas = (n / BN) * (n / BM);
  const TwinBuffers b = twin_buffers(n, (size_t)ctas * 8 * TRIPS, (size_t)ctas * 8);
  dim3 grid(n / BN, n / BM), block(256);
  if (time_twice(n, [&] { smsp_phase<<<grid, block>>>(n, n, n, 1.0f, b.A, b.B, 0.0f, b.C, b.stamps, b.where); }))
    return 1;
  write_stamps(argv[2], b);
  printf("ctas %d warps_per_cta 8 trips %d slab0 %d\n", ctas, TRIPS, S0);
  return 0;
}
