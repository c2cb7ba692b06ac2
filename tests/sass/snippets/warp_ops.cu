// Snippets for tests/sass/test_semantics_ext.py: what ptxas (sm_90, -O3) emits for the
// reductions, shuffles, atomics, softmax, stencil and SGEMV kernels gpusim executes.
// Build: nvcc -arch=sm_90 -O3 -cubin -o warp_ops.cubin warp_ops.cu && cuobjdump -sass warp_ops.cubin

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}

__device__ __forceinline__ float warp_max_xor(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// a warp-shuffle reduction ending with a float atomicAdd whose result is unused (RED)
extern "C" __global__ void reduce_shfl_atomic(const float *x, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? x[i] : 0.0f;
  v = warp_sum(v);
  if ((threadIdx.x & 31) == 0) atomicAdd(out, v);
}

// shared-memory tree reduction, then one atomic per block with its result used (ATOMG)
extern "C" __global__ void reduce_smem_atom(const float *x, float *out, float *old, int n) {
  __shared__ float s[256];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? x[i] : 0.0f;
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k >>= 1) {
    if (t < k) s[t] += s[t + k];
    __syncthreads();
  }
  if (t == 0) old[blockIdx.x] = atomicAdd(out, s[0]);
}

// shuffles of every kind with their values stored
extern "C" __global__ void shuffles(const float *x, float *y, int lane_src) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = x[i];
  y[4 * i + 0] = __shfl_down_sync(0xffffffffu, v, 3);
  y[4 * i + 1] = __shfl_up_sync(0xffffffffu, v, 5);
  y[4 * i + 2] = __shfl_xor_sync(0xffffffffu, v, 9);
  y[4 * i + 3] = __shfl_sync(0xffffffffu, v, lane_src);
}

// row softmax: one warp per row, __expf, shuffle max and sum
extern "C" __global__ void softmax_row(const float *x, float *y, int cols) {
  int row = blockIdx.x;
  int lane = threadIdx.x;
  const float *r = x + (size_t)row * cols;
  float m = -INFINITY;
  for (int c = lane; c < cols; c += 32) m = fmaxf(m, r[c]);
  m = warp_max_xor(m);
  float s = 0.0f;
  for (int c = lane; c < cols; c += 32) s += __expf(r[c] - m);
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  float inv = 1.0f / s;
  for (int c = lane; c < cols; c += 32) y[(size_t)row * cols + c] = __expf(r[c] - m) * inv;
}

// integer atomics: shared and global, result used and unused
extern "C" __global__ void int_atomics(const int *x, int *hist, int *ret) {
  __shared__ int h[32];
  int t = threadIdx.x;
  if (t < 32) h[t] = 0;
  __syncthreads();
  atomicAdd(&h[x[t] & 31], 1);
  __syncthreads();
  if (t < 32) atomicAdd(&hist[t], h[t]);
  ret[t] = atomicAdd(&hist[32 + (t & 3)], t);
}

// shared float atomicAdd (native or CAS loop?)
extern "C" __global__ void smem_float_atomic(const float *x, float *y) {
  __shared__ float s;
  if (threadIdx.x == 0) s = 0.0f;
  __syncthreads();
  atomicAdd(&s, x[threadIdx.x]);
  __syncthreads();
  if (threadIdx.x == 0) y[blockIdx.x] = s;
}

// sgemv: one warp per row
extern "C" __global__ void sgemv_warp(const float *A, const float *x, float *y, int rows, int cols) {
  int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  int lane = threadIdx.x & 31;
  if (row >= rows) return;
  float s = 0.0f;
  for (int c = lane; c < cols; c += 32) s += A[(size_t)row * cols + c] * x[c];
  s = warp_sum(s);
  if (lane == 0) y[row] = s;
}

// conversions and special functions
extern "C" __global__ void mathops(const float *x, const int *k, float *y, int *z) {
  int i = threadIdx.x;
  float v = x[i];
  int n = k[i];
  y[8 * i + 0] = rsqrtf(v);
  y[8 * i + 1] = sqrtf(v);
  y[8 * i + 2] = __logf(v);
  y[8 * i + 3] = __sinf(v) + __cosf(v);
  y[8 * i + 4] = (float)n;
  y[8 * i + 5] = 1.0f / v;
  y[8 * i + 6] = __fdividef(v, 3.0f);
  y[8 * i + 7] = x[i + 1] / v;
  z[4 * i + 0] = (int)v;
  z[4 * i + 1] = abs(n);
  z[4 * i + 2] = __popc(n);
  z[4 * i + 3] = __any_sync(0xffffffffu, v > 1.0f) + __all_sync(0xffffffffu, v > 0.0f);
}
