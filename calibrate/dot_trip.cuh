// regtile2d's dotIdx trip as the dot_pair micros run it (dot_pair.cu, dot_pair_delay.cu): one CTA of 256
// threads over a static shared tile (As, Bs as regtile2d's), lane 0 of each warp stamping clock64 at the
// top of each of TRIPS trips.
#pragma once

#define BM 128
#define BN 128
#define BK 8
#define TM 8
#define TN 8
#define TRIPS 64

// The kernels' start: fill the static tile, let the warps outside `mask` go, note each warp's slot.
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

// TRIPS trips of 8 LDS of As, 2 LDS.128 of Bs and the 8 x 8 outer product into 64 accumulators; returns
// their sum (for the caller to store, so that nothing is dropped).
__device__ __forceinline__ float dot_trips(const float *As, const float *Bs, long long *stamps) {
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
  return s;
}

// The same trip without its loads: regM and regN are loaded once before the loop, each trip is the clock
// read and the 64 FFMAs (what the FFMA block costs by itself: dispatch stalls with no load results landing).
// The empty asm statements tell the compiler regM and regN may change every trip, so that it cannot hoist
// the products out of the loop (without them ptxas turns the trip into 64 FADDs).
__device__ __forceinline__ float ffma_trips(const float *As, const float *Bs, long long *stamps) {
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
  return s;
}
