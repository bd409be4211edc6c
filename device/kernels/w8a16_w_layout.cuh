// SPDX-License-Identifier: MIT OR Apache-2.0
// The layouts of W in global memory as policy types, each read by the Hopper tier (Wg) and the
// row-tile kernel (Strip): how a step's codes are loaded into shared memory and how a thread's
// fragments are read back out of it. A kernel takes its layout as a template parameter; a decode
// or layout experiment is one more policy with the same members (tools/gpu-decode-variants).
//   WRowMajor  W as the entry points take it, [n][k] E4M3 codes, row pitch k (NUMERICS.md 2.1)
//   WPacked    W repacked by pack_weights, with its NaN table (NUMERICS.md 2.3; geometry.hpp)
#pragma once
#include <cstddef>
#include <cstdint>

#include "w8a16/device/geometry.hpp"
#include "w8a16_ptx.cuh"

// The Hopper halves use the sm_90a PTX wrappers; the row-tile halves need none of them.
#if !defined(__CUDA_ARCH__) || defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define W8A16_W_LAYOUT_HOPPER 1
#include "w8a16_tma.cuh"
#else
#define W8A16_W_LAYOUT_HOPPER 0
#endif

namespace w8a16::kernels {

// ---- the Hopper tier's part (w8a16_wgmma_rows.cu) -----------------------------------------------
// A policy's Wg gives:
//   kUnitCols               the unit width its tiles hold (0: any)
//   prefetch(wmap)          before the first load
//   load(dst, wmap, weight, col_unit, s, steps, k0, col0, bytes, bar)
//                           the stage's W tile of column unit col_unit, step s (k0 = 128 s, col0
//                           its first column) into shared memory at dst, completing `bytes` on bar
//   range_may_nan(sh, pc, weight, range, lane)
//                           whether the consumer must decode with a NaN probe on the CTA's range
//   decode(w, row_base, lane, a, may_nan)
//                           the A fragments of W rows row_base + 0..63 of the stage whose W tile is
//                           at w (PTX ISA 9.7.15.5.1, register A of m64nNk16: a[j] for K window j)
// The fragments hold each K window's bytes 2t, 2t+1, 2t+8, 2t+9 of rows g and g + 8 (the B operand
// is the activations as TMA lands them, so the K positions are the ISA's own).

struct WRowMajor {
#if W8A16_W_LAYOUT_HOPPER
  struct Wg {
    static constexpr uint32_t kUnitCols = 0;  // any unit width
    static constexpr bool kNanTable = false;  // the decode probes every step (range_may_nan: always)
    __device__ __forceinline__ static void prefetch(const void* wmap) { tma_prefetch_map(wmap); }
    // A 2-D box {128, kCols} of the tensor map, in the 128-byte swizzle.
    __device__ __forceinline__ static void load(uint32_t dst, const void* wmap, const uint8_t* weight,
                                                uint32_t col_unit, uint32_t s, uint32_t steps, int32_t k0, int32_t col0,
                                                uint32_t bytes, uint32_t bar) {
      (void)weight, (void)col_unit, (void)s, (void)steps, (void)bytes;
      tma_load_2d(dst, wmap, k0, col0, bar);
    }
    // Every decode probes for NaN codes itself.
    template <class Sh, class Pieces>
    __device__ __forceinline__ static bool range_may_nan(const Sh&, const Pieces&, const uint8_t*, uint32_t, uint32_t) {
      return true;
    }
    __device__ __forceinline__ static void decode(uint32_t w, uint32_t row_base, uint32_t lane, uint32_t (&a)[8][4],
                                                  bool may_nan) {
      (void)may_nan;
      const uint32_t g = lane / 4, t = lane % 4;
      // Row r = row_base + g + 8h (r % 8 == g), window j: its 16-byte chunk sits at chunk j ^ g of
      // the 128-byte row (the TMA's 128-byte swizzle), so the 8 windows are one XOR each away from
      // the thread's base address and the two rows an immediate 1,024 bytes apart.
      const uint32_t base = w + (row_base + g) * w8a16::device::kWgSwizzleRowBytes + (g << 4) + ((t >> 1) << 2);
      // Bytes 2t, 2t+1 of a window's first 8 and 2t+8, 2t+9 of its last 8 (the 4-byte words at
      // 4 (t / 2) and 8 + 4 (t / 2)), in that order: the permute takes the low or high half of each.
      const uint32_t sel = (t & 1) ? 0x7632u : 0x5410u;
      auto codes = [&](int j, int h) {
        const uint32_t at = base ^ (static_cast<uint32_t>(j) << 4);
        return h == 0 ? prmt(lds_u32<0>(at), lds_u32<8>(at), sel) : prmt(lds_u32<1024>(at), lds_u32<1032>(at), sel);
      };
      uint32_t nan_probe = 0;
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        uint32_t f0[2], f1[2];
        e4m3x4_to_bf16_frag_int(codes(j, 0), f0, nan_probe);
        e4m3x4_to_bf16_frag_int(codes(j, 1), f1, nan_probe);
        a[j][0] = f0[0];
        a[j][1] = f1[0];
        a[j][2] = f0[1];
        a[j][3] = f1[1];
      }
      // NaN codes (0x7F, 0xFF) decode to +-480 above: this thread reads its codes again and decodes
      // them exactly (rare: the fast path keeps no copy of the codes, to save registers).
      if (e4m3_nan_seen(nan_probe)) {
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          uint32_t f0[2], f1[2];
          e4m3x4_to_bf16_frag(codes(j, 0), f0);
          e4m3x4_to_bf16_frag(codes(j, 1), f1);
          a[j][0] = f0[0];
          a[j][1] = f1[0];
          a[j][2] = f0[1];
          a[j][3] = f1[1];
        }
      }
    }
  };
