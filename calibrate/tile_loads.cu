// regblock's tile staging alone, stamped: how long a warp waits for one K-tile's global loads when
// four CTAs of 4 warps share an SM (regblock's occupancy at its defaults BM = 128, BN = 64, BK = 8).
// Each CTA runs regblock's staging loop over K (the A slab transposed: 8 loads of 4 rows x 8
// consecutive floats per warp, 4 lines of 1 sector; the B slab: 4 loads of 64 consecutive floats, 2
// lines of 4 sectors), its STS, and the two __syncthreads, with `work` dependent FFMA steps on 8
// independent accumulators between the barriers (0: loads only; 64: regblock's 512 FFMA per thread
// per tile as 64 x 8). Lane 0 of each warp stamps clock64 before the first load and after the first
// barrier: stamps[((cta * 4 + warp) * tiles + tile) * 6 + {0, 1}] = {t_before_loads, t_after_barrier}
// (+ {2..5}: mode 3's phase reads).
// Usage: tile_loads SIZE WORK TILES   (A, B SIZE x SIZE; grid (SIZE/64, SIZE/128))
// Build: nvcc -arch=sm_90 -O3 -o tile_loads calibrate/tile_loads.cu
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>

#define BM 128
#define BN 64
#define BK 8
#define NT 128

