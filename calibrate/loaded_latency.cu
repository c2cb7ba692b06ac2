// Loaded latency: how long one dependent load takes while the rest of the chip streams.
// One CTA per SM (the host asks for enough dynamic shared memory that two cannot share an SM). Warp 0's
// lane 0 chases a chain of dependent 64-bit .cg loads (each word holds the address of the next); warps
// 1..S stream float4 .cg loads over the CTA's own slice of a second buffer, each thread U loads in flight
// (the adds that use them come before the next U loads in program order, so a warp never has more).
// The chase runs `warm` untimed steps while the streams start, then sets the CTA's phase to 1 for
// `steps` timed steps, then to 2, which stops the streams. out[cta] = {chase cycles, chase ns, bytes
// streamed while the phase was 1, the chase's last address (keeps the chain alive), the SM}; the host
// checks that the CTAs sat on distinct SMs.

__device__ __forceinline__ unsigned long long gtimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

template <int U>
__device__ void loaded_body(const unsigned long long *const *starts, int warm, int steps, const float4 *stream,
                            long long slice, unsigned long long *out, float *sink) {
  __shared__ volatile int phase;
  __shared__ unsigned long long streamed;
  if (threadIdx.x == 0) {
    phase = 0;
    streamed = 0;
  }
  __syncthreads();
  const int warp = threadIdx.x / 32;
  if (warp == 0) {
    if (threadIdx.x == 0) {
      unsigned long long p = (unsigned long long)starts[blockIdx.x];
      for (int i = 0; i < warm; i++) asm volatile("ld.global.cg.u64 %0, [%0];" : "+l"(p));
      __threadfence_block();
      phase = 1;
      long long g0 = gtimer();
      long long t0 = clock64();
      for (int i = 0; i < steps; i++) asm volatile("ld.global.cg.u64 %0, [%0];" : "+l"(p));
      long long t1 = clock64();
      long long g1 = gtimer();
      phase = 2;
      out[5 * blockIdx.x + 0] = t1 - t0;
      out[5 * blockIdx.x + 1] = g1 - g0;
      out[5 * blockIdx.x + 3] = p;
      unsigned int sm;
      asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
      out[5 * blockIdx.x + 4] = sm;
    }
  } else {
    const float4 *base = stream + blockIdx.x * slice;
    const long long stride = blockDim.x - 32;
    long long idx = threadIdx.x - 32;
    unsigned long long timed = 0;
    float acc = 0.0f;
    for (;;) {
      const int ph = phase;
      if (ph == 2) break;
      float4 v[U];
#pragma unroll
      for (int u = 0; u < U; u++) {
        long long j = idx + u * stride;
        if (j >= slice) j -= slice;
        asm volatile("ld.global.cg.v4.f32 {%0,%1,%2,%3}, [%4];"
                     : "=f"(v[u].x), "=f"(v[u].y), "=f"(v[u].z), "=f"(v[u].w) : "l"(base + j));
      }
#pragma unroll
      for (int u = 0; u < U; u++) acc += v[u].x + v[u].y + v[u].z + v[u].w;
      idx += U * stride;
      if (idx >= slice) idx -= slice;
      if (ph == 1) timed += U * sizeof(float4);
    }
    atomicAdd(&streamed, timed);
    if (acc == 12345.0f) sink[0] = acc;      // never true for the host's data; keeps the loads
  }
  __syncthreads();
  if (threadIdx.x == 0) out[5 * blockIdx.x + 2] = streamed;
}

#define LOADED(U)                                                                                           \
  extern "C" __global__ void loaded_u##U(const unsigned long long *const *starts, int warm, int steps,     \
                                         const float4 *stream, long long slice, unsigned long long *out,   \
                                         float *sink) {                                                    \
    loaded_body<U>(starts, warm, steps, stream, slice, out, sink);                                         \
  }

LOADED(1)
LOADED(2)
LOADED(4)
LOADED(8)
