// Atomics to one address from every CTA, against atomics to an address each and plain stores: one thread
// of each CTA (256 threads) makes one; calibrate/atomic_contention.py times the launches.
// mode 0: a plain store to out[blockIdx.x]; 1: atomicAdd(out + blockIdx.x) (no contention);
// 2: atomicAdd(out) (every CTA on one address). The result is unused, so ptxas emits RED, as for
// reduce_atomic's atomicAdd.
extern "C" __global__ void one_update(float *out, int mode) {
    if (threadIdx.x != 0) return;
    if (mode == 0) out[blockIdx.x] = 1.0f;
    else if (mode == 1) atomicAdd(out + blockIdx.x, 1.0f);
    else atomicAdd(out, 1.0f);
}

#include "spin.cuh"       // the kernel the timed launches queue behind
