// L1TEX -> L2 throughput for global loads that MISS in L1 and hit in L2, by distinct 128-B lines
// per warp request: does the miss path cost per request line (an L2 request each) or per byte?
// Every SM runs `blocks_per_sm` blocks of `threads` threads; each warp issues ITERS x UNROLL
// independent 4-byte loads whose 32 lanes touch D distinct lines (lane l -> line
// (g + u * 3 + (l % D) * 8) % LINES, word (l / D) % 32) of an 8 MB buffer that a warm-up kernel has
// put in the L2 (the L1 holds at most 256 KB of it, and a warp comes back to a line only after
// ~63 trips, when 32k other lines have passed through its SM's L1). mode 0: ld.global.ca (LDG.E,
// allocates in L1, misses there), mode 1: ld.global.cg (L2 only). clock64() brackets the timed loop
// per block (after a __syncthreads).
// Usage: l2_requests MODE BLOCKS_PER_SM THREADS D [D ...]   (one launch per D; one line each)
// Build: nvcc -arch=sm_90 -O3 -o l2_requests calibrate/l2_requests.cu
#include <cstdio>
#include <cstdlib>
#include <vector>

#define LINES 65536          // 8 MB
#define UNROLL 8
#define ITERS 128

__device__ __forceinline__ float ld_ca(const float *p) {
  float v;
  asm volatile("ld.global.ca.f32 %0, [%1];" : "=f"(v) : "l"(p));
  return v;
}
__device__ __forceinline__ float ld_cg(const float *p) {
  float v;
  asm volatile("ld.global.cg.f32 %0, [%1];" : "=f"(v) : "l"(p));
  return v;
}

__global__ void warm(const float *buf, float *sink) {
  float acc = 0.f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < LINES * 32; i += gridDim.x * blockDim.x)
    acc += ld_cg(buf + i);
  if (acc == 12345.f) sink[0] = acc;
}

template <int MODE>
__device__ __forceinline__ void timed(const float *buf, int D, long long *cycles, float *sink) {
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  int line_off = (lane % D) * 8, word = (lane / D) % 32;
  float acc = 0.f;
  int g = (blockIdx.x * 64 + warp) * 977;
  __syncthreads();
  long long t0 = clock64();
  for (int it = 0; it < ITERS; it++) {
    float v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
      const float *p = buf + ((g + u * 3 + line_off) & (LINES - 1)) * 32 + word;
      v[u] = MODE ? ld_cg(p) : ld_ca(p);
    }
#pragma unroll
    for (int u = 0; u < UNROLL; u++) acc += v[u];
    g += 1031;                 // > the 269-line span of one trip: no line twice within a few trips
  }
  __syncthreads();
  long long t1 = clock64();
  if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
  if (acc == 12345.f) sink[threadIdx.x] = acc;
}

extern "C" __global__ void l2req_ca(const float *buf, int D, long long *cycles, float *sink) { timed<0>(buf, D, cycles, sink); }
extern "C" __global__ void l2req_cg(const float *buf, int D, long long *cycles, float *sink) { timed<1>(buf, D, cycles, sink); }

int main(int argc, char **argv) {
  if (argc < 5) { fprintf(stderr, "usage: l2_requests MODE BLOCKS_PER_SM THREADS D [D ...]\n"); return 2; }
  int mode = atoi(argv[1]), bps = atoi(argv[2]), threads = atoi(argv[3]);
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  int blocks = sms * bps;
  float *buf, *sink; long long *cyc;
  cudaMalloc(&buf, (size_t)LINES * 128);
  cudaMemset(buf, 0, (size_t)LINES * 128);
  cudaMalloc(&sink, 1024 * sizeof(float));
  cudaMalloc(&cyc, blocks * sizeof(long long));
  std::vector<long long> h(blocks);
  for (int a = 4; a < argc; a++) {
    int D = atoi(argv[a]);
    warm<<<sms * 2, 1024>>>(buf, sink);
    if (mode) l2req_cg<<<blocks, threads>>>(buf, D, cyc, sink);
    else l2req_ca<<<blocks, threads>>>(buf, D, cyc, sink);
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) { fprintf(stderr, "D=%d: %s\n", D, cudaGetErrorString(e)); return 1; }
    cudaMemcpy(h.data(), cyc, blocks * sizeof(long long), cudaMemcpyDeviceToHost);
    double mean = 0, mx = 0;
    for (int b = 0; b < blocks; b++) { mean += h[b]; if (h[b] > mx) mx = h[b]; }
    mean /= blocks;
    double req_per_sm = (double)bps * (threads / 32) * ITERS * UNROLL;
    printf("mode %d warps_per_sm %d D %d cycles_mean %.1f cycles_max %.1f requests_per_sm %.0f "
           "cycles_per_request %.4f cycles_per_line %.4f\n", mode, bps * threads / 32, D, mean, mx,
           req_per_sm, mean / req_per_sm, mean / req_per_sm / D);
  }
  return 0;
}
