// DRAM copy bandwidth with 16-byte accesses: each thread copies `per_thread` float4s, a warp's accesses
// coalesced, every CTA a contiguous stretch (calibrate/bandwidth_copy.py times it over 1 GiB).
extern "C" __global__ void copy_cta(const float4 *in, float4 *out, int per_thread) {
    size_t base = (size_t)blockIdx.x * blockDim.x * per_thread + threadIdx.x;
    for (int i = 0; i < per_thread; ++i) {
        out[base + (size_t)i * blockDim.x] = in[base + (size_t)i * blockDim.x];
    }
}

#include "spin.cuh"       // the kernel the timed launches queue behind
