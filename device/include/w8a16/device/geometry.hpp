// SPDX-License-Identifier: MIT OR Apache-2.0
// Launch geometry of every kernel of the family: the one place the launch layer (plans, the
// simulation's tile maps) and the kernels (.cu) both read. Constants marked "seed" are the Rust
// launch module's (docs/KERNEL_ABI.md 6) and must not change.
#pragma once
#include <cstdint>

// The geometry functions run in host code (plans, simulation) and in the kernels (body choice).
#if defined(__CUDACC__)
#define W8A16_HOST_DEVICE __host__ __device__
#else
#define W8A16_HOST_DEVICE
#endif

namespace w8a16::device {

// ---- common -----------------------------------------------------------------------------
inline constexpr std::uint32_t kKBlock = 128;          // seed W8A16_M32_K_BLOCK: one scale block per K-step
// seed: block (256, 1, 1) for the twins; the 128-row tile, the row-tile kernel and the GEMVs (8
// warps) use the same block, so every plan has block (256, 1, 1).
inline constexpr std::uint32_t kThreadsPerCta = 256;
inline constexpr std::uint32_t kARowAlignElems = 8;    // seed: a_row_stride % 8 == 0 (16 B cp.async rows)

// ---- w8a16_gemm_pipelined: the 128-row tile ----------------------------------------------
// CTA (x, y) owns rows [128y, 128y + 128) and columns [64x, 64x + 64), clipped to [M, N].
inline constexpr std::uint32_t kGemm128TileRows = 128;
inline constexpr std::uint32_t kGemm128TileCols = 64;
// Dynamic shared memory of the 128-row tile. A value here (not a definition in the .cu) so that the
// host-only build, which compiles no kernel, can plan and simulate launches; the kernel file
// (device/kernels/w8a16_gemm_pipelined.cu) static_asserts that its layout fits. Its layout: 2 stages
// of A 128 x 144 BF16 (36,864) + raw B 64 x 144 codes (9,216), plus one decoded BF16 B step 64 x 144
// (18,432) = 110,592, so two CTAs share an SM. Above 48 KiB: the launch opts in (cuFuncSetAttribute).
inline constexpr std::uint32_t kGemm128SmemBytes = 110592;

// ---- w8a16_gemm_pipelined_m32: the 32-row twin (seed) -------------------------------------
// Tile body: CTA (x, y) owns rows [32y, 32y + 32), columns [32x, 32x + 32), clipped to [M, N].
inline constexpr std::uint32_t kM32TileRows = 32;      // seed W8A16_M32_TILE_ROWS
inline constexpr std::uint32_t kM32TileCols = 32;      // seed W8A16_M32_TILE_COLS
inline constexpr std::uint32_t kM32SmemBytes = 44032;  // seed W8A16_M32_SMEM_BYTES
// Skinny body, for M <= 16 && K <= 5120: CTA x owns columns [8x, 8x + 8) of every row [0, M);
// 8 warps compute different 128-K steps' partial sums, folded in step order.
inline constexpr std::uint32_t kSkinnyMaxRows = 16;    // seed W8A16_M16_MAX_ROWS
inline constexpr std::uint32_t kSkinnyMaxK = 5120;     // seed W8A16_M16_MAX_K
inline constexpr std::uint32_t kSkinnyTileCols = 8;
W8A16_HOST_DEVICE constexpr std::uint32_t skinny_smem_bytes(std::uint32_t k) { return 8 * (k + 16); }  // seed w8a16_m16_smem_bytes
// The one body rule (seed lines 140-141): the launch sizes the grid by it, and the kernel, given
// the same (m, k), must pick the same body. The simulation flags a plan whose geometry disagrees.
W8A16_HOST_DEVICE constexpr bool skinny_body_runs(std::uint32_t m, std::uint32_t k) {
  return m <= kSkinnyMaxRows && k <= kSkinnyMaxK;
}

// ---- w8a16_gemm_pipelined_m64: the 64-row twin (seed) -------------------------------------
// CTA (x, y) owns rows [64y, 64y + 64), columns [32x, 32x + 32). The seed launches it with no
// dynamic shared memory (its launch sets none): the kernel's shared memory is static.
inline constexpr std::uint32_t kM64TileRows = 64;      // seed W8A16_M64_TILE_ROWS
inline constexpr std::uint32_t kM64TileCols = 32;
inline constexpr std::uint32_t kM64SmemBytes = 0;

// ---- w8a16_tc_rows, w8a16_tc_rows_m64: the row-tile kernel the twins try first ------------
// CTA x owns columns [cols x, cols x + cols) of every row [0, M), M <= 64, where cols depends on
// the shape: the kernels (device/kernels/w8a16_tc_rows.cu, w8a16_rows_stream.cuh) and the launch
// both compute it from (m, n) with the functions below, as they do the skinny body rule. Which
// shapes it takes is device/launch's tc_rows_takes(); it declines every other shape. Two kernel
// symbols share the body, split by register budget: w8a16_tc_rows (1..32 rows) is held to 80
// registers so that its narrow strip fits three CTAs on an SM; w8a16_tc_rows_m64 (33..64 rows)
// needs up to 128 (at 64 rows a wide-strip warp holds 32 partial and 32 running sums) and fits two.
// Four strip widths; "wide strips" below = ceil(N / 128):
//   thin:   16 columns, all eight warps on one tile splitting each 8-step round, 2 stages; 1..8
//           rows under kTcRowsThinMaxCtas wide strips (74,752 bytes: three CTAs an SM);
//   narrow: 32 columns, four warps per 16-column tile splitting each 4-step round, 2 stages;
//           1..8 rows from kTcRowsThinMaxCtas wide strips, 9..16 rows under kTcRowsWideMinCtas,
//           17..32 rows under kTcRowsMidMinCtas. At 1..8 rows it needs 58,880 bytes: three CTAs;
//   mid:    64 columns, two warps per tile splitting each 2-step round, 2 stages; 9..16 rows from
//           kTcRowsWideMinCtas wide strips, 17..64 rows below that (17..32: from kTcRowsMidMinCtas);
//   wide:   128 columns, one warp per 16-column tile, rounds of one 128-K step; 17..64 rows from
//           kTcRowsWideMinCtas wide strips; 4 stages up to 32 rows, 2 above (the registers allow
//           two CTAs an SM, and 2 stages measured as fast as 3 or 4).
// Measured on the H200 (device/kernels/PERF_NOTES.md, "strip widths"): from N = 10240 (80 wide
// strips) the wide strip led at 24..64 rows and the mid one at 16 rows (2-5% ahead of wide); at
// N <= 8192 (64 wide strips) the wide strip lost (narrow 1.4x faster at 16 rows, mid 1.4x at 32);
// at 17..32 rows mid led at N = 5120 and 8192 and narrow at N = 2048; at 1..8 rows thin led
// narrow by 12-23% at N = 5120 and 2048 (160 and 64 narrow strips leave SMs idle) and lost by
// 15-27% at N = 10240 and 12288; the threshold sits between, where the narrow strips would not
// give every SM two CTAs (N <= 8064: at most 252 of them).
// Rows are staged in blocks of 8: 1, 2, 4, 6 or 8 blocks, the fewest of those that hold M (at 48
// rows 6 blocks ran 12-16% faster than 8).
inline constexpr std::uint32_t kTcRowsMaxRows = 64;
inline constexpr std::uint32_t kTcRowsSmallMaxRows = 32;  // w8a16_tc_rows; above: w8a16_tc_rows_m64
inline constexpr std::uint32_t kTcRowsNarrowMaxRows = 16;
inline constexpr std::uint32_t kTcRowsWideCols = 128;
inline constexpr std::uint32_t kTcRowsMidCols = 64;
inline constexpr std::uint32_t kTcRowsNarrowCols = 32;
inline constexpr std::uint32_t kTcRowsThinCols = 16;
inline constexpr std::uint32_t kTcRowsThinMaxCtas = 64;  // thin at N <= 8064
inline constexpr std::uint32_t kTcRowsWideMinCtas = 80;  // N >= 10113
inline constexpr std::uint32_t kTcRowsMidMinCtas = 32;   // N >= 3969
W8A16_HOST_DEVICE constexpr std::uint32_t tc_rows_wide_strips(std::uint32_t n) {
  return n / kTcRowsWideCols + (n % kTcRowsWideCols != 0);
}
W8A16_HOST_DEVICE constexpr std::uint32_t tc_rows_cols(std::uint32_t m, std::uint32_t n) {
  const std::uint32_t strips = tc_rows_wide_strips(n);
  if (m <= 8) return strips < kTcRowsThinMaxCtas ? kTcRowsThinCols : kTcRowsNarrowCols;
  if (m <= kTcRowsNarrowMaxRows) return strips >= kTcRowsWideMinCtas ? kTcRowsMidCols : kTcRowsNarrowCols;
  if (strips >= kTcRowsWideMinCtas) return kTcRowsWideCols;
  if (m <= kTcRowsSmallMaxRows && strips < kTcRowsMidMinCtas) return kTcRowsNarrowCols;
  return kTcRowsMidCols;
}
W8A16_HOST_DEVICE constexpr std::uint32_t tc_rows_row_blocks(std::uint32_t m) {
  return m <= 8 ? 1 : m <= 16 ? 2 : m <= 32 ? 4 : m <= 48 ? 6 : 8;
}
// The layout of one configuration (w8a16_rows_stream.cuh): kStages stages of W (cols rows of
// round * 128 codes + 16) and A (8 * row_blocks rows of round * 128 BF16 + 16), plus, when
// several warps share a tile (kg > 1), two rounds of partial sums (round * 8 / kg groups *
// row_blocks * 128 FP32). The kernel static_asserts it equals its own layout.
W8A16_HOST_DEVICE constexpr std::uint32_t tc_rows_layout_bytes(std::uint32_t cols, std::uint32_t kg,
                                                               std::uint32_t round, std::uint32_t stages,
                                                               std::uint32_t row_blocks) {
  return stages * (cols * (round * 128 + 16) + 8 * row_blocks * (round * 256 + 32)) +
         (kg > 1 ? 2 * round * (8 / kg) * row_blocks * 128 * 4 : 0);
}
W8A16_HOST_DEVICE constexpr std::uint32_t tc_rows_smem_bytes(std::uint32_t m, std::uint32_t n) {
  const std::uint32_t blocks = tc_rows_row_blocks(m), cols = tc_rows_cols(m, n);
  if (cols == kTcRowsThinCols) return tc_rows_layout_bytes(kTcRowsThinCols, 8, 8, 2, blocks);
  if (cols == kTcRowsNarrowCols) return tc_rows_layout_bytes(kTcRowsNarrowCols, 4, 4, 2, blocks);
  if (cols == kTcRowsMidCols) return tc_rows_layout_bytes(kTcRowsMidCols, 2, 2, 2, blocks);
  return tc_rows_layout_bytes(kTcRowsWideCols, 1, 1, m > kTcRowsSmallMaxRows ? 2 : 4, blocks);
}

// ---- w8a16_gemv_batch4_strided / w8a16_gemv_batch16_strided: scalar GEMVs -----------------
// One warp per output column for all rows (order: reference/include/w8a16/reference/gemv.hpp);
// 8 warps per CTA: CTA x owns columns [8x, 8x + 8) of every row [0, M).
inline constexpr std::uint32_t kGemvBatch4MaxRows = 4;
inline constexpr std::uint32_t kGemvBatch16MaxRows = 16;
inline constexpr std::uint32_t kGemvColsPerCta = 8;
inline constexpr std::uint32_t kGemvSmemBytes = 0;

}  // namespace w8a16::device
