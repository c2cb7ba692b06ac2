// transpose_naive's loop (kernels_cuda/transpose_naive.cu at TILE 32, ROWS 8) with clock64 stamps around each
// of its instructions, to see where a warp waits when its loads follow strided stores: at a load's issue
// (the LG queue or pool full: lg_throttle), for its data once issued (long_scoreboard), or at a store's issue.
// Each step j: c0 before the load, c1 after it issued, c2 after an FADD that needs its data, c3 after the
// store issued. The load and store are asm volatile so that they stay in order with the stamps; the FADD
// (+0.0f, not an identity for -0.0f) cannot be folded away. Lane 0 of each warp writes its %smid and
// stamps to st[warp * 16 ...] after the loop.
__device__ __forceinline__ long long stamp() {
    long long t;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(t) :: "memory");
    return t;
}

extern "C" __global__ void stamped_transpose(int M, int N, const float *A, float *B, long long *st) {
    const int x = blockIdx.x * 32 + threadIdx.x;
    const int y = blockIdx.y * 32 + threadIdx.y;
    long long c[16];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        float v, w;
        c[4 * j] = stamp();
        asm volatile("ld.global.f32 %0, [%1];" : "=f"(v) : "l"(A + (long long)(y + 8 * j) * N + x) : "memory");
        c[4 * j + 1] = stamp();
        asm volatile("add.rn.f32 %0, %1, 0f00000000;" : "=f"(w) : "f"(v));
        c[4 * j + 2] = stamp();
        asm volatile("st.global.f32 [%0], %1;" :: "l"(B + (long long)x * M + y + 8 * j), "f"(w) : "memory");
        c[4 * j + 3] = stamp();
    }
    if (threadIdx.x == 0) {
        unsigned smid;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
        long long *o = st + 18 * ((blockIdx.y * gridDim.x + blockIdx.x) * 8 + threadIdx.y);
        o[0] = smid;
        o[1] = blockIdx.y * gridDim.x + blockIdx.x;
#pragma unroll
        for (int k = 0; k < 16; ++k) o[2 + k] = c[k];
    }
}
