// Pipe and counter micro-kernels behind gpusim/kernel/opcodes.py ([H200-pipes]) and the atomic rules
// of gpusim/memory/counters.py, measured with ncu 2025.3 on an H200 (--clock-control none):
//   nvcc -arch=sm_90 -O3 -o micro pipes_micro.cu
//   ncu --clock-control none --kernel-name regex:k_ --metrics smsp__inst_executed_pipe_{alu,fma,xu,lsu,
//       adu,cbu,uniform}.sum,sass__inst_executed_per_opcode --print-metric-instances values --csv ./micro
// Pipes: one warp, a loop of T = 256 trips whose body repeats one opcode 32 times (8192 executions):
//   alu took FSETP, FMNMX, FSEL, I2FP, IABS, PRMT, VOTE; xu took MUFU.EX2, F2I, BREV, POPC, FLO;
//   lsu took SHFL, REDG, ATOMG, ATOMS; uniform took VOTEU.
// Atomics, 100 trips of one warp, per instruction (k_*_idx: lane addresses from idx_pattern p):
//   REDG / ATOMG F32: consecutive 1 request 4 sectors; all lanes on one float 32 sectors;
//   p0..p6 sectors F32 16 32 4 25 6 4 32, F64 16 32 8 26 10 8 32;
//   ATOMS wavefronts p0..p6 16 16 2 24 2 1 32 (bank conflicts = wavefronts - 1);
//   ATOMS.POPC.INC with 16 lanes on each of two words: 1 wavefront.
#include <cstdio>
#define FULL 0xffffffffu
#define T 256

