// Two warps of one SMSP running regtile2d's dotIdx trip (8 LDS of As, 2 LDS.128 of Bs, the 8 x 8 outer
// product of FFMAs into 64 accumulators) with nothing else on the SM: do they issue in turns (one warp's
// 64 FFMAs, then the other's) or together? One CTA of 256 threads; the warps in `mask` run TRIPS trips
// over a static shared tile (As, Bs as regtile2d's), lane 0 stamping clock64 at the top of each trip;
// the other warps exit. Masks: 0x1 warp 0 alone; 0x11 warps 0 and 4 (one SMSP); 0x3 warps 0 and 1
// (two SMSPs); 0xff all eight (two per SMSP).
// Usage: dot_pair MASK [CTAS [ffma]]  (prints "mask M warp W slot S t0 t1 ..." per warp of CTA 0; CTAS > 1
// (default 1) launches that many CTAs, one per SM, each doing the same: more warps for ncu's PC sampling to
// see; "ffma" runs dot_ffma, the trip without its loads, instead)
// The trip itself is in dot_trip.cuh (shared with dot_pair_delay.cu).
// Build: nvcc -arch=sm_90 -O3 -o dot_pair calibrate/dot_pair.cu
#include <cstdio>
#include <cstdlib>

#include "dot_trip.cuh"

__global__ void __launch_bounds__(256) dot_pair(float *out, long long *stamps, int *slot, unsigned mask) {
  __shared__ float As[BM * BK];
  __shared__ float Bs[BK * BN];
  if (!start(As, Bs, slot, mask)) return;
  out[blockIdx.x * blockDim.x + threadIdx.x] = dot_trips(As, Bs, stamps);
}

// dot_trips without its loads (dot_trip.cuh: ffma_trips).
__global__ void __launch_bounds__(256) dot_ffma(float *out, long long *stamps, int *slot, unsigned mask) {
  __shared__ float As[BM * BK];
  __shared__ float Bs[BK * BN];
  if (!start(As, Bs, slot, mask)) return;
  out[blockIdx.x * blockDim.x + threadIdx.x] = ffma_trips(As, Bs, stamps);
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
