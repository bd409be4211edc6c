// SPDX-License-Identifier: MIT OR Apache-2.0
// The calibration probe: one mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 per case, on
// operands exactly as given, so `w8a16check probe` records what the instruction itself computes
// (NUMERICS.md 3: the project's own recordings of 1.1).
#include <cstdint>

// Case i (one warp, blockIdx.x = i) reads, in the .mmav case layout (golden/mma/README.md):
//   a  + 256 i: A  BF16 bits [16][16], row m, column k
//   bt + 128 i: Bt BF16 bits [8][16],  row n, column k (B transposed, i.e. B[k][n] = Bt[n][k])
//   c  + 128 i: C  FP32 bits [16][8],  row m, column n
// and writes d + 128 i: D FP32 bits [16][8] = mma(C; A, B).
//
// Fragments per PTX ISA 9.7.14.5.8 (m16n8k16, .bf16), g = lane / 4, t = lane % 4, each 32-bit
// register holding the lower column (k) in its low half:
//   a0 = A[g][2t..2t+1], a1 = A[g+8][2t..2t+1], a2 = A[g][2t+8..2t+9], a3 = A[g+8][2t+8..2t+9]
//   b0 = B[2t..2t+1][g], b1 = B[2t+8..2t+9][g]
//   c0,c1 = C[g][2t..2t+1], c2,c3 = C[g+8][2t..2t+1]  (d the same)
// No k permutation here, unlike the kernels (w8a16_ptx.cuh): the probe records the instruction as
// the ISA defines it, so a recording would show it if the product order ever mattered.
namespace {

__device__ __forceinline__ uint32_t pack_bf16x2(uint16_t lo, uint16_t hi) {
  return static_cast<uint32_t>(lo) | (static_cast<uint32_t>(hi) << 16);
}

}  // namespace

extern "C" __global__ void __launch_bounds__(32)
    w8a16_probe_mma_m16n8k16_bf16(const uint16_t* __restrict__ a, const uint16_t* __restrict__ bt,
                                  const uint32_t* __restrict__ c, uint32_t* __restrict__ d, uint32_t count) {
  const uint32_t i = blockIdx.x;
  if (i >= count) return;  // whole warp returns together: mma.sync needs all 32 lanes
  const uint32_t lane = threadIdx.x;
  const uint32_t g = lane / 4, t = lane % 4;
  const uint16_t* A = a + 256u * i;    // A[m][k]  = A[16 m + k]
  const uint16_t* Bt = bt + 128u * i;  // B[k][n]  = Bt[16 n + k]
  const uint32_t* C = c + 128u * i;    // C[m][n]  = C[8 m + n]
  uint32_t* D = d + 128u * i;

  uint32_t ra[4], rb[2];
  ra[0] = pack_bf16x2(A[16 * g + 2 * t], A[16 * g + 2 * t + 1]);
  ra[1] = pack_bf16x2(A[16 * (g + 8) + 2 * t], A[16 * (g + 8) + 2 * t + 1]);
  ra[2] = pack_bf16x2(A[16 * g + 2 * t + 8], A[16 * g + 2 * t + 9]);
  ra[3] = pack_bf16x2(A[16 * (g + 8) + 2 * t + 8], A[16 * (g + 8) + 2 * t + 9]);
  rb[0] = pack_bf16x2(Bt[16 * g + 2 * t], Bt[16 * g + 2 * t + 1]);
  rb[1] = pack_bf16x2(Bt[16 * g + 2 * t + 8], Bt[16 * g + 2 * t + 9]);
  // C and D travel as raw bits ("r" operands reinterpret as .f32 in the asm): no host or device
  // float arithmetic touches them, so NaN payloads, -0 and subnormals arrive and leave unchanged.
  uint32_t rc[4] = {C[8 * g + 2 * t], C[8 * g + 2 * t + 1], C[8 * (g + 8) + 2 * t], C[8 * (g + 8) + 2 * t + 1]};
  uint32_t rd[4];
  asm volatile(
      "{\n .reg .f32 c0, c1, c2, c3, d0, d1, d2, d3;\n"
      " mov.b32 c0, %10;\n mov.b32 c1, %11;\n mov.b32 c2, %12;\n mov.b32 c3, %13;\n"
      " mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {d0, d1, d2, d3}, {%4, %5, %6, %7}, {%8, %9},"
      " {c0, c1, c2, c3};\n"
      " mov.b32 %0, d0;\n mov.b32 %1, d1;\n mov.b32 %2, d2;\n mov.b32 %3, d3;\n}\n"
      : "=r"(rd[0]), "=r"(rd[1]), "=r"(rd[2]), "=r"(rd[3])
      : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]), "r"(rc[0]), "r"(rc[1]), "r"(rc[2]),
        "r"(rc[3]));
  D[8 * g + 2 * t] = rd[0];
  D[8 * g + 2 * t + 1] = rd[1];
  D[8 * (g + 8) + 2 * t] = rd[2];
  D[8 * (g + 8) + 2 * t + 1] = rd[3];
}
