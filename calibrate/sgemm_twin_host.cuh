// Host side shared by the SGEMM twins that stamp their warps (smsp_phase, barrier_wait, coalesced_wait):
// N x N operands, two launches timed with CUDA events, the warps' places and stamps written to a file.
#pragma once
#include <cstdio>
#include <vector>

struct TwinBuffers {
  float *A, *B, *C;
  long long *stamps;   // n_stamps clock64 values
  int *where;          // 2 ints per warp (the kernel writes its SM and SMSP)
  size_t n_stamps, n_warps;
};

// A and B filled with the same pseudo-random values in [0, 1), C zero; room for the stamps and places.
static TwinBuffers twin_buffers(int n, size_t n_stamps, size_t n_warps) {
  const size_t elems = (size_t)n * n;
  std::vector<float> h(elems);
  for (size_t i = 0; i < elems; i++) h[i] = (float)((i * 2654435761u) % 1000) * 1e-3f;
  TwinBuffers b{nullptr, nullptr, nullptr, nullptr, nullptr, n_stamps, n_warps};
  cudaMalloc(&b.A, elems * 4); cudaMalloc(&b.B, elems * 4); cudaMalloc(&b.C, elems * 4);
  cudaMemcpy(b.A, h.data(), elems * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(b.B, h.data(), elems * 4, cudaMemcpyHostToDevice);
  cudaMemset(b.C, 0, elems * 4);
  cudaMalloc(&b.stamps, n_stamps * 8);
  cudaMalloc(&b.where, n_warps * 2 * 4);
  return b;
}

// Runs launch() twice between CUDA events, printing "launch R N n ms MS" for each (the second is the one
// the records keep); 1 after a CUDA error, else 0.
template <typename Launch>
static int time_twice(int n, Launch launch) {
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0); cudaEventCreate(&e1);
  for (int rep = 0; rep < 2; rep++) {
    cudaEventRecord(e0);
    launch();
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms; cudaEventElapsedTime(&ms, e0, e1);
    printf("launch %d N %d ms %.4f\n", rep, n, ms);
  }
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) { fprintf(stderr, "%s\n", cudaGetErrorString(err)); return 1; }
  return 0;
}

// The warps' places (int32 pairs), then the stamps (int64), to path.
static void write_stamps(const char *path, const TwinBuffers &b) {
  std::vector<int> hw(b.n_warps * 2);
  std::vector<long long> hs(b.n_stamps);
  cudaMemcpy(hw.data(), b.where, hw.size() * 4, cudaMemcpyDeviceToHost);
  cudaMemcpy(hs.data(), b.stamps, hs.size() * 8, cudaMemcpyDeviceToHost);
  FILE *f = fopen(path, "wb");
  fwrite(hw.data(), 4, hw.size(), f);
  fwrite(hs.data(), 8, hs.size(), f);
  fclose(f);
}
