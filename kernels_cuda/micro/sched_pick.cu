// Which warp an SMSP's scheduler picks when several can issue: A warps of SMSP 0 (warps 0, 4, ...,
// 4(A-1) of a 1024-thread block, one block per SM; the block's other warps exit at once) run T trips of
// 48 FFMAs each, in K independent chains (K = 1..4: a warp can issue K of every 4 cycles, FFMA latency
// 4), and lane 0 stamps clock64() at the start of every trip into shared memory. A scheduler that keeps
// the warp it issued last and falls back to the youngest runs the warps in pairs or one after another;
// one that falls back to the warp that waited longest rotates them.
// The FFMAs read a register, a register and an immediate (fmaf(acc, b, 0.5f)), as sched_fairness.cu's.
// Output: "P K A block warp t0 t1 ... tT" in SM cycles, t_T = after the loop.
// Build: nvcc -arch=sm_90 -O3 -o sched_pick kernels_cuda/micro/sched_pick.cu
#include <cstdio>
#include <cstdlib>
#include <vector>

#define THREADS 1024
#define TRIPS 24
#define FMAS 48

template <int K>
__device__ __forceinline__ void trip(float (&acc)[4], float b) {
#pragma unroll
  for (int u = 0; u < FMAS / K; u++)
#pragma unroll
    for (int c = 0; c < K; c++) acc[c] = fmaf(acc[c], b, 0.5f);
}

template <int K>
__global__ void __launch_bounds__(THREADS) pick(const float *buf, int active, long long *out, float *sink) {
  __shared__ long long st[8][TRIPS + 1];
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();
  if ((warp & 3) != 0 || (warp >> 2) >= active) return;     // SMSP 0 only, `active` warps
  float b = buf[lane] + 1.0f;
  float acc[4] = {0.f, 1.f, 2.f, 3.f};
  int slot = warp >> 2;
#pragma unroll 1
  for (int it = 0; it < TRIPS; it++) {   // (not unrolled: ptxas would hoist the next trip's clock read)
    long long t = clock64();
    if (lane == 0) st[slot][it] = t;
    trip<K>(acc, b);
  }
  long long t = clock64();
  if (lane == 0) st[slot][TRIPS] = t;
  __syncwarp();
  if (lane == 0)
    for (int i = 0; i <= TRIPS; i++) out[((size_t)blockIdx.x * 8 + slot) * (TRIPS + 1) + i] = st[slot][i];
  if (acc[0] + acc[1] + acc[2] + acc[3] == 12345.f) sink[threadIdx.x] = acc[0];
}

int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  float *buf, *sink; long long *out;
  cudaMalloc(&buf, 128 * sizeof(float));
  cudaMemset(buf, 0, 128 * sizeof(float));
  cudaMalloc(&sink, THREADS * sizeof(float));
  size_t n = (size_t)sms * 8 * (TRIPS + 1);
  cudaMalloc(&out, n * sizeof(long long));
  std::vector<long long> h(n);
  const int actives[] = {2, 4, 8};
  for (int K = 1; K <= 4; K++)
    for (int ai = 0; ai < 3; ai++) {
      int A = actives[ai];
      for (int rep = 0; rep < 2; rep++) {  // the first launch warms up; the second is printed
        if (K == 1) pick<1><<<sms, THREADS>>>(buf, A, out, sink);
        if (K == 2) pick<2><<<sms, THREADS>>>(buf, A, out, sink);
        if (K == 3) pick<3><<<sms, THREADS>>>(buf, A, out, sink);
        if (K == 4) pick<4><<<sms, THREADS>>>(buf, A, out, sink);
        cudaError_t e = cudaDeviceSynchronize();
        if (e != cudaSuccess) { fprintf(stderr, "K=%d A=%d: %s\n", K, A, cudaGetErrorString(e)); return 1; }
      }
      cudaMemcpy(h.data(), out, n * sizeof(long long), cudaMemcpyDeviceToHost);
      for (int blk = 0; blk < sms; blk++)
        for (int s = 0; s < A; s++) {
          printf("P %d %d %d %d", K, A, blk, 4 * s);
          for (int i = 0; i <= TRIPS; i++) printf(" %lld", h[((size_t)blk * 8 + s) * (TRIPS + 1) + i]);
          printf("\n");
        }
    }
  return 0;
}
