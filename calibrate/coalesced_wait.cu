// Do the warps of a coalesced CTA (no barrier) wait on their global loads alike? barrier_wait.cu asks it of
// regtile1d, whose barriers hold a CTA's warps together: a third of the spread of its warps' load times lies
// within a CTA's slab. coalesced (kernels_cuda/coalesced.cu at BLOCKSIZE 32: 32 warps a CTA, warp w on
// row bx * 32 + w of A and C, all warps on the same B line at each k) with one change: the K loop runs in
// chunks of 32 (one A line per warp), and lane 0 of every warp reads clock64 before the chunk's first load
// of A (the warp's own line, shared with the CTAs of its grid row, not with the other warps of its CTA)
// and after a shared store of the loaded value (which cannot issue before the value is back; t1 - t0:
// that load's time), for chunks C0 <= c < C0 + CHUNKS; then
// the chunk runs as before. Its SM id and warp slot are kept too.
// Usage: coalesced_wait N OUT.bin  (N x N x N, one untimed launch, then the stamped one; prints the kernel
// time of both and writes int32 [CTAs * 32][2] smid, warpid, then int64 [CTAs * 32][CHUNKS][2] stamps)
// Build: nvcc -arch=sm_90 -O3 -o coalesced_wait calibrate/coalesced_wait.cu
#include <cstdio>
#include <cstdlib>
#include "sgemm_twin_host.cuh"

#define BLOCKSIZE 32
#define WARPS 32
#define C0 16
#define CHUNKS 32

__device__ __forceinline__ long long stamp() {
  long long t;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
  return t;
}

extern "C" __global__ void coalesced_wait(int M, int N, int K, float alpha, const float *A, const float *B,
                                          float beta, float *C, long long *stamps, int *where) {
  const int row = blockIdx.x * BLOCKSIZE + threadIdx.x / BLOCKSIZE;
  const int col = blockIdx.y * BLOCKSIZE + threadIdx.x % BLOCKSIZE;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int cta = blockIdx.y * gridDim.x + blockIdx.x;
  long long *mine = stamps + (long long)(cta * WARPS + warp) * CHUNKS * 2;
  if (lane == 0) {
    unsigned smid, wid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    asm volatile("mov.u32 %0, %%warpid;" : "=r"(wid));
    where[2 * (cta * WARPS + warp)] = smid;
    where[2 * (cta * WARPS + warp) + 1] = wid;
  }
  __shared__ volatile float sink[WARPS];
  if (row < M && col < N) {
    float tmp = 0.0f;
    for (int c = 0; c < K / 32; ++c) {
      const int i0 = c * 32;
      const bool on = lane == 0 && c >= C0 && c < C0 + CHUNKS;
      long long t0 = 0;
      if (on) t0 = stamp();
      const float a0 = A[row * K + i0];
      if (on) {
        sink[warp] = a0;                  // waits for the load; the clock read below is ordered after it
        const long long t1 = stamp();
        mine[(c - C0) * 2] = t0;
        mine[(c - C0) * 2 + 1] = t1;
      }
      tmp += a0 * B[i0 * N + col];
      for (int i = i0 + 1; i < i0 + 32; ++i) tmp += A[row * K + i] * B[i * N + col];
    }
    C[row * N + col] = alpha * tmp + beta * C[row * N + col];
  }
}

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: %s N OUT.bin\n", argv[0]); return 2; }
  const int n = atoi(argv[1]);
  if (n % 32 || n / 32 < C0 + CHUNKS) { fprintf(stderr, "N must be a multiple of 32 and at least %d\n", (C0 + CHUNKS) * 32); return 2; }
  const int ctas = (n / BLOCKSIZE) * (n / BLOCKSIZE);
  const TwinBuffers b = twin_buffers(n, (size_t)ctas * WARPS * CHUNKS * 2, (size_t)ctas * WARPS);
  dim3 grid(n / BLOCKSIZE, n / BLOCKSIZE), block(BLOCKSIZE * BLOCKSIZE);
  if (time_twice(n, [&] { coalesced_wait<<<grid, block>>>(n, n, n, 1.0f, b.A, b.B, 0.0f, b.C, b.stamps, b.where); }))
    return 1;
  write_stamps(argv[2], b);
  printf("ctas %d warps_per_cta %d chunks %d chunk0 %d\n", ctas, WARPS, CHUNKS, C0);
  return 0;
}
