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
inline constexpr std::uint32_t kKBlock = 128;  // seed W8A16_M32_K_BLOCK: one scale block per K-step
// seed: block (256, 1, 1) for the twins; the 128-row tile, the row-tile kernel and the GEMVs (8
// warps) use the same block, so every plan has block (256, 1, 1).
inline constexpr std::uint32_t kThreadsPerCta = 256;
inline constexpr std::uint32_t kARowAlignElems = 8;  // seed: a_row_stride % 8 == 0 (16 B cp.async rows)

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
inline constexpr std::uint32_t kSkinnyMaxRows = 16;  // seed W8A16_M16_MAX_ROWS
inline constexpr std::uint32_t kSkinnyMaxK = 5120;   // seed W8A16_M16_MAX_K
inline constexpr std::uint32_t kSkinnyTileCols = 8;
W8A16_HOST_DEVICE constexpr std::uint32_t skinny_smem_bytes(std::uint32_t k) {
  return 8 * (k + 16);
}  // seed w8a16_m16_smem_bytes
// The one body rule (seed lines 140-141): the launch sizes the grid by it, and the kernel, given
// the same (m, k), must pick the same body. The simulation flags a plan whose geometry disagrees.
W8A16_HOST_DEVICE constexpr bool skinny_body_runs(std::uint32_t m, std::uint32_t k) {
  return m <= kSkinnyMaxRows && k <= kSkinnyMaxK;
}

// ---- w8a16_gemm_pipelined_m64: the 64-row twin (seed) -------------------------------------
// CTA (x, y) owns rows [64y, 64y + 64), columns [32x, 32x + 32). The seed launches it with no
// dynamic shared memory (its launch sets none): the kernel's shared memory is static.
inline constexpr std::uint32_t kM64TileRows = 64;  // seed W8A16_M64_TILE_ROWS
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
// The width and stage counts are the fastest measured on the H200 at each (rows, N) band; the
// tables behind every threshold: docs/JOURNAL.md, "What moved the numbers (... strip widths)".
// Rows are staged in blocks of 8: 1, 2, 4, 6 or 8 blocks, the fewest of those that hold M (6 at
// 33..48 rows: the same tables).
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
// row_blocks * 128 FP32). Packed W (w8a16_tc_rows_packed): W as its 2,048-byte groups, cols * round
// * 128 bytes with no row padding, and A rows of round * 128 BF16 + 8. The kernel static_asserts
// it equals its own layout.
W8A16_HOST_DEVICE constexpr std::uint32_t tc_rows_layout_bytes(std::uint32_t cols, std::uint32_t kg,
                                                               std::uint32_t round, std::uint32_t stages,
                                                               std::uint32_t row_blocks, bool packed = false) {
  const std::uint32_t w = packed ? cols * round * 128 : cols * (round * 128 + 16);
  return stages * (w + 8 * row_blocks * (round * 256 + (packed ? 16 : 32))) +
         (kg > 1 ? 2 * round * (8 / kg) * row_blocks * 128 * 4 : 0);
}
W8A16_HOST_DEVICE constexpr std::uint32_t tc_rows_smem_bytes(std::uint32_t m, std::uint32_t n) {
  const std::uint32_t blocks = tc_rows_row_blocks(m), cols = tc_rows_cols(m, n);
  if (cols == kTcRowsThinCols) return tc_rows_layout_bytes(kTcRowsThinCols, 8, 8, 2, blocks);
  if (cols == kTcRowsNarrowCols) return tc_rows_layout_bytes(kTcRowsNarrowCols, 4, 4, 2, blocks);
  if (cols == kTcRowsMidCols) return tc_rows_layout_bytes(kTcRowsMidCols, 2, 2, 2, blocks);
  return tc_rows_layout_bytes(kTcRowsWideCols, 1, 1, m > kTcRowsSmallMaxRows ? 2 : 4, blocks);
}
// w8a16_tc_rows_packed: the thin and narrow strips at 1..16 rows over W in the packed layout
// (NUMERICS.md 2.3), gemm_packed_strided's body where the Hopper tier's packed two-CTA symbol has
// too few 128-column units (plan.hpp packed_body). At 1..8 rows the strip tc_rows_cols picks; at
// 9..16 rows narrow (the two-CTA symbol takes every N where tc_rows_cols would pick mid, from 80
// units, on up to 159 SMs). A strip of 16 or 32 columns is 1 or 2 of a tile's 16-row groups, so it
// lies in one unit's tiles.
W8A16_HOST_DEVICE constexpr std::uint32_t tc_rows_packed_cols(std::uint32_t m, std::uint32_t n) {
  return m <= 8 ? tc_rows_cols(m, n) : kTcRowsNarrowCols;
}
W8A16_HOST_DEVICE constexpr std::uint32_t tc_rows_packed_smem_bytes(std::uint32_t m, std::uint32_t n) {
  const std::uint32_t blocks = tc_rows_row_blocks(m);
  return tc_rows_packed_cols(m, n) == kTcRowsThinCols ? tc_rows_layout_bytes(kTcRowsThinCols, 8, 8, 2, blocks, true)
                                                      : tc_rows_layout_bytes(kTcRowsNarrowCols, 4, 4, 2, blocks, true);
}

