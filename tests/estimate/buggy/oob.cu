// CUDA twin of oob.py: the A index runs one past each row (the last row reads past A's end).
#define BS 16
extern "C" __global__ void oob(int M, int N, int K, float alpha, const float *A, const float *B,
                               float beta, float *C) {
  const int ty = threadIdx.x / BS, tx = threadIdx.x % BS;
  const int row = blockIdx.x * BS + ty, col = blockIdx.y * BS + tx;
  float acc = 0.0f;
  for (int i = 0; i < K; ++i) acc += A[row * K + i + 1] * B[i * N + col];
  C[row * N + col] = alpha * acc + beta * C[row * N + col];
}
