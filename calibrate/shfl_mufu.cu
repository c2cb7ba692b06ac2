// SHFL and MUFU: latency of a dependent chain and throughput of independent streams, clock64 in the kernel.
// Latency: one warp per CTA, `n` dependent ops (each reads the last one's result), cycles / n:
//   shfl_chain  r = shfl.bfly(r, 1)            (the shuffle alone)
//   shfl_fadd   s += shfl.bfly(s, m)           (a butterfly reduction's step: SHFL then FADD)
//   ex2_only    x = ex2.approx.ftz(x)          (MUFU.EX2)
//   ex2_chain   x = ex2.approx.ftz(x) - 1      (MUFU.EX2 then FADD)
//   rcp_chain   x = rcp.approx.ftz(x) + 1      (MUFU.RCP then FADD)
// Throughput: `warps` warps per CTA (one CTA per SM), each 8 independent chains of the op, cycles of the
// slowest warp over the ops the SM issued: shfl_rate, ex2_rate.
// out[cta * 2 + 0] = cycles, out[cta * 2 + 1] = a value that keeps the chain (never read).

__device__ __forceinline__ unsigned shfl_bfly(unsigned v, int m) {
  unsigned r;
  asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(r) : "r"(v), "r"(m));
  return r;
}
__device__ __forceinline__ float ex2(float x) {
  float r;
  asm volatile("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ float rcp(float x) {
  float r;
  asm volatile("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}

extern "C" __global__ void shfl_chain(int n, long long *out) {
  unsigned r = threadIdx.x;
  long long t0 = clock64();
  for (int i = 0; i < n; i++) r = shfl_bfly(r, 1);
  long long t1 = clock64();
  if (threadIdx.x == 0) { out[2 * blockIdx.x] = t1 - t0; out[2 * blockIdx.x + 1] = r; }
}

extern "C" __global__ void shfl_fadd(int n, long long *out) {
  float s = threadIdx.x;
  long long t0 = clock64();
  for (int i = 0; i < n; i++) s += __uint_as_float(shfl_bfly(__float_as_uint(s), 1 << (i & 3)));
  long long t1 = clock64();
  if (threadIdx.x == 0) { out[2 * blockIdx.x] = t1 - t0; out[2 * blockIdx.x + 1] = (long long)s; }
}

extern "C" __global__ void ex2_chain(int n, long long *out) {
  float x = 0.001f * threadIdx.x;
  long long t0 = clock64();
  for (int i = 0; i < n; i++) x = ex2(x) - 1.0f;        // FADD between: the MUFU's own result feeds it
  long long t1 = clock64();
  if (threadIdx.x == 0) { out[2 * blockIdx.x] = t1 - t0; out[2 * blockIdx.x + 1] = (long long)x; }
}

extern "C" __global__ void ex2_only(int n, long long *out) {
  float x = 0.001f * threadIdx.x;
  long long t0 = clock64();
  for (int i = 0; i < n; i++) x = ex2(x);
  long long t1 = clock64();
  if (threadIdx.x == 0) { out[2 * blockIdx.x] = t1 - t0; out[2 * blockIdx.x + 1] = (long long)x; }
}

extern "C" __global__ void rcp_chain(int n, long long *out) {
  float x = 1.0f + threadIdx.x;
  long long t0 = clock64();
  for (int i = 0; i < n; i++) x = rcp(x) + 1.0f;        // rcp(rcp(x)) alone folds away (the SASS showed it)
  long long t1 = clock64();
  if (threadIdx.x == 0) { out[2 * blockIdx.x] = t1 - t0; out[2 * blockIdx.x + 1] = (long long)x; }
}

extern "C" __global__ void shfl_rate(int n, long long *out) {
  unsigned r[8];
  for (int k = 0; k < 8; k++) r[k] = threadIdx.x + k;
  __syncthreads();
  long long t0 = clock64();
  for (int i = 0; i < n; i++) {
#pragma unroll
    for (int k = 0; k < 8; k++) r[k] = shfl_bfly(r[k], 1);
  }
  long long t1 = clock64();
  unsigned acc = 0;
  for (int k = 0; k < 8; k++) acc += r[k];
  atomicMax((unsigned long long *)&out[2 * blockIdx.x], (unsigned long long)(t1 - t0));
  if (acc == 12345u) out[2 * blockIdx.x + 1] = acc;
}

extern "C" __global__ void ex2_rate(int n, long long *out) {
  float x[8];
  for (int k = 0; k < 8; k++) x[k] = 0.001f * (threadIdx.x + k);
  __syncthreads();
  long long t0 = clock64();
  for (int i = 0; i < n; i++) {
#pragma unroll
    for (int k = 0; k < 8; k++) x[k] = ex2(x[k]);
  }
  long long t1 = clock64();
  float acc = 0;
  for (int k = 0; k < 8; k++) acc += x[k];
  atomicMax((unsigned long long *)&out[2 * blockIdx.x], (unsigned long long)(t1 - t0));
  if (acc == 12345.0f) out[2 * blockIdx.x + 1] = 1;
}
