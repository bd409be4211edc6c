// SPDX-License-Identifier: MIT OR Apache-2.0
// Kernels that break batch invariance on purpose, each the control of one verdict of
// `w8a16check invariance` on a GPU (properties/invariance.hpp). Linked into the embedded module in
// place of one family symbol (CMakeLists.txt), with the family's parameters (docs/KERNEL_ABI.md
// 1.1). Each is the canonical fold of NUMERICS.md 2.1 computed with mma.sync m16n8k16 (so where it
// does not break, its bytes are the contract's), with one defect chosen at compile time:
//   W8A16_BREAK_SPLIT_K_BY_M  w8a16_gemm_pipelined: from M = 9 the K steps fold in two halves,
//                             each from +0, added at the end (a K split chosen by the batch size):
//                             the batch verdict fails at M = 9.
//   W8A16_BREAK_ROW_ORDER     w8a16_gemm_pipelined: odd rows fold their steps last to first (an
//                             order set by where a row sits): the batch verdict fails at M = 2, row 1.
//   W8A16_BREAK_ATOMICS       w8a16_gemm_pipelined: the warps of a CTA take a step each and add
//                             p * S into shared memory with atomicAdd, in the order they arrive
//                             (each warp first waits a time read from the global timer): the
//                             run-to-run verdict fails at M = 1.
//   W8A16_BREAK_WINDOW_ORDER  w8a16_gemm_pipelined_m32: every row folds its steps last to first (a
//                             tier with another window order): the tier verdict fails at the first M
//                             where this symbol's bodies meet another, and the contract verdict too.
// Any grid and block the plan chooses (a multiple of 32 threads): warps (or, for the atomics, CTAs)
// stride over the 16 x 8 output tiles; no shared memory beyond the atomics' tile.
#include <cstdint>

namespace {

constexpr unsigned kStepK = 128;  // one fold step, one scale block along K (NUMERICS.md 2.1)

// E4M3 to BF16 bits: every E4M3 value is a BF16 value, so the conversion is exact; 0x7F/0xFF are NaN.
__device__ std::uint32_t e4m3_to_bf16(std::uint8_t code) {
  const unsigned e = (code >> 3) & 0xFu, m = code & 7u;
  float v;
  if (e == 15 && m == 7) v = __int_as_float(0x7FC00000);
  else if (e == 0) v = ldexpf(static_cast<float>(m), -9);
  else v = ldexpf(1.0f + static_cast<float>(m) / 8.0f, static_cast<int>(e) - 7);
  return (__float_as_uint(v) >> 16) | ((code & 0x80u) ? 0x8000u : 0u);
}

struct Problem {
  const std::uint16_t* a;
  const std::uint8_t* w;
  const float* s;
  std::uint16_t* c;
  unsigned m, n, k, lda, ldc;
};

// Two adjacent BF16 of A (row r, columns k0, k0 + 1), zero past M.
__device__ std::uint32_t a_pair(const Problem& p, unsigned r, unsigned k0) {
  if (r >= p.m) return 0;
  const std::uint16_t* row = p.a + static_cast<std::size_t>(r) * p.lda + k0;
  return static_cast<std::uint32_t>(row[0]) | (static_cast<std::uint32_t>(row[1]) << 16);
}
// Two adjacent decoded W codes (column c of B = row c of W, K indices k0, k0 + 1), zero past N.
__device__ std::uint32_t w_pair(const Problem& p, unsigned col, unsigned k0) {
  if (col >= p.n) return 0;
  const std::uint8_t* row = p.w + static_cast<std::size_t>(col) * p.k + k0;
  return e4m3_to_bf16(row[0]) | (e4m3_to_bf16(row[1]) << 16);
}

// p of one step for the warp's 16 x 8 tile at (r0, c0): 8 chained k16 MMAs from +0 (NUMERICS.md
// 2.1). Lane l holds rows r0 + l/4 (p[0], p[1]) and r0 + l/4 + 8 (p[2], p[3]), columns
// c0 + 2 (l % 4) and + 1 (PTX ISA 9.7.14.5.8, the m16n8k16 fragments).
__device__ void step_p(const Problem& p, unsigned r0, unsigned c0, unsigned step, float out[4]) {
  const unsigned lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  float d0 = 0.f, d1 = 0.f, d2 = 0.f, d3 = 0.f;
  for (unsigned j = 0; j < kStepK / 16; ++j) {
    const unsigned k0 = step * kStepK + 16 * j + 2 * t;
    const std::uint32_t a0 = a_pair(p, r0 + g, k0), a1 = a_pair(p, r0 + g + 8, k0), a2 = a_pair(p, r0 + g, k0 + 8),
                        a3 = a_pair(p, r0 + g + 8, k0 + 8);
    const std::uint32_t b0 = w_pair(p, c0 + g, k0), b1 = w_pair(p, c0 + g, k0 + 8);
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  }
  out[0] = d0, out[1] = d1, out[2] = d2, out[3] = d3;
}

__device__ float scale_of(const Problem& p, unsigned col, unsigned step) {
  return col < p.n ? p.s[static_cast<std::size_t>(col / 128) * (p.k / kStepK) + step] : 0.f;
}

// cvt.rn.bf16.f32 (NUMERICS.md 1.2: NaN -> 0x7FFF).
__device__ std::uint16_t to_bf16(float v) {
  std::uint16_t h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(v));
  return h;
}

__device__ void store(const Problem& p, unsigned r0, unsigned c0, const float acc[4]) {
  const unsigned lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  for (int i = 0; i < 4; ++i) {
    const unsigned r = r0 + g + (i >= 2 ? 8 : 0), col = c0 + 2 * t + (i & 1);
    if (r < p.m && col < p.n) p.c[static_cast<std::size_t>(r) * p.ldc + col] = to_bf16(acc[i]);
  }
}

