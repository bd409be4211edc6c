// SPDX-License-Identifier: MIT OR Apache-2.0
// The calibration probe of wgmma: wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 on operands
// exactly as given, with A from shared memory or from registers and scale-d 1 or 0, so
// `w8a16check probe --instruction wgmma...` records what the instruction itself computes
// (NUMERICS.md 3: a kernel relies on wgmma only after the project's own recordings show it).
#include <cstdint>

#if !defined(__CUDA_ARCH__) || defined(__CUDA_ARCH_FEAT_SM90_ALL)
// The descriptor encoding and shared-memory addressing the Hopper tier itself uses, so that what is
// recorded is the form the product relies on.
#include "../../kernels/w8a16_tma.cuh"

// Case i (one warpgroup of 128 threads, blockIdx.x = i) reads the .mmav case layout
// (golden/README.md): a + 256 i: A BF16 [16][16]; bt + 128 i: Bt BF16 [8][16]; c + 128 i: C FP32
// [16][8]. The instruction's 64 rows are the case's 16 rows four times (warp w computes rows
// 16w..16w+15, PTX ISA 9.7.15.5.1), so each warp's result is recorded: d + 512 i + 128 w holds warp
// w's D [16][8], and the caller checks the four agree. With scale_d = 0 the instruction reads no C
// (the registers still hold the case's C, to show that they are ignored).
//
// Shared memory (A only when !a_from_regs): K-major tiles in the 128-byte swizzle, the layout the
// Hopper tier's operands use: row r at 128 r, its 16-byte chunk j at (j ^ (r % 8)) * 16; the 16
// k of the instruction are chunks 0 and 1 of each row. B is Bt's 8 rows (wgmma's B is K x 8,
// K-major: B[k][n] = Bt[n][k]).
namespace {
namespace kn = w8a16::kernels;

__device__ __forceinline__ uint32_t pack_bf16x2(uint16_t lo, uint16_t hi) {
  return static_cast<uint32_t>(lo) | (static_cast<uint32_t>(hi) << 16);
}
__device__ __forceinline__ uint32_t sw128(uint32_t row, uint32_t k) {  // byte offset of BF16 (row, k)
  return row * 128 + (((k / 8) ^ (row % 8)) * 16) + (k % 8) * 2;
}

}  // namespace

extern "C" __global__ void __launch_bounds__(128)
    w8a16_probe_wgmma_m64n8k16_bf16(const uint16_t* __restrict__ a, const uint16_t* __restrict__ bt,
                                    const uint32_t* __restrict__ c, uint32_t* __restrict__ d, uint32_t count,
                                    uint32_t a_from_regs, uint32_t scale_d) {
  __shared__ __align__(1024) unsigned char sa[64 * 128];
  __shared__ __align__(1024) unsigned char sb[8 * 128];
  const uint32_t i = blockIdx.x;
  if (i >= count) return;  // the whole warpgroup returns together
  const uint32_t tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const uint16_t* A = a + 256u * i;  // A[m][k] = A[16 m + k]
  const uint16_t* Bt = bt + 128u * i;
  const uint32_t* C = c + 128u * i;  // C[m][n] = C[8 m + n]

  for (uint32_t e = tid; e < 64 * 64; e += 128) reinterpret_cast<uint16_t*>(sa)[e] = 0;
  for (uint32_t e = tid; e < 8 * 64; e += 128) reinterpret_cast<uint16_t*>(sb)[e] = 0;
  __syncthreads();
  for (uint32_t e = tid; e < 64 * 16; e += 128) {
    const uint32_t row = e / 16, k = e % 16;
    *reinterpret_cast<uint16_t*>(sa + sw128(row, k)) = A[16 * (row % 16) + k];
  }
  for (uint32_t e = tid; e < 8 * 16; e += 128) {
    const uint32_t n = e / 16, k = e % 16;
    *reinterpret_cast<uint16_t*>(sb + sw128(n, k)) = Bt[16 * n + k];
  }
  // Ordinary stores that wgmma (the async proxy) reads next: fence, then the barrier.
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();

  const uint32_t ra[4] = {pack_bf16x2(A[16 * g + 2 * t], A[16 * g + 2 * t + 1]),
                          pack_bf16x2(A[16 * (g + 8) + 2 * t], A[16 * (g + 8) + 2 * t + 1]),
                          pack_bf16x2(A[16 * g + 2 * t + 8], A[16 * g + 2 * t + 9]),
                          pack_bf16x2(A[16 * (g + 8) + 2 * t + 8], A[16 * (g + 8) + 2 * t + 9])};
  // C and D as raw bits ("r" operands reinterpreted as .f32 inside the asm): no float arithmetic
  // touches them, so NaN payloads, -0 and subnormals arrive and leave unchanged.
  uint32_t rd[4] = {C[8 * g + 2 * t], C[8 * g + 2 * t + 1], C[8 * (g + 8) + 2 * t], C[8 * (g + 8) + 2 * t + 1]};
  const uint64_t da = kn::wgmma_desc_sw128(kn::smem_addr(sa)), db = kn::wgmma_desc_sw128(kn::smem_addr(sb));
  // wgmma.fence inside each asm, after the moves that load the accumulators (PTX ISA 9.7.15.7.1).
  if (a_from_regs) {
    asm volatile(
        "{\n .reg .pred sd;\n .reg .f32 d0, d1, d2, d3;\n setp.ne.b32 sd, %9, 0;\n"
        " mov.b32 d0, %0;\n mov.b32 d1, %1;\n mov.b32 d2, %2;\n mov.b32 d3, %3;\n wgmma.fence.sync.aligned;\n"
        " wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {d0, d1, d2, d3}, {%4, %5, %6, %7}, %8, sd, 1, 1, 0;\n"
        " wgmma.commit_group.sync.aligned;\n wgmma.wait_group.sync.aligned 0;\n"
        " mov.b32 %0, d0;\n mov.b32 %1, d1;\n mov.b32 %2, d2;\n mov.b32 %3, d3;\n}\n"
        : "+r"(rd[0]), "+r"(rd[1]), "+r"(rd[2]), "+r"(rd[3])
        : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "l"(db), "r"(scale_d)
        : "memory");
  } else {
    asm volatile(
        "{\n .reg .pred sd;\n .reg .f32 d0, d1, d2, d3;\n setp.ne.b32 sd, %6, 0;\n"
        " mov.b32 d0, %0;\n mov.b32 d1, %1;\n mov.b32 d2, %2;\n mov.b32 d3, %3;\n wgmma.fence.sync.aligned;\n"
        " wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {d0, d1, d2, d3}, %4, %5, sd, 1, 1, 0, 0;\n"
        " wgmma.commit_group.sync.aligned;\n wgmma.wait_group.sync.aligned 0;\n"
        " mov.b32 %0, d0;\n mov.b32 %1, d1;\n mov.b32 %2, d2;\n mov.b32 %3, d3;\n}\n"
        : "+r"(rd[0]), "+r"(rd[1]), "+r"(rd[2]), "+r"(rd[3])
        : "l"(da), "l"(db), "r"(scale_d)
        : "memory");
  }
  uint32_t* D = d + 512u * i + 128u * warp;
  D[8 * g + 2 * t] = rd[0];
  D[8 * g + 2 * t + 1] = rd[1];
  D[8 * (g + 8) + 2 * t] = rd[2];
  D[8 * (g + 8) + 2 * t + 1] = rd[3];
}
#endif
