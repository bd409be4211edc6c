// SPDX-License-Identifier: MIT OR Apache-2.0
// Kernels that keep another contract of the family than the embedded module's, each complete and
// correct under its own contract (no defect), the controls of `w8a16check identify` on a GPU
// (properties/identify.hpp, test_contract_fixtures.cpp). Linked into the embedded module in place of
// family symbols (CMakeLists.txt), with the family's parameters (docs/KERNEL_ABI.md 1.1); one chosen
// at compile time:
//   W8A16_CONTRACT_PRESCALE_BF16  w8a16_gemm_pipelined as the mixed-input GEMMs that dequantize W in
//                                 registers build it: each weight is scaled by its block's scale, both
//                                 BF16, before the MMA, and one MMA chain runs over all of K with no
//                                 fold point. The contract NUMERICS.md 2.4 writes tc.nan = propagate,
//                                 tc.fold = prescale, tc.period = end, tc.bias = 0, tc.scales = bf16,
//                                 tc.k-order = contiguous; identify must name exactly that.
//   W8A16_CONTRACT_SPLIT_K_GEMV   w8a16_gemv_batch4_strided and w8a16_gemv_batch16_strided as a
//                                 deterministic split-K GEMV: K cut into contiguous splits, each split's
//                                 partial in the canonical GEMV order (NUMERICS.md 2.2) over its own
//                                 K range, the partials added in split order. The text form of 2.4
//                                 has no field for a split: identify must say KEEPS NONE.
// Any grid and block the plan chooses (a multiple of 32 threads): warps stride over the work (16 x 8
// output tiles, or output columns); no shared memory.
#include <cstddef>
#include <cstdint>

namespace {

constexpr unsigned kStepK = 128;  // one scale block along K (NUMERICS.md 2)

// E4M3 "fn" (bias 7, no Inf) to FP32: every code's value is exact in FP32 and in BF16 (NUMERICS.md
// 1.2); 0x7F / 0xFF are NaN, as cvt.rn.f16x2.e4m3x2 gives them (tc.nan = propagate, gemv.nan =
// propagate).
__device__ float decode_e4m3(std::uint8_t code) {
  const unsigned exponent = (code >> 3) & 0xFu, mantissa = code & 7u;
  float magnitude;
  if (exponent == 15 && mantissa == 7) magnitude = __int_as_float(0x7FC00000);
  else if (exponent == 0) magnitude = static_cast<float>(mantissa) * 0x1p-9f;  // subnormal: m * 2^-9
  else magnitude = __int_as_float(static_cast<int>(((exponent + 120u) << 23) | (mantissa << 20)));
  return (code & 0x80u) ? -magnitude : magnitude;
}

// cvt.rn.bf16.f32: round to nearest even, NaN -> 0x7FFF (NUMERICS.md 1.2); not a truncation.
__device__ std::uint16_t to_bf16(float v) {
  std::uint16_t h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(v));
  return h;
}
__device__ float bf16_to_f32(std::uint16_t h) { return __uint_as_float(static_cast<std::uint32_t>(h) << 16); }

__device__ unsigned threads_per_block() { return blockDim.x * blockDim.y * blockDim.z; }
__device__ unsigned block_index() { return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z); }
__device__ unsigned block_count() { return gridDim.x * gridDim.y * gridDim.z; }
__device__ unsigned thread_in_block() { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }
// This warp's index over the grid, and the grid's warps.
__device__ unsigned global_warp() { return block_index() * (threads_per_block() / 32) + thread_in_block() / 32; }
__device__ unsigned warp_count() { return block_count() * (threads_per_block() / 32); }

struct Problem {
  const std::uint16_t* a;
  const std::uint8_t* w;
  const float* s;
  std::uint16_t* c;
  unsigned m, n, k, lda, ldc;
};

__device__ float scale_at(const Problem& p, unsigned col, unsigned k) {
  return p.s[static_cast<std::size_t>(col / 128) * (p.k / kStepK) + k / kStepK];
}

#if defined(W8A16_CONTRACT_PRESCALE_BF16)

// Two adjacent BF16 of A (row r, columns k0, k0 + 1), zero past M.
__device__ std::uint32_t a_pair(const Problem& p, unsigned r, unsigned k0) {
  if (r >= p.m) return 0;
  const std::uint16_t* row = p.a + static_cast<std::size_t>(r) * p.lda + k0;
  return static_cast<std::uint32_t>(row[0]) | (static_cast<std::uint32_t>(row[1]) << 16);
}

