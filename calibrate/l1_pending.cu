// How fast does L1TEX serve loads that hit a line whose fill is on its way, when the fill comes from the L2?
// micro.cu's shared_line (l1_shared_ncu.json) asked it with fills from DRAM, or with a footprint that stays
// in L1. Here a large dynamic shared-memory allocation the kernel never touches (SMEM_KB) leaves the SM an
// L1 of about 28 KB, so a 16 MiB buffer (127 KB of lines per SM) misses L1 and hits the L2 on every pass.
// One CTA per SM of WARPS warps; each warp reads 4 lines a step with plain loads (LDG.E, as coalesced's;
// micro.cu's __ldca gave LDG.E.STRONG.SM), lane l word l. The CTA's warps form groups of G consecutive
// warps; the warps of a group read the same lines a step (G > 1: the group's first load of a line misses,
// the others hit it while its fill is on its way, as coalesced's B loads with G = 32), each group lines of
// its own (G = 1: every load an L1 miss, the L2 path alone). More groups, more lines in flight.
// Usage: l1_pending G WARPS MIB REPS [SMEM_KB [U]]  (U loads in flight per thread, 4 by default; prints "pending G WARPS MIB ms MS loads LOADS smem_kb KB",
// the second of two launches timed with CUDA events; LOADS = warp-level loads of the launch)
// Build: nvcc -arch=sm_90 -O3 -o l1_pending calibrate/l1_pending.cu
#include <cstdio>
#include <cstdlib>

extern "C" __global__ void l1_pending(const float *p, long long n_lines, int reps, int g, float *out) {
  extern __shared__ float pad[];             // never read: it only takes the SM's memory from the L1
  float acc = 0.f;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, groups = (blockDim.x >> 5) / g;
  // line i of the buffer belongs to group i % (gridDim.x * groups)
  const long long stride = (long long)gridDim.x * groups;
  const long long first = (long long)blockIdx.x * groups + warp / g;
  for (int r = 0; r < reps; r++) {
    long long i = first;
    for (; i + 3 * stride < n_lines; i += 4 * stride)
      acc += (p[i * 32 + lane] + p[(i + stride) * 32 + lane]) +
             (p[(i + 2 * stride) * 32 + lane] + p[(i + 3 * stride) * 32 + lane]);
    for (; i < n_lines; i += stride) acc += p[i * 32 + lane];
  }
  if (acc == 1.2345e-30f) out[0] = acc + pad[0];
}

// The same with U loads in flight per thread (l1_pending's 4 are latency-bound: its warps wait on their own
// loads and never reach a rate limit of L1TEX's). A step issues U loads of U lines, then sums them.
// (Its first lines repeat l1_pending's: shared through a helper, both kernels compile to other SASS than the
// record's micro/l1_pending.sass, which the H200 ran.)
template <int U>
__global__ void l1_pending_deep(const float *p, long long n_lines, int reps, int g, float *out) {
  extern __shared__ float pad_deep[];   // as l1_pending's pad
  float acc = 0.f;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, groups = (blockDim.x >> 5) / g;
  const long long stride = (long long)gridDim.x * groups;
  const long long first = (long long)blockIdx.x * groups + warp / g;
  for (int r = 0; r < reps; r++) {
    long long i = first;
    for (; i + (U - 1) * stride < n_lines; i += U * stride) {
      float v[U];
#pragma unroll
      for (int u = 0; u < U; u++) v[u] = p[(i + u * stride) * 32 + lane];
#pragma unroll
      for (int u = 0; u < U; u++) acc += v[u];
    }
    for (; i < n_lines; i += stride) acc += p[i * 32 + lane];
  }
  if (acc == 1.2345e-30f) out[0] = acc + pad_deep[0];
}

template <typename F>
static void allow_smem(F kernel, int smem) {
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, 100);
}

int main(int argc, char **argv) {
  if (argc < 5) { fprintf(stderr, "usage: %s G WARPS MIB REPS [SMEM_KB [U]]\n", argv[0]); return 2; }
  const int g = atoi(argv[1]), warps = atoi(argv[2]), mib = atoi(argv[3]), reps = atoi(argv[4]);
  const int smem_kb = argc > 5 ? atoi(argv[5]) : 200;
  const int u = argc > 6 ? atoi(argv[6]) : 4;      // loads in flight per thread: 4 = l1_pending itself
  if (u != 4 && u != 8 && u != 16 && u != 32) { fprintf(stderr, "U must be 4, 8, 16 or 32\n"); return 2; }
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const long long n = (long long)mib << 18;            // floats
  float *buf, *out;
  cudaMalloc(&buf, n * 4);
  cudaMalloc(&out, 16);
  cudaMemset(buf, 0, n * 4);
  const int smem = smem_kb * 1024;
  allow_smem(l1_pending, smem);
  allow_smem(l1_pending_deep<8>, smem);
  allow_smem(l1_pending_deep<16>, smem);
  allow_smem(l1_pending_deep<32>, smem);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0); cudaEventCreate(&e1);
  float ms = 0.f;
  for (int rep = 0; rep < 2; rep++) {
    cudaEventRecord(e0);
    if (u == 4) l1_pending<<<sms, warps * 32, smem>>>(buf, n / 32, reps, g, out);
    else if (u == 8) l1_pending_deep<8><<<sms, warps * 32, smem>>>(buf, n / 32, reps, g, out);
    else if (u == 16) l1_pending_deep<16><<<sms, warps * 32, smem>>>(buf, n / 32, reps, g, out);
    else l1_pending_deep<32><<<sms, warps * 32, smem>>>(buf, n / 32, reps, g, out);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    cudaEventElapsedTime(&ms, e0, e1);
  }
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) { fprintf(stderr, "%s\n", cudaGetErrorString(err)); return 1; }
  const long long lines = n / 32;
  const long long loads = lines * g * reps;   // warp-level loads: every line read by the G warps of a group
  if (u == 4) printf("pending %d %d %d ms %.5f loads %lld smem_kb %d\n", g, warps, mib, ms, loads, smem_kb);
  else printf("pending %d %d %d ms %.5f loads %lld smem_kb %d u %d\n", g, warps, mib, ms, loads, smem_kb, u);
  return 0;
}
