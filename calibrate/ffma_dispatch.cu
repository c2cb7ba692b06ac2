// Which FFMAs of a lone warp lose a cycle at dispatch? One warp per SM (132 CTAs of 32 threads) runs TRIPS
// trips of 64 independent FFMAs acc[k] += a[m(k)] * b[n(k)] over 16 operand registers (a[0..7],
// b[0..7]), the pattern (m(k), n(k)) chosen by the kernel: ptxas gives each pattern its own register
// numbers and .reuse flags, and ncu's PC samples say at which FFMAs the warp sat in dispatch_stall. No
// loads land during the loop and no other warp shares the SMSP, so what stalls is the instruction stream
// itself (dot_pair's dot_ffma is pattern 0). The empty asm statements keep ptxas from hoisting the
// products out of the loop. clock64 before and after the loop gives the cycles a trip.
// Usage: ffma_dispatch PATTERN   (prints "pattern P cycles_per_trip X"; launches twice, the second kept)
// Build: nvcc -arch=sm_90 -O3 -o ffma_dispatch calibrate/ffma_dispatch.cu
#include <cstdio>
#include <cstdlib>
#define TRIPS 256
#define CTAS 132

// operand indices of FFMA k in pattern P (compile-time after unrolling)
__host__ __device__ constexpr int pat_m(int P, int k) {
  return P == 0 ? k / 8                                   // m-major outer product (dot_ffma)
       : P == 1 ? k % 8                                   // n-major
       : P == 2 ? (k % 32) / 4                            // regtile2d's order: two groups of four n per m
       : P == 3 ? ((k * 37 + 11) % 64) / 8                // a scrambled order of the 64 pairs
       : P == 4 ? ((k * 23 + 5) % 64) % 8                 // another
       : P == 5 ? k % 8                                   // a[m] * a[m + n]: both operands from one array
       : P == 6 ? k % 16 % 8                              // one b per 16 FFMAs
       : (63 - k) / 8;                                    // 7: m-major, accumulators in reverse
}
__host__ __device__ constexpr int pat_n(int P, int k) {
  return P == 0 ? k % 8
       : P == 1 ? k / 8
       : P == 2 ? (k / 32) * 4 + k % 4
       : P == 3 ? ((k * 37 + 11) % 64) % 8
       : P == 4 ? ((k * 23 + 5) % 64) / 8
       : P == 5 ? (k % 8 + k / 8 + 1) % 8
       : P == 6 ? k / 16
       : (63 - k) % 8;
}

template <int P>
__device__ __forceinline__ void trips(float *out, long long *cyc, const float *in) {
  float a[8], b[8], acc[64];
  for (int i = 0; i < 8; i++) { a[i] = in[threadIdx.x + 32 * i]; b[i] = in[256 + threadIdx.x + 32 * i]; }
#pragma unroll
  for (int k = 0; k < 64; k++) acc[k] = 0.0f;
  const long long t0 = clock64();
#pragma unroll 1
  for (int trip = 0; trip < TRIPS; trip++) {
#pragma unroll
    for (int i = 0; i < 8; ++i) asm volatile("" : "+f"(a[i]), "+f"(b[i]));
#pragma unroll
    for (int k = 0; k < 64; k++) {
      const float x = a[pat_m(P, k)];
      const float y = P == 5 ? a[pat_n(P, k)] : b[pat_n(P, k)];
      acc[k] += x * y;
    }
  }
  const long long t1 = clock64();
  float s = 0.0f;
  for (int k = 0; k < 64; k++) s += acc[k];
  out[blockIdx.x * 32 + threadIdx.x] = s;
  if (threadIdx.x == 0) cyc[blockIdx.x] = t1 - t0;
}

#define PATTERN(P) \
  __global__ void __launch_bounds__(32) ffma_p##P(float *out, long long *cyc, const float *in) { trips<P>(out, cyc, in); }
PATTERN(0) PATTERN(1) PATTERN(2) PATTERN(3) PATTERN(4) PATTERN(5) PATTERN(6) PATTERN(7)

int main(int argc, char **argv) {
  if (argc < 2) { fprintf(stderr, "usage: %s PATTERN (0-7)\n", argv[0]); return 2; }
  const int p = atoi(argv[1]);
  if (p < 0 || p > 7) { fprintf(stderr, "pattern must be 0-7, got %s\n", argv[1]); return 2; }
  float *out, *in; long long *cyc;
  cudaMalloc(&out, CTAS * 32 * 4);
  cudaMalloc(&in, 512 * 4);
  cudaMemset(in, 0, 512 * 4);
  cudaMalloc(&cyc, CTAS * 8);
  void (*k[8])(float *, long long *, const float *) = {ffma_p0, ffma_p1, ffma_p2, ffma_p3,
                                                       ffma_p4, ffma_p5, ffma_p6, ffma_p7};
  for (int rep = 0; rep < 2; rep++) k[p]<<<CTAS, 32>>>(out, cyc, in);               // the second is kept
  cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess) { fprintf(stderr, "%s\n", cudaGetErrorString(err)); return 1; }
  long long h[CTAS];
  cudaMemcpy(h, cyc, sizeof h, cudaMemcpyDeviceToHost);
  long long lo = h[0], hi = h[0];
  for (int i = 1; i < CTAS; i++) { lo = h[i] < lo ? h[i] : lo; hi = h[i] > hi ? h[i] : hi; }
  printf("pattern %d cycles_per_trip min %.2f max %.2f\n", p, (double)lo / TRIPS, (double)hi / TRIPS);
  return 0;
}
