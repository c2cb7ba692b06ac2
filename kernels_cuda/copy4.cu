// copy4: B = A, one float4 (16 bytes) per thread: a warp's LDG.128 / STG.128 moves 512 contiguous
// bytes, 16 sectors per request. A and B are M*N floats (row-major M x N, read as one flat array).
// Launch: block (BLOCK, 1, 1), grid (ceil(M*N/4 / BLOCK), 1, 1); threads past the end do nothing.
// Constraints: M*N a multiple of 4 (whole float4s; cudaMalloc's alignment covers the 16-B loads).
// Build another instance: nvcc -arch=sm_90 -O3 -cubin -DP_BLOCK=128 kernels_cuda/copy4.cu

#ifndef P_BLOCK
#define P_BLOCK 256
#endif

template <int BLOCK>
__device__ __forceinline__ void copy4_body(int M, int N, const float *A, float *B) {
  static_assert(BLOCK > 0 && BLOCK <= 1024, "BLOCK threads must be 1..1024");
  static_assert(BLOCK % 32 == 0, "BLOCK must be whole warps");

  const int n4 = (M * N) / 4;
  const int i = blockIdx.x * BLOCK + threadIdx.x;
  if (i < n4) {
    reinterpret_cast<float4 *>(B)[i] = reinterpret_cast<const float4 *>(A)[i];
  }
}

extern "C" __global__ void copy4(int M, int N, const float *A, float *B) {
  copy4_body<P_BLOCK>(M, N, A, B);
}
