// How far apart do the warps that share lines run? l1_dense's loop (CTAs of 32 warps, U = 16 loads a step at
// immediate offsets, groups of G warps on the same lines) with each warp's start of every step of one pass
// stamped (clock64, lane 0, CTA 0 only): a hit on a line whose fill is on its way costs the H200's L1TEX
// (micro/l1_dense.json), so how many of a group's warps come within one fill of the first is what the
// engine has to get right. The stamp adds a predicated clock read and store to each step.
// Usage: l1_phase G WARPS CTAS_PER_SM KB_PER_CTA PASSES SMEM_KB STAMP_PASS
//   prints "phase G U WARPS CTAS KB PASSES ms MS loads LOADS", then "stamps W S" and one line per warp of S
//   step starts (cycles from CTA 0's earliest stamp), the second of two launches (CUDA events).
// Build: nvcc -arch=sm_90 -O3 -o l1_phase calibrate/l1_phase.cu
#include <cstdio>
#include <cstdlib>
#include <vector>

template <int U, int G>
__global__ void l1_phase(const float *p, int lines_per_cta, int passes, float *out, long long *stamps,
                         int stamp_pass) {
  extern __shared__ float pad[];             // never read: it only takes the SM's memory from the L1
  constexpr int GROUPS = 32 / G;
  float acc = 0.f;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, group = warp / G;
  const float *region = p + (long long)blockIdx.x * lines_per_cta * 32;
  const int steps = lines_per_cta / (U * GROUPS);
  const bool stamper = blockIdx.x == 0 && lane == 0;
  for (int r = 0; r < passes; r++) {
    const float *q = region + group * 32 + lane;
    for (int s = 0; s < steps; s++) {
      if (stamper && r == stamp_pass) stamps[warp * steps + s] = clock64();
      float v[U];
#pragma unroll
      for (int u = 0; u < U; u++) v[u] = q[u * GROUPS * 32];
#pragma unroll
      for (int u = 0; u < U; u++) acc += v[u];
      q += U * GROUPS * 32;
    }
  }
  if (acc == 1.2345e-30f) out[0] = acc + pad[0];
}

template <int G>
static float run(const float *buf, int ctas, int lines, int passes, int smem, float *out, long long *stamps,
                 int stamp_pass) {
  cudaFuncSetAttribute(l1_phase<16, G>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  cudaFuncSetAttribute(l1_phase<16, G>, cudaFuncAttributePreferredSharedMemoryCarveout, 100);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0); cudaEventCreate(&e1);
  float ms = 0.f;
  for (int rep = 0; rep < 2; rep++) {
    cudaEventRecord(e0);
    l1_phase<16, G><<<ctas, 32 * 32, smem>>>(buf, lines, passes, out, stamps, stamp_pass);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    cudaEventElapsedTime(&ms, e0, e1);
  }
  return ms;
}

int main(int argc, char **argv) {
  if (argc < 8) {
    fprintf(stderr, "usage: %s G WARPS CTAS_PER_SM KB_PER_CTA PASSES SMEM_KB STAMP_PASS\n", argv[0]);
    return 2;
  }
  const int g = atoi(argv[1]), warps = atoi(argv[2]), per_sm = atoi(argv[3]), kb = atoi(argv[4]);
  const int passes = atoi(argv[5]), smem_kb = atoi(argv[6]), stamp_pass = atoi(argv[7]);
  if (warps != 32 || (g != 1 && g != 8 && g != 32) || stamp_pass < 0 || stamp_pass >= passes) {
    fprintf(stderr, "this build has WARPS 32, G 1, 8 or 32 and STAMP_PASS < PASSES\n");
    return 2;
  }
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const int ctas = sms * per_sm, lines = kb * 1024 / 128, groups = 32 / g, steps = lines / (16 * groups);
  if (steps < 1) { fprintf(stderr, "KB_PER_CTA too small for a step\n"); return 2; }
  float *buf, *out;
  long long *stamps;
  cudaMalloc(&buf, (size_t)ctas * lines * 128);
  cudaMalloc(&out, 16);
  cudaMalloc(&stamps, sizeof(long long) * warps * steps);
  cudaMemset(buf, 0, (size_t)ctas * lines * 128);
  const int smem = smem_kb * 1024;
  const float ms = g == 32 ? run<32>(buf, ctas, lines, passes, smem, out, stamps, stamp_pass)
                 : g == 8 ? run<8>(buf, ctas, lines, passes, smem, out, stamps, stamp_pass)
                          : run<1>(buf, ctas, lines, passes, smem, out, stamps, stamp_pass);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) { fprintf(stderr, "%s\n", cudaGetErrorString(err)); return 1; }
  std::vector<long long> h(warps * steps);
  cudaMemcpy(h.data(), stamps, sizeof(long long) * h.size(), cudaMemcpyDeviceToHost);
  long long t0 = h[0];
  for (long long x : h) t0 = x < t0 ? x : t0;
  const long long loads = (long long)ctas * 32 * steps * 16 * passes;
  printf("phase %d 16 %d %d %d %d ms %.5f loads %lld\n", g, warps, per_sm, kb, passes, ms, loads);
  printf("stamps %d %d\n", warps, steps);
  for (int w = 0; w < warps; w++) {
    for (int s = 0; s < steps; s++) printf("%lld%c", h[w * steps + s] - t0, s + 1 < steps ? ' ' : '\n');
  }
  return 0;
}
