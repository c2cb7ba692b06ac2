// How many shared loads the MIO path lets a warp, an SMSP and the SM have in flight, by load kind.
// One CTA (one SM); the warps in `mask` (warp w runs on SMSP w % 4) each issue REPS bursts of B
// independent loads of one kind, stamped with clock64 before the burst (t0), after its last issue
// (t1) and after its values are consumed (t2). While a burst fits, a warp issues a load every 4
// cycles; once the path is full, issue waits for loads to drain, and t1 - t0 grows with B at the
// drain rate: where the two lines meet is the capacity. Kinds (V 32-bit words per lane, WF-way bank
// conflict, so WF wavefronts for V = 1; V = 2 / 4 conflict-free take 2 / 4 wavefronts):
//   V=1 WF=1, 2, 4, 8, 16, 32;  V=2 WF=1;  V=4 WF=1.
// Usage: mio_capacity MASK   (every kind and B for these warps; prints one line per run)
// Build: nvcc -arch=sm_90 -O3 -o mio_capacity calibrate/mio_capacity.cu
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "lds_burst.cuh"

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
  const unsigned a[1] = {(unsigned)__cvta_generic_to_shared(s) + 4u * word};
  unsigned r[B * V];
  unsigned acc = 0;
  for (int rep = 0; rep < REPS; rep++) {
    __syncwarp();
    long long t0 = clock64();
    lds_burst<B, V, 1>(r, a);
    long long t1 = clock64();
    // volatile adds: kept after the clock read, so every result stays live until the burst is issued
#pragma unroll
    for (int j = 0; j < B * V; j++) asm volatile("add.u32 %0, %0, %1;" : "+r"(acc) : "r"(r[j]));
    long long t2 = clock64();
    keep_stamps(stamps, lane, warp, REPS, rep, t0, t1, t2, acc);
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
  std::vector<Run> runs = {ROW_LONG(1, 1), ROW_LONG(1, 2), ROW_LONG(1, 4), ROW_LONG(1, 8), ROW_LONG(1, 16),
                           ROW_LONG(1, 32), ROW(2, 1), ROW_WIDE(4, 1)};
  return run_bursts<REPS>(runs, mask, [](const Run &r, char *buf, size_t n) {
    snprintf(buf, n, "V %d WF %d B %d", r.v, r.wf, r.b);
  });
}
