// S2R and SHFL beside conflicted shared loads: do they take the shared-memory (MIO) pipe's cycles?
// One CTA per SM of `warps` warps (the rate kernels of micro_cli.chain_and_rate_rows), each warp `n` steps;
// clock64 around the loop, the slowest warp's cycles kept (atomicMax). Per step and warp:
//   lds32_only   4 shared loads whose 32 lanes hit one bank (32 wavefronts each: 128 pipe cycles)
//   s2r_only     16 S2R SR_VIRTUALSMID (the special_regs micro's read)
//   shfl_only    32 SHFL.BFLY
//   lds32_s2r    the 4 loads and the 16 S2R in one step
//   lds32_shfl   the 4 loads and the 32 SHFL in one step
// If S2R / SHFL go through the shared pipe (the Profiling Guide: the LSU pipe "also issues special register
// reads (S2R), shuffles"), a mixed step costs the sum of the two alone; on a unit of their own, the larger.
// The loads are ld.volatile: ptxas hoists plain ones out of the loop (the addresses repeat every other step).
// out[cta * 2 + 0] = cycles, out[cta * 2 + 1] = a value that keeps the work (never read).

__device__ __forceinline__ unsigned smid() {
  unsigned r;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
  return r;
}
__device__ __forceinline__ unsigned shfl_bfly(unsigned v, int m) {
  unsigned r;
  asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(r) : "r"(v), "r"(m));
  return r;
}
__device__ __forceinline__ float lds(unsigned addr) {
  float r;
  asm volatile("ld.volatile.shared.f32 %0, [%1];" : "=f"(r) : "r"(addr));
  return r;
}

#define PROLOGUE                                                                      \
  __shared__ float tile[2 * 32 * 32];                                                \
  for (int i = threadIdx.x; i < 2 * 32 * 32; i += blockDim.x) tile[i] = (float)i;    \
  __syncthreads();                                                                    \
  /* lane l reads word 32 l + 2k (+ 1024 on odd steps, so the loads stay in the loop): every lane */ \
  /* in bank 2k, 32 wavefronts; words 2 apart, so ptxas cannot merge them into one wide load */               \
  unsigned base = (unsigned)__cvta_generic_to_shared(tile) + (threadIdx.x & 31) * 128; \
  float acc = 0.f;                                                                    \
  unsigned bits = threadIdx.x;                                                        \
  long long t0 = clock64();

#define EPILOGUE                                                                      \
  long long t1 = clock64();                                                           \
  atomicMax((unsigned long long *)&out[2 * blockIdx.x], (unsigned long long)(t1 - t0)); \
  if (acc == 12345.f || bits == 12345u) out[2 * blockIdx.x + 1] = 1;

#define LDS4                                                                          \
  {                                                                                   \
    unsigned a = base + (i & 1) * 4096;                                               \
    acc += lds(a) + lds(a + 8) + lds(a + 16) + lds(a + 24);                           \
  }
#define S2R16                                                                         \
  _Pragma("unroll") for (int k = 0; k < 16; k++) bits ^= smid() << (k & 7);
#define SHFL32                                                                        \
  {                                                                                   \
    unsigned s[4] = {bits, bits + 1, bits + 2, bits + 3};                            \
    _Pragma("unroll") for (int k = 0; k < 8; k++) {                                   \
      _Pragma("unroll") for (int j = 0; j < 4; j++) s[j] = shfl_bfly(s[j], 1 << (k & 3)); \
    }                                                                                 \
    bits = s[0] ^ s[1] ^ s[2] ^ s[3];                                                 \
  }

extern "C" __global__ void lds32_only(int n, long long *out) {
  PROLOGUE
  for (int i = 0; i < n; i++) { LDS4 }
  EPILOGUE
}

extern "C" __global__ void s2r_only(int n, long long *out) {
  PROLOGUE
  for (int i = 0; i < n; i++) { S2R16 }
  EPILOGUE
}

extern "C" __global__ void shfl_only(int n, long long *out) {
  PROLOGUE
  for (int i = 0; i < n; i++) { SHFL32 }
  EPILOGUE
}

extern "C" __global__ void lds32_s2r(int n, long long *out) {
  PROLOGUE
  for (int i = 0; i < n; i++) { LDS4 S2R16 }
  EPILOGUE
}

extern "C" __global__ void lds32_shfl(int n, long long *out) {
  PROLOGUE
  for (int i = 0; i < n; i++) { LDS4 SHFL32 }
  EPILOGUE
}
