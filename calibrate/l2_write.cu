// What a global store costs at the L2 when its data stays there (the working set fits in the L2):
// full-sector stores (float4, a warp writes 512 contiguous bytes), partial-sector stores (one float per
// 32-B sector or per 128-B line, as a naive transpose's strided stores write), and a copy within the
// L2 (reads and writes together). Grid-stride loops over a buffer of a few MB, launched again and again:
// calibrate/l2_write.py times them as the records time their kernels (queued CUDA events).

// every thread writes float4s, consecutive threads consecutive 16 B: whole sectors
extern "C" __global__ void store_full(float4 *out, int n4) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += gridDim.x * blockDim.x) {
        out[i] = make_float4(1.0f, 2.0f, 3.0f, 4.0f);
    }
}

// thread i writes one float at i * stride: 4 B of a sector (stride 8: one per sector; 32: one per line)
extern "C" __global__ void store_strided(float *out, int n, int stride) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        out[(long long)i * stride] = 1.0f;
    }
}

// a float4 copy within the L2
extern "C" __global__ void copy_full(const float4 *in, float4 *out, int n4) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += gridDim.x * blockDim.x) {
        out[i] = in[i];
    }
}

// float4 loads whose sum is kept only where it can never be (a read-only L2 stream, for the same
// grid as the others)
extern "C" __global__ void load_full(const float4 *in, float *sink, int n4) {
    float acc = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += gridDim.x * blockDim.x) {
        float4 v = in[i];
        acc += v.x + v.y + v.z + v.w;
    }
    if (acc == 1234.5f) sink[0] = acc;
}
