// Snippet for tests/sass/test_semantics_ext.py: rounding, conversions, bit operations, min / max,
// division (its FCHK and the CALL to the IEEE slow path) and warp votes, as ptxas emits them for sm_90.
// Build: nvcc -arch=sm_90 -O3 -cubin -o misc_ops.cubin misc_ops.cu && cuobjdump -sass misc_ops.cubin
extern "C" __global__ void misc(const float *x, const int *k, const float *w, float *y, int *z, unsigned *b) {
  int i = threadIdx.x;
  float v = x[i];
  int n = k[i];
  y[8*i+0] = floorf(v);
  y[8*i+1] = truncf(v) + rintf(v) + ceilf(v);
  y[8*i+2] = (float)(unsigned)n;
  y[8*i+3] = __int2float_rz(n);
  y[8*i+4] = fminf(v, w[i]);
  y[8*i+5] = __saturatef(v);
  y[8*i+6] = v / w[i+1];
  y[8*i+7] = __frcp_rn(v);
  z[8*i+0] = __float2int_rn(v);
  z[8*i+1] = (unsigned)v;
  z[8*i+2] = __clz(n);
  z[8*i+3] = __brev(n);
  z[8*i+4] = __ffs(n);
  z[8*i+5] = __byte_perm(n, k[i+1], 0x5140);
  z[8*i+6] = __float2int_rd(v);
  z[8*i+7] = max(n, 3) + min(n, k[i+2]);
  b[2*i] = __ballot_sync(0xffffffffu, v > 0.5f);
  b[2*i+1] = __activemask();
}
