// reduce_shfl: out[b] = the sum of the elements of A (M*N floats, flat) that block b's grid-stride
// loop visits. Each thread sums its elements, each warp sums its threads' sums with shuffles
// (__shfl_down_sync, offsets 16..1), lane 0 of each warp puts the warp's sum in shared memory, and
// after one barrier the first warp sums the BLOCK/32 warp sums with shuffles; thread 0 writes it.
// Launch: block (BLOCK, 1, 1), grid (G, 1, 1) with G = min(GRID, M*N / BLOCK); out has G floats.
// Constraints: M*N a multiple of G*BLOCK (every thread runs the same number of trips); BLOCK a
// power of two, whole warps, at most 32 warps.
// Build another instance: nvcc -arch=sm_90 -O3 -cubin -DP_BLOCK=512 kernels_cuda/reduce_shfl.cu
// (GRID only sizes the launch; the code reads gridDim.x. GRID = 1024, not 8 x 132 SMs = 1056:
// 1056 = 33 x 32 divides no power-of-two M*N.)

#ifndef P_BLOCK
#define P_BLOCK 256
#endif
#ifndef P_GRID
#define P_GRID 1024
#endif

template <int BLOCK>
__device__ __forceinline__ void reduce_shfl_body(int M, int N, const float *A, float *out) {
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
      out[blockIdx.x] = sum;
    }
  }
}

extern "C" __global__ void reduce_shfl(int M, int N, const float *A, float *out) {
  reduce_shfl_body<P_BLOCK>(M, N, A, out);
}
