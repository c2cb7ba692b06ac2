// reduce_smem: out[b] = the sum of A's elements 2*BLOCK*b .. 2*BLOCK*(b+1)-1 (A: M*N floats, flat),
// by a tree in shared memory: each thread adds two elements as it loads them, then the active half
// of the threads halves at every level (s = BLOCK/2 .. 1), with a barrier after each level.
// Launch: block (BLOCK, 1, 1), grid (M*N / (2*BLOCK), 1, 1); out has M*N / (2*BLOCK) floats.
// Constraints: M*N a multiple of 2*BLOCK (no bounds checks); BLOCK a power of two.
// Build another instance: nvcc -arch=sm_90 -O3 -cubin -DP_BLOCK=512 kernels_cuda/reduce_smem.cu

#ifndef P_BLOCK
#define P_BLOCK 256
#endif

template <int BLOCK>
__device__ __forceinline__ void reduce_smem_body(int M, int N, const float *A, float *out) {
  static_assert(BLOCK >= 32 && BLOCK <= 1024, "BLOCK threads must be 32..1024");
  static_assert((BLOCK & (BLOCK - 1)) == 0, "the tree halves BLOCK: a power of two");

  __shared__ float sdata[BLOCK];

  const int tid = threadIdx.x;
  const int i = blockIdx.x * (2 * BLOCK) + tid;
  sdata[tid] = A[i] + A[i + BLOCK];
  __syncthreads();

  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (tid < s) {
      sdata[tid] += sdata[tid + s];
    }
    __syncthreads();
  }
  if (tid == 0) {
    out[blockIdx.x] = sdata[0];
  }
}

extern "C" __global__ void reduce_smem(int M, int N, const float *A, float *out) {
  reduce_smem_body<P_BLOCK>(M, N, A, out);
}
