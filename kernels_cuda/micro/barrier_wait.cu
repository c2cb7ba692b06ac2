// Which warps of a CTA wait at regtile1d's two barriers, and how long? regtile1d (kernels_cuda/regtile1d.cu
// at its defaults: 64x64x8 tiles, 8 results per thread, 512 threads, 16 warps per CTA) with one change:
// lane 0 of every warp writes clock64 four times in each slab S0 <= slab < S0 + SLABS: after its stores to
// shared memory (its global loads have returned), after the first __syncthreads, after its dot loop, and
// after the second __syncthreads (the 2nd and 4th after a shared load, which waits for the release); and
// once its SM id and warp slot (%warpid; its SMSP is %warpid % 4).
// clock64 is the SM's own counter, so the stamps of one SM's warps compare directly.
// Usage: barrier_wait N OUT.bin  (N x N x N, one untimed launch, then the stamped one; prints the kernel
// time of both and writes int32 [CTAs * 16][2] smid, warpid, then int64 [CTAs * 16][SLABS][4] stamps)
// Build: nvcc -arch=sm_90 -O3 -o barrier_wait kernels_cuda/micro/barrier_wait.cu
#include <cstdio>
#include <cstdlib>
#include <vector>

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
  const size_t elems = (size_t)n * n;
  std::vector<float> h(elems);
  for (size_t i = 0; i < elems; i++) h[i] = (float)((i * 2654435761u) % 1000) * 1e-3f;
  float *A, *B, *C;
  cudaMalloc(&A, elems * 4); cudaMalloc(&B, elems * 4); cudaMalloc(&C, elems * 4);
  cudaMemcpy(A, h.data(), elems * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(B, h.data(), elems * 4, cudaMemcpyHostToDevice);
  cudaMemset(C, 0, elems * 4);
  const int ctas = (n / BN) * (n / BM);
  long long *stamps; int *where;
  cudaMalloc(&stamps, (size_t)ctas * WARPS * SLABS * 4 * 8);
  cudaMalloc(&where, (size_t)ctas * WARPS * 2 * 4);
  dim3 grid(n / BN, n / BM), block(THREADS);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0); cudaEventCreate(&e1);
  for (int rep = 0; rep < 2; rep++) {
    cudaEventRecord(e0);
    barrier_wait<<<grid, block>>>(n, n, n, 1.0f, A, B, 0.0f, C, stamps, where);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms; cudaEventElapsedTime(&ms, e0, e1);
    printf("launch %d N %d ms %.4f\n", rep, n, ms);
  }
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) { fprintf(stderr, "%s\n", cudaGetErrorString(err)); return 1; }
  std::vector<int> hw((size_t)ctas * WARPS * 2);
  std::vector<long long> hs((size_t)ctas * WARPS * SLABS * 4);
  cudaMemcpy(hw.data(), where, hw.size() * 4, cudaMemcpyDeviceToHost);
  cudaMemcpy(hs.data(), stamps, hs.size() * 8, cudaMemcpyDeviceToHost);
  FILE *f = fopen(argv[2], "wb");
  fwrite(hw.data(), 4, hw.size(), f);
  fwrite(hs.data(), 8, hs.size(), f);
  fclose(f);
  printf("ctas %d warps_per_cta %d slabs %d slab0 %d\n", ctas, WARPS, SLABS, S0);
  return 0;
}
