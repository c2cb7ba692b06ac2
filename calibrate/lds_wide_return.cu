// How fast a warp gets back the data of wide shared loads with bank conflicts: LDS.32, LDS.64 and
// LDS.128 with a WF-way conflict. One CTA (one SM); the warps in `mask` (warp w runs on SMSP w % 4)
// each issue REPS bursts of B independent loads of one kind, stamped with clock64 before the burst
// (t0), after its last issue (t1) and after a branch on the LAST load's value (t2). A warp's
// shared loads return in order, so t2 - t0 is the time until the whole burst is back; its slope in B
// is what each load costs the warp's return path (or the SM's pipe, with many warps).
// Addresses: V = 1: lanes with the same column hit one bank in WF rows (WF wavefronts); V = 2 / 4:
// lane i reads V words at word V * WF * i, a stride of WF x the access (conflict-free: WF = 1, 2 / 4
// wavefronts; WF-way: WF x as many). ROWS = 1: every load of a burst reads the same words; ROWS = 8:
// load j reads row j % 8 (2 KB apart, same banks): whether repeating an address changes the cost.
// Usage: lds_wide_return MASK   (every kind and B for these warps; prints one line per run)
// Build: nvcc -arch=sm_90 -O3 -o lds_wide_return calibrate/lds_wide_return.cu
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "lds_burst.cuh"

#define REPS 8

template <int B, int V, int WF, int ROWS>
__global__ void wide(unsigned *out, long long *stamps, unsigned mask) {
  __shared__ __align__(16) unsigned s[ROWS * 512];
  for (int i = threadIdx.x; i < ROWS * 512; i += blockDim.x) s[i] = i;
  __syncthreads();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (!((mask >> warp) & 1u)) return;
  const int cols = 32 / WF;
  const unsigned word = V == 1 ? (lane % cols) + (lane / cols) * 32 : V * WF * lane;
  // ROWS > 1: load j reads row j % ROWS (2 KB apart, the same banks), not the same words again
  unsigned a[ROWS];
#pragma unroll
  for (int q = 0; q < ROWS; q++) a[q] = (unsigned)__cvta_generic_to_shared(s) + 4u * word + 2048u * q;
  unsigned r[B * V];
  unsigned acc = 0;
  for (int rep = 0; rep < REPS; rep++) {
    __syncwarp();
    long long t0 = clock64();
    lds_burst<B, V, ROWS>(r, a);
    long long t1 = clock64();
    // the last load's first register: back when the whole burst is back (in-order return). A branch
    // on it, so that ptxas cannot read the clock before the value is in (it never equals ~0: s[i] = i)
    if (r[B * V - V] == 0xFFFFFFFFu) asm volatile("trap;");
    long long t2 = clock64();
#pragma unroll
    for (int j = 0; j < B * V; j++) asm volatile("add.u32 %0, %0, %1;" : "+r"(acc) : "r"(r[j]));
    keep_stamps(stamps, lane, warp, REPS, rep, t0, t1, t2, acc);
  }
  out[threadIdx.x] = acc;
}

typedef void (*Kern)(unsigned *, long long *, unsigned);
struct Run { int v, wf, b, rows; Kern k; };

// B x V registers of results per thread: at most 96 so that 16 warps fit (no spills); one warp alone
// also runs longer bursts (main)
#define NARROW(V, WF, R) {V, WF, 16, R, wide<16, V, WF, R>}, {V, WF, 32, R, wide<32, V, WF, R>}, \
                       {V, WF, 48, R, wide<48, V, WF, R>}
#define WIDE(V, WF, R) {V, WF, 8, R, wide<8, V, WF, R>}, {V, WF, 16, R, wide<16, V, WF, R>}, {V, WF, 24, R, wide<24, V, WF, R>}

int main(int argc, char **argv) {
  if (argc < 2) { fprintf(stderr, "usage: %s MASK\n", argv[0]); return 2; }
  unsigned mask = (unsigned)strtoul(argv[1], 0, 0);
  std::vector<Run> runs = {NARROW(1, 1, 1), NARROW(1, 2, 1), NARROW(1, 4, 1), NARROW(2, 1, 1), NARROW(2, 2, 1),
                           NARROW(2, 4, 1), WIDE(4, 1, 1), WIDE(4, 2, 1), WIDE(4, 4, 1),
                           NARROW(1, 1, 8), NARROW(1, 4, 8), NARROW(2, 1, 8), WIDE(4, 1, 8), WIDE(4, 2, 8)};
  if (mask == 1u) {   // one warp has the registers for longer bursts (up to 192 results)
    std::vector<Run> more = {{4, 1, 32, 1, wide<32, 4, 1, 1>}, {4, 1, 40, 1, wide<40, 4, 1, 1>},
                             {4, 1, 48, 1, wide<48, 4, 1, 1>}, {4, 2, 32, 1, wide<32, 4, 2, 1>},
                             {4, 2, 40, 1, wide<40, 4, 2, 1>}, {4, 2, 48, 1, wide<48, 4, 2, 1>},
                             {2, 1, 64, 1, wide<64, 2, 1, 1>}, {2, 1, 80, 1, wide<80, 2, 1, 1>},
                             {2, 1, 96, 1, wide<96, 2, 1, 1>}};
    runs.insert(runs.end(), more.begin(), more.end());
  }
  return run_bursts<REPS>(runs, mask, [](const Run &r, char *buf, size_t n) {
    snprintf(buf, n, "V %d WF %d B %d rows %d", r.v, r.wf, r.b, r.rows);
  });
}
