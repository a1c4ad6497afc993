"""Found by the fuzz runs (docs/fuzz_report.md): each emulator bug a random program showed, as a small
kernel whose outputs the GPU recorded."""
import numpy as np

from . import Corpus

CASES = Corpus("fuzz_found")
case = CASES.case

# fuzz seeds 1108 1602 3254 3357 4880: a wmma load/store of one block, whose lanes' fragment elements
# numbered as many as the batch's lanes, went to another block's shared memory
case("wmma_tile_of_the_last_block", r'''
extern "C" __global__ void last_block_tile(double* out64, float* out32) {
  __shared__ __align__(128) double t64[64];
  __shared__ __align__(128) float t32[256];
  for (int i = threadIdx.x; i < 64; i += 32) t64[i] = blockIdx.x * 100 + i;
  for (int i = threadIdx.x; i < 256; i += 32) t32[i] = blockIdx.x * 1000 + i;
  __syncwarp();
  if (blockIdx.x == 1) {          // 32 lanes x 2 doubles: as many as blocks 0 and 1 have lanes
    double c0, c1;
    asm volatile("wmma.load.c.sync.aligned.row.m8n8k4.f64 {%0, %1}, [%2], 8;" : "=d"(c0), "=d"(c1) : "l"(t64) : "memory");
    asm volatile("wmma.store.d.sync.aligned.col.m8n8k4.f64 [%0], {%1, %2}, 8;" :: "l"(t64), "d"(c0), "d"(c1) : "memory");
    __syncwarp();
    for (int i = threadIdx.x; i < 64; i += 32) out64[i] = t64[i];
  }
  if (blockIdx.x == gridDim.x - 1) {   // 32 lanes x 8 floats: as many as the eight blocks have lanes
    float c[8];
    asm volatile("wmma.load.c.sync.aligned.col.m16n16k16.f32 {%0, %1, %2, %3, %4, %5, %6, %7}, [%8], 16;"
                 : "=f"(c[0]), "=f"(c[1]), "=f"(c[2]), "=f"(c[3]), "=f"(c[4]), "=f"(c[5]), "=f"(c[6]), "=f"(c[7])
                 : "l"(t32) : "memory");
    asm volatile("wmma.store.d.sync.aligned.row.m16n16k16.f32 [%0], {%1, %2, %3, %4, %5, %6, %7, %8}, 16;"
                 :: "l"(t32), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]), "f"(c[4]), "f"(c[5]), "f"(c[6]), "f"(c[7])
                 : "memory");
    __syncwarp();
    for (int i = threadIdx.x; i < 256; i += 32) out32[i] = t32[i];
  }
}''', "last_block_tile", 8, 32, lambda r: [np.zeros(64, np.float64), np.zeros(256, np.float32)], arch="compute_90")


def _cut_tiles(r):
    """One warp per configuration: A all 2**-126, B's rows k < 15 a big negative b, row 15 a small 2**-j,
    C all c; each lane's registers as mma.sync m16n8k16's bf16 fragments hold them (PTX ISA: B's
    element e of register j in lane l is row 2 * (l % 4) + e + 8 * j)."""
    def bf16(v):
        return int(np.float32(v).view(np.uint32)) >> 16
    lane = np.arange(32)
    rows = []
    for big in (-2.0 ** -23, -2.0 ** -14):
        for c in (0.0, -0.0, 2.0 ** -149):
            for j in range(24, 42):
                b = [big] * 15 + [2.0 ** -j]
                a_reg = bf16(2.0 ** -126) * 0x10001
                b_regs = [[bf16(b[2 * (l % 4) + 8 * jj]) | bf16(b[2 * (l % 4) + 1 + 8 * jj]) << 16 for jj in range(2)]
                          for l in lane]
                rows.append([[a_reg] * 4 + br + [int(np.float32(c).view(np.uint32))] * 4 for br in b_regs])
    return [np.array(rows, np.uint32), np.zeros((len(rows), 32, 4), np.uint32)]


# fuzz seed 1908: a zero accumulator counts as 2**-133 when the tensor core aligns the sum, so
# products down to 2**-158 are kept (fifteen products of -2**-149 and one of +s: s kept, the truncated
# sum is one unit nearer zero)
case("mma_bf16_zero_accumulator_cut", r'''
extern "C" __global__ void cut(const unsigned* in, unsigned* out) {
  const unsigned* r = in + (blockIdx.x * 32 + threadIdx.x) * 10;
  unsigned* d = out + (blockIdx.x * 32 + threadIdx.x) * 4;
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
               "{%10, %11, %12, %13};"
               : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
               : "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]), "r"(r[4]), "r"(r[5]), "r"(r[6]), "r"(r[7]), "r"(r[8]), "r"(r[9]));
}''', "cut", 108, 32, _cut_tiles, arch="compute_90")
