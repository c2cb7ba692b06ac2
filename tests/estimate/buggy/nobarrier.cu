// CUDA twin of nobarrier.py: 16x16 shared tiles with both __syncthreads() left out (a race).
#define BS 16
extern "C" __global__ void nobarrier(int M, int N, int K, float alpha, const float *A, const float *B,
                                     float beta, float *C) {
  __shared__ float As[BS * BS];
  __shared__ float Bs[BS * BS];
  const int ty = threadIdx.x / BS, tx = threadIdx.x % BS;
  const int row = blockIdx.x * BS + ty, col = blockIdx.y * BS + tx;
  float acc = 0.0f;
  for (int t = 0; t < K; t += BS) {
    As[ty * BS + tx] = A[row * K + t + tx];
    Bs[ty * BS + tx] = B[(t + ty) * N + col];
    for (int i = 0; i < BS; ++i) acc += As[ty * BS + i] * Bs[i * BS + tx];
  }
  C[row * N + col] = alpha * acc + beta * C[row * N + col];
}
