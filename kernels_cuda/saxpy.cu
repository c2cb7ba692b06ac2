// saxpy: y = alpha*x + y over M*N floats, one element per thread (x, y: M*N floats, flat).
// Launch: block (BLOCK, 1, 1), grid (ceil(M*N / BLOCK), 1, 1); threads past the end do nothing.
// Constraints: none beyond M*N < 2^31 (int index).
// Build another instance: nvcc -arch=sm_90 -O3 -cubin -DP_BLOCK=128 kernels_cuda/saxpy.cu

#ifndef P_BLOCK
#define P_BLOCK 256
#endif

template <int BLOCK>
__device__ __forceinline__ void saxpy_body(int M, int N, float alpha, const float *x, float *y) {
  static_assert(BLOCK > 0 && BLOCK <= 1024, "BLOCK threads must be 1..1024");
  static_assert(BLOCK % 32 == 0, "BLOCK must be whole warps");

  const int n = M * N;
  const int i = blockIdx.x * BLOCK + threadIdx.x;
  if (i < n) {
    y[i] = alpha * x[i] + y[i];
  }
}

extern "C" __global__ void saxpy(int M, int N, float alpha, const float *x, float *y) {
  saxpy_body<P_BLOCK>(M, N, alpha, x, y);
}
