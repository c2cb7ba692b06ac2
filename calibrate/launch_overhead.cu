// What a launch costs beside its work: a kernel whose threads do nothing, timed as the ladder's records
// time theirs (CUDA events around each launch), at the ladder's grid and block sizes.
// calibrate/launch_overhead.py runs it and records the medians.
extern "C" __global__ void empty_kernel(float *out) {
    // a store no thread makes (out is never null), so the launch is not one ptxas could drop
    if (out == nullptr) out[threadIdx.x] = 0.0f;
}

// One thread busy for `cycles` SM cycles: launched first, it holds the stream while the CPU queues the
// timed launches behind it, so the GPU then runs them back to back as it runs a ladder kernel's launches
// (each of those takes longer than the CPU needs to queue the next).
extern "C" __global__ void spin(long long cycles) {
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
}
