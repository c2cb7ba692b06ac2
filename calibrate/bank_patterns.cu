// Shared-memory bank patterns: one warp executes ONE shared load per launch, each lane at a
// word offset given by the host; Nsight Compute reads the load's wavefronts per launch.
// Input (stdin): lines "name width_bytes off0 ... off31" (word offsets, -1 = lane inactive);
// a negative width stores instead of loading.
// Build: nvcc -arch=sm_90 -O3 -o bank_patterns calibrate/bank_patterns.cu
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>
#include <iostream>
#include <sstream>

__global__ void probe(const int *offs, int width, float *out) {
  __shared__ __align__(16) float s[8192];
  for (int i = threadIdx.x; i < 8192; i += 32) s[i] = (float)i;
  __syncthreads();
  int o = offs[threadIdx.x];
  float r = 0.f;
  if (o >= 0) {
    unsigned addr = (unsigned)__cvta_generic_to_shared(s + o);
    if (width == 16) {
      float a, b, c, d;
      asm volatile("ld.volatile.shared.v4.f32 {%0,%1,%2,%3}, [%4];" : "=f"(a), "=f"(b), "=f"(c), "=f"(d) : "r"(addr));
      r = a + b + c + d;
    } else if (width == -16) {       // stores: the same patterns, written
      asm volatile("st.volatile.shared.v4.f32 [%0], {%1,%1,%1,%1};" :: "r"(addr), "f"(1.f));
    } else if (width == -4) {
      asm volatile("st.volatile.shared.f32 [%0], %1;" :: "r"(addr), "f"(1.f));
    } else if (width == 8) {
      float a, b;
      asm volatile("ld.volatile.shared.v2.f32 {%0,%1}, [%2];" : "=f"(a), "=f"(b) : "r"(addr));
      r = a + b;
    } else {
      asm volatile("ld.volatile.shared.f32 %0, [%1];" : "=f"(r) : "r"(addr));
    }
  }
  out[threadIdx.x] = r;
}

int main() {
  int *d_offs; float *d_out;
  cudaMalloc(&d_offs, 32 * sizeof(int));
  cudaMalloc(&d_out, 32 * sizeof(float));
  std::string line;
  int n = 0;
  while (std::getline(std::cin, line)) {
    std::istringstream is(line);
    std::string name; int width; int offs[32];
    if (!(is >> name >> width)) continue;
    for (int i = 0; i < 32; i++) is >> offs[i];
    cudaMemcpy(d_offs, offs, sizeof(offs), cudaMemcpyHostToDevice);
    probe<<<1, 32>>>(d_offs, width, d_out);
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) { fprintf(stderr, "%s: %s\n", name.c_str(), cudaGetErrorString(e)); return 1; }
    printf("launch %d %s\n", n++, name.c_str());
  }
  return 0;
}
