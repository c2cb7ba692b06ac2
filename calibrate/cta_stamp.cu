// cta_stamp: a ladder twin with each CTA's start and end time (%globaltimer, ns) and SM (%smid)
// written to a device buffer, to record how the hardware schedules CTAs over the SMs (waves, and
// how far the phases of CTAs on different SMs drift apart). The twin's source is included
// unchanged with its entry point compiled as a device function and called from `stamped`.
// Build: nvcc -arch=sm_90 -O3 -cubin -Xptxas -v -DTWIN=regtile2d -DTWIN_SRC='"../kernels_cuda/regtile2d.cu"'
//        -o cta_stamp_regtile2d.cubin calibrate/cta_stamp.cu
// With -DSLAB_STAMPS the twin's __syncthreads() also counts, in thread 0 of the CTA, the barriers it
// passes, and at every second one (the end of a K slab: the twins' loops hold two barriers a slab, the
// next slab's global loads follow) stamps %globaltimer into gpusim_slab_stamp[CTA][slab]
// (gpusim.hw.slabsched: how far apart the CTAs that share a tile reach each slab).
__device__ __forceinline__ unsigned long long globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

#ifdef SLAB_STAMPS
#define SLAB_MAX 512
#define SLAB_CTAS 16384
__device__ unsigned long long gpusim_slab_stamp[SLAB_CTAS * SLAB_MAX];
// (16 bytes, 16-aligned: the twin's shared arrays that follow it stay 16-aligned for their vector accesses)
__shared__ __align__(16) unsigned gpusim_barriers[4];
__device__ __forceinline__ void gpusim_sync_hook() {
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
    const unsigned n = gpusim_barriers[0]++;
    const unsigned b = blockIdx.y * gridDim.x + blockIdx.x;
    if ((n & 1) && n / 2 < SLAB_MAX && b < SLAB_CTAS) gpusim_slab_stamp[b * SLAB_MAX + n / 2] = globaltimer();
  }
}
#define __syncthreads() gpusim_sync_hook()
#endif
#pragma push_macro("__global__")
#undef __global__
#define __global__ __device__
#include TWIN_SRC
#pragma pop_macro("__global__")
#ifdef SLAB_STAMPS
#undef __syncthreads
#endif

__device__ unsigned long long gpusim_cta_stamp[3 * 65536];   // start ns, end ns, smid per CTA
__device__ unsigned long long gpusim_cta_cycles[65536];      // SM cycles (clock64) from start to end per CTA

// The twin's parameters and the call's arguments: the SGEMM's unless the build defines the twin's own
// (gpusim.hw.ctasched writes them from the kernel spec's argument list into a header it pre-includes).
#ifndef TWIN_PARAMS
#define TWIN_PARAMS int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C
#define TWIN_ARGS M, N, K, alpha, A, B, beta, C
#endif

extern "C" __global__ void stamped(TWIN_PARAMS) {
  const bool lead = threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0;
  const unsigned b = blockIdx.y * gridDim.x + blockIdx.x;
  if (lead) {
#ifdef SLAB_STAMPS
    for (int i = 0; i < 4; i++) gpusim_barriers[i] = 0;   // (all four: ptxas keeps the 16 bytes)
#endif
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    gpusim_cta_stamp[3 * b] = globaltimer();
    gpusim_cta_stamp[3 * b + 2] = smid;
  }
  const long long c0 = clock64();
  TWIN(TWIN_ARGS);
  __syncthreads();
  if (lead) {
    gpusim_cta_stamp[3 * b + 1] = globaltimer();
    gpusim_cta_cycles[b] = clock64() - c0;
  }
}
