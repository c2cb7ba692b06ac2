// How evenly the warp schedulers and the MIO / LG queues share an SM among warps: every warp
// of a 1024-thread block (one block per SM, 8 warps per SMSP) runs the same independent work,
// and lane 0 records clock64() when the warp starts (after a __syncthreads) and when its loop
// ends. A greedy scheduler that keeps the warp it issued last finishes warps one after another;
// a fair one finishes them together.
// Modes (argv): lg   - UNROLL independent ld.global.f32 per trip, each touching 32 lines
//                      (32 L1-hit lines per request: the L1TEX data stage and LG queue bind)
//               lds  - UNROLL independent ld.shared.f32 per trip, 8-way bank conflicted
//                      (8 wavefronts: the shared pipe and MIO queue bind)
//               ffma4 / ffma2 - 4 or 2 independent FFMA chains per warp (the issue slot binds)
// Output: one line per (mode, block, warp): "W mode block warp start end" in SM cycles.
// Build: nvcc -arch=sm_90 -O3 -o sched_fairness calibrate/sched_fairness.cu
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define THREADS 1024
#define UNROLL 8
#define LINES 256              // 32 KB buffer: L1 hits after the warm-up

__device__ __forceinline__ float ldg(const float *p) {
  float v;
  asm volatile("ld.global.f32 %0, [%1];" : "=f"(v) : "l"(p));
  return v;
}

__global__ void __launch_bounds__(THREADS) fair(const float *buf, int mode, int iters,
                                                long long *out, float *sink) {
  __shared__ float sh[32 * 33 * 8];
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  float acc = 0.f, acc2 = 1.f, acc3 = 2.f, acc4 = 3.f;
  for (int i = threadIdx.x; i < 32 * 33 * 8; i += THREADS) sh[i] = (float)i;
  for (int i = threadIdx.x; i < LINES * 32; i += THREADS) acc += ldg(buf + i);
  for (int i = threadIdx.x; i < LINES * 32; i += THREADS) acc += ldg(buf + i);
  __syncthreads();
  long long t0 = clock64();
  if (mode == 0) {                       // lg: lane l reads line (g + 8 l) % LINES
    int g = warp * 5;
    for (int it = 0; it < iters; it++) {
      float v[UNROLL];
#pragma unroll
      for (int u = 0; u < UNROLL; u++) v[u] = ldg(buf + ((g + u * 3 + lane * 8) & (LINES - 1)) * 32 + (lane & 31));
#pragma unroll
      for (int u = 0; u < UNROLL; u++) acc += v[u];
      g += 29;
    }
  } else if (mode == 1) {                // lds: 8-way conflict (lane l -> word (l % 4) + 32 (l / 4))
    int base = (lane & 3) + 32 * (lane >> 2);
    volatile float *vs = sh;
    for (int it = 0; it < iters; it++) {
      float v[UNROLL];
#pragma unroll
      for (int u = 0; u < UNROLL; u++) v[u] = vs[base + ((it * 7 + u * 4) & 7) * 4];
#pragma unroll
      for (int u = 0; u < UNROLL; u++) acc += v[u];
    }
  } else if (mode == 2) {                // ffma4
    float b = buf[lane] + 1.0f;
    for (int it = 0; it < iters; it++) {
#pragma unroll
      for (int u = 0; u < 16; u++) {
        acc = fmaf(acc, b, 0.5f); acc2 = fmaf(acc2, b, 0.5f);
        acc3 = fmaf(acc3, b, 0.5f); acc4 = fmaf(acc4, b, 0.5f);
      }
    }
  } else {                               // ffma2
    float b = buf[lane] + 1.0f;
    for (int it = 0; it < iters; it++) {
#pragma unroll
      for (int u = 0; u < 32; u++) { acc = fmaf(acc, b, 0.5f); acc2 = fmaf(acc2, b, 0.5f); }
    }
  }
  long long t1 = clock64();
  if (lane == 0) {
    out[(blockIdx.x * 32 + warp) * 2] = t0;
    out[(blockIdx.x * 32 + warp) * 2 + 1] = t1;
  }
  if (acc + acc2 + acc3 + acc4 == 12345.f) sink[threadIdx.x] = acc;
}

int main(int argc, char **argv) {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const char *names[] = {"lg", "lds", "ffma4", "ffma2"};
  const int iters[] = {32, 64, 64, 64};
  float *buf, *sink; long long *out;
  cudaMalloc(&buf, LINES * 128);
  cudaMemset(buf, 0, LINES * 128);
  cudaMalloc(&sink, THREADS * sizeof(float));
  cudaMalloc(&out, (size_t)sms * 32 * 2 * sizeof(long long));
  std::vector<long long> h((size_t)sms * 64);
  for (int a = 1; a < argc; a++) {
    int mode = -1;
    for (int m = 0; m < 4; m++) if (!strcmp(argv[a], names[m])) mode = m;
    if (mode < 0) { fprintf(stderr, "unknown mode %s\n", argv[a]); return 2; }
    for (int rep = 0; rep < 2; rep++) {  // the first launch warms up; the second is printed
      fair<<<sms, THREADS>>>(buf, mode, iters[mode], out, sink);
      cudaError_t e = cudaDeviceSynchronize();
      if (e != cudaSuccess) { fprintf(stderr, "%s: %s\n", argv[a], cudaGetErrorString(e)); return 1; }
    }
    cudaMemcpy(h.data(), out, h.size() * sizeof(long long), cudaMemcpyDeviceToHost);
    for (int b = 0; b < sms; b++)
      for (int w = 0; w < 32; w++)
        printf("W %s %d %d %lld %lld\n", names[mode], b, w, h[(b * 32 + w) * 2], h[(b * 32 + w) * 2 + 1]);
  }
  return 0;
}