// ---- w8a16_wgmma_rows, w8a16_wgmma_rows_n128: the Hopper tier (sm_90a: wgmma fed by TMA) ----
// The operands are swapped against the other tiers: 64 rows of W (64 output columns) are wgmma's
// A operand, decoded from E4M3 to BF16 in registers, and a tile of up to 128 rows of A (output rows)
// is its B operand in shared memory, so the instruction's N is the tile's row count (8..128).
// A *unit* is `cols` output columns x one row tile x all of K. The grid is persistent: ctas =
// min(SMs, units) CTAs, and the units' 128-K steps, in (unit, step) order, are cut into ctas equal
// ranges, one per CTA (wgmma_cta_pieces). A unit cut between two CTAs keeps its fold order
// (NUMERICS.md 2.1): the earlier CTA folds the steps before the cut first thing and leaves `acc` in
// a workspace slot, and the later CTA folds the rest last thing, starting from that slot. Block: one
// producer warpgroup (TMA) and two consumer warpgroups, which share a unit in one of two ways:
//   w8a16_wgmma_rows (64-column units): the consumers take the unit's steps in turn (even, odd);
//     the first folds both in order, the second hands its partial sums over in shared memory. Twice
//     the units of the others, for shapes with few columns.
//   w8a16_wgmma_rows_n128 (128-column units): each consumer owns 64 of the columns and folds them
//     itself; both read the same row tile, so the tile's bytes are read once per 128 columns.
//   w8a16_wgmma_rows_n128_x2: the same with two CTAs per SM, at up to 16 rows.
inline constexpr std::uint32_t kWgWarpgroupCols = 64;  // one wgmma M
// A warpgroup: four consecutive warps, the threads one wgmma or setmaxnreg acts on (PTX ISA 9.7.15.1).
inline constexpr std::uint32_t kWgWarpgroupWarps = 4;
inline constexpr std::uint32_t kWgWarpgroupThreads = kWgWarpgroupWarps * 32;  // 128
inline constexpr std::uint32_t kWgConsumers = 2;  // consumer warpgroups, after the producer's
inline constexpr std::uint32_t kWgThreads = (1 + kWgConsumers) * kWgWarpgroupThreads;  // 384: 3 warpgroups
inline constexpr std::uint32_t kWgMaxTileRows = 128;
inline constexpr std::uint32_t kWgSwizzleRowBytes = 128;           // one row of the 128-byte swizzle
inline constexpr std::uint32_t kWgAlign = 8 * kWgSwizzleRowBytes;  // 1,024: a swizzle atom, 8 rows of 128 bytes
inline constexpr std::uint32_t kWgMaxStages = 8;                   // pipeline stages at most (wgmma_stages)
inline constexpr std::uint32_t kWgHandoverSlots = 2;               // the 64-column symbol's hand-over ring
inline constexpr std::uint32_t kWgMbarrierBytes = 8;               // one mbarrier object (PTX ISA 9.7.13.15.1)
// The three symbols: 64-column units; 128-column units, one CTA per SM; 128-column units at up to
// 16 rows with two CTAs per SM (twice the warps to hide the decode's latency where the units fill
// two CTAs per SM; each CTA has half the shared memory and 104 registers a consumer thread).
enum class WgVariant : std::uint8_t { k64, n128, n128_x2 };
W8A16_HOST_DEVICE constexpr bool wgmma_n128(WgVariant v) { return v != WgVariant::k64; }
W8A16_HOST_DEVICE constexpr std::uint32_t wgmma_ctas_per_sm(WgVariant v) { return v == WgVariant::n128_x2 ? 2 : 1; }
// Registers per thread after setmaxnreg (PTX ISA 9.7.17.4): the producer warpgroup gives back all but
// kWgProducerRegs, each consumer warpgroup takes wgmma_consumer_regs. A warpgroup's increase is paid
// from registers its CTA's other warpgroups released, so the sum must fit what the launch gave the
// CTA: kSmRegisters / (kWgThreads x CTAs per SM) a thread, in steps of 8 (the kernel static_asserts
// it): 128 x 24 + 256 x 240 = 64,512 <= 384 x 168 at one CTA per SM, 128 x 24 + 256 x 104 = 29,696
// <= 384 x 80 at two.
inline constexpr std::uint32_t kSmRegisters = 65536;  // the H200's register file per SM (32-bit)
inline constexpr std::uint32_t kWgProducerRegs = 24;
W8A16_HOST_DEVICE constexpr std::uint32_t wgmma_consumer_regs(WgVariant v) {
  return v == WgVariant::n128_x2 ? 104 : 240;
}
W8A16_HOST_DEVICE constexpr std::uint32_t wgmma_launch_regs(WgVariant v) {
  return kSmRegisters / (kWgThreads * wgmma_ctas_per_sm(v)) / 8 * 8;
}
// The perturbed module's bound on one wait of the Hopper tier's pipeline (a barrier phase or the
// cross-CTA flag, device/kernels/w8a16_timing.cuh, until); verify --perturb names it in the line of
// a launch whose waits reached it.
inline constexpr std::uint64_t kPerturbStallNs = 250'000'000;
// The two-CTA symbol runs 1..16 rows, the others 17 rows and more (plan.hpp wgmma_choice): each
// has only those row tiles.
inline constexpr std::uint32_t kWgX2MaxRows = 16;
W8A16_HOST_DEVICE constexpr bool wgmma_runs_rows(WgVariant v, std::uint32_t m) {
  return v == WgVariant::n128_x2 ? m >= 1 && m <= kWgX2MaxRows : m > kWgX2MaxRows;
}
// Shared memory a CTA may fill: the H200's opt-in limit, or for two CTAs per SM each one's share
// of the 228 KiB (1 KiB of which the SM keeps per CTA).
W8A16_HOST_DEVICE constexpr std::uint32_t wgmma_smem_budget(WgVariant v) {
  return v == WgVariant::n128_x2 ? 233472 / 2 - 1024 : 232448;
}
W8A16_HOST_DEVICE constexpr std::uint32_t wgmma_unit_cols(WgVariant v) {
  return wgmma_n128(v) ? 128 : kWgWarpgroupCols;
}
// The row tile: the fewest of 8, 16, 24, 32, 48, 64, 96, 128 rows that hold M (above 128 rows,
// tiles of 128).
W8A16_HOST_DEVICE constexpr std::uint32_t wgmma_tile_rows(std::uint32_t m) {
  return m <= 8 ? 8 : m <= 16 ? 16 : m <= 24 ? 24 : m <= 32 ? 32 : m <= 48 ? 48 : m <= 64 ? 64 : m <= 96 ? 96 : 128;
}
W8A16_HOST_DEVICE constexpr std::uint32_t wgmma_row_tiles(std::uint32_t m) {
  const std::uint32_t r = wgmma_tile_rows(m);
  return m / r + (m % r != 0);
}
W8A16_HOST_DEVICE constexpr std::uint32_t wgmma_col_units(std::uint32_t n, WgVariant v) {
  const std::uint32_t c = wgmma_unit_cols(v);
  return n / c + (n % c != 0);
}
// One pipeline stage: a step of W (cols x 128 codes) and a step of the row tile (rows x 128 BF16, as
// two 64-column halves of 128-byte rows). Each is a multiple of the 1,024-byte swizzle atom.
W8A16_HOST_DEVICE constexpr std::uint32_t wgmma_stage_bytes(std::uint32_t rows, WgVariant v) {
  return wgmma_unit_cols(v) * kKBlock + rows * 2 * kKBlock;
}
// The 64-column symbol's hand-over: two slots of the second consumer's partial sums (64 x rows FP32).
W8A16_HOST_DEVICE constexpr std::uint32_t wgmma_handover_bytes(std::uint32_t rows, WgVariant v) {
  return wgmma_n128(v) ? 0 : kWgHandoverSlots * kWgWarpgroupCols * rows * 4;
}
W8A16_HOST_DEVICE constexpr std::uint32_t wgmma_fixed_bytes(std::uint32_t rows, WgVariant v) {
  // + the barriers of kWgMaxStages stages
  return kWgAlign + wgmma_handover_bytes(rows, v) + kWgMbarrierBytes * (2 * kWgMaxStages + 2 * kWgHandoverSlots);
}
// Stages: as many as fit the shared memory beside the hand-over, at most kWgMaxStages.
W8A16_HOST_DEVICE constexpr std::uint32_t wgmma_stages(std::uint32_t rows, WgVariant v) {
  const std::uint32_t fit = (wgmma_smem_budget(v) - wgmma_fixed_bytes(rows, v)) / wgmma_stage_bytes(rows, v);
  return fit < kWgMaxStages ? fit : kWgMaxStages;
}
// Barriers: full and empty per stage, full and empty per hand-over slot (every symbol initialises
// the hand-over's, the 128-column ones never wait on them).
W8A16_HOST_DEVICE constexpr std::uint32_t wgmma_barrier_bytes(std::uint32_t rows, WgVariant v) {
  return kWgMbarrierBytes * (2 * wgmma_stages(rows, v) + 2 * kWgHandoverSlots);
}
// The dynamic shared memory: stages, hand-over, barriers, and the slack that lets the kernel align
// its base to 1,024 bytes (the launch guarantees only 16).
W8A16_HOST_DEVICE constexpr std::uint32_t wgmma_smem_bytes(std::uint32_t m, WgVariant v) {
  const std::uint32_t r = wgmma_tile_rows(m);
  return kWgAlign + wgmma_stages(r, v) * wgmma_stage_bytes(r, v) + wgmma_handover_bytes(r, v) +
         wgmma_barrier_bytes(r, v);
}
// The workspace of one launch: per CTA one slot of `acc` (cols x rows FP32, in the consumer
// threads' register order) and one 32-bit flag; flags are zero between launches (each is set by its
// writer and cleared by its one reader in the same launch).
W8A16_HOST_DEVICE constexpr std::uint64_t wgmma_workspace_slot_floats(std::uint32_t m, WgVariant v) {
  return std::uint64_t{wgmma_unit_cols(v)} * wgmma_tile_rows(m);
}
W8A16_HOST_DEVICE constexpr std::uint64_t wgmma_workspace_bytes(std::uint32_t m, std::uint32_t ctas, WgVariant v) {
  return std::uint64_t{ctas} * (4 * wgmma_workspace_slot_floats(m, v) + 4);
}
W8A16_HOST_DEVICE constexpr std::uint32_t wgmma_units(std::uint32_t m, std::uint32_t n, WgVariant v) {
  return wgmma_col_units(n, v) * wgmma_row_tiles(m);
}
W8A16_HOST_DEVICE constexpr std::uint32_t wgmma_ctas(std::uint32_t m, std::uint32_t n, std::uint32_t sms, WgVariant v) {
  const std::uint32_t u = wgmma_units(m, n, v), slots = sms * wgmma_ctas_per_sm(v);
  return u < slots ? u : slots;
}
// Unit u covers row tile u % row_tiles and column unit u / row_tiles: the row tiles of one column
// unit are neighbours in the order, so the CTAs that read the same weights run at the same time
// and share them in L2.
// What one CTA does, in order: at most three pieces. kind: head = steps [0, end) of a unit whose
// rest is the next CTA's (acc goes to this CTA's workspace slot); full = a whole unit; tail =
// steps [begin, steps) of a unit whose head was the previous CTA's (acc comes from its slot).
// The head comes first and the tail last, so a tail never waits for a head in practice.
enum class WgPieceKind : std::uint8_t { head, full, tail };
struct WgPiece {
  std::uint32_t unit = 0, begin = 0, end = 0;
  WgPieceKind kind = WgPieceKind::full;
};
struct WgPieces {
  bool has_head = false;
  WgPiece head;
  std::uint32_t full_begin = 0, full_end = 0;  // the whole units [full_begin, full_end), after the head
  bool has_tail = false;
  WgPiece tail;
};
// The range of CTA c: global steps [total c / ctas, total (c + 1) / ctas) with total = units *
// steps; ctas <= units makes every range at least one unit long, so a range holds at most one
// head (its last unit, cut) and one tail (its first unit, cut), never a unit cut twice.
W8A16_HOST_DEVICE constexpr WgPieces wgmma_cta_pieces(std::uint32_t c, std::uint32_t ctas, std::uint32_t units,
                                                      std::uint32_t steps) {
  const std::uint64_t total = std::uint64_t{units} * steps;
  const std::uint64_t begin = total * c / ctas, end = total * (c + 1) / ctas;
  WgPieces p{};
  std::uint32_t u0 = static_cast<std::uint32_t>(begin / steps);
  const std::uint32_t off0 = static_cast<std::uint32_t>(begin % steps);
  const std::uint32_t u1 = static_cast<std::uint32_t>((end - 1) / steps);                  // last unit touched
  const std::uint32_t off1 = static_cast<std::uint32_t>(end - std::uint64_t{u1} * steps);  // 1..steps
  if (off0 != 0) {
    p.has_tail = true;
    p.tail = WgPiece{u0, off0, steps, WgPieceKind::tail};
    ++u0;
  }
  std::uint32_t full_end = u1 + 1;
  if (off1 != steps) {
    p.has_head = true;
    p.head = WgPiece{u1, 0, off1, WgPieceKind::head};
    full_end = u1;
  }
  p.full_begin = u0;
  p.full_end = full_end < u0 ? u0 : full_end;
  return p;
}

