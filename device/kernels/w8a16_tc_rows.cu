// SPDX-License-Identifier: MIT OR Apache-2.0
// w8a16_tc_rows, w8a16_tc_rows_m64: the row-tile kernel of the canonical fold (NUMERICS.md 2.1):
// column strips of every row of a short M (1..32 and 33..64 rows), any K. w8a16_tc_rows_packed:
// its strips at 1..16 rows over W in the packed layout (NUMERICS.md 2.3).
#include <cstdint>

#include "w8a16/device/geometry.hpp"
#include "w8a16_rows_stream.cuh"

// Which shapes it takes: device/launch's tc_rows_takes (plan.hpp), with the measurements behind
// it in PERF_NOTES.md. It streams every weight byte once (one CTA per column strip, all rows)
// through a deep cp.async pipeline, and has no K limit. The strip width and the number of
// 8-row blocks come from (m, n) through geometry.hpp, the same functions the launch sizes the
// grid and the shared memory with.
namespace {
namespace dev = w8a16::device;
namespace kn = w8a16::kernels;

// thin: 16 columns, 8 warps on the one tile, 8-step rounds, 2 stages (1..8 rows).
using Thin = kn::RowsStream<8, 1, 8, 2, 1>;
// narrow: 32 columns, 4 warps per tile, 4-step rounds, 2 stages.
template <int kMb>
using Narrow = kn::RowsStream<4, 1, 4, 2, kMb>;
// mid: 64 columns, 2 warps per tile, 2-step rounds, 2 stages.
template <int kMb>
using Mid = kn::RowsStream<2, 1, 2, 2, kMb>;
// wide: 128 columns, 1 warp per 16-column tile, 1-step rounds; 4 stages up to 32 rows, 2 above.
template <int kMb>
using Wide = kn::RowsStream<1, 1, 1, 4, kMb>;
template <int kMb>
using Wide64 = kn::RowsStream<1, 1, 1, 2, kMb>;
// The packed twins of thin and narrow (w8a16_tc_rows_packed).
using ThinPacked = kn::RowsStream<8, 1, 8, 2, 1, true>;
template <int kMb>
using NarrowPacked = kn::RowsStream<4, 1, 4, 2, kMb, true>;

// The configuration the kernel runs at (m, n) is the one geometry.hpp sizes the launch for.
template <class Cfg>
constexpr bool sized_for(std::uint32_t m, std::uint32_t n) {
  return Cfg::kCols == dev::tc_rows_cols(m, n) && Cfg::kRows == 8 * dev::tc_rows_row_blocks(m) &&
         Cfg::kSmemBytes == dev::tc_rows_smem_bytes(m, n);
}
template <class Cfg>
constexpr bool packed_sized_for(std::uint32_t m, std::uint32_t n) {
  return Cfg::kCols == dev::tc_rows_packed_cols(m, n) && Cfg::kRows == 8 * dev::tc_rows_row_blocks(m) &&
         Cfg::kSmemBytes == dev::tc_rows_packed_smem_bytes(m, n);
}
constexpr std::uint32_t kManyCols = 51200, kMidN = 5120, kFewCols = 2048;  // >= 80, 40, 16 wide strips
static_assert(sized_for<Thin>(1, kFewCols) && sized_for<Thin>(8, kMidN) && sized_for<Narrow<1>>(1, kManyCols) &&
                  sized_for<Narrow<2>>(16, kMidN) && sized_for<Narrow<4>>(32, kFewCols) &&
                  sized_for<Mid<4>>(17, kMidN) && sized_for<Mid<2>>(9, kManyCols) && sized_for<Wide<4>>(32, kManyCols),
              "w8a16_tc_rows: geometry.hpp");
static_assert(sized_for<Mid<6>>(33, kMidN) && sized_for<Mid<8>>(64, kFewCols) && sized_for<Wide64<6>>(48, kManyCols) &&
                  sized_for<Wide64<8>>(49, kManyCols),
              "w8a16_tc_rows_m64: geometry.hpp");
static_assert(packed_sized_for<ThinPacked>(1, kFewCols) && packed_sized_for<NarrowPacked<1>>(8, kManyCols) &&
                  packed_sized_for<NarrowPacked<2>>(16, kMidN) && packed_sized_for<NarrowPacked<2>>(9, kManyCols),
              "w8a16_tc_rows_packed: geometry.hpp");

}  // namespace

#define W8A16_TC_ROWS_ARGS smem, input, weight, block_scale, output, m, n, k, a_row_stride, c_row_stride

// The body decodes weights with mul.rn.bf16x2 (w8a16_ptx.cuh), which needs sm_90. For an older
// architecture both kernels are left out of its cubin: their symbols are absent there, the handles
// resolve to zero, and the twins run their own bodies (docs/KERNEL_ABI.md 1.2). The host pass keeps
// the declarations; no host code launches them (the driver API resolves them by name).
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900

