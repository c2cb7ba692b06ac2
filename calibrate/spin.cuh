// One thread busy for `cycles` SM cycles: launched first, it holds the stream while the host queues the
// timed launches behind it, so the GPU then runs them back to back (micro_cli.queued_times).
extern "C" __global__ void spin(long long cycles) {
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
}