// ---- the packed weight layout (NUMERICS.md 2.3): what gemm_packed_strided's W holds ------------
// W [n][k] repacked once, offline, into tiles of 128 rows x 128 K (one scale block, one step of a
// 128-column unit), each 16 KB and contiguous, in the Hopper tier's register-fragment order; then
// a NaN table, one byte per tile. The packed symbols copy a tile with one bulk copy and read a
// thread's codes of a 16-K window with one 8-byte shared load.
inline constexpr std::uint32_t kPackedTileRows = 128;
inline constexpr std::uint32_t kPackedTileBytes = kPackedTileRows * kKBlock;  // 16,384
inline constexpr std::uint32_t kPackedGroupBytes = 16 * kKBlock;              // 16 rows: one warp's
inline constexpr std::uint32_t kPackedWindowBytes = 256;                      // a warp's 16-K window
W8A16_HOST_DEVICE constexpr std::uint64_t packed_tiles(std::uint32_t n, std::uint32_t k) {
  return std::uint64_t{(n + kPackedTileRows - 1) / kPackedTileRows} * (k / kKBlock);
}
// Tile (u, s) of a W with `steps` = k / 128 steps: the tiles in (unit, step) order, each one byte
// of the NaN table at the same index; tiles first, the table after them.
W8A16_HOST_DEVICE constexpr std::uint64_t packed_tile_index(std::uint32_t u, std::uint32_t s, std::uint32_t steps) {
  return std::uint64_t{u} * steps + s;
}
W8A16_HOST_DEVICE constexpr std::uint64_t packed_tile_offset(std::uint32_t u, std::uint32_t s, std::uint32_t steps) {
  return packed_tile_index(u, s, steps) * kPackedTileBytes;
}
W8A16_HOST_DEVICE constexpr std::uint64_t packed_table_offset(std::uint32_t n, std::uint32_t k) {
  return packed_tiles(n, k) * kPackedTileBytes;
}
W8A16_HOST_DEVICE constexpr std::uint64_t packed_weight_bytes(std::uint32_t n, std::uint32_t k) {
  return packed_tiles(n, k) * (kPackedTileBytes + 1);
}
// The byte of code W[128u + r][128s + c] inside its tile: 16-row group r / 16 (warp r / 16 % 4 of
// consumer r / 64), window c / 16, lane 4 (r % 8) + (c % 8) / 2, and in the lane's 8 bytes first the
// row r % 8's codes at 2t, 2t+1, 2t+8, 2t+9, then row r % 8 + 8's: the A fragment of wgmma m64nNk16
// (PTX ISA 9.7.15.5.1), as w8a16_wgmma_rows.cu's decode takes it.
W8A16_HOST_DEVICE constexpr std::uint32_t packed_code_offset(std::uint32_t r, std::uint32_t c) {
  const std::uint32_t rr = r % 16, cc = c % 16;
  const std::uint32_t lane = 4 * (rr % 8) + (cc % 8) / 2;
  return r / 16 * kPackedGroupBytes + c / 16 * kPackedWindowBytes + lane * 8 + rr / 8 * 4 + cc / 8 * 2 + cc % 2;
}

// ---- w8a16_gemv_batch4_strided / w8a16_gemv_batch16_strided: scalar GEMVs -----------------
// One warp per output column for all rows (order: reference/include/w8a16/reference/gemv.hpp);
// 8 warps per CTA: CTA x owns columns [8x, 8x + 8) of every row [0, M).
inline constexpr std::uint32_t kGemvBatch4MaxRows = 4;
inline constexpr std::uint32_t kGemvBatch16MaxRows = 16;
inline constexpr std::uint32_t kGemvColsPerCta = 8;
inline constexpr std::uint32_t kGemvSmemBytes = 0;

}  // namespace w8a16::device
