// cta_stamp: a ladder twin with each CTA's start and end time (%globaltimer, ns) and SM (%smid)
// written to a device buffer, to record how the hardware schedules CTAs over the SMs (waves, and
// how far the phases of CTAs on different SMs drift apart). The twin's source is included
// unchanged with its entry point compiled as a device function and called from `stamped`.
// Build: nvcc -arch=sm_90 -O3 -cubin -Xptxas -v -DTWIN=regtile2d -DTWIN_SRC='"../regtile2d.cu"'
//        -o cta_stamp_regtile2d.cubin kernels_cuda/micro/cta_stamp.cu
#pragma push_macro("__global__")
#undef __global__
#define __global__ __device__
#include TWIN_SRC
#pragma pop_macro("__global__")

__device__ unsigned long long gpusim_cta_stamp[3 * 65536];   // start ns, end ns, smid per CTA

__device__ __forceinline__ unsigned long long globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

extern "C" __global__ void stamped(int M, int N, int K, float alpha, const float *A, const float *B,
                                   float beta, float *C) {
  const bool lead = threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0;
  const unsigned b = blockIdx.y * gridDim.x + blockIdx.x;
  if (lead) {
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    gpusim_cta_stamp[3 * b] = globaltimer();
    gpusim_cta_stamp[3 * b + 2] = smid;
  }
  TWIN(M, N, K, alpha, A, B, beta, C);
  __syncthreads();
  if (lead) gpusim_cta_stamp[3 * b + 1] = globaltimer();
}