template <int MODE>
__device__ __forceinline__ void tile_body(const float *A, const float *B, int K, int N, int work, int tiles,
                                          long long *stamps, float *sink) {
  __shared__ float As[BK][BM];
  __shared__ float Bs[BK][BN];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int rowA = tid / BK, colA = tid % BK, strideA = NT / BK;
  const int rowB = tid / BN, colB = tid % BN, strideB = NT / BN;
  const int bRow = blockIdx.y * BM, bCol = blockIdx.x * BN;
  const int cta = blockIdx.y * gridDim.x + blockIdx.x;
  float acc[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
  for (int t = 0; t < tiles; t++) {
    const int k0 = t * BK;
    long long t0 = clock64();
    for (int off = 0; off < BM; off += strideA) {
      if (MODE == 0) As[colA][rowA + off] = A[(bRow + rowA + off) * K + (k0 + colA)];
      if (MODE == 1) acc[(off / strideA) & 7] += A[(bRow + rowA + off) * K + (k0 + colA)];
      if (MODE == 2) As[colA][rowA + off] = (float)(t + off);
    }
    for (int off = 0; off < BK; off += strideB) {
      if (MODE == 0) Bs[rowB + off][colB] = B[(k0 + rowB + off) * N + (bCol + colB)];
      if (MODE == 1) acc[(off / strideB + 4) & 7] += B[(k0 + rowB + off) * N + (bCol + colB)];
      if (MODE == 2) Bs[rowB + off][colB] = (float)(t - off);
    }
    long long ph[4] = {0, 0, 0, 0};
    if (MODE == 3) {   // the staging of mode 0 with a clock read between its phases (asm keeps the order)
      float va[BM / (NT / BK)], vb[BK / (NT / BN)];
#pragma unroll
      for (int i = 0; i < BM / strideA; i++)
        asm volatile("ld.global.f32 %0, [%1];" : "=f"(va[i]) : "l"(A + (bRow + rowA + i * strideA) * K + (k0 + colA)));
#pragma unroll
      for (int i = 0; i < BK / strideB; i++)
        asm volatile("ld.global.f32 %0, [%1];" : "=f"(vb[i]) : "l"(B + (k0 + rowB + i * strideB) * N + (bCol + colB)));
      ph[0] = clock64();                                   // the last load issued
      const unsigned sa = (unsigned)__cvta_generic_to_shared(&As[colA][rowA]);
      const unsigned sb = (unsigned)__cvta_generic_to_shared(&Bs[rowB][colB]);
      asm volatile("st.shared.f32 [%0], %1;" :: "r"(sa), "f"(va[0]));
      ph[1] = clock64();                                   // the first STS issued (its value is back)
#pragma unroll
      for (int i = 1; i < BM / strideA; i++) asm volatile("st.shared.f32 [%0], %1;" :: "r"(sa + 4u * i * strideA), "f"(va[i]));
#pragma unroll
      for (int i = 0; i < BK / strideB; i++) asm volatile("st.shared.f32 [%0], %1;" :: "r"(sb + 4u * BN * i * strideB), "f"(vb[i]));
      ph[2] = clock64();                                   // the last STS issued
    }
    __syncthreads();
    long long t1 = clock64();
    float a = As[t & 7][tid], b = Bs[t & 7][tid & 63];
    if (MODE == 3) {
      asm volatile("" :: "f"(a));
      ph[3] = clock64();                                   // after the first shared load past the barrier
    }
    for (int i = 0; i < work; i++) {
#pragma unroll
      for (int j = 0; j < 8; j++) acc[j] = fmaf(acc[j], a, b);
    }
    __syncthreads();
    if (lane == 0) {
      long long *p = stamps + ((long long)(cta * (NT / 32) + warp) * tiles + t) * 6;
      p[0] = t0;
      p[1] = t1;
      p[2] = ph[0];
      p[3] = ph[1];
      p[4] = ph[2];
      p[5] = ph[3];
    }
  }
  float s = 0.f;
  for (int j = 0; j < 8; j++) s += acc[j];
  if (s == 12345.f) sink[tid] = s;
}

extern "C" __global__ void __launch_bounds__(NT) tile_loads0(const float *A, const float *B, int K, int N, int work, int tiles,
                                                  long long *st, float *sink) { tile_body<0>(A, B, K, N, work, tiles, st, sink); }
extern "C" __global__ void __launch_bounds__(NT) tile_loads1(const float *A, const float *B, int K, int N, int work, int tiles,
                                                  long long *st, float *sink) { tile_body<1>(A, B, K, N, work, tiles, st, sink); }
extern "C" __global__ void __launch_bounds__(NT) tile_loads3(const float *A, const float *B, int K, int N, int work, int tiles,
                                                  long long *st, float *sink) { tile_body<3>(A, B, K, N, work, tiles, st, sink); }
extern "C" __global__ void __launch_bounds__(NT) tile_loads2(const float *A, const float *B, int K, int N, int work, int tiles,
                                                  long long *st, float *sink) { tile_body<2>(A, B, K, N, work, tiles, st, sink); }

int main(int argc, char **argv) {
  if (argc < 4) { fprintf(stderr, "usage: tile_loads SIZE WORK TILES [MODE]\n"); return 2; }
  int n = atoi(argv[1]), work = atoi(argv[2]), tiles = atoi(argv[3]), mode = argc > 4 ? atoi(argv[4]) : 0;
  dim3 grid(n / BN, n / BM);
  int ctas = grid.x * grid.y, warps = ctas * NT / 32;
  float *A, *B, *sink; long long *st;
  cudaMalloc(&A, (size_t)n * n * 4); cudaMalloc(&B, (size_t)n * n * 4);
  cudaMemset(A, 0, (size_t)n * n * 4); cudaMemset(B, 0, (size_t)n * n * 4);
  cudaMalloc(&sink, NT * 4);
  cudaMalloc(&st, (size_t)warps * tiles * 6 * 8);
  std::vector<long long> h((size_t)warps * tiles * 6);
  for (int rep = 0; rep < 2; rep++) {          // the second launch is recorded (A, B in L2 if they fit)
    if (mode == 1) tile_loads1<<<grid, NT>>>(A, B, n, n, work, tiles, st, sink);
    else if (mode == 2) tile_loads2<<<grid, NT>>>(A, B, n, n, work, tiles, st, sink);
    else if (mode == 3) tile_loads3<<<grid, NT>>>(A, B, n, n, work, tiles, st, sink);
    else tile_loads0<<<grid, NT>>>(A, B, n, n, work, tiles, st, sink);
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) { fprintf(stderr, "%s\n", cudaGetErrorString(e)); return 1; }
  }
  cudaMemcpy(h.data(), st, h.size() * 8, cudaMemcpyDeviceToHost);
  // per (warp, tile): wait = t1 - t0; print the median and percentiles over tiles 2.. and warps,
  // and the median per tile position of the first 16 tiles
  std::vector<long long> all;
  for (int w = 0; w < warps; w++)
    for (int t = 2; t < tiles; t++) all.push_back(h[((size_t)w * tiles + t) * 6 + 1] - h[((size_t)w * tiles + t) * 6]);
  std::sort(all.begin(), all.end());
  auto q = [&](double f) { return all[(size_t)(f * (all.size() - 1))]; };
  std::vector<long long> per;
  for (int w = 0; w < warps; w++)
    per.push_back(h[((size_t)w * tiles + tiles - 1) * 6 + 1] - h[((size_t)w * tiles + 2) * 6 + 1]);
  std::sort(per.begin(), per.end());
  if (mode == 3) {    // medians of the phases: loads issued, first value back, STS issued, barrier, release
    const char *name[5] = {"ph_ldg_issue", "ph_first_value", "ph_sts", "ph_to_barrier", "ph_release"};
    const int from[5] = {0, 2, 3, 4, 1}, to[5] = {2, 3, 4, 1, 5};
    for (int k = 0; k < 5; k++) {
      std::vector<long long> v;
      for (int w = 0; w < warps; w++)
        for (int t = 2; t < tiles; t++) v.push_back(h[((size_t)w * tiles + t) * 6 + to[k]] - h[((size_t)w * tiles + t) * 6 + from[k]]);
      std::sort(v.begin(), v.end());
      printf("%s %lld ", name[k], v[v.size() / 2]);
    }
  }
  printf("mode %d size %d work %d tiles %d load_wait_p10 %lld p50 %lld p90 %lld cycles_per_tile_median %.1f\n", mode, n, work,
         tiles, q(0.1), q(0.5), q(0.9), (double)per[per.size() / 2] / (tiles - 3));
  return 0;
}
