// one_round: kernels whose every CTA does the same fixed work, launched on 1 to 264 CTAs (all resident at
// once), to see what a launch adds as it spreads over the chip: `spin` does no memory work (each CTA
// waits `cycles` SM cycles, then one store), `chase` is latency-bound on the L2 (each warp follows a
// chain of `steps` dependent, coalesced .cg loads through an L2-resident buffer: one 128-byte line a
// step). Thread 0 of each CTA stamps its start and end (%globaltimer), its SM and its clock64 cycles,
// as calibrate/cta_stamp.cu does for the twins. calibrate/one_round.py runs them.

__device__ __forceinline__ unsigned long long globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ unsigned long long one_round_stamp[3 * 2048];   // start ns, end ns, smid per CTA
__device__ unsigned long long one_round_cycles[2048];      // clock64 cycles from start to end per CTA

__device__ __forceinline__ long long stamp_start() {
  if (threadIdx.x == 0) {
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    one_round_stamp[3 * blockIdx.x] = globaltimer();
    one_round_stamp[3 * blockIdx.x + 2] = smid;
  }
  return clock64();
}

__device__ __forceinline__ void stamp_end(long long c0) {
  __syncthreads();
  if (threadIdx.x == 0) {
    one_round_stamp[3 * blockIdx.x + 1] = globaltimer();
    one_round_cycles[blockIdx.x] = clock64() - c0;
  }
}

extern "C" __global__ void spin(long long cycles, float *out) {
  const long long c0 = stamp_start();
  while (clock64() - c0 < cycles) {
  }
  if (threadIdx.x % 32 == 0) out[blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32] = (float)c0;   // a store a warp
  stamp_end(c0);
}

// next[line * 32 + lane] holds the chain's next line for every lane of the line, so a warp's 32 lanes read
// one line together and all get the next line's index.
extern "C" __global__ void chase(const unsigned *next, int steps, unsigned nlines, unsigned *out) {
  const long long c0 = stamp_start();
  const unsigned warp = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  unsigned line = (warp * 7919u) % nlines;
  for (int s = 0; s < steps; s++) {
    line = __ldcg(next + line * 32 + threadIdx.x % 32);
  }
  if (threadIdx.x % 32 == 0) out[warp] = line;
  stamp_end(c0);
}

// sgemv's loop (kernels_cuda/sgemv.cu: one warp a row, 8 rows a CTA), each CTA reading x at
// x + blockIdx.x * x_stride: x_stride = 0 is sgemv itself, every CTA of the chip reading the same x lines
// at once; x_stride = N gives each CTA its own copy, the same work without the shared lines.
extern "C" __global__ void sgemv_x(int M, int N, const float *A, const float *x, int x_stride, float *y) {
  const long long c0 = stamp_start();
  const int row = blockIdx.x * 8 + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const float *xb = x + (size_t)blockIdx.x * x_stride;
  float sum = 0.0f;
  for (int j = lane; j < N; j += 32) {
    sum += A[row * N + j] * xb[j];
  }
  for (int offset = 16; offset > 0; offset >>= 1) {
    sum += __shfl_down_sync(0xffffffff, sum, offset);
  }
  if (lane == 0) {
    y[row] = sum;
  }
  stamp_end(c0);
}

// A one-thread kernel that stamps %globaltimer at its start into marker[slot]: launched just before and
// just after a launch in the same stream, it shows how long the launch takes to start its first CTA after
// the kernel before it, and to let the next kernel start after its last CTA ends.
__device__ unsigned long long one_round_marker[2];
extern "C" __global__ void marker(int slot) {
  one_round_marker[slot] = globaltimer();
}
