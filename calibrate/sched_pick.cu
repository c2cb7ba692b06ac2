// Which warp an SMSP's scheduler picks when several can issue: A warps of each of S SMSPs (S = 1: warps
// 0, 4, ..., 4(A-1) of a 1024-thread block, one block per SM; S = 4: warps 0 .. 4A-1; the block's other
// warps exit at once) run T trips of 48 FFMAs each, in K independent chains (K = 1..4: a warp can issue
// K of every 4 cycles, FFMA latency 4), and lane 0 stamps clock64() at the start of every trip into
// shared memory. A scheduler that keeps
// the warp it issued last and falls back to the youngest runs the warps in pairs or one after another;
// one that falls back to the warp that waited longest rotates them.
// The FFMAs read a register, a register and an immediate (fmaf(acc, b, 0.5f)), as sched_fairness.cu's.
// Output: "P K A S T block warp t0 t1 ... tT" in SM cycles, t_T = after the loop.
// Build: nvcc -arch=sm_90 -O3 -o sched_pick calibrate/sched_pick.cu
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <vector>

#define THREADS 1024
#define MAX_TRIPS 64
#define FMAS 48

template <int K>
__device__ __forceinline__ void trip(float (&acc)[4], float b) {
#pragma unroll
  for (int u = 0; u < FMAS / K; u++)
#pragma unroll
    for (int c = 0; c < K; c++) acc[c] = fmaf(acc[c], b, 0.5f);
}

template <int K>
__global__ void __launch_bounds__(THREADS) pick(const float *buf, int active, int smsps, int trips,
                                                long long *out, float *sink) {
  __shared__ long long st[32][MAX_TRIPS + 1];
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();
  if ((warp & 3) >= smsps || (warp >> 2) >= active) return;     // `active` warps of the first `smsps` SMSPs
  float b = buf[lane] + 1.0f;
  float acc[4] = {0.f, 1.f, 2.f, 3.f};
#pragma unroll 1
  for (int it = 0; it < trips; it++) {   // (not unrolled: ptxas would hoist the next trip's clock read)
    long long t = clock64();
    if (lane == 0) st[warp][it] = t;
    trip<K>(acc, b);
  }
  long long t = clock64();
  if (lane == 0) st[warp][trips] = t;
  __syncwarp();
  if (lane == 0)
    for (int i = 0; i <= trips; i++) out[((size_t)blockIdx.x * 32 + warp) * (MAX_TRIPS + 1) + i] = st[warp][i];
  if (acc[0] + acc[1] + acc[2] + acc[3] == 12345.f) sink[threadIdx.x] = acc[0];
}

int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  float *buf, *sink; long long *out;
  cudaMalloc(&buf, 128 * sizeof(float));
  cudaMemset(buf, 0, 128 * sizeof(float));
  cudaMalloc(&sink, THREADS * sizeof(float));
  size_t n = (size_t)sms * 32 * (MAX_TRIPS + 1);
  cudaMalloc(&out, n * sizeof(long long));
  std::vector<long long> h(n);
  // (K, A, S, T): every K with 2, 4, 8 warps of SMSP 0 over 24 trips; then 8 warps on each SMSP, and 64 trips
  std::vector<int> cfg;
  for (int K = 1; K <= 4; K++)
    for (int A : {2, 4, 8}) cfg.insert(cfg.end(), {K, A, 1, 24});
  for (int K = 1; K <= 4; K++) cfg.insert(cfg.end(), {K, 8, 4, 24});
  cfg.insert(cfg.end(), {4, 8, 1, 64, 4, 8, 4, 64, 2, 8, 4, 64});
  for (size_t c = 0; c < cfg.size(); c += 4) {
    int K = cfg[c], A = cfg[c + 1], S = cfg[c + 2], T = cfg[c + 3];
    for (int rep = 0; rep < 2; rep++) {  // the first launch warms up; the second is printed
      if (K == 1) pick<1><<<sms, THREADS>>>(buf, A, S, T, out, sink);
      if (K == 2) pick<2><<<sms, THREADS>>>(buf, A, S, T, out, sink);
      if (K == 3) pick<3><<<sms, THREADS>>>(buf, A, S, T, out, sink);
      if (K == 4) pick<4><<<sms, THREADS>>>(buf, A, S, T, out, sink);
      cudaError_t e = cudaDeviceSynchronize();
      if (e != cudaSuccess) { fprintf(stderr, "K=%d A=%d: %s\n", K, A, cudaGetErrorString(e)); return 1; }
    }
    cudaMemcpy(h.data(), out, n * sizeof(long long), cudaMemcpyDeviceToHost);
    for (int blk = 0; blk < sms; blk++)
      for (int w = 0; w < 32; w++) {
        if ((w & 3) >= S || (w >> 2) >= A) continue;
        printf("P %d %d %d %d %d %d", K, A, S, T, blk, w);
        for (int i = 0; i <= T; i++) printf(" %lld", h[((size_t)blk * 32 + w) * (MAX_TRIPS + 1) + i]);
        printf("\n");
      }
  }
  return 0;
}
