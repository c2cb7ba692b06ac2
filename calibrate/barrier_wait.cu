// Which warps of a CTA wait at regtile1d's two barriers, and how long? regtile1d (kernels_cuda/regtile1d.cu
// at its defaults: 64x64x8 tiles, 8 results per thread, 512 threads, 16 warps per CTA) with one change:
// lane 0 of every warp writes clock64 four times in each slab S0 <= slab < S0 + SLABS: after its stores to
// shared memory (its global loads have returned), after the first __syncthreads, after its dot loop, and
// after the second __syncthreads (the 2nd and 4th after a shared load, which waits for the release); and
// once its SM id and warp slot (%warpid; its SMSP is %warpid % 4).
// clock64 is the SM's own counter, so the stamps of one SM's warps compare directly.
// Usage: barrier_wait N OUT.bin  (N x N x N, one untimed launch, then the stamped one; prints the kernel
// time of both and writes int32 [CTAs * 16][2] smid, warpid, then int64 [CTAs * 16][SLABS][4] stamps)
// Build: nvcc -arch=sm_90 -O3 -o barrier_wait calibrate/barrier_wait.cu
#include <cstdio>
#include <cstdlib>
#include "sgemm_twin_host.cuh"

#define BM 64
#define BN 64
#define BK 8
#define TM 8
#define THREADS ((BM * BN) / TM)
#define WARPS (THREADS / 32)
#define S0 16
#define SLABS 16

__device__ __forceinline__ long long stamp() {
  long long t;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
  return t;
}

extern "C" __global__ void barrier_wait(int M, int N, int K, float alpha, const float *A, const float *B,
                                        float beta, float *C, long long *stamps, int *where) {
  const int cRow = blockIdx.y, cCol = blockIdx.x;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int cta = blockIdx.y * gridDim.x + blockIdx.x;
  long long *mine = stamps + (long long)(cta * WARPS + warp) * SLABS * 4;
  if (lane == 0) {
    unsigned smid, wid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    asm volatile("mov.u32 %0, %%warpid;" : "=r"(wid));
    where[2 * (cta * WARPS + warp)] = smid;
    where[2 * (cta * WARPS + warp) + 1] = wid;
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
    const int slab = bkIdx / BK - S0;
    const bool on = lane == 0 && slab >= 0 && slab < SLABS;
    As[innerRowA * BK + innerColA] = A[innerRowA * K + innerColA];
    Bs[innerRowB * BN + innerColB] = B[innerRowB * N + innerColB];
    if (on) mine[slab * 4 + 0] = stamp();
    __syncthreads();
    // a shared load waits for the barrier's release (BAR.SYNC.DEFER_BLOCKING lets a clock read issue past
    // it), and the clock read after it in the SASS issues after it
    const float probe1 = Bs[threadCol];
    if (on) mine[slab * 4 + 1] = stamp() + (probe1 == 1.2345e-30f);
    A += BK;
    B += BK * N;
    for (int dotIdx = 0; dotIdx < BK; ++dotIdx) {
      float tmpB = Bs[dotIdx * BN + threadCol];
      for (int resIdx = 0; resIdx < TM; ++resIdx)
        threadResults[resIdx] += As[(threadRow * TM + resIdx) * BK + dotIdx] * tmpB;
    }
    if (on) mine[slab * 4 + 2] = stamp() + (threadResults[0] == 1.2345e-30f);   // after the last FFMA's result
    __syncthreads();
    const float probe3 = As[threadRow * TM * BK];
    if (on) mine[slab * 4 + 3] = stamp() + (probe3 == 1.2345e-30f);
  }
  for (int resIdx = 0; resIdx < TM; ++resIdx)
    C[(threadRow * TM + resIdx) * N + threadCol] =
        alpha * threadResults[resIdx] + beta * C[(threadRow * TM + resIdx) * N + threadCol];
}

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: %s N OUT.bin\n", argv[0]); return 2; }
  const int n = atoi(argv[1]);
  if (n % BM || n % BN || n / BK < S0 + SLABS) { fprintf(stderr, "N must be a multiple of 64 and at least %d\n", (S0 + SLABS) * BK); return 2; }
  const int ctas = (n / BN) * (n / BM);
  const TwinBuffers b = twin_buffers(n, (size_t)ctas * WARPS * SLABS * 4, (size_t)ctas * WARPS);
  dim3 grid(n / BN, n / BM), block(THREADS);
  if (time_twice(n, [&] { barrier_wait<<<grid, block>>>(n, n, n, 1.0f, b.A, b.B, 0.0f, b.C, b.stamps, b.where); }))
    return 1;
  write_stamps(argv[2], b);
  printf("ctas %d warps_per_cta %d slabs %d slab0 %d\n", ctas, WARPS, SLABS, S0);
  return 0;
}