__global__ void k_fsetp(const float4 *x, int *out, float t0) {
  float v[32];
  for (int j = 0; j < 8; ++j) { float4 q = x[threadIdx.x * 8 + j]; v[4*j]=q.x; v[4*j+1]=q.y; v[4*j+2]=q.z; v[4*j+3]=q.w; }
  bool p = false; float t = t0;
#pragma unroll 1
  for (int i = 0; i < T; ++i) {
#pragma unroll
    for (int j = 0; j < 32; ++j) p = p != (v[j] > t);
    t += 1.0f;
  }
  out[threadIdx.x] = p;
}
__global__ void k_fmnmx(const float4 *x, float *out, float t0) {
  float v[32];
  for (int j = 0; j < 8; ++j) { float4 q = x[threadIdx.x * 8 + j]; v[4*j]=q.x; v[4*j+1]=q.y; v[4*j+2]=q.z; v[4*j+3]=q.w; }
  float m = t0;
#pragma unroll 1
  for (int i = 0; i < T; ++i) {
#pragma unroll
    for (int j = 0; j < 32; ++j) m = (j & 1) ? fmaxf(m, v[j]) : fminf(m, v[j]);
    m -= 1.0f;
  }
  out[threadIdx.x] = m;
}
__global__ void k_fsel(const float4 *x, float *out, float t0) {
  float v[32];
  for (int j = 0; j < 8; ++j) { float4 q = x[threadIdx.x * 8 + j]; v[4*j]=q.x; v[4*j+1]=q.y; v[4*j+2]=q.z; v[4*j+3]=q.w; }
  float m = t0, t = t0;
#pragma unroll 1
  for (int i = 0; i < T; ++i) {
#pragma unroll
    for (int j = 0; j < 32; ++j) m = (v[j] > t) ? v[j ^ 1] : m;
    t += m;
  }
  out[threadIdx.x] = m;
}
__global__ void k_ex2(float *out, float t0) {
  float s = t0 + threadIdx.x;
#pragma unroll 1
  for (int i = 0; i < T; ++i) {
#pragma unroll
    for (int j = 0; j < 32; ++j) asm volatile("ex2.approx.ftz.f32 %0, %0;" : "+f"(s));
  }
  out[threadIdx.x] = s;
}
__global__ void k_shfl(float *out, float t0) {
  float s = t0 + threadIdx.x;
#pragma unroll 1
  for (int i = 0; i < T; ++i) {
#pragma unroll
    for (int j = 0; j < 32; ++j) s = __shfl_xor_sync(FULL, s, (j % 31) + 1);
  }
  out[threadIdx.x] = s;
}
__global__ void k_cvt(float *out, float t0) {
  float s = t0 + threadIdx.x;
#pragma unroll 1
  for (int i = 0; i < T; ++i) {
#pragma unroll
    for (int j = 0; j < 32; ++j) s = (float)__float2int_rn(s * 0.75f);
  }
  out[threadIdx.x] = s;
}
__global__ void k_i2f(float *out, int t0) {
  int n = t0 + threadIdx.x; float s = 0;
#pragma unroll 1
  for (int i = 0; i < T; ++i) {
#pragma unroll
    for (int j = 0; j < 32; ++j) { s = (float)n; n = __float_as_int(s); }
  }
  out[threadIdx.x] = s;
}
__global__ void k_brev(const unsigned *x, unsigned *out) {
  unsigned a = x[threadIdx.x];
#pragma unroll 1
  for (int i = 0; i < T; ++i) {
#pragma unroll
    for (int j = 0; j < 32; ++j) a = __brev(a) ^ i;
    a += 1;
  }
  out[threadIdx.x] = a;
}
__global__ void k_popc(const unsigned *x, unsigned *out) {
  unsigned a = x[threadIdx.x];
#pragma unroll 1
  for (int i = 0; i < T; ++i) {
#pragma unroll
    for (int j = 0; j < 32; ++j) a = __popc(a) * 0x01010101u;
    a += 1;
  }
  out[threadIdx.x] = a;
}
__global__ void k_flo(const unsigned *x, unsigned *out) {
  unsigned a = x[threadIdx.x];
#pragma unroll 1
  for (int i = 0; i < T; ++i) {
#pragma unroll
    for (int j = 0; j < 32; ++j) { unsigned r; asm volatile("bfind.u32 %0, %1;" : "=r"(r) : "r"(a)); a = r; }
    a += 77;
  }
  out[threadIdx.x] = a;
}
__global__ void k_iabs(const int *x, int *out) {
  int a = x[threadIdx.x];
#pragma unroll 1
  for (int i = 0; i < T; ++i) {
#pragma unroll
    for (int j = 0; j < 32; ++j) { int r; asm volatile("abs.s32 %0, %1;" : "=r"(r) : "r"(a)); a = ~r; }
    a += 1;
  }
  out[threadIdx.x] = a;
}
__global__ void k_prmt(const unsigned *x, unsigned *out) {
  unsigned a = x[threadIdx.x], b = x[threadIdx.x + 32];
#pragma unroll 1
  for (int i = 0; i < T; ++i) {
#pragma unroll
    for (int j = 0; j < 32; ++j) a = __byte_perm(a, b, 0x4073 + j);
    b += 1;
  }
  out[threadIdx.x] = a;
}
__global__ void k_vote(const unsigned *x, unsigned *out) {
  unsigned a = x[threadIdx.x];
#pragma unroll 1
  for (int i = 0; i < T; ++i) {
#pragma unroll
    for (int j = 0; j < 32; ++j) a = __ballot_sync(FULL, a & (1u << (threadIdx.x & 31)));
    a += threadIdx.x;
  }
  out[threadIdx.x] = a;
}
// atomics: 100 trips, one warp
__global__ void k_red_seq(float *g) {
#pragma unroll 1
  for (int i = 0; i < 100; ++i) atomicAdd(&g[threadIdx.x], 1.0f);
}
__global__ void k_red_same(float *g) {
#pragma unroll 1
  for (int i = 0; i < 100; ++i) atomicAdd(&g[0], 1.0f);
}
__global__ void k_red_stride(float *g) {      // lanes 32 floats apart: one sector each
#pragma unroll 1
  for (int i = 0; i < 100; ++i) atomicAdd(&g[threadIdx.x * 32], 1.0f);
}
__global__ void k_atom_seq(float *g, float *out) {
  float s = 0;
#pragma unroll 1
  for (int i = 0; i < 100; ++i) s += atomicAdd(&g[threadIdx.x], 1.0f);
  out[threadIdx.x] = s;
}
__global__ void k_atom_same(float *g, float *out) {
  float s = 0;
#pragma unroll 1
  for (int i = 0; i < 100; ++i) s += atomicAdd(&g[0], 1.0f);
  out[threadIdx.x] = s;
}
__global__ void k_red_int_seq(int *g) {
#pragma unroll 1
  for (int i = 0; i < 100; ++i) atomicAdd(&g[threadIdx.x], i);
}
template <int MODE>
__global__ void k_atoms(int *out, int v0) {
  __shared__ int s[1024];
#pragma unroll
  for (int i = 0; i < 32; ++i) s[threadIdx.x + 32 * i] = 0;
  __syncwarp();
  int lane = threadIdx.x, w = MODE == 0 ? lane : MODE == 1 ? 0 : MODE == 2 ? 2 * lane : MODE == 3 ? 32 * lane : lane / 2;
  int r = 0;
#pragma unroll 1
  for (int i = 0; i < 100; ++i) r += atomicAdd(&s[w], v0 + i);
  __syncwarp();
  out[lane] = r + s[lane];
}
__global__ void k_atoms_inc(int *out) {
  __shared__ int s[64];
  s[threadIdx.x] = 0;
  __syncwarp();
#pragma unroll 1
  for (int i = 0; i < 100; ++i) atomicAdd(&s[threadIdx.x & 1], 1);
  __syncwarp();
  out[threadIdx.x] = s[threadIdx.x];
}

int run_idx();

