// Does L1TEX serve hits on a line whose fill is on its way, and misses, at its one request a cycle?
// l1_pending's loops spend 5-6 instructions a load on 64-bit address arithmetic, so their SMSPs run out of
// issue slots first. Here a CTA reads a contiguous region of its own, and a step's U loads sit at immediate
// offsets from one pointer: about two instructions a load (the LDG and the FADD that sums it).
// The CTA's WARPS warps form groups of G; the warps of a group read the same lines a step (G = 32: one miss
// and 31 hits on each line, as coalesced's B loads), each group lines of its own. Line j of the CTA's region
// is read by group j % groups at its step j / (U * groups).
// Usage: l1_dense G U WARPS CTAS_PER_SM KB_PER_CTA PASSES [SMEM_KB]
//   (prints "dense G U WARPS CTAS KB PASSES ms MS loads LOADS", the second of two launches timed with CUDA
//   events; LOADS = warp-level loads of the launch; a step takes 32 / G x U lines, KB_PER_CTA should hold
//   several). KB_PER_CTA small (e.g. 8): the region stays in L1, every
//   load after the first pass a hit; large (e.g. 1024 with SMEM_KB 200, L1 about 28 KB): every pass misses L1
//   and hits the L2.
// Build: nvcc -arch=sm_90 -O3 -o l1_dense calibrate/l1_dense.cu
#include <cstdio>
#include <cstdlib>

template <int U, int G>
__global__ void l1_dense(const float *p, int lines_per_cta, int passes, float *out) {
  extern __shared__ float pad[];             // never read: it only takes the SM's memory from the L1
  constexpr int GROUPS = 32 / G;             // (WARPS = 32: the launch checks it)
  float acc = 0.f;
  const int lane = threadIdx.x & 31, group = (threadIdx.x >> 5) / G;
  const float *region = p + (long long)blockIdx.x * lines_per_cta * 32;
  const int steps = lines_per_cta / (U * GROUPS);
  for (int r = 0; r < passes; r++) {
    const float *q = region + group * 32 + lane;
    for (int s = 0; s < steps; s++) {
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

template <int U, int G>
static float run(const float *buf, int ctas, int lines, int passes, int smem, float *out) {
  cudaFuncSetAttribute(l1_dense<U, G>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  cudaFuncSetAttribute(l1_dense<U, G>, cudaFuncAttributePreferredSharedMemoryCarveout, 100);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0); cudaEventCreate(&e1);
  float ms = 0.f;
  for (int rep = 0; rep < 2; rep++) {
    cudaEventRecord(e0);
    l1_dense<U, G><<<ctas, 32 * 32, smem>>>(buf, lines, passes, out);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    cudaEventElapsedTime(&ms, e0, e1);
  }
  return ms;
}

int main(int argc, char **argv) {
  if (argc < 7) { fprintf(stderr, "usage: %s G U WARPS CTAS_PER_SM KB_PER_CTA PASSES [SMEM_KB]\n", argv[0]); return 2; }
  const int g = atoi(argv[1]), u = atoi(argv[2]), warps = atoi(argv[3]), per_sm = atoi(argv[4]);
  const int kb = atoi(argv[5]), passes = atoi(argv[6]), smem_kb = argc > 7 ? atoi(argv[7]) : 0;
  if (warps != 32 || 32 % g || (u != 8 && u != 16) || (u == 8 && g != 1 && g != 32)) {
    fprintf(stderr, "this build has WARPS 32 and U 16 with G 1, 2, 4, 8, 16 or 32, U 8 with G 1 or 32\n");
    return 2;
  }
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const int ctas = sms * per_sm;
  const int lines = kb * 1024 / 128;
  float *buf, *out;
  cudaMalloc(&buf, (size_t)ctas * lines * 128);
  cudaMalloc(&out, 16);
  cudaMemset(buf, 0, (size_t)ctas * lines * 128);
  const int smem = smem_kb * 1024;
  float ms;
  if (g == 32 && u == 8) ms = run<8, 32>(buf, ctas, lines, passes, smem, out);
  else if (g == 32) ms = run<16, 32>(buf, ctas, lines, passes, smem, out);
  else if (g == 16) ms = run<16, 16>(buf, ctas, lines, passes, smem, out);
  else if (g == 8) ms = run<16, 8>(buf, ctas, lines, passes, smem, out);
  else if (g == 4) ms = run<16, 4>(buf, ctas, lines, passes, smem, out);
  else if (g == 2) ms = run<16, 2>(buf, ctas, lines, passes, smem, out);
  else if (u == 8) ms = run<8, 1>(buf, ctas, lines, passes, smem, out);
  else ms = run<16, 1>(buf, ctas, lines, passes, smem, out);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) { fprintf(stderr, "%s\n", cudaGetErrorString(err)); return 1; }
  const int groups = 32 / g;
  const long long steps = lines / (u * groups);
  const long long loads = (long long)ctas * 32 * steps * u * passes;   // warp-level loads
  printf("dense %d %d %d %d %d %d ms %.5f loads %lld\n", g, u, warps, per_sm, kb, passes, ms, loads);
  return 0;
}