// The prescaled weight of NUMERICS.md 2.4: b = cvt.rn.bf16(mul.rn(decode(code), s)), s the block's
// scale already rounded to BF16. The product of two BF16 values is exact in FP32 unless it leaves
// FP32's normal range, so mul.rn rounds only there; the cvt is the rounding that matters.
__device__ std::uint16_t prescaled(std::uint8_t code, float scale_bf16) {
  return to_bf16(__fmul_rn(decode_e4m3(code), scale_bf16));
}
// Two adjacent prescaled weights (column col of B = row col of W, K indices k0, k0 + 1, one scale
// block: k0 is even), zero past N.
__device__ std::uint32_t w_pair(const Problem& p, unsigned col, unsigned k0, float scale_bf16) {
  if (col >= p.n) return 0;
  const std::uint8_t* row = p.w + static_cast<std::size_t>(col) * p.k + k0;
  return static_cast<std::uint32_t>(prescaled(row[0], scale_bf16)) |
         (static_cast<std::uint32_t>(prescaled(row[1], scale_bf16)) << 16);
}

// The warp's 16 x 8 tile at (r0, c0): one chain of k16 MMAs over all of K from +0, in contiguous K
// order (tc.period = end: no fold point, the scales are in B). Lane l holds rows r0 + l/4 (d0, d1)
// and r0 + l/4 + 8 (d2, d3), columns c0 + 2 (l % 4) and + 1, and feeds column c0 + l/4 of B (PTX ISA
// 9.7.14.5.8, the m16n8k16 fragments).
__device__ void prescale_tile(const Problem& p, unsigned r0, unsigned c0) {
  const unsigned lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const unsigned b_col = c0 + g;
  float d[4] = {0.f, 0.f, 0.f, 0.f};
  for (unsigned step = 0; step < p.k / kStepK; ++step) {
    // tc.scales = bf16: the scale operand is the FP32 scale rounded to BF16 (cvt.rn, NUMERICS.md 2.4).
    const float scale_bf16 = b_col < p.n ? bf16_to_f32(to_bf16(scale_at(p, b_col, step * kStepK))) : 0.f;
    for (unsigned j = 0; j < kStepK / 16; ++j) {
      const unsigned k0 = step * kStepK + 16 * j + 2 * t;
      const std::uint32_t a0 = a_pair(p, r0 + g, k0), a1 = a_pair(p, r0 + g + 8, k0), a2 = a_pair(p, r0 + g, k0 + 8),
                          a3 = a_pair(p, r0 + g + 8, k0 + 8);
      const std::uint32_t b0 = w_pair(p, b_col, k0, scale_bf16), b1 = w_pair(p, b_col, k0 + 8, scale_bf16);
      asm volatile(
          "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
          "{%0,%1,%2,%3};\n"
          : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
          : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    }
  }
  for (int e = 0; e < 4; ++e) {
    const unsigned r = r0 + g + (e >= 2 ? 8 : 0), col = c0 + 2 * t + (e & 1);
    // The one fold of period end under prescale: acc = add.rn(+0, p) (NUMERICS.md 2.4); then cvt.rn.bf16.
    if (r < p.m && col < p.n) p.c[static_cast<std::size_t>(r) * p.ldc + col] = to_bf16(__fadd_rn(0.f, d[e]));
  }
}

#elif defined(W8A16_CONTRACT_SPLIT_K_GEMV)

constexpr unsigned kChunk = 16;  // the canonical GEMV's chunk (NUMERICS.md 2.2)
constexpr unsigned kLanes = 32;  // and its lanes: one warp per split
constexpr unsigned kMaxSplits = 4;

// The number of splits P: the largest divisor of K/128 that is at most min(4, max(1, K/512)). A
// split then holds whole scale blocks (P divides K/128) and, from K = 512 on, at least 512 K, so
// every lane of its warp has a chunk. K < 1024 is one split: the canonical GEMV.
__device__ unsigned split_count(unsigned k) {
  const unsigned steps = k / kStepK;
  unsigned most = k / 512 < kMaxSplits ? k / 512 : kMaxSplits;
  if (most == 0) most = 1;
  while (steps % most != 0) --most;
  return most;
}

// One split's partial for row r of A and column col of W: the canonical GEMV order (NUMERICS.md 2.2,
// reference/include/w8a16/reference/gemv.hpp) over K in [k_begin, k_begin + k_len): lane l takes
// the split's chunks l, l + 32, ... in increasing order, p = +0 then a 16-term fma.rn chain in K
// order, acc = fma.rn(p, S, acc) per chunk, then an xor butterfly of add.rn (shfl.sync.bfly): every
// lane ends with the split's sum.
__device__ float split_partial(const Problem& p, unsigned r, unsigned col, unsigned k_begin, unsigned k_len) {
  const unsigned lane = threadIdx.x % 32;
  const std::uint16_t* a_row = p.a + static_cast<std::size_t>(r) * p.lda;
  const std::uint8_t* w_row = p.w + static_cast<std::size_t>(col) * p.k;
  float acc = 0.f;
  for (unsigned c = lane; c < k_len / kChunk; c += kLanes) {
    const unsigned k0 = k_begin + c * kChunk;
    float part = 0.f;
    for (unsigned j = 0; j < kChunk; ++j)
      part = __fmaf_rn(bf16_to_f32(a_row[k0 + j]), decode_e4m3(w_row[k0 + j]), part);
    acc = __fmaf_rn(part, scale_at(p, col, k0), acc);
  }
  for (unsigned off = 16; off >= 1; off /= 2) acc = __fadd_rn(acc, __shfl_xor_sync(0xFFFFFFFFu, acc, off));
  return acc;
}

// Warp w of the grid computes columns w, w + warps, ... for every row. Per output the P splits'
// partials are formed in split order and added as a split-K reduction adds them, r = partial 0,
// r = add.rn(r, partial i) for i = 1 .. P - 1, one rounding each, then cvt.rn.bf16. A launch over
// P CTAs per column with a workspace and a reduction pass gives the same bytes, since each partial's
// arithmetic and the order of the adds are fixed; here one warp forms them in turn (the family's
// GEMV parameters have no workspace), with no atomics, so every run gives the same bytes.
__device__ void split_k_gemv(const Problem& p) {
  const unsigned splits = split_count(p.k), k_len = p.k / splits;
  for (unsigned col = global_warp(); col < p.n; col += warp_count())
    for (unsigned r = 0; r < p.m; ++r) {
      float sum = split_partial(p, r, col, 0, k_len);
      for (unsigned i = 1; i < splits; ++i) sum = __fadd_rn(sum, split_partial(p, r, col, i * k_len, k_len));
      if (threadIdx.x % 32 == 0) p.c[static_cast<std::size_t>(r) * p.ldc + col] = to_bf16(sum);
    }
}

#endif

}  // namespace

