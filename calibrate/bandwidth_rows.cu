// Read bandwidth of many row streams at once (sgemv's pattern) against one grid-stride stream, the same
// bytes, the same launch shape and the same loads (4-byte plain LDG, lane-strided, 4 in flight a warp).
// rows_f1: warp w of the grid reads row w: `row` floats at `pitch` floats apart, lane l the floats
// l, l + 32, ...: one 128-B line a request, the warp walking its own row (sgemv without x). grid_f1: the
// grid's threads read the whole buffer grid-stride: at any moment the grid reads one window of it.
// rows_f4 / grid_f4: the same with float4 loads (one 512-B request a warp).
// n rows of `row` floats; rows_* need gridDim.x * blockDim.x / 32 == n; row a multiple of 128.
extern "C" __global__ void rows_f1(const float *p, int row, long long pitch, float *out) {
  const long long w = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const float *q = p + w * pitch;
  float acc = 0.f;
  for (int j = threadIdx.x % 32; j < row; j += 128) {
    float v0 = q[j], v1 = q[j + 32], v2 = q[j + 64], v3 = q[j + 96];
    acc += (v0 + v1) + (v2 + v3);
  }
  if (acc == 1.2345e-30f) out[0] = acc;
}

extern "C" __global__ void grid_f1(const float *p, long long n, float *out) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  float acc = 0.f;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += 4 * stride) {
    float v0 = p[i], v1 = p[i + stride], v2 = p[i + 2 * stride], v3 = p[i + 3 * stride];
    acc += (v0 + v1) + (v2 + v3);
  }
  if (acc == 1.2345e-30f) out[0] = acc;
}

extern "C" __global__ void rows_f4(const float4 *p, int row4, long long pitch4, float *out) {
  const long long w = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const float4 *q = p + w * pitch4;
  float acc = 0.f;
  for (int j = threadIdx.x % 32; j < row4; j += 128) {
    float4 v0 = q[j], v1 = q[j + 32], v2 = q[j + 64], v3 = q[j + 96];
    acc += (v0.x + v1.x) + (v2.x + v3.x) + (v0.y + v1.y) + (v2.y + v3.y) +
           (v0.z + v1.z) + (v2.z + v3.z) + (v0.w + v1.w) + (v2.w + v3.w);
  }
  if (acc == 1.2345e-30f) out[0] = acc;
}

extern "C" __global__ void grid_f4(const float4 *p, long long n4, float *out) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  float acc = 0.f;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += 4 * stride) {
    float4 v0 = p[i], v1 = p[i + stride], v2 = p[i + 2 * stride], v3 = p[i + 3 * stride];
    acc += (v0.x + v1.x) + (v2.x + v3.x) + (v0.y + v1.y) + (v2.y + v3.y) +
           (v0.z + v1.z) + (v2.z + v3.z) + (v0.w + v1.w) + (v2.w + v3.w);
  }
  if (acc == 1.2345e-30f) out[0] = acc;
}

#include "spin.cuh"       // the kernel the timed launches queue behind