// Grid (ceil(N / tc_rows_cols(m, n)), 1), 256 threads, tc_rows_smem_bytes(m, n) of dynamic shared
// memory, 1 <= m <= 32. At most 80 registers, so that the thin and narrow strips at 1..8 rows
// (74,752 and 58,880 bytes) fit three CTAs on an SM; the others fit one to three by shared memory.
extern "C" __global__ void __launch_bounds__(256, 3)
    w8a16_tc_rows(const uint16_t* __restrict__ input, const uint8_t* __restrict__ weight,
                  const float* __restrict__ block_scale, uint16_t* __restrict__ output, uint32_t m, uint32_t n,
                  uint32_t k, uint32_t a_row_stride, uint32_t c_row_stride) {
  extern __shared__ __align__(16) unsigned char smem[];
  const uint32_t cols = dev::tc_rows_cols(m, n), blocks = dev::tc_rows_row_blocks(m);
  if (cols == dev::kTcRowsThinCols) {
    Thin::run(W8A16_TC_ROWS_ARGS);
  } else if (cols == dev::kTcRowsNarrowCols) {
    if (blocks == 1) Narrow<1>::run(W8A16_TC_ROWS_ARGS);
    else if (blocks == 2) Narrow<2>::run(W8A16_TC_ROWS_ARGS);
    else Narrow<4>::run(W8A16_TC_ROWS_ARGS);
  } else if (cols == dev::kTcRowsMidCols) {
    if (blocks == 2) Mid<2>::run(W8A16_TC_ROWS_ARGS);
    else Mid<4>::run(W8A16_TC_ROWS_ARGS);
  } else {
    Wide<4>::run(W8A16_TC_ROWS_ARGS);  // 17..32 rows
  }
}

// Grid (ceil(N / tc_rows_cols(m, n)), 1), 256 threads, tc_rows_smem_bytes(m, n) of dynamic shared
// memory, 33 <= m <= 64. At 64 rows a wide-strip warp holds 32 partial and 32 running sums and
// 8 row blocks of B fragments: at most 128 registers, no spills; two CTAs per SM.
extern "C" __global__ void __launch_bounds__(256, 2)
    w8a16_tc_rows_m64(const uint16_t* __restrict__ input, const uint8_t* __restrict__ weight,
                      const float* __restrict__ block_scale, uint16_t* __restrict__ output, uint32_t m, uint32_t n,
                      uint32_t k, uint32_t a_row_stride, uint32_t c_row_stride) {
  extern __shared__ __align__(16) unsigned char smem[];
  const bool six = dev::tc_rows_row_blocks(m) == 6;
  if (dev::tc_rows_cols(m, n) == dev::kTcRowsMidCols) {
    if (six) Mid<6>::run(W8A16_TC_ROWS_ARGS);
    else Mid<8>::run(W8A16_TC_ROWS_ARGS);
  } else if (six) {
    Wide64<6>::run(W8A16_TC_ROWS_ARGS);
  } else {
    Wide64<8>::run(W8A16_TC_ROWS_ARGS);
  }
}

// Grid (ceil(N / tc_rows_packed_cols(m, n)), 1), 256 threads, tc_rows_packed_smem_bytes(m, n) of
// dynamic shared memory, 1 <= m <= 16; `weight` is W packed (NUMERICS.md 2.3, packed_weight_bytes(n,
// k) bytes). The strips, rounds and fold are w8a16_tc_rows's; only the staging of W and the
// fragment loads differ (w8a16_rows_stream.cuh). It reads no NaN table: the integer decode's probe
// finds a NaN code in any tile, as in the unpacked layout.
extern "C" __global__ void __launch_bounds__(256, 3)
    w8a16_tc_rows_packed(const uint16_t* __restrict__ input, const uint8_t* __restrict__ weight,
                         const float* __restrict__ block_scale, uint16_t* __restrict__ output, uint32_t m, uint32_t n,
                         uint32_t k, uint32_t a_row_stride, uint32_t c_row_stride) {
  extern __shared__ __align__(16) unsigned char smem[];
  if (dev::tc_rows_packed_cols(m, n) == dev::kTcRowsThinCols) ThinPacked::run(W8A16_TC_ROWS_ARGS);
  else if (dev::tc_rows_row_blocks(m) == 1) NarrowPacked<1>::run(W8A16_TC_ROWS_ARGS);
  else NarrowPacked<2>::run(W8A16_TC_ROWS_ARGS);
}

#endif  // sm_90 and later

#undef W8A16_TC_ROWS_ARGS
