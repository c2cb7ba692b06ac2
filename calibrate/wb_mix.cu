// Does a warp's shared-load data, written back into the register file, hold up another warp's FFMAs on
// the same SMSP, and does one SMSP return shared-load data at a rate of its own? dot_pair.json's warps of
// one SMSP lose ~20 cycles a trip in dispatch_stall at the first FFMA that waits on a load
// (dot_pair_ncu.json), where a lone warp waits there in short_scoreboard.
// One CTA of 256 threads (warps w and w + 4 share an SMSP; %warpid recorded). Warps in FMASK run dot_pair.cu's
// dot_ffma trip (64 FFMAs on registers loaded once: no loads of their own), TRIPS trips; warps in LMASK run
// LTRIPS bursts of 8 independent shared loads of KIND (0: LDS.32 conflict-free, 1: LDS.128 conflict-free,
// 2: LDS.128 broadcast: one 16-B word for all lanes) folded into an integer accumulator; the other warps
// exit. Lane 0 of every running warp stamps clock64 at the top of each trip / burst. (The FFMA trip is a copy
// of dot_pair.cu's, not shared through a header, so that dot_pair.cu stays the source of its recorded SASS.)
// Usage: wb_mix FMASK LMASK KIND [CTAS [LTRIPS]]  (prints "wb F L K warp W slot S role R t0 t1 ..." per warp
// of CTA 0; CTAS > 1 launches one CTA per SM for ncu)
// Build: nvcc -arch=sm_90 -O3 -o wb_mix calibrate/wb_mix.cu
#include <cstdio>
#include <cstdlib>

#define BM 128
#define BN 128
#define BK 8
#define TM 8
#define TN 8
#define TRIPS 64
#define MAXT 128
#define WORDS 8192             // 32 KB: every burst's addresses fit without a wrap

__global__ void __launch_bounds__(256) wb_mix(float *out, long long *stamps, int *slot, unsigned fmask,
                                              unsigned lmask, int kind, int ltrips) {
  __shared__ float sh[WORDS];
  for (int i = threadIdx.x; i < WORDS; i += blockDim.x) sh[i] = 1e-3f * (i % 97);
  __syncthreads();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const bool f = (fmask >> warp) & 1u, l = (lmask >> warp) & 1u;
  if (!f && !l) return;
  if (lane == 0) {
    unsigned wid;
    asm volatile("mov.u32 %0, %%warpid;" : "=r"(wid));
    slot[blockIdx.x * 8 + warp] = wid;
  }
  stamps += (blockIdx.x * 8 + warp) * MAXT;
  if (f) {                                    // dot_ffma's trip
    // (written out as in dot_pair.cu: a device function shared by both would compile to other SASS than
    // the records' micro/wb_mix.sass and dot_pair.sass, which the H200 ran)
    const int threadCol = threadIdx.x % (BN / TN), threadRow = threadIdx.x / (BN / TN);
    float acc[TM * TN] = {0.0f};
    float regM[TM], regN[TN];
    for (int i = 0; i < TM; ++i) regM[i] = sh[((threadRow * TM + i) * BK) % WORDS];
    for (int i = 0; i < TN; ++i) regN[i] = sh[BM * BK + threadCol * TN + i];
#pragma unroll 1
    for (int trip = 0; trip < TRIPS; trip++) {
      if (lane == 0) stamps[trip] = clock64();
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
    return;
  }
  unsigned acc = 0;                           // bursts of 8 shared loads
#pragma unroll 1
  for (int t = 0; t < ltrips; t++) {
    if (lane == 0 && t < MAXT) stamps[t] = clock64();
    const int base = (t * 8) % 64;            // moves each burst, so the loads stay in the loop
    if (kind == 0) {
#pragma unroll
      for (int i = 0; i < 8; i++) acc ^= __float_as_uint(sh[(base + i) * 32 + lane]);
    } else {
      const float4 *v4 = reinterpret_cast<const float4 *>(sh);
      const int ln = kind == 1 ? lane : 0;
#pragma unroll
      for (int i = 0; i < 8; i++) {
        const float4 v = v4[(base + i) * 32 + ln];
        acc ^= __float_as_uint(v.x) ^ __float_as_uint(v.y) ^ __float_as_uint(v.z) ^ __float_as_uint(v.w);
      }
    }
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = __uint_as_float(acc);
}

int main(int argc, char **argv) {
  if (argc < 4) { fprintf(stderr, "usage: %s FMASK LMASK KIND [CTAS [LTRIPS]]\n", argv[0]); return 2; }
  const unsigned fmask = (unsigned)strtoul(argv[1], 0, 0), lmask = (unsigned)strtoul(argv[2], 0, 0);
  const int kind = atoi(argv[3]);
  const int ctas = argc > 4 ? atoi(argv[4]) : 1;
  const int ltrips = argc > 5 ? atoi(argv[5]) : 96;
  float *out; long long *stamps; int *slot;
  cudaMalloc(&out, ctas * 256 * 4);
  cudaMalloc(&stamps, ctas * 8 * MAXT * 8);
  cudaMalloc(&slot, ctas * 8 * 4);
  cudaMemset(stamps, 0, ctas * 8 * MAXT * 8);
  for (int rep = 0; rep < 2; rep++) wb_mix<<<ctas, 256>>>(out, stamps, slot, fmask, lmask, kind, ltrips);
  cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess) { fprintf(stderr, "%s\n", cudaGetErrorString(err)); return 1; }
  static long long h[8 * MAXT];
  int hs[8];
  cudaMemcpy(h, stamps, sizeof h, cudaMemcpyDeviceToHost);
  cudaMemcpy(hs, slot, sizeof hs, cudaMemcpyDeviceToHost);
  for (int w = 0; w < 8; w++) {
    const bool f = (fmask >> w) & 1u, l = (lmask >> w) & 1u;
    if (!f && !l) continue;
    const int n = f ? TRIPS : (ltrips < MAXT ? ltrips : MAXT);
    printf("wb 0x%x 0x%x %d warp %d slot %d role %s", fmask, lmask, kind, w, hs[w], f ? "ffma" : "lds");
    for (int t = 0; t < n; t++) printf(" %lld", h[w * MAXT + t]);
    printf("\n");
  }
  return 0;
}
