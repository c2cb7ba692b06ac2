// Partial-line stores whose sectors the CTA's other warps fill at once: a naive transpose's store pattern
// (transpose_naive's B[x][y] = ..., without its loads). CTA (bx, by) of 32 x 8 threads writes the 32 x 32
// tile of rows bx*32.. and columns by*32..: thread (tx, ty) writes row bx*32 + tx at columns
// by*32 + ty + {0, 8, 16, 24}. One warp's store puts 4 B in each of 32 lines; the CTA's 8 warps fill each
// of those sectors in the same pass, and its 4 passes the lines' 4 sectors. calibrate/l2_write_fill.py
// times it (l2_write.cu's store_strided is the same store with nothing else in its line).
extern "C" __global__ void store_columns(float *out, int n) {
    int x = blockIdx.x * 32 + threadIdx.x;
    int y = blockIdx.y * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8) {
        out[(long long)x * n + y + j] = 1.0f;
    }
}
