// CUDA twin of divergent.py: the first barrier of each tile is reached by the first warp only.
#define BS 16
extern "C" __global__ void divergent(int M, int N, int K, float alpha, const float *A, const float *B,
                                     float beta, float *C) {
  __shared__ float As[BS * BS];
  __shared__ float Bs[BS * BS];
  const int ty = threadIdx.x / BS, tx = threadIdx.x % BS;
  const int row = blockIdx.x * BS + ty, col = blockIdx.y * BS + tx;
  float acc = 0.0f;
  for (int t = 0; t < K; t += BS) {
    As[ty * BS + tx] = A[row * K + t + tx];
    Bs[ty * BS + tx] = B[(t + ty) * N + col];
    if (threadIdx.x < 32) __syncthreads();
    for (int i = 0; i < BS; ++i) acc += As[ty * BS + i] * Bs[i * BS + tx];
    __syncthreads();
  }
  C[row * N + col] = alpha * acc + beta * C[row * N + col];
}
