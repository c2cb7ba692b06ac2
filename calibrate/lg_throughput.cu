// L1TEX throughput for global loads that HIT in L1, by distinct 128-B lines per request.
// Every SM runs BLOCKS_PER_SM blocks of 1024 threads (64 warps per SM in all); each warp issues
// ITERS x UNROLL independent `ld.global.f32` (LDG.E, cached in L1) whose 32 lanes touch D distinct
// 128-B lines (lane l -> line (g + (l % D) * 8) % LINES, word (l / D) % 32), all inside a 32 KB
// buffer that a warm-up pass has put in L1. clock64() brackets the timed loop per block
// (after a __syncthreads); cycles per request = block cycles / (requests the SM issued meanwhile).
// Usage: lg_throughput D [D ...]   (one launch per D; prints "D cycles_per_request ...")
// Build: nvcc -arch=sm_90 -O3 -o lg_throughput calibrate/lg_throughput.cu
#include <cstdio>
#include <cstdlib>
#include <vector>

#define LINES 256            // 32 KB buffer
#define UNROLL 8
#define THREADS 1024
#define BLOCKS_PER_SM 2

__device__ __forceinline__ float ldg(const float *p) {
  float v;
  asm volatile("ld.global.f32 %0, [%1];" : "=f"(v) : "l"(p));
  return v;
}

__global__ void __launch_bounds__(THREADS) lg(const float *buf, int D, int iters,
                                              long long *cycles, float *sink) {
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  int line_off = (lane % D) * 8, word = (lane / D) % 32;
  float acc = 0.f;
  // warm-up: every line of the buffer, twice
  for (int i = threadIdx.x; i < LINES * 32; i += THREADS) acc += ldg(buf + i);
  for (int i = threadIdx.x; i < LINES * 32; i += THREADS) acc += ldg(buf + i);
  __syncthreads();
  long long t0 = clock64();
  int g = warp * 5;
  for (int it = 0; it < iters; it++) {
    float v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
      int line = (g + u * 3 + line_off) & (LINES - 1);
      v[u] = ldg(buf + line * 32 + word);
    }
#pragma unroll
    for (int u = 0; u < UNROLL; u++) acc += v[u];
    g += 29;
  }
  __syncthreads();
  long long t1 = clock64();
  if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
  if (acc == 12345.f) sink[threadIdx.x] = acc;
}

int main(int argc, char **argv) {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  int blocks = sms * BLOCKS_PER_SM;
  int iters = 256;
  float *buf, *sink; long long *cyc;
  cudaMalloc(&buf, LINES * 128);
  cudaMemset(buf, 0, LINES * 128);
  cudaMalloc(&sink, THREADS * sizeof(float));
  cudaMalloc(&cyc, blocks * sizeof(long long));
  std::vector<long long> h(blocks);
  for (int a = 1; a < argc; a++) {
    int D = atoi(argv[a]);
    lg<<<blocks, THREADS>>>(buf, D, iters, cyc, sink);
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) { fprintf(stderr, "D=%d: %s\n", D, cudaGetErrorString(e)); return 1; }
    cudaMemcpy(h.data(), cyc, blocks * sizeof(long long), cudaMemcpyDeviceToHost);
    double mean = 0, mx = 0;
    for (int b = 0; b < blocks; b++) { mean += h[b]; if (h[b] > mx) mx = h[b]; }
    mean /= blocks;
    double req_per_sm = (double)BLOCKS_PER_SM * (THREADS / 32) * iters * UNROLL;
    printf("D %d cycles_mean %.1f cycles_max %.1f requests_per_sm %.0f cycles_per_request %.4f\n",
           D, mean, mx, req_per_sm, mean / req_per_sm);
  }
  return 0;
}
