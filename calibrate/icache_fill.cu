// What a kernel's code costs to fetch the first time an SM runs it: N FFMAs as straight-line code
// (N x 16 B of instructions, each run once) against the same N FFMAs from a loop over a 64-FFMA body.
// One warp per SM (132 CTAs of 32 threads); eight independent chains so that the FFMAs issue back to
// back. calibrate/icache_fill.py times the launches.
template <int N>
__device__ __forceinline__ float straight(float a, float b) {
    float x0 = a, x1 = a + 1, x2 = a + 2, x3 = a + 3, x4 = a + 4, x5 = a + 5, x6 = a + 6, x7 = a + 7;
#pragma unroll
    for (int i = 0; i < N / 8; ++i) {
        x0 = x0 * b + a; x1 = x1 * b + a; x2 = x2 * b + a; x3 = x3 * b + a;
        x4 = x4 * b + a; x5 = x5 * b + a; x6 = x6 * b + a; x7 = x7 * b + a;
    }
    return x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
}

template <int N>
__device__ __forceinline__ float looped(float a, float b) {
    float x0 = a, x1 = a + 1, x2 = a + 2, x3 = a + 3, x4 = a + 4, x5 = a + 5, x6 = a + 6, x7 = a + 7;
#pragma unroll 1
    for (int k = 0; k < N / 64; ++k) {
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            x0 = x0 * b + a; x1 = x1 * b + a; x2 = x2 * b + a; x3 = x3 * b + a;
            x4 = x4 * b + a; x5 = x5 * b + a; x6 = x6 * b + a; x7 = x7 * b + a;
        }
    }
    return x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
}

#define KERNELS(N)                                                                         \
    extern "C" __global__ void straight_##N(float a, float b, float *out) {                \
        float s = straight<N>(a, b);                                                        \
        if (s == 1234.5f) out[threadIdx.x] = s;                                            \
    }                                                                                      \
    extern "C" __global__ void looped_##N(float a, float b, float *out) {                  \
        float s = looped<N>(a, b);                                                          \
        if (s == 1234.5f) out[threadIdx.x] = s;                                            \
    }
KERNELS(1024)
KERNELS(4096)
KERNELS(16384)

#include "spin.cuh"       // the kernel the timed launches queue behind