#if defined(W8A16_CONTRACT_PRESCALE_BF16)

extern "C" __global__ void w8a16_gemm_pipelined(const std::uint16_t* input, const std::uint8_t* weight,
                                                const float* block_scale, std::uint16_t* output, std::uint32_t m,
                                                std::uint32_t n, std::uint32_t k, std::uint32_t a_row_stride,
                                                std::uint32_t c_row_stride) {
  const Problem p{input, weight, block_scale, output, m, n, k, a_row_stride, c_row_stride};
  const unsigned tiles_n = (n + 7) / 8, tiles = ((m + 15) / 16) * tiles_n;
  for (unsigned tile = global_warp(); tile < tiles; tile += warp_count())
    prescale_tile(p, 16 * (tile / tiles_n), 8 * (tile % tiles_n));
}

#elif defined(W8A16_CONTRACT_SPLIT_K_GEMV)

extern "C" __global__ void w8a16_gemv_batch4_strided(const std::uint16_t* input, const std::uint8_t* weight,
                                                     const float* block_scale, std::uint16_t* output, std::uint32_t m,
                                                     std::uint32_t n, std::uint32_t k, std::uint32_t a_row_stride,
                                                     std::uint32_t c_row_stride) {
  split_k_gemv(Problem{input, weight, block_scale, output, m, n, k, a_row_stride, c_row_stride});
}

extern "C" __global__ void w8a16_gemv_batch16_strided(const std::uint16_t* input, const std::uint8_t* weight,
                                                      const float* block_scale, std::uint16_t* output, std::uint32_t m,
                                                      std::uint32_t n, std::uint32_t k, std::uint32_t a_row_stride,
                                                      std::uint32_t c_row_stride) {
  split_k_gemv(Problem{input, weight, block_scale, output, m, n, k, a_row_stride, c_row_stride});
}

#else
#error "contract_fixtures.cu: define W8A16_CONTRACT_PRESCALE_BF16 or W8A16_CONTRACT_SPLIT_K_GEMV"
#endif
