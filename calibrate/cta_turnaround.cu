// How fast an SM takes up new CTAs: every thread of each CTA spins for `cycles` SM cycles (0: the CTA
// does nothing), at the memory ladder's grid sizes. calibrate/cta_turnaround.py times the launches.
extern "C" __global__ void spin_cta(long long cycles, float *out) {
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
    // a store no thread makes (out is never null), so ptxas keeps the kernel
    if (out == nullptr) out[threadIdx.x] = 0.0f;
}

#include "spin.cuh"       // the kernel the timed launches queue behind
