// Shared-memory instructions with every lane predicated off: what they cost the MIO and the shared pipe,
// against the same instructions with every lane on (conflict-free: lane i at word i).
// calibrate/masked_shared.py runs them and records the medians.
// rate_lds / rate_sts: one CTA per SM of W warps; each warp issues iters x 16 independent LDS (STS) under one
// predicate, on = (flag != 0) from the host, so ptxas cannot drop them; clock64 around the loop, out[2*cta] the
// slowest warp's cycles. chain_lds: one warp, iters x 16 dependent LDS (each address the last one's result:
// lane i's word holds its own address, so an active chain stays put and an inactive one keeps its register);
// cycles per step.

#define LDS16(P)                                                                                            \
  asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.s32 p, %16, 0;\n\t"                                           \
               "@p ld.shared.f32 %0, [%17];\n\t@p ld.shared.f32 %1, [%17+128];\n\t"                          \
               "@p ld.shared.f32 %2, [%17+256];\n\t@p ld.shared.f32 %3, [%17+384];\n\t"                      \
               "@p ld.shared.f32 %4, [%17+512];\n\t@p ld.shared.f32 %5, [%17+640];\n\t"                      \
               "@p ld.shared.f32 %6, [%17+768];\n\t@p ld.shared.f32 %7, [%17+896];\n\t"                      \
               "@p ld.shared.f32 %8, [%17+1024];\n\t@p ld.shared.f32 %9, [%17+1152];\n\t"                    \
               "@p ld.shared.f32 %10, [%17+1280];\n\t@p ld.shared.f32 %11, [%17+1408];\n\t"                  \
               "@p ld.shared.f32 %12, [%17+1536];\n\t@p ld.shared.f32 %13, [%17+1664];\n\t"                  \
               "@p ld.shared.f32 %14, [%17+1792];\n\t@p ld.shared.f32 %15, [%17+1920];\n\t}"                 \
               : "+f"(v[0]), "+f"(v[1]), "+f"(v[2]), "+f"(v[3]), "+f"(v[4]), "+f"(v[5]), "+f"(v[6]),         \
                 "+f"(v[7]), "+f"(v[8]), "+f"(v[9]), "+f"(v[10]), "+f"(v[11]), "+f"(v[12]), "+f"(v[13]),     \
                 "+f"(v[14]), "+f"(v[15])                                                                    \
               : "r"(P), "r"(base))

#define STS16(P)                                                                                            \
  asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.s32 p, %0, 0;\n\t"                                            \
               "@p st.shared.f32 [%1], %2;\n\t@p st.shared.f32 [%1+128], %2;\n\t"                            \
               "@p st.shared.f32 [%1+256], %2;\n\t@p st.shared.f32 [%1+384], %2;\n\t"                        \
               "@p st.shared.f32 [%1+512], %2;\n\t@p st.shared.f32 [%1+640], %2;\n\t"                        \
               "@p st.shared.f32 [%1+768], %2;\n\t@p st.shared.f32 [%1+896], %2;\n\t"                        \
               "@p st.shared.f32 [%1+1024], %2;\n\t@p st.shared.f32 [%1+1152], %2;\n\t"                      \
               "@p st.shared.f32 [%1+1280], %2;\n\t@p st.shared.f32 [%1+1408], %2;\n\t"                      \
               "@p st.shared.f32 [%1+1536], %2;\n\t@p st.shared.f32 [%1+1664], %2;\n\t"                      \
               "@p st.shared.f32 [%1+1792], %2;\n\t@p st.shared.f32 [%1+1920], %2;\n\t}"                     \
               ::"r"(P), "r"(base), "f"(x) : "memory")

__shared__ float buf[8 * 512];

__device__ __forceinline__ void report(long long cycles, long long *out, float sink_v, float *sink) {
  __shared__ long long worst;
  if (threadIdx.x == 0) worst = 0;
  __syncthreads();
  atomicMax((unsigned long long *)&worst, (unsigned long long)cycles);
  __syncthreads();
  if (threadIdx.x == 0) out[2 * blockIdx.x] = worst;
  if (sink_v == 12345.0f) sink[0] = sink_v;
}

extern "C" __global__ void rate_lds(int flag, int iters, long long *out, float *sink) {
  for (int i = threadIdx.x; i < 8 * 512; i += blockDim.x) buf[i] = 1.0f;
  __syncthreads();
  const unsigned base = (unsigned)__cvta_generic_to_shared(buf + (threadIdx.x / 32 % 8) * 512 + threadIdx.x % 32);
  float v[16];
  for (int k = 0; k < 16; k++) v[k] = 0.0f;
  long long t0 = clock64();
  for (int it = 0; it < iters; it++) {
    LDS16(flag);
  }
  long long t1 = clock64();
  float s = 0.0f;
  for (int k = 0; k < 16; k++) s += v[k];
  report(t1 - t0, out, s, sink);
}

extern "C" __global__ void rate_sts(int flag, int iters, long long *out, float *sink) {
  const unsigned base = (unsigned)__cvta_generic_to_shared(buf + (threadIdx.x / 32 % 8) * 512 + threadIdx.x % 32);
  const float x = (float)threadIdx.x;
  __syncthreads();
  long long t0 = clock64();
  for (int it = 0; it < iters; it++) {
    STS16(flag);
  }
  long long t1 = clock64();
  report(t1 - t0, out, buf[threadIdx.x], sink);
}

extern "C" __global__ void chain_lds(int flag, int iters, long long *out, float *sink) {
  __shared__ unsigned cell[32];
  const unsigned mine = (unsigned)__cvta_generic_to_shared(cell + threadIdx.x % 32);
  if (threadIdx.x < 32) cell[threadIdx.x] = mine;
  __syncthreads();
  unsigned a = mine;
  long long t0 = clock64();
  for (int it = 0; it < iters; it++) {
#pragma unroll
    for (int k = 0; k < 16; k++) {
      asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.s32 p, %1, 0;\n\t@p ld.shared.u32 %0, [%0];\n\t}"
                   : "+r"(a) : "r"(flag));
    }
  }
  long long t1 = clock64();
  report(t1 - t0, out, (float)a, sink);
}
