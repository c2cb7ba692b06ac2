// S2R and LDC on the H200: what a warp waits for the result of a special-register read and of a constant
// load, clock64 in the kernel. Every kernel's prologue reads SR_TID / SR_CTAID (S2R) and its parameters
// (LDC), and short CTAs run that prologue on their critical path.
// Latency: one warp per CTA, `n` dependent steps, cycles / n:
//   s2r_loop   r = %smid; exit if r == f(x); x += r     (S2R SR_VIRTUALSMID, ISETP, branch: see LOOP_KERNEL)
//   alu_loop   the same with r = x ^ 5                  (the baseline: a LOP3 in the S2R's place)
//   s2ur_loop, ualu_loop: the same with x uniform       (S2UR where ptxas puts the read on the uniform path)
//   ldc_chase  x = c_chain[x] (byte offsets: LDC R, c[0x3][R] alone; every entry 0, so each step hits)
// Throughput: `warps` warps per CTA (one CTA per SM), each 8 independent S2R (or LDC) a step, cycles of the
// slowest warp over the ops the SM issued: s2r_rate, ldc_rate.
// out[cta * 2 + 0] = cycles, out[cta * 2 + 1] = a value that keeps the chain (never read).

__constant__ unsigned c_chain[64];        // all zero (cudaMemset by the host is not needed: zero-initialised)

__device__ __forceinline__ unsigned smid() {
  unsigned r;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
  return r;
}
__device__ __forceinline__ unsigned ldc_at(unsigned byte_off) {
  return *(const unsigned *)((const char *)c_chain + byte_off);
}

// One read a trip of a loop that is not unrolled, whose exit tests the value read: the next trip's read
// issues once the branch has resolved on it, so a trip costs the read's latency plus a fixed ISETP and
// branch, the same in the baseline where a LOP3 stands for the read.
#define LOOP_KERNEL(NAME, X0, READ)                                                                 \
  extern "C" __global__ void NAME(int n, long long *out) {                                          \
    unsigned x = X0;                                                                                \
    long long t0 = clock64();                                                                       \
    _Pragma("unroll 1") for (int i = 0; i < n; i++) {                                               \
      unsigned r = READ;                                                                            \
      if (r == 0xdeadbeefu + x) break;                                                              \
      x += r;                                                                                       \
    }                                                                                               \
    long long t1 = clock64();                                                                       \
    if (threadIdx.x == 0) { out[2 * blockIdx.x] = t1 - t0; out[2 * blockIdx.x + 1] = x; }          \
  }

LOOP_KERNEL(s2r_loop, threadIdx.x, smid())          // x per thread: S2R
LOOP_KERNEL(alu_loop, threadIdx.x, x ^ 5u)          // its baseline: LOP3
LOOP_KERNEL(s2ur_loop, (unsigned)n, smid())         // x uniform: ptxas may read with S2UR (the SASS tells)
LOOP_KERNEL(ualu_loop, (unsigned)n, x ^ 5u)         // its baseline

extern "C" __global__ void ldc_chase(int n, long long *out) {
  unsigned x = threadIdx.x & 0;
  long long t0 = clock64();
  for (int i = 0; i < n; i++) x = ldc_at(x);
  long long t1 = clock64();
  if (threadIdx.x == 0) { out[2 * blockIdx.x] = t1 - t0; out[2 * blockIdx.x + 1] = x; }
}

extern "C" __global__ void s2r_rate(int n, long long *out) {
  unsigned acc[8];
  for (int k = 0; k < 8; k++) acc[k] = threadIdx.x + k;
  __syncthreads();
  long long t0 = clock64();
  for (int i = 0; i < n; i++) {
#pragma unroll
    for (int k = 0; k < 8; k++) acc[k] ^= smid();
  }
  long long t1 = clock64();
  unsigned s = 0;
  for (int k = 0; k < 8; k++) s += acc[k];
  atomicMax((unsigned long long *)&out[2 * blockIdx.x], (unsigned long long)(t1 - t0));
  if (s == 0x12345678u) out[2 * blockIdx.x + 1] = s;
}

extern "C" __global__ void ldc_rate(int n, long long *out) {
  unsigned off[8];
  for (int k = 0; k < 8; k++) off[k] = 4 * ((threadIdx.x + k) & 0);
  __syncthreads();
  long long t0 = clock64();
  for (int i = 0; i < n; i++) {
#pragma unroll
    for (int k = 0; k < 8; k++) off[k] = ldc_at(off[k] + 4 * k) ;
  }
  long long t1 = clock64();
  unsigned s = 0;
  for (int k = 0; k < 8; k++) s += off[k];
  atomicMax((unsigned long long *)&out[2 * blockIdx.x], (unsigned long long)(t1 - t0));
  if (s == 0x12345678u) out[2 * blockIdx.x + 1] = s;
}
