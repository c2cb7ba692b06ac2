// What holds two warps of one SMSP in step on regtile2d's dotIdx trip? micro/dot_pair.json: warps 0 and 4 of
// one CTA start each trip 12 cycles apart (the lead changing every trip), and micro/smsp_phase.json: at 4096
// regtile2d's same-SMSP warps of one CTA are in step, those of two CTAs are not. Two things differ between
// the two cases: warps of one CTA read the same Bs words (threadCol does not depend on the warp), and they
// are of one CTA. Three modes of the same trip (dot_pair.cu's), each warp stamping clock64 at the top of
// every trip:
//   same  - warps 0 and 4 of one CTA, as dot_pair (the control, on this binary);
//   split - the same two warps, but warp w reads row (trip + w) % BK of the tiles: no Bs word is read by
//           both warps in one trip, and every load keeps its banks and conflicts (rows are 128 words);
//   cross - one warp of each of two CTAs on one SM: 2 x SMS CTAs, in each the lowest warp whose slot is on
//           SMSP 0 (%warpid % 4 == 0) runs, so that the two CTAs an SM receives pair on one SMSP.
// Usage: dot_lockstep MODE [SMS [LABEL]]  (prints "dot MODE LABEL cta C warp W sm S slot L t0 t1 ..." per
// running warp: for cross every CTA's, else CTA 0's warps 0 and 4)
// Build: nvcc -arch=sm_90 -O3 -o dot_lockstep calibrate/dot_lockstep.cu
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define BM 128
#define BN 128
#define BK 8
#define TM 8
#define TN 8
#define TRIPS 64

// mask: the warps that run (0: cross, the kernel picks one per CTA); row_shift: 1 in split (warp w reads row
// trip + w of the tiles), else 0
__global__ void __launch_bounds__(256) dot_lockstep(float *out, long long *stamps, int *where, unsigned mask,
                                                    int row_shift) {
  __shared__ float As[BM * BK];
  __shared__ float Bs[BK * BN];
  for (int i = threadIdx.x; i < BM * BK; i += blockDim.x) {
    As[i] = 1e-3f * (i % 97);
    Bs[i] = 1e-3f * (i % 89);
  }
  __syncthreads();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  unsigned wid, smid;
  asm volatile("mov.u32 %0, %%warpid;" : "=r"(wid));
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  if (mask == 0) {              // cross: the CTA's lowest warp on SMSP 0 (slot % 4 == 0) runs, the rest exit
    __shared__ int first;
    if (threadIdx.x == 0) first = 8;
    __syncthreads();
    if (lane == 0 && wid % 4 == 0) atomicMin(&first, warp);
    __syncthreads();
    mask = 1u << first;
  }
  if (!((mask >> warp) & 1u)) return;
  if (lane == 0) {
    where[(blockIdx.x * 8 + warp) * 2] = smid;
    where[(blockIdx.x * 8 + warp) * 2 + 1] = wid;
  }
  stamps += (blockIdx.x * 8 + warp) * TRIPS;
  const int threadCol = threadIdx.x % (BN / TN);
  const int threadRow = threadIdx.x / (BN / TN);
  const int shift = row_shift * warp;
  float acc[TM * TN] = {0.0f};
  float regM[TM], regN[TN];
#pragma unroll 1
  for (int trip = 0; trip < TRIPS; trip++) {
    if (lane == 0) stamps[trip] = clock64();
    const int dotIdx = (trip + shift) & (BK - 1);           // BK is a power of two
    for (int i = 0; i < TM; ++i) regM[i] = As[(threadRow * TM + i) * BK + dotIdx];
    for (int i = 0; i < TN; ++i) regN[i] = Bs[dotIdx * BN + threadCol * TN + i];
    for (int m = 0; m < TM; ++m)
      for (int n = 0; n < TN; ++n) acc[m * TN + n] += regM[m] * regN[n];
  }
  float s = 0.0f;
  for (int i = 0; i < TM * TN; i++) s += acc[i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

int main(int argc, char **argv) {
  if (argc < 2) { fprintf(stderr, "usage: %s same|split|cross [SMS [LABEL]]\n", argv[0]); return 2; }
  const char *mode = argv[1];
  const int sms = argc > 2 ? atoi(argv[2]) : 132;
  const char *label = argc > 3 ? argv[3] : "r0";                                   // names the run
  const bool cross = !strcmp(mode, "cross"), split = !strcmp(mode, "split");
  if (!cross && !split && strcmp(mode, "same")) { fprintf(stderr, "unknown mode %s\n", mode); return 2; }
  const int ctas = cross ? 2 * sms : 1;
  const unsigned mask = cross ? 0u : 0x11u;                                     // 0: the kernel picks
  float *out; long long *stamps; int *where;
  cudaMalloc(&out, ctas * 256 * 4);
  cudaMalloc(&stamps, (size_t)ctas * 8 * TRIPS * 8);
  cudaMalloc(&where, ctas * 8 * 2 * 4);
  for (int rep = 0; rep < 2; rep++) {                                                  // the second is kept
    cudaMemset(where, 0xff, ctas * 8 * 2 * 4);                                   // -1: did not run
    dot_lockstep<<<ctas, 256>>>(out, stamps, where, mask, split ? 1 : 0);
  }
  cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess) { fprintf(stderr, "%s\n", cudaGetErrorString(err)); return 1; }
  long long *h = (long long *)malloc((size_t)ctas * 8 * TRIPS * 8);
  int *hw = (int *)malloc(ctas * 8 * 2 * 4);
  cudaMemcpy(h, stamps, (size_t)ctas * 8 * TRIPS * 8, cudaMemcpyDeviceToHost);
  cudaMemcpy(hw, where, ctas * 8 * 2 * 4, cudaMemcpyDeviceToHost);
  for (int c = 0; c < ctas; c++)
    for (int w = 0; w < 8; w++) {
      const int k = c * 8 + w;
      if (cross ? hw[2 * k] < 0 : !((mask >> w) & 1u)) continue;
      printf("dot %s %s cta %d warp %d sm %d slot %d", mode, label, c, w, hw[2 * k], hw[2 * k + 1]);
      for (int t = 0; t < TRIPS; t++) printf(" %lld", h[(size_t)k * TRIPS + t]);
      printf("\n");
    }
  return 0;
}
