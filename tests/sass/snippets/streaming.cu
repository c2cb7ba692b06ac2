// Snippets for tests/sass/test_semantics_ext.py: streaming copy, SAXPY, transposes, a 5-point
// stencil and a two-level (shared tree + warp shuffle) reduction, as ptxas compiles them for sm_90.
// Build: nvcc -arch=sm_90 -O3 -cubin -o streaming.cubin streaming.cu && cuobjdump -sass streaming.cubin

extern "C" __global__ void copy_f4(const float4 *x, float4 *y, int n4) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4) y[i] = x[i];
}

extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    y[i] = a * x[i] + y[i];
}

#define TILE 32
extern "C" __global__ void transpose_smem(const float *in, float *out, int rows, int cols) {
  __shared__ float t[TILE][TILE + 1];
  int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += blockDim.y)
    if (x < cols && y + j < rows) t[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;
  y = blockIdx.x * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += blockDim.y)
    if (x < rows && y + j < cols) out[(y + j) * rows + x] = t[threadIdx.x][threadIdx.y + j];
}

extern "C" __global__ void stencil5(const float *in, float *out, int nx, int ny) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || y < 1 || x >= nx - 1 || y >= ny - 1) return;
  int i = y * nx + x;
  out[i] = 0.2f * (in[i] + in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx]);
}

extern "C" __global__ void reduce_two_level(const float *x, float *out, int n) {
  __shared__ float warp_sums[32];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = 0.0f;
  for (; i < n; i += blockDim.x * gridDim.x) v += x[i];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  if (lane == 0) warp_sums[w] = v;
  __syncthreads();
  if (w == 0) {
    v = lane < (blockDim.x >> 5) ? warp_sums[lane] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if (lane == 0) atomicAdd(out, v);
  }
}
