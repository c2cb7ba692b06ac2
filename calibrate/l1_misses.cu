// How many L1 misses can one SM keep in flight, and is the limit one of instructions, lines or sectors?
// l1_dense's G = 1 rows (every load a miss to the L2, 32 or 64 warps) hold about 235 loads in flight per SM
// whatever the warps and loads a step; here the same stream with 4-32 warps a CTA (so the warps' own
// U x warps bound shows below the SM's), fills from the L2 or DRAM (a longer fill: the same count?), and
// three request shapes: one line of 4 sectors (lanes 4 B apart), one sector (every lane the same word) and
// two lines of 8 sectors (lanes 8 B apart).
// Each warp reads a region of its own, U loads a step at immediate offsets (about two instructions a load).
// Usage: l1_misses MODE U WARPS CTAS_PER_SM LINES_PER_WARP PASSES [SMEM_KB]
//   MODE 0: a line a load, 1: a sector a load, 2: two lines a load. Prints
//   "misses MODE U WARPS CTAS LINES PASSES ms MS loads LOADS", the second of two launches timed with CUDA events.
// Build: nvcc -arch=sm_90 -O3 -o l1_misses calibrate/l1_misses.cu
#include <cstdio>
#include <cstdlib>

template <int U, int MODE>
__global__ void l1_misses(const float *p, int lines_per_warp, int passes, float *out) {
  extern __shared__ float pad[];             // never read: it only takes the SM's memory from the L1
  constexpr int SPAN = MODE == 2 ? 64 : 32;  // words from one load to the next (its lines)
  const int lane = threadIdx.x & 31;
  const long long warp = (long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  const int off = MODE == 0 ? lane : (MODE == 1 ? 0 : 2 * lane);
  const float *region = p + warp * lines_per_warp * 32;
  const int steps = lines_per_warp * 32 / (U * SPAN);
  float acc = 0.f;
  for (int r = 0; r < passes; r++) {
    const float *q = region + off;
    for (int s = 0; s < steps; s++) {
      float v[U];
#pragma unroll
      for (int u = 0; u < U; u++) v[u] = q[u * SPAN];
#pragma unroll
      for (int u = 0; u < U; u++) acc += v[u];
      q += U * SPAN;
    }
  }
  if (acc == 1.2345e-30f) out[0] = acc + pad[0];
}

template <int MODE>
static float run(const float *buf, int ctas, int warps, int lines, int passes, int smem, float *out) {
  cudaFuncSetAttribute(l1_misses<16, MODE>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  cudaFuncSetAttribute(l1_misses<16, MODE>, cudaFuncAttributePreferredSharedMemoryCarveout, 100);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0); cudaEventCreate(&e1);
  float ms = 0.f;
  for (int rep = 0; rep < 2; rep++) {
    cudaEventRecord(e0);
    l1_misses<16, MODE><<<ctas, 32 * warps, smem>>>(buf, lines, passes, out);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    cudaEventElapsedTime(&ms, e0, e1);
  }
  return ms;
}

int main(int argc, char **argv) {
  if (argc < 7) {
    fprintf(stderr, "usage: %s MODE U WARPS CTAS_PER_SM LINES_PER_WARP PASSES [SMEM_KB]\n", argv[0]);
    return 2;
  }
  const int mode = atoi(argv[1]), u = atoi(argv[2]), warps = atoi(argv[3]), per_sm = atoi(argv[4]);
  const int lines = atoi(argv[5]), passes = atoi(argv[6]), smem_kb = argc > 7 ? atoi(argv[7]) : 0;
  const int span_lines = mode == 2 ? 2 : 1;
  if (mode < 0 || mode > 2 || u != 16 || warps < 1 || warps > 32 || lines % (u * span_lines)) {
    fprintf(stderr, "this build has MODE 0-2, U 16, 1-32 warps, LINES_PER_WARP a multiple of U x lines a load\n");
    return 2;
  }
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const int ctas = sms * per_sm;
  const size_t bytes = (size_t)ctas * warps * lines * 128;
  float *buf, *out;
  if (cudaMalloc(&buf, bytes) != cudaSuccess) { fprintf(stderr, "cannot allocate %zu bytes\n", bytes); return 1; }
  cudaMalloc(&out, 16);
  cudaMemset(buf, 0, bytes);
  const int smem = smem_kb * 1024;
  const float ms = mode == 0 ? run<0>(buf, ctas, warps, lines, passes, smem, out)
                 : mode == 1 ? run<1>(buf, ctas, warps, lines, passes, smem, out)
                             : run<2>(buf, ctas, warps, lines, passes, smem, out);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) { fprintf(stderr, "%s\n", cudaGetErrorString(err)); return 1; }
  const long long steps = (long long)lines / (u * span_lines);
  const long long loads = (long long)ctas * warps * steps * u * passes;   // warp-level loads
  printf("misses %d %d %d %d %d %d ms %.5f loads %lld\n", mode, u, warps, per_sm, lines, passes, ms, loads);
  return 0;
}
