// What the shared-load burst micros (mio_capacity.cu, lds_wide_return.cu) share: the burst itself
// and the stamps a warp keeps of it.
#pragma once

// B independent shared loads of V 32-bit words a lane into r; load j reads address a[j % ROWS].
// ld.volatile: ptxas issues every load as written (none merged, none dropped).
template <int B, int V, int ROWS>
__device__ __forceinline__ void lds_burst(unsigned (&r)[B * V], const unsigned (&a)[ROWS]) {
#pragma unroll
  for (int j = 0; j < B; j++) {
    if constexpr (V == 4)
      asm volatile("ld.volatile.shared.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(r[4 * j]), "=r"(r[4 * j + 1]),
                   "=r"(r[4 * j + 2]), "=r"(r[4 * j + 3]) : "r"(a[j % ROWS]));
    else if constexpr (V == 2)
      asm volatile("ld.volatile.shared.v2.u32 {%0, %1}, [%2];" : "=r"(r[2 * j]), "=r"(r[2 * j + 1]) : "r"(a[j % ROWS]));
    else
      asm volatile("ld.volatile.shared.u32 %0, [%1];" : "=r"(r[j]) : "r"(a[j % ROWS]));
  }
}

// Lane 0 keeps rep `rep`'s clock64 stamps at stamps[(warp * reps + rep) * 3 ..]; t2 takes a term in
// acc so that the consumption of the burst stays before it.
__device__ __forceinline__ void keep_stamps(long long *stamps, int lane, int warp, int reps, int rep, long long t0,
                                            long long t1, long long t2, unsigned acc) {
  if (lane == 0) {
    long long *p = stamps + ((long long)warp * reps + rep) * 3;
    p[0] = t0;
    p[1] = t1;
    p[2] = t2 + (acc == 0xFFFFFFFFu ? 1 : 0);
  }
}

// Host: for each run (a struct with a kernel `k(out, stamps, mask)`, REPS_ reps of stamps per warp),
// two launches of one CTA of the mask's warps (the first warms the instruction cache), then one line
// "mask 0x.. <label> stamps w:t0:issue:wait ..." with label(run) the run's description. 0 if all ran.
template <int REPS_, class Run, class Label>
int run_bursts(const std::vector<Run> &runs, unsigned mask, Label label) {
  const int warps = 32 - __builtin_clz(mask);
  unsigned *out; long long *st;
  cudaMalloc(&out, 32 * warps * sizeof(unsigned));
  cudaMalloc(&st, (size_t)warps * REPS_ * 3 * sizeof(long long));
  std::vector<long long> h((size_t)warps * REPS_ * 3);
  char what[96];
  for (const Run &r : runs) {
    label(r, what, sizeof what);
    for (int pass = 0; pass < 2; pass++) {
      cudaMemset(st, 0, h.size() * sizeof(long long));
      r.k<<<1, 32 * warps>>>(out, st, mask);
      cudaError_t e = cudaDeviceSynchronize();
      if (e != cudaSuccess) { fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e)); return 1; }
    }
    cudaMemcpy(h.data(), st, h.size() * sizeof(long long), cudaMemcpyDeviceToHost);
    printf("mask 0x%x %s stamps", mask, what);
    for (int w = 0; w < warps; w++) {
      if (!((mask >> w) & 1u)) continue;
      for (int rep = 0; rep < REPS_; rep++) {
        const long long *p = &h[((size_t)w * REPS_ + rep) * 3];
        printf(" %d:%lld:%lld:%lld", w, p[0], p[1] - p[0], p[2] - p[1]);
      }
    }
    printf("\n");
  }
  return 0;
}
