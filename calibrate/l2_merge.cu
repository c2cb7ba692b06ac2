// Which tile the CTAs of a grid row share, A or B, with the rest of the kernel the same: 32x32 output
// tiles, BK = 32, one output per thread (1024 threads), C = A*B, row-major, M = N = K multiples of 32.
// share_a: CTA (x, y) computes C rows y*32.. and columns x*32.., so the CTAs of a grid row (launched
// one after another) share A's row block and read adjacent pieces of the same B rows (tiled32's layout).
// share_b: rows x*32.., columns y*32..: they share B's column block and read different rows of A
// (smemtile's layout). calibrate/l2_merge.py launches both on the ladder's problem.
// Build: nvcc -arch=sm_90 -O3 -cubin -o l2_merge.cubin calibrate/l2_merge.cu

template <bool SHARE_A>
__device__ __forceinline__ void tile32(int M, int N, int K, const float *A, const float *B, float *C) {
  __shared__ float As[32][32];
  __shared__ float Bs[32][32];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row0 = 32 * (SHARE_A ? blockIdx.y : blockIdx.x);
  const int col0 = 32 * (SHARE_A ? blockIdx.x : blockIdx.y);
  float acc = 0.f;
  for (int k0 = 0; k0 < K; k0 += 32) {
    As[ty][tx] = A[(row0 + ty) * K + k0 + tx];
    Bs[ty][tx] = B[(k0 + ty) * N + col0 + tx];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < 32; k++) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  C[(row0 + ty) * N + col0 + tx] = acc;
  (void)M;
}

extern "C" __global__ void share_a(int M, int N, int K, float alpha, const float *A, const float *B,
                                   float beta, float *C) {
  (void)alpha; (void)beta;
  tile32<true>(M, N, K, A, B, C);
}

extern "C" __global__ void share_b(int M, int N, int K, float alpha, const float *A, const float *B,
                                   float beta, float *C) {
  (void)alpha; (void)beta;
  tile32<false>(M, N, K, A, B, C);
}
