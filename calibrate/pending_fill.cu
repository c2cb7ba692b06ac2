// Does an L2 hit on a line another SM's miss is still fetching wait for that fill, and for how much of it?
// One thread on each of two SMs (CTA 0, the leader, and the first CTA found on another SM, the follower;
// every other CTA exits). For each probe i both spin on %globaltimer until their own start time: the
// leader at T_i, the follower at T_i + delay_i; each then loads word 0 of line i of a buffer no one has
// touched since it was written long before (the line comes from DRAM for whoever asks first) and times
// its own load with clock64 around a dependent use (ld.global.cg: L2 only, so the follower cannot hit in
// its own L1). The leader's load misses; the follower's, delay_i later, finds the line in the L2, either
// still being filled or filled. Written per probe: both latencies (cycles) and both actual start times (ns).
// Usage: pending_fill PROBES OUT.bin (delays sweep 0..DELAY_MAX_NS; a second run with the roles the same
// is not needed: the leader is timed too).
// Build: nvcc -arch=sm_90 -O3 -o pending_fill calibrate/pending_fill.cu
#include <cstdio>
#include <cstdlib>
#include <vector>

#define LINE_WORDS 32                 // 128 B of 4-byte words
#define DELAY_MAX_NS 1000
#define PROBE_GAP_NS 20000            // between probes: the previous probe's traffic is long done

__device__ __forceinline__ unsigned long long globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ long long clock64_() {
  long long t;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
  return t;
}

__device__ unsigned gpusim_follower;      // the follower's block index (0: none found yet)

extern "C" __global__ void pending_fill(const unsigned *buf, int probes, unsigned long long t0,
                                        const int *delay_ns, long long *out, unsigned *sink) {
  if (threadIdx.x != 0) return;
  unsigned smid;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  __shared__ unsigned dummy;
  // the follower: the first block whose SM differs from block 0's (block 0 publishes its SM in out[0])
  volatile long long *vout = out;
  if (blockIdx.x == 0) {
    vout[0] = smid;
  } else {
    while (vout[0] < 0) {}
    if ((long long)smid == vout[0] || atomicCAS(&gpusim_follower, 0u, blockIdx.x) != 0u) return;
  }
  const bool lead = blockIdx.x == 0;
  unsigned acc = 0;
  for (int i = 0; i < probes; i++) {
    const unsigned long long start = t0 + (unsigned long long)i * PROBE_GAP_NS + (lead ? 0 : delay_ns[i]);
    unsigned long long now;
    do { now = globaltimer(); } while (now < start);
    const unsigned *p = buf + (size_t)i * LINE_WORDS;
    const long long c0 = clock64_();
    unsigned v;
    asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    acc += v;
    dummy = acc;                      // a dependent use: the clock read below waits for the data
    const long long c1 = clock64_();
    long long *o = out + 1 + (size_t)i * 4 + (lead ? 0 : 2);
    o[0] = c1 - c0;
    o[1] = (long long)now;
  }
  sink[blockIdx.x] = acc + dummy;
}

extern "C" __global__ void gpusim_now(unsigned long long *t) { *t = globaltimer(); }

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: %s PROBES OUT.bin\n", argv[0]); return 2; }
  const int probes = atoi(argv[1]);
  // the probed lines, written once, then 256 MB written after them: the L2 (60 MB) keeps none of them
  const size_t words = (size_t)probes * LINE_WORDS, flush_words = ((size_t)256 << 20) / 4;
  unsigned *buf, *flush, *sink;
  long long *out;
  int *delay;
  unsigned long long *tnow, now = 0;
  cudaMalloc(&buf, words * 4);
  cudaMalloc(&flush, flush_words * 4);
  cudaMalloc(&sink, 1024 * 4);
  cudaMalloc(&out, (1 + (size_t)probes * 4) * 8);
  cudaMalloc(&delay, probes * 4);
  cudaMalloc(&tnow, 8);
  std::vector<int> hd(probes);
  for (int i = 0; i < probes; i++) hd[i] = (int)((i * 7919L) % (DELAY_MAX_NS + 1));   // a shuffled sweep, ns
  cudaMemcpy(delay, hd.data(), probes * 4, cudaMemcpyHostToDevice);
  cudaMemset(buf, 1, words * 4);
  cudaMemset(flush, 2, flush_words * 4);
  std::vector<long long> h(1 + (size_t)probes * 4, -1);
  cudaMemcpy(out, h.data(), h.size() * 8, cudaMemcpyHostToDevice);
  gpusim_now<<<1, 1>>>(tnow);
  cudaMemcpy(&now, tnow, 8, cudaMemcpyDeviceToHost);
  pending_fill<<<132, 32>>>(buf, probes, now + 2000000ull, delay, out, sink);   // start 2 ms from now
  cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess) { fprintf(stderr, "%s\n", cudaGetErrorString(err)); return 1; }
  cudaMemcpy(h.data(), out, h.size() * 8, cudaMemcpyDeviceToHost);
  unsigned follower = 0;
  cudaMemcpyFromSymbol(&follower, gpusim_follower, 4);
  FILE *f = fopen(argv[2], "wb");
  fwrite(hd.data(), 4, probes, f);
  fwrite(h.data(), 8, h.size(), f);
  fclose(f);
  printf("probes %d leader_sm %lld follower_block %u\n", probes, h[0], follower);
  return 0;
}
