// SPDX-License-Identifier: MIT OR Apache-2.0
// w8a16_tc_rows, w8a16_tc_rows_m64: the row-tile kernel of the canonical fold (NUMERICS.md 2.1):
// column strips of every row of a short M (1..32 and 33..64 rows), any K.
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

// wide: 128 columns, 1 warp per 16-column tile, 1-step rounds, 4 stages (2 above 32 rows).
template <int kMb>
using Wide = kn::RowsStream<1, 1, 1, 4, kMb>;
template <int kMb>
using Wide64 = kn::RowsStream<1, 1, 1, 2, kMb>;
// mid: 64 columns, 2 warps per tile, 2-step rounds, 2 stages (33..64 rows only).
template <int kMb>
using Mid = kn::RowsStream<2, 1, 2, 2, kMb>;
// narrow: 32 columns, 4 warps per tile, 4-step rounds, 2 stages.
template <int kMb>
using Narrow = kn::RowsStream<4, 1, 4, 2, kMb>;

template <int kMb>
constexpr bool wide_matches() {
  return Wide<kMb>::kCols == dev::kTcRowsWideCols &&
         Wide<kMb>::kSmemBytes == dev::tc_rows_layout_bytes(dev::kTcRowsWideCols, 1, 1, 4, kMb);
}
template <int kMb>
constexpr bool narrow_matches() {
  return Narrow<kMb>::kCols == dev::kTcRowsNarrowCols &&
         Narrow<kMb>::kSmemBytes == dev::tc_rows_layout_bytes(dev::kTcRowsNarrowCols, 4, 4, 2, kMb);
}
template <int kMb>
constexpr bool m64_matches() {
  return Wide64<kMb>::kCols == dev::kTcRowsWideCols && Mid<kMb>::kCols == dev::kTcRowsMidCols &&
         Wide64<kMb>::kSmemBytes == dev::tc_rows_smem_bytes(8 * kMb, 1u << 20) &&
         Mid<kMb>::kSmemBytes == dev::tc_rows_smem_bytes(8 * kMb, 1);
}
static_assert(wide_matches<1>() && wide_matches<2>() && wide_matches<4>(), "geometry.hpp");
static_assert(narrow_matches<1>() && narrow_matches<2>(), "geometry.hpp");
static_assert(m64_matches<6>() && m64_matches<8>(), "geometry.hpp");
static_assert(dev::tc_rows_row_blocks(dev::kTcRowsSmallMaxRows) == 4 && dev::tc_rows_row_blocks(dev::kTcRowsNarrowMaxRows) == 2 &&
                  dev::tc_rows_row_blocks(dev::kTcRowsSmallMaxRows + 1) == 6 && dev::tc_rows_row_blocks(48) == 6 &&
                  dev::tc_rows_row_blocks(49) == 8 && dev::tc_rows_row_blocks(dev::kTcRowsMaxRows) == 8,
              "row blocks");
}  // namespace

// Grid (ceil(N / tc_rows_cols(m, n)), 1), 256 threads, tc_rows_smem_bytes(m, n) of dynamic shared
// memory, 1 <= m <= 32. At most 80 registers, so that the narrow strip at 1..8 rows (58,880
// bytes) fits three CTAs on an SM; the other configurations fit two by shared memory.
extern "C" __global__ void __launch_bounds__(256, 3)
    w8a16_tc_rows(const uint16_t* __restrict__ input, const uint8_t* __restrict__ weight,
                  const float* __restrict__ block_scale, uint16_t* __restrict__ output, uint32_t m, uint32_t n,
                  uint32_t k, uint32_t a_row_stride, uint32_t c_row_stride) {
  extern __shared__ __align__(16) unsigned char smem[];
  const uint32_t blocks = dev::tc_rows_row_blocks(m);
  if (dev::tc_rows_narrow(m, n)) {
    if (blocks == 1)
      Narrow<1>::run(smem, input, weight, block_scale, output, m, n, k, a_row_stride, c_row_stride);
    else
      Narrow<2>::run(smem, input, weight, block_scale, output, m, n, k, a_row_stride, c_row_stride);
  } else if (blocks == 1) {
    Wide<1>::run(smem, input, weight, block_scale, output, m, n, k, a_row_stride, c_row_stride);
  } else if (blocks == 2) {
    Wide<2>::run(smem, input, weight, block_scale, output, m, n, k, a_row_stride, c_row_stride);
  } else {
    Wide<4>::run(smem, input, weight, block_scale, output, m, n, k, a_row_stride, c_row_stride);
  }
}

// Grid (ceil(N / tc_rows_cols(m, n)), 1), 256 threads, tc_rows_smem_bytes(m, n) of dynamic shared
// memory, 33 <= m <= 64. At 64 rows a wide-strip warp holds 32 partial and 32 running sums and
// 8 row blocks of B fragments: 120 registers, no spills; two CTAs per SM.
extern "C" __global__ void __launch_bounds__(256, 2)
    w8a16_tc_rows_m64(const uint16_t* __restrict__ input, const uint8_t* __restrict__ weight,
                      const float* __restrict__ block_scale, uint16_t* __restrict__ output, uint32_t m, uint32_t n,
                      uint32_t k, uint32_t a_row_stride, uint32_t c_row_stride) {
  extern __shared__ __align__(16) unsigned char smem[];
  const bool six = dev::tc_rows_row_blocks(m) == 6;
  if (dev::tc_rows_mid(m, n)) {
    if (six)
      Mid<6>::run(smem, input, weight, block_scale, output, m, n, k, a_row_stride, c_row_stride);
    else
      Mid<8>::run(smem, input, weight, block_scale, output, m, n, k, a_row_stride, c_row_stride);
  } else if (six) {
    Wide64<6>::run(smem, input, weight, block_scale, output, m, n, k, a_row_stride, c_row_stride);
  } else {
    Wide64<8>::run(smem, input, weight, block_scale, output, m, n, k, a_row_stride, c_row_stride);
  }
}
