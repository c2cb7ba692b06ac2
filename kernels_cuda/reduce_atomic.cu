// reduce_atomic: out[0] += the sum of A's M*N floats (flat). As reduce_shfl: a grid-stride loop
// per thread, shuffles within each warp, one barrier, shuffles over the warp sums in the first
// warp; then thread 0 of every block adds its block's sum to out[0] with atomicAdd (one per block).
// Launch: block (BLOCK, 1, 1), grid (G, 1, 1) with G = min(GRID, M*N / BLOCK); out has 1 float.
// Constraints: M*N a multiple of G*BLOCK (every thread runs the same number of trips); BLOCK a
// power of two, whole warps, at most 32 warps.
// Build another instance: nvcc -arch=sm_90 -O3 -cubin -DP_BLOCK=512 kernels_cuda/reduce_atomic.cu
// (GRID only sizes the launch; the code reads gridDim.x. GRID = 1024, not 8 x 132 SMs = 1056:
// 1056 = 33 x 32 divides no power-of-two M*N.)

#ifndef P_BLOCK
#define P_BLOCK 256
#endif
#ifndef P_GRID
#define P_GRID 1024
#endif

template <int BLOCK>
__device__ __forceinline__ void reduce_atomic_body(int M, int N, const float *A, float *out) {
  constexpr int WARPS = BLOCK / 32;
  static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "BLOCK must be whole warps, at most 1024 threads");
  static_assert((WARPS & (WARPS - 1)) == 0, "the first warp halves the BLOCK/32 warp sums: a power of two");

  __shared__ float warpSums[WARPS];

  const int n = M * N;
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;

  float sum = 0.0f;
  for (int i = blockIdx.x * BLOCK + threadIdx.x; i < n; i += BLOCK * gridDim.x) {
    sum += A[i];
  }
  for (int offset = 16; offset > 0; offset >>= 1) {
    sum += __shfl_down_sync(0xffffffff, sum, offset);
  }
  if (lane == 0) {
    warpSums[warp] = sum;
  }
  __syncthreads();

  if (warp == 0) {
    sum = (lane < WARPS) ? warpSums[lane] : 0.0f;
    for (int offset = WARPS / 2; offset > 0; offset >>= 1) {
      sum += __shfl_down_sync(0xffffffff, sum, offset);
    }
    if (lane == 0) {
      atomicAdd(out, sum);
    }
  }
}

extern "C" __global__ void reduce_atomic(int M, int N, const float *A, float *out) {
  reduce_atomic_body<P_BLOCK>(M, N, A, out);
}