__device__ unsigned threads_per_block() { return blockDim.x * blockDim.y * blockDim.z; }
__device__ unsigned block_index() { return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z); }
__device__ unsigned block_count() { return gridDim.x * gridDim.y * gridDim.z; }
__device__ unsigned thread_in_block() { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }

// The fold of one tile, steps from `first` while `count` remain, in ascending or descending order.
// Each thread folds in its own order: `descending` may differ between the lanes of a warp, so the
// warp runs both orders and each lane folds in the one it keeps.
__device__ void fold_tile(const Problem& p, unsigned r0, unsigned c0, unsigned first, unsigned count, bool descending,
                          float acc[4]) {
  const unsigned lane = threadIdx.x % 32, t = lane % 4;
  for (int pass = 0; pass < 2; ++pass) {
    const bool pass_descending = pass == 1;
    if (!__any_sync(0xFFFFFFFFu, descending == pass_descending)) continue;
    for (unsigned i = 0; i < count; ++i) {
      const unsigned step = pass_descending ? first + count - 1 - i : first + i;
      float part[4];
      step_p(p, r0, c0, step, part);
      if (descending != pass_descending) continue;
      for (int e = 0; e < 4; ++e) acc[e] = __fmaf_rn(part[e], scale_of(p, c0 + 2 * t + (e & 1), step), acc[e]);
    }
  }
}

__device__ void warp_tiles(const Problem& p) {
  const unsigned warps_per_block = threads_per_block() / 32;
  const unsigned warp = block_index() * warps_per_block + thread_in_block() / 32;
  const unsigned warps = block_count() * warps_per_block;
  const unsigned tiles_n = (p.n + 7) / 8, tiles = ((p.m + 15) / 16) * tiles_n, steps = p.k / kStepK;
  const unsigned g = (threadIdx.x % 32) / 4;
  for (unsigned tile = warp; tile < tiles; tile += warps) {
    const unsigned r0 = 16 * (tile / tiles_n), c0 = 8 * (tile % tiles_n);
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
#if defined(W8A16_BREAK_SPLIT_K_BY_M)
    if (p.m >= 9 && steps >= 2) {
      float hi[4] = {0.f, 0.f, 0.f, 0.f};
      fold_tile(p, r0, c0, 0, steps / 2, false, acc);
      fold_tile(p, r0, c0, steps / 2, steps - steps / 2, false, hi);
      for (int e = 0; e < 4; ++e) acc[e] = __fadd_rn(acc[e], hi[e]);
    } else {
      fold_tile(p, r0, c0, 0, steps, false, acc);
    }
#elif defined(W8A16_BREAK_ROW_ORDER)
    // Rows r0 + g and r0 + g + 8 of this lane have the parity of g (r0 is a multiple of 16).
    fold_tile(p, r0, c0, 0, steps, (g & 1u) != 0, acc);
#elif defined(W8A16_BREAK_WINDOW_ORDER)
    fold_tile(p, r0, c0, 0, steps, true, acc);
    (void)g;
#endif
    store(p, r0, c0, acc);
  }
}

#if defined(W8A16_BREAK_ATOMICS)
__device__ void atomic_tiles(const Problem& p) {
  __shared__ float sum[16 * 8];
  const unsigned warps_per_block = threads_per_block() / 32, warp = thread_in_block() / 32;
  const unsigned lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const unsigned tiles_n = (p.n + 7) / 8, tiles = ((p.m + 15) / 16) * tiles_n, steps = p.k / kStepK;
  for (unsigned tile = block_index(); tile < tiles; tile += block_count()) {
    const unsigned r0 = 16 * (tile / tiles_n), c0 = 8 * (tile % tiles_n);
    for (unsigned i = thread_in_block(); i < 16 * 8; i += threads_per_block()) sum[i] = 0.f;
    __syncthreads();
    for (unsigned step = warp; step < steps; step += warps_per_block) {
      float part[4];
      step_p(p, r0, c0, step, part);
      std::uint64_t now;
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
      __nanosleep(static_cast<unsigned>((now ^ (now >> 13) ^ (warp * 2654435761u)) & 1023u));
      for (int e = 0; e < 4; ++e) {
        const unsigned col = 2 * t + (e & 1);
        atomicAdd(&sum[(g + (e >= 2 ? 8 : 0)) * 8 + col], __fmul_rn(part[e], scale_of(p, c0 + col, step)));
      }
    }
    __syncthreads();
    for (unsigned i = thread_in_block(); i < 16 * 8; i += threads_per_block()) {
      const unsigned r = r0 + i / 8, col = c0 + i % 8;
      if (r < p.m && col < p.n) p.c[static_cast<std::size_t>(r) * p.ldc + col] = to_bf16(sum[i]);
    }
    __syncthreads();
  }
}
#endif

}  // namespace

#if defined(W8A16_BREAK_WINDOW_ORDER)
#define W8A16_BREAKER_SYMBOL w8a16_gemm_pipelined_m32
#else
#define W8A16_BREAKER_SYMBOL w8a16_gemm_pipelined
#endif

extern "C" __global__ void W8A16_BREAKER_SYMBOL(const std::uint16_t* input, const std::uint8_t* weight,
                                                const float* block_scale, std::uint16_t* output, std::uint32_t m,
                                                std::uint32_t n, std::uint32_t k, std::uint32_t a_row_stride,
                                                std::uint32_t c_row_stride) {
  const Problem p{input, weight, block_scale, output, m, n, k, a_row_stride, c_row_stride};
#if defined(W8A16_BREAK_ATOMICS)
  atomic_tiles(p);
#else
  warp_tiles(p);
#endif
}