int main() {
  float4 *x4; float *f; int *ip; unsigned *u;
  cudaMalloc(&x4, 1 << 20); cudaMalloc(&f, 1 << 20); cudaMalloc(&ip, 1 << 20); cudaMalloc(&u, 1 << 20);
  cudaMemset(x4, 0, 1 << 20); cudaMemset(f, 0, 1 << 20); cudaMemset(ip, 0, 1 << 20); cudaMemset(u, 0, 1 << 20);
  k_fsetp<<<1, 32>>>(x4, ip, 1.0f); k_fmnmx<<<1, 32>>>(x4, f, 1.0f); k_fsel<<<1, 32>>>(x4, f, 1.0f);
  k_ex2<<<1, 32>>>(f, 0.5f); k_shfl<<<1, 32>>>(f, 1.0f); k_cvt<<<1, 32>>>(f, 3.0f); k_i2f<<<1, 32>>>(f, 3);
  k_brev<<<1, 32>>>(u, u + 1024); k_popc<<<1, 32>>>(u, u + 1024); k_flo<<<1, 32>>>(u, u + 1024);
  k_iabs<<<1, 32>>>(ip, ip + 1024); k_prmt<<<1, 32>>>(u, u + 1024); k_vote<<<1, 32>>>(u, u + 1024);
  k_red_seq<<<1, 32>>>(f); k_red_same<<<1, 32>>>(f); k_red_stride<<<1, 32>>>(f);
  k_atom_seq<<<1, 32>>>(f, f + 4096); k_atom_same<<<1, 32>>>(f, f + 4096); k_red_int_seq<<<1, 32>>>(ip);
  k_atoms<0><<<1, 32>>>(ip, 1); k_atoms<1><<<1, 32>>>(ip, 1); k_atoms<2><<<1, 32>>>(ip, 1);
  k_atoms<3><<<1, 32>>>(ip, 1); k_atoms<4><<<1, 32>>>(ip, 1); k_atoms_inc<<<1, 32>>>(ip);
  cudaError_t e = cudaDeviceSynchronize();
  run_idx();
  printf("done: %s / %s\n", cudaGetErrorString(e), cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}

// atomics whose lane addresses come from an index array (the compiler cannot aggregate them):
// pattern p of idx_patterns() below, 100 trips of one warp
__global__ void k_red_idx(float *g, const int *idx) {
  int w = idx[threadIdx.x];
#pragma unroll 1
  for (int i = 0; i < 100; ++i) atomicAdd(&g[w], 1.0f);
}
__global__ void k_red64_idx(double *g, const int *idx) {
  int w = idx[threadIdx.x];
#pragma unroll 1
  for (int i = 0; i < 100; ++i) atomicAdd(&g[w], 1.0);
}
__global__ void k_atoms_idx(int *out, const int *idx) {
  __shared__ int s[1024];
#pragma unroll
  for (int i = 0; i < 32; ++i) s[threadIdx.x + 32 * i] = 0;
  __syncwarp();
  int w = idx[threadIdx.x], r = 0;
#pragma unroll 1
  for (int i = 0; i < 100; ++i) r += atomicAdd(&s[w], i);
  __syncwarp();
  out[threadIdx.x] = r + s[threadIdx.x];
}

static void idx_pattern(int p, int *h) {
  for (int l = 0; l < 32; ++l) {
    switch (p) {
      case 0: h[l] = l / 16; break;                          // two words of one sector, 16 lanes each
      case 1: h[l] = (l % 2) * 8; break;                     // two sectors, 16 lanes on one word in each
      case 2: h[l] = l / 2; break;                           // pairs of lanes share a word
      case 3: h[l] = l < 8 ? l : 8; break;                   // 8 words of sector 0; 24 lanes on word 8
      case 4: h[l] = l < 2 ? 0 : l == 2 ? 1 : l == 3 ? 33 : l; break;  // banks 0: word 0 x2; bank 1: words 1, 33
      case 5: h[l] = l; break;                               // consecutive
      default: h[l] = (l % 2) * 32; break;                   // words 0 and 32 (one bank), 16 lanes each
    }
  }
}

int run_idx() {
  int *idx, h[32]; float *f; double *d; int *o;
  cudaMalloc(&idx, 4096); cudaMalloc(&f, 1 << 16); cudaMalloc(&d, 1 << 16); cudaMalloc(&o, 4096);
  cudaMemset(f, 0, 1 << 16); cudaMemset(d, 0, 1 << 16);
  for (int p = 0; p < 7; ++p) {
    idx_pattern(p, h);
    cudaMemcpy(idx, h, sizeof h, cudaMemcpyHostToDevice);
    k_red_idx<<<1, 32>>>(f, idx); k_red64_idx<<<1, 32>>>(d, idx); k_atoms_idx<<<1, 32>>>(o, idx);
    cudaDeviceSynchronize();
  }
  return 0;
}
