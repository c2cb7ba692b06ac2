// A loop's back branch on the H200: what a trip costs beyond ptxas's stall counts, clock64 in the kernel.
// loopK: a loop not unrolled whose trip holds K independent integer updates (K = 4, 8, 16, 32), the counter's
// ISETP and the back branch. One warp per CTA: cycles per trip = (cycles at n = 2048 less n = 1024) / 1024;
// the record subtracts the stall counts of the trip's instructions, read off the SASS kept beside it, so what
// is left is the taken branch's own cost. 4-32 warps per CTA (1-8 per SMSP): whether that cost holds the
// warp alone (the others issue meanwhile) or its SMSP.
// out[cta * 2 + 0] = cycles of the slowest warp, out[cta * 2 + 1] = a value that keeps the work (never read).

template <int K>
__device__ __forceinline__ void loop_body(int n, long long *out) {
  unsigned x[K];
#pragma unroll
  for (int k = 0; k < K; k++) x[k] = threadIdx.x * (k + 3);
  __syncthreads();
  long long t0 = clock64();
#pragma unroll 1
  for (int i = 0; i < n; i++) {
#pragma unroll
    for (int k = 0; k < K; k++) x[k] = (x[k] ^ (unsigned)i) + (unsigned)(k + 1);
  }
  long long t1 = clock64();
  unsigned s = 0;
#pragma unroll
  for (int k = 0; k < K; k++) s += x[k];
  atomicMax((unsigned long long *)&out[2 * blockIdx.x], (unsigned long long)(t1 - t0));
  if (s == 0x12345678u) out[2 * blockIdx.x + 1] = s;
}

extern "C" __global__ void loop4(int n, long long *out) { loop_body<4>(n, out); }
extern "C" __global__ void loop8(int n, long long *out) { loop_body<8>(n, out); }
extern "C" __global__ void loop16(int n, long long *out) { loop_body<16>(n, out); }
extern "C" __global__ void loop32(int n, long long *out) { loop_body<32>(n, out); }
