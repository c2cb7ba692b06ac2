// dot_pair's trips (dot_trip.cuh) with warps 4-7 held back by DELAY cycles before their first trip: do two
// warps of one SMSP that start apart come together (and stay within a few cycles, as they do from an
// in-step start), or settle in turns? One CTA of 256 threads; the warps of `mask` run; warps 4-7 spin on
// clock64 for DELAY cycles after the tile is filled, then run their trips, lane 0 stamping clock64 at the
// top of each trip.
// Usage: dot_pair_delay MASK DELAY [ffma]  (prints "delay D mask M warp W slot S t0 t1 ..." per warp; "ffma"
// runs the trip without its loads)
// Build: nvcc -arch=sm_90 -O3 -o dot_pair_delay calibrate/dot_pair_delay.cu
#include <cstdio>
#include <cstdlib>

#include "dot_trip.cuh"

__device__ __forceinline__ void hold_back(int delay) {
  if ((threadIdx.x >> 5) >= 4 && delay > 0) {
    const long long t0 = clock64();
    while (clock64() - t0 < delay) {
    }
  }
}

__global__ void __launch_bounds__(256) dot_delay(float *out, long long *stamps, int *slot, unsigned mask, int delay) {
  __shared__ float As[BM * BK];
  __shared__ float Bs[BK * BN];
  if (!start(As, Bs, slot, mask)) return;
  hold_back(delay);
  out[blockIdx.x * blockDim.x + threadIdx.x] = dot_trips(As, Bs, stamps);
}

__global__ void __launch_bounds__(256) ffma_delay(float *out, long long *stamps, int *slot, unsigned mask, int delay) {
  __shared__ float As[BM * BK];
  __shared__ float Bs[BK * BN];
  if (!start(As, Bs, slot, mask)) return;
  hold_back(delay);
  out[blockIdx.x * blockDim.x + threadIdx.x] = ffma_trips(As, Bs, stamps);
}

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: %s MASK DELAY [ffma]\n", argv[0]); return 2; }
  const unsigned mask = (unsigned)strtoul(argv[1], 0, 0);
  const int delay = atoi(argv[2]);
  const bool ffma_only = argc > 3 && argv[3][0] == 'f';
  float *out; long long *stamps; int *slot;
  cudaMalloc(&out, 256 * 4);
  cudaMalloc(&stamps, 8 * TRIPS * 8);
  cudaMalloc(&slot, 8 * 4);
  long long h[8 * TRIPS];
  int hs[8];
  for (int rep = 0; rep < 2; rep++) {                                                  // the second is kept
    if (ffma_only) ffma_delay<<<1, 256>>>(out, stamps, slot, mask, delay);
    else dot_delay<<<1, 256>>>(out, stamps, slot, mask, delay);
  }
  cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess) { fprintf(stderr, "%s\n", cudaGetErrorString(err)); return 1; }
  cudaMemcpy(h, stamps, sizeof h, cudaMemcpyDeviceToHost);
  cudaMemcpy(hs, slot, sizeof hs, cudaMemcpyDeviceToHost);
  for (int w = 0; w < 8; w++) {
    if (!((mask >> w) & 1u)) continue;
    printf("delay %d %s 0x%x warp %d slot %d", delay, ffma_only ? "ffma_mask" : "mask", mask, w, hs[w]);
    for (int t = 0; t < TRIPS; t++) printf(" %lld", h[w * TRIPS + t]);
    printf("\n");
  }
  return 0;
}
