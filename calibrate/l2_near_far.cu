// Does an L2 hit cost every SM the same? One SM (the "warmer") reads a footprint of 128-B lines into
// the L2 (ld.global.cg, a random chain); then, one SM at a time, a CTA on every SM chases the same chain
// (another start each) and times its loads with clock64. The L2 is split in two partitions: if a line is held
// where its first reader's SM sits, the SMs on the other side should pay the fabric. The L2 is flushed
// (a 256 MB read) before each warm-up. Prints, per warmer SM and footprint, every SM's cycles per load.
// Usage: l2_near_far            (warmers: SMs 0 and 66; footprints 2 and 8 MB; plus "cold": no warm-up,
//                                 the SMs' chases, one after another, bring the lines in themselves)
// Build: nvcc -arch=sm_90 -O3 -o l2_near_far calibrate/l2_near_far.cu
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <random>

#define LINE_WORDS 32          // 128 B of unsigned
#define STEPS 2048

__device__ __forceinline__ unsigned smid() {
  unsigned r;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
  return r;
}

__device__ __forceinline__ unsigned ld_cg(const unsigned *p) {
  unsigned v;
  asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p));
  return v;
}

// every line once, in chain order, from the CTAs that run on SM `who` (often more than one: each reads
// the whole chain; the others exit)
__global__ void warm(const unsigned *chain, unsigned nlines, unsigned who, unsigned *sink) {
  if (smid() != who || threadIdx.x != 0) return;
  unsigned i = 0, acc = 0;
  for (unsigned k = 0; k < nlines; k++) { i = ld_cg(chain + (size_t)i * LINE_WORDS); acc += i; }
  sink[0] = acc;
}

// the CTA on SM `who` alone chases (the first there to claim it; the others exit)
__global__ void probe(const unsigned *chain, unsigned nlines, unsigned who, unsigned *claimed, long long *out) {
  if (threadIdx.x != 0) return;
  unsigned sm = smid();
  if (sm != who || atomicCAS(claimed + sm, 0u, 1u) != 0u) return;
  unsigned i = (sm * 7919u) % nlines;
  i = ld_cg(chain + (size_t)i * LINE_WORDS);     // (a first load off the clock)
  long long t0 = clock64();
  for (int k = 0; k < STEPS; k++) i = ld_cg(chain + (size_t)i * LINE_WORDS);
  long long t1 = clock64();
  out[2 * sm] = t1 - t0;
  out[2 * sm + 1] = i;                            // keeps the chain live
}

__global__ void flush(const float4 *p, size_t n, float *sink) {
  float acc = 0.f;
  for (size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x; k < n; k += (size_t)gridDim.x * blockDim.x) {
    float4 v = p[k];
    acc += v.x + v.y + v.z + v.w;
  }
  if (acc == 1234.5f) sink[0] = acc;
}

int main() {
  int nsm = 0;
  cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0);
  const size_t flush_bytes = 256u << 20;
  float4 *fl; float *fsink; unsigned *sink, *claimed; long long *out;
  cudaMalloc(&fl, flush_bytes); cudaMemset(fl, 0, flush_bytes);
  cudaMalloc(&fsink, 4); cudaMalloc(&sink, 4);
  cudaMalloc(&claimed, 1024 * sizeof(unsigned));
  cudaMalloc(&out, 2 * 1024 * sizeof(long long));
  std::vector<long long> h(2 * 1024);
  const unsigned warmers[] = {0, 66, 0xFFFFFFFFu};     // the last: no warm-up (cold)
  for (unsigned mb : {2u, 8u}) {
    unsigned nlines = (mb << 20) / 128;
    std::vector<unsigned> order(nlines), chain((size_t)nlines * LINE_WORDS, 0);
    for (unsigned k = 0; k < nlines; k++) order[k] = k;
    std::shuffle(order.begin(), order.end(), std::mt19937(12345));
    for (unsigned k = 0; k < nlines; k++) chain[(size_t)order[k] * LINE_WORDS] = order[(k + 1) % nlines];
    unsigned *d;
    cudaMalloc(&d, chain.size() * sizeof(unsigned));
    cudaMemcpy(d, chain.data(), chain.size() * sizeof(unsigned), cudaMemcpyHostToDevice);
    for (unsigned who : warmers) {
      flush<<<4 * nsm, 512>>>(fl, flush_bytes / 16, fsink);
      if (who != 0xFFFFFFFFu) warm<<<4 * nsm, 32>>>(d, nlines, who, sink);
      cudaMemset(claimed, 0, 1024 * sizeof(unsigned));
      cudaMemset(out, 0, 2 * 1024 * sizeof(long long));
      for (int s = 0; s < nsm; s++) probe<<<4 * nsm, 32>>>(d, nlines, (unsigned)s, claimed, out);   // one SM at a time
      cudaError_t e = cudaDeviceSynchronize();
      if (e != cudaSuccess) { fprintf(stderr, "%s\n", cudaGetErrorString(e)); return 1; }
      cudaMemcpy(h.data(), out, h.size() * sizeof(long long), cudaMemcpyDeviceToHost);
      printf("footprint_mb %u warmer %d cycles_per_load", mb, who == 0xFFFFFFFFu ? -1 : (int)who);
      for (int s = 0; s < nsm; s++) printf(" %.1f", h[2 * s] / (double)STEPS);
      printf("\n");
    }
    cudaFree(d);
  }
  return 0;
}
