// What an L1-hit global load request costs the SM when nothing else is in the way: each load's
// address is a base register plus an immediate (LDG.E R, [R.64+imm]), so a warp issues no integer
// work per load, unlike lg_throughput.cu (whose D = 1 and 2 were bound by their address arithmetic).
// Every SM runs BLOCKS_PER_SM blocks of THREADS threads; each warp issues ITERS x UNROLL independent
// ld.global.f32 (L1-cached) into a warmed 32 KB buffer, one 128-B line per load:
//   mode 0 "line":  the 32 lanes read 32 consecutive words of the line (4 sectors; coalesced's B loads)
//   mode 1 "bcast": the 32 lanes read one word (1 sector; coalesced's A loads, a broadcast)
//   mode 2 "mix":   the two alternately (coalesced's K loop issues them in pairs)
//   mode 3 "quad":  8 lanes on each of 4 lines (4 sectors, 4 lines: the data stage's line a cycle)
// clock64() brackets the timed loop per block. Nsight Compute reads the same launches.
// Usage: l1_request_cost WARPS_PER_BLOCK MODE [MODE ...]   (one launch per mode)
// Build: nvcc -arch=sm_90 -O3 -o l1_request_cost calibrate/l1_request_cost.cu
#include <cstdio>
#include <cstdlib>
#include <vector>

#define LINES 256            // 32 KB buffer
#define UNROLL 16
#define BLOCKS_PER_SM 2
#define ITERS 256

__device__ __forceinline__ float ldg(const float *p) {
  float v;
  asm volatile("ld.global.f32 %0, [%1];" : "=f"(v) : "l"(p));
  return v;
}

// the immediate is in the PTX itself, so ptxas emits LDG.E R, [R.64+OFF] with no address arithmetic
template <int OFF> __device__ __forceinline__ float ldg_at(const float *p) {
  float v;
  asm volatile("ld.global.f32 %0, [%1+%2];" : "=f"(v) : "l"(p), "n"(OFF));
  return v;
}

// loads 0..U-1 of an iteration: even ones from pl, odd ones from pb, each 4 lines (512 B) further on
template <int U> __device__ __forceinline__ void loads(const float *pl, const float *pb, float *v) {
  if constexpr (U > 0) {
    loads<U - 1>(pl, pb, v);
    v[U - 1] = ldg_at<(U - 1) * 512>(((U - 1) & 1) ? pb : pl);
  }
}

__global__ void rq(const float *buf, int mode, long long *cycles, float *sink) {
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  float acc = 0.f;
  for (int i = threadIdx.x; i < LINES * 32; i += blockDim.x) acc += ldg(buf + i);   // warm L1
  for (int i = threadIdx.x; i < LINES * 32; i += blockDim.x) acc += ldg(buf + i);
  // per-lane word offsets of the two kinds of load (mode 3: 8 lanes per line, 4 lines 32 lines apart)
  int w_line = lane, w_bcast = 0;
  if (mode == 1) w_line = 0;
  if (mode == 3) w_line = (lane & 7) + (lane >> 3) * 32 * 32;
  if (mode == 2) w_bcast = 0; else w_bcast = w_line;
  __syncthreads();
  long long t0 = clock64();
  int g = (warp * 3) & 63;
  for (int it = 0; it < ITERS; it++) {
    const float *pl = buf + g * 32 + w_line;     // even loads
    const float *pb = buf + g * 32 + w_bcast;    // odd loads (mode 2: the broadcast ones)
    float v[UNROLL];
    loads<UNROLL>(pl, pb, v);
#pragma unroll
    for (int u = 0; u < UNROLL; u++) acc += v[u];
    g = (g + 7) & 63;
  }
  __syncthreads();
  long long t1 = clock64();
  if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
  if (acc == 12345.f) sink[threadIdx.x] = acc;
}

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: %s WARPS_PER_BLOCK MODE [MODE ...]\n", argv[0]); return 2; }
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  int warps = atoi(argv[1]);
  int threads = 32 * warps, blocks = sms * BLOCKS_PER_SM;
  float *buf, *sink; long long *cyc;
  cudaMalloc(&buf, LINES * 128);
  cudaMemset(buf, 0, LINES * 128);
  cudaMalloc(&sink, threads * sizeof(float));
  cudaMalloc(&cyc, blocks * sizeof(long long));
  std::vector<long long> h(blocks);
  for (int a = 2; a < argc; a++) {
    int mode = atoi(argv[a]);
    rq<<<blocks, threads>>>(buf, mode, cyc, sink);
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) { fprintf(stderr, "mode %d: %s\n", mode, cudaGetErrorString(e)); return 1; }
    cudaMemcpy(h.data(), cyc, blocks * sizeof(long long), cudaMemcpyDeviceToHost);
    double mean = 0, mx = 0;
    for (int b = 0; b < blocks; b++) { mean += h[b]; if (h[b] > mx) mx = h[b]; }
    mean /= blocks;
    double req_per_sm = (double)BLOCKS_PER_SM * warps * ITERS * UNROLL;
    printf("warps_per_sm %d mode %d cycles_mean %.1f cycles_max %.1f requests_per_sm %.0f cycles_per_request %.4f\n",
           BLOCKS_PER_SM * warps, mode, mean, mx, req_per_sm, mx / req_per_sm);
  }
  return 0;
}
