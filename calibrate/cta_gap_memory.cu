// Does a CTA slot's empty time between CTAs (cta_turnaround.cu) cost a memory-bound kernel? The same bytes
// read by many small CTAs or by fewer larger ones: each thread reads `per_thread` float4s, a warp's loads
// coalesced, every CTA a contiguous stretch; one float per thread is written so nothing is dropped.
extern "C" __global__ void read_cta(const float4 *in, float *out, int per_thread) {
    const float4 *p = in + (size_t)blockIdx.x * blockDim.x * per_thread + threadIdx.x;
    float s = 0.0f;
    for (int i = 0; i < per_thread; ++i) {
        float4 v = p[(size_t)i * blockDim.x];
        s += v.x + v.y + v.z + v.w;
    }
    out[(size_t)blockIdx.x * blockDim.x + threadIdx.x] = s;
}

#include "spin.cuh"       // the kernel the timed launches queue behind
