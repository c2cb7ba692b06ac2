// How many shared loads the MIO path lets a warp, an SMSP and the SM have in flight, by load kind.
// One CTA (one SM); the warps in `mask` (warp w runs on SMSP w % 4) each issue REPS bursts of B
// independent loads of one kind, stamped with clock64 before the burst (t0), after its last issue
// (t1) and after its values are consumed (t2). While a burst fits, a warp issues a load every 4
// cycles; once the path is full, issue waits for loads to drain, and t1 - t0 grows with B at the
// drain rate: where the two lines meet is the capacity. Kinds (V 32-bit words per lane, WF-way bank
// conflict, so WF wavefronts for V = 1; V = 2 / 4 conflict-free take 2 / 4 wavefronts):
//   V=1 WF=1, 2, 4, 8, 16, 32;  V=2 WF=1;  V=4 WF=1.
// Usage: mio_capacity MASK   (every kind and B for these warps; prints one line per run)
// Build: nvcc -arch=sm_90 -O3 -o mio_capacity kernels_cuda/micro/mio_capacity.cu
#include <cstdio>
#include <cstdlib>
#include <vector>

#define REPS 8

template <int B, int V, int WF>
__global__ void cap(unsigned *out, long long *stamps, unsigned mask) {
  __shared__ __align__(16) unsigned s[32 * 32 * 4];
  for (int i = threadIdx.x; i < 32 * 32 * 4; i += blockDim.x) s[i] = i;
  __syncthreads();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (!((mask >> warp) & 1u)) return;
  // lanes with the same column hit one bank in WF different rows: a WF-way conflict
  const int cols = 32 / WF;
  const unsigned word = V == 1 ? (lane % cols) + (lane / cols) * 32 : V * lane;
  const unsigned a = (unsigned)__cvta_generic_to_shared(s) + 4u * word;
  unsigned r[B * V];
  unsigned acc = 0;
  for (int rep = 0; rep < REPS; rep++) {
    __syncwarp();
    long long t0 = clock64();
#pragma unroll
    for (int j = 0; j < B; j++) {
      if constexpr (V == 4)
        asm volatile("ld.volatile.shared.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(r[4 * j]), "=r"(r[4 * j + 1]),
                     "=r"(r[4 * j + 2]), "=r"(r[4 * j + 3]) : "r"(a));
      else if constexpr (V == 2)
        asm volatile("ld.volatile.shared.v2.u32 {%0, %1}, [%2];" : "=r"(r[2 * j]), "=r"(r[2 * j + 1]) : "r"(a));
      else
        asm volatile("ld.volatile.shared.u32 %0, [%1];" : "=r"(r[j]) : "r"(a));
    }
    long long t1 = clock64();
    // volatile adds: kept after the clock read, so every result stays live until the burst is issued
#pragma unroll
    for (int j = 0; j < B * V; j++) asm volatile("add.u32 %0, %0, %1;" : "+r"(acc) : "r"(r[j]));
    long long t2 = clock64();
    if (lane == 0) {
      long long *p = stamps + ((long long)warp * REPS + rep) * 3;
      p[0] = t0;
      p[1] = t1;
      p[2] = t2 + (acc == 0xFFFFFFFFu ? 1 : 0);
    }
  }
  out[threadIdx.x] = acc;
}

typedef void (*Kern)(unsigned *, long long *, unsigned);
struct Run { int v, wf, b; Kern k; };

// B x V registers of results per thread: at most 96 so that 16 warps fit (no spills)
#define ROW(V, WF) {V, WF, 16, cap<16, V, WF>}, {V, WF, 32, cap<32, V, WF>}, {V, WF, 48, cap<48, V, WF>}
#define ROW_LONG(V, WF) ROW(V, WF), {V, WF, 64, cap<64, V, WF>}, {V, WF, 96, cap<96, V, WF>}
#define ROW_WIDE(V, WF) {V, WF, 8, cap<8, V, WF>}, {V, WF, 16, cap<16, V, WF>}, {V, WF, 24, cap<24, V, WF>}

int main(int argc, char **argv) {
  if (argc < 2) { fprintf(stderr, "usage: %s MASK\n", argv[0]); return 2; }
  unsigned mask = (unsigned)strtoul(argv[1], 0, 0);
  int warps = 32 - __builtin_clz(mask);
  std::vector<Run> runs = {ROW_LONG(1, 1), ROW_LONG(1, 2), ROW_LONG(1, 4), ROW_LONG(1, 8), ROW_LONG(1, 16),
                           ROW_LONG(1, 32), ROW(2, 1), ROW_WIDE(4, 1)};
  unsigned *out; long long *st;
  cudaMalloc(&out, 32 * warps * sizeof(unsigned));
  cudaMalloc(&st, (size_t)warps * REPS * 3 * sizeof(long long));
  std::vector<long long> h((size_t)warps * REPS * 3);
  for (const Run &r : runs) {
    for (int pass = 0; pass < 2; pass++) {          // the first launch warms the instruction cache
      cudaMemset(st, 0, h.size() * sizeof(long long));
      r.k<<<1, 32 * warps>>>(out, st, mask);
      cudaError_t e = cudaDeviceSynchronize();
      if (e != cudaSuccess) { fprintf(stderr, "V%d WF%d B%d: %s\n", r.v, r.wf, r.b, cudaGetErrorString(e)); return 1; }
    }
    cudaMemcpy(h.data(), st, h.size() * sizeof(long long), cudaMemcpyDeviceToHost);
    printf("mask 0x%x V %d WF %d B %d stamps", mask, r.v, r.wf, r.b);
    for (int w = 0; w < warps; w++) {
      if (!((mask >> w) & 1u)) continue;
      for (int rep = 0; rep < REPS; rep++) {
        const long long *p = &h[((size_t)w * REPS + rep) * 3];
        printf(" %d:%lld:%lld:%lld", w, p[0], p[1] - p[0], p[2] - p[1]);
      }
    }
    printf("\n");
  }
  return 0;
}
