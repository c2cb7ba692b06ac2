// Two warps of one SMSP running regtile2d's dotIdx trip (8 LDS of As, 2 LDS.128 of Bs, the 8 x 8 outer
// product of FFMAs into 64 accumulators) with nothing else on the SM: do they issue in turns (one warp's
// 64 FFMAs, then the other's) or together? One CTA of 256 threads; the warps in `mask` run TRIPS trips
// over a static shared tile (As, Bs as regtile2d's), lane 0 stamping clock64 at the top of each trip;
// the other warps exit. Masks: 0x1 warp 0 alone; 0x11 warps 0 and 4 (one SMSP); 0x3 warps 0 and 1
// (two SMSPs); 0xff all eight (two per SMSP).
// Usage: dot_pair MASK [CTAS [ffma]]  (prints "mask M warp W slot S t0 t1 ..." per warp of CTA 0; CTAS > 1
// (default 1) launches that many CTAs, one per SM, each doing the same: more warps for ncu's PC sampling to
// see; "ffma" runs dot_ffma, the trip without its loads, instead)
// Build: nvcc -arch=sm_90 -O3 -o dot_pair kernels_cuda/micro/dot_pair.cu
#include <cstdio>
#include <cstdlib>

#define BM 128
#define BN 128
#define BK 8
#define TM 8
#define TN 8
#define TRIPS 64

// Both kernels' start: fill the static tile, let the warps outside `mask` go, note each warp's slot.
// Returns false for a warp that exits.
__device__ __forceinline__ bool start(float *As, float *Bs, int *slot, unsigned mask) {
  for (int i = threadIdx.x; i < BM * BK; i += blockDim.x) {
    As[i] = 1e-3f * (i % 97);
    Bs[i] = 1e-3f * (i % 89);
  }
  __syncthreads();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (!((mask >> warp) & 1u)) return false;
  if (lane == 0) {
    unsigned wid;
    asm volatile("mov.u32 %0, %%warpid;" : "=r"(wid));
    slot[blockIdx.x * 8 + warp] = wid;
  }
  return true;
}

__global__ void __launch_bounds__(256) dot_pair(float *out, long long *stamps, int *slot, unsigned mask) {
  __shared__ float As[BM * BK];
  __shared__ float Bs[BK * BN];
  if (!start(As, Bs, slot, mask)) return;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  stamps += blockIdx.x * 8 * TRIPS;
  const int threadCol = threadIdx.x % (BN / TN);
  const int threadRow = threadIdx.x / (BN / TN);
  float acc[TM * TN] = {0.0f};
  float regM[TM], regN[TN];
#pragma unroll 1
  for (int trip = 0; trip < TRIPS; trip++) {
    if (lane == 0) stamps[warp * TRIPS + trip] = clock64();
    const int dotIdx = trip % BK;
    for (int i = 0; i < TM; ++i) regM[i] = As[(threadRow * TM + i) * BK + dotIdx];
    for (int i = 0; i < TN; ++i) regN[i] = Bs[dotIdx * BN + threadCol * TN + i];
    for (int m = 0; m < TM; ++m)
      for (int n = 0; n < TN; ++n) acc[m * TN + n] += regM[m] * regN[n];
  }
  float s = 0.0f;
  for (int i = 0; i < TM * TN; i++) s += acc[i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// The same trip without its loads: regM and regN are loaded once before the loop, each trip is the clock
// read and the 64 FFMAs (what the FFMA block costs by itself: dispatch stalls with no load results landing).
// The empty asm statements tell the compiler regM and regN may change every trip, so that it cannot hoist
// the products out of the loop (without them ptxas turns the trip into 64 FADDs).
__global__ void __launch_bounds__(256) dot_ffma(float *out, long long *stamps, int *slot, unsigned mask) {
  __shared__ float As[BM * BK];
  __shared__ float Bs[BK * BN];
  if (!start(As, Bs, slot, mask)) return;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  stamps += blockIdx.x * 8 * TRIPS;
  const int threadCol = threadIdx.x % (BN / TN);
  const int threadRow = threadIdx.x / (BN / TN);
  float acc[TM * TN] = {0.0f};
  float regM[TM], regN[TN];
  for (int i = 0; i < TM; ++i) regM[i] = As[(threadRow * TM + i) * BK];
  for (int i = 0; i < TN; ++i) regN[i] = Bs[threadCol * TN + i];
#pragma unroll 1
  for (int trip = 0; trip < TRIPS; trip++) {
    if (lane == 0) stamps[warp * TRIPS + trip] = clock64();
#pragma unroll
    for (int i = 0; i < TM; ++i) asm volatile("" : "+f"(regM[i]));
#pragma unroll
    for (int i = 0; i < TN; ++i) asm volatile("" : "+f"(regN[i]));
    for (int m = 0; m < TM; ++m)
      for (int n = 0; n < TN; ++n) acc[m * TN + n] += regM[m] * regN[n];
  }
  float s = 0.0f;
  for (int i = 0; i < TM * TN; i++) s += acc[i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

int main(int argc, char **argv) {
  if (argc < 2) { fprintf(stderr, "usage: %s MASK\n", argv[0]); return 2; }
  const unsigned mask = (unsigned)strtoul(argv[1], 0, 0);
  const int ctas = argc > 2 ? atoi(argv[2]) : 1;
  float *out; long long *stamps; int *slot;
  cudaMalloc(&out, ctas * 256 * 4);
  cudaMalloc(&stamps, ctas * 8 * TRIPS * 8);
  cudaMalloc(&slot, ctas * 8 * 4);
  long long h[8 * TRIPS];
  int hs[8];
  const bool ffma_only = argc > 3 && argv[3][0] == 'f';
  for (int rep = 0; rep < 2; rep++) {                                                  // the second is kept
    if (ffma_only) dot_ffma<<<ctas, 256>>>(out, stamps, slot, mask);
    else dot_pair<<<ctas, 256>>>(out, stamps, slot, mask);
  }
  cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess) { fprintf(stderr, "%s\n", cudaGetErrorString(err)); return 1; }
  cudaMemcpy(h, stamps, sizeof h, cudaMemcpyDeviceToHost);
  cudaMemcpy(hs, slot, sizeof hs, cudaMemcpyDeviceToHost);
  for (int w = 0; w < 8; w++) {
    if (!((mask >> w) & 1u)) continue;
    printf("%s 0x%x warp %d slot %d", ffma_only ? "ffma_mask" : "mask", mask, w, hs[w]);
    for (int t = 0; t < TRIPS; t++) printf(" %lld", h[w * TRIPS + t]);
    printf("\n");
  }
  return 0;
}