#endif
};

struct WPacked {
#if W8A16_W_LAYOUT_HOPPER
  struct Wg {
    static constexpr uint32_t kUnitCols = w8a16::device::kPackedTileRows;  // a tile is a 128-column unit's step
    static constexpr bool kNanTable = true;                                // range_may_nan reads the layout's NaN table
    __device__ __forceinline__ static void prefetch(const void*) {}        // the tensor map of W is not read
    // A step's tile is one contiguous block: one bulk copy (PTX ISA 9.7.9.25, cp.async.bulk).
    __device__ __forceinline__ static void load(uint32_t dst, const void* wmap, const uint8_t* weight,
                                                uint32_t col_unit, uint32_t s, uint32_t steps, int32_t k0, int32_t col0,
                                                uint32_t bytes, uint32_t bar) {
      (void)wmap, (void)k0, (void)col0;
      bulk_load(dst, weight + w8a16::device::packed_tile_offset(col_unit, s, steps), bytes, bar);
    }
    // Whether a tile of the CTA's range holds a NaN code. The NaN table (NUMERICS.md 2.3) is read
    // once, before the first decode, by each consumer warp for itself (its lanes OR the range's
    // bytes, __any_sync joins them: no barrier between warps), so the consumers load nothing per
    // step; a range with no NaN tile (every range, for weights without NaN codes) takes the
    // probe-free decode throughout. A range with one decodes every tile exactly, which gives the
    // same bits (w8a16_ptx.cuh), only slower.
    // The range is the steps [s0, steps) of unit u0 and on, in (unit, step) order: its tail piece
    // first if it has one (wgmma_cta_pieces). Step s of unit u reads the tile of column unit
    // u / row_tiles.
    template <class Sh, class Pieces>
    __device__ __forceinline__ static bool range_may_nan(const Sh& sh, const Pieces& pc, const uint8_t* weight,
                                                         uint32_t range, uint32_t lane) {
      const uint8_t* table = weight + w8a16::device::packed_table_offset(sh.n, sh.k);
      const uint32_t u0 = pc.has_tail ? pc.tail.unit : pc.full_begin < pc.full_end ? pc.full_begin : pc.head.unit;
      const uint32_t s0 = pc.has_tail ? pc.tail.begin : 0;
      uint32_t any = 0;
#pragma unroll 4
      for (uint32_t i = s0 + lane; i < s0 + range; i += 32) {
        const uint32_t u = u0 + i / sh.steps, s = i % sh.steps;
        any |= __ldg(table + w8a16::device::packed_tile_index(u / sh.row_tiles, s, sh.steps));
      }
      return __any_sync(0xFFFFFFFFu, any != 0);
    }
    // Row r = row_base + g + 8h, window j: the 8 bytes at group r / 16, window j, lane
    // (geometry.hpp packed_code_offset), codes of row g then of row g + 8.
    __device__ __forceinline__ static void decode(uint32_t w, uint32_t row_base, uint32_t lane, uint32_t (&a)[8][4],
                                                  bool may_nan) {
      const uint32_t own = w + row_base / 16 * w8a16::device::kPackedGroupBytes + lane * 8;
      auto put = [&](int j, const uint32_t(&f0)[2], const uint32_t(&f1)[2]) {
        a[j][0] = f0[0];
        a[j][1] = f1[0];
        a[j][2] = f0[1];
        a[j][3] = f1[1];
      };
      if (!may_nan) {  // no NaN code in the tile: the integer decode is exact (w8a16_ptx.cuh)
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          uint32_t c[2], f0[2], f1[2], unused = 0;
          lds_v2_u32(own + j * w8a16::device::kPackedWindowBytes, c);
          e4m3x4_to_bf16_frag_int(c[0], f0, unused);
          e4m3x4_to_bf16_frag_int(c[1], f1, unused);
          put(j, f0, f1);
        }
      } else {
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          uint32_t v[2], f0[2], f1[2];
          lds_v2_u32(own + j * w8a16::device::kPackedWindowBytes, v);
          e4m3x4_to_bf16_frag(v[0], f0);
          e4m3x4_to_bf16_frag(v[1], f1);
          put(j, f0, f1);
        }
      }
    }
  };
#endif
};

}  // namespace w8a16::kernels
