// SPDX-License-Identifier: MIT OR Apache-2.0
// w8a16_wgmma_rows: the Hopper tier of the canonical fold (NUMERICS.md 2.1): wgmma.mma_async fed by
// the tensor memory accelerator, persistent CTAs over column units (geometry.hpp).
#include <cuda.h>  // CUtensorMap

#include <cstdint>

#include "w8a16/device/geometry.hpp"

// wgmma and setmaxnreg exist only in the sm_90a target: every other cubin of the module lacks the
// symbol, its handle is zero there, and the entry points fall back to the other tiers.
#if !defined(__CUDA_ARCH__) || defined(__CUDA_ARCH_FEAT_SM90_ALL)
#include "w8a16_ptx.cuh"
#include "w8a16_tma.cuh"
#include "w8a16_wgmma_mma.cuh"

namespace {
namespace dev = w8a16::device;
namespace kn = w8a16::kernels;

struct Shape {
  std::uint32_t m, n, k, lda, ldc, steps, row_tiles, units;
};

// The operand swap (geometry.hpp): per 128-K step, a unit's 64 x 128 E4M3 codes are the A operand
// of 8 chained wgmma m64nRk16, each thread decoding its A fragments from shared memory into
// registers, and the row tile's R x 128 BF16 are the B operand, read by wgmma from shared memory.
// D[c][r] is the step's partial sum p for output (row r, column c) of the unit.
//
// Fragments (PTX ISA 9.7.15.5.1, register A of m64nNk16, .bf16; warp w of the warpgroup, g = lane
// / 4, t = lane % 4): a0 = A[16w+g][2t..2t+1], a1 = A[16w+g+8][2t..2t+1], a2 = A[16w+g][2t+8..2t+9],
// a3 = A[16w+g+8][2t+8..2t+9]; accumulators d[4i..4i+3] = D[16w+g][8i+2t..+1], D[16w+g+8][8i+2t..+1].
// Unlike the mma.sync tiers the K positions are the ISA's own: the B operand is the activations as
// TMA lands them, so the A fragment takes the bytes at 2t, 2t+1, 2t+8, 2t+9 of each 16-byte window
// (two 4-byte shared loads and one byte permute per row and window).
template <int kRows>
struct WgRows {
  static constexpr std::uint32_t kStages = dev::wgmma_stages(kRows);
  static constexpr std::uint32_t kStageBytes = dev::wgmma_stage_bytes(kRows);
  static constexpr std::uint32_t kHalfBytes = kRows * 128;  // rows x 64 BF16
  static constexpr int kAcc = kRows / 2;                    // 64 x kRows FP32 over 128 threads
  static constexpr std::uint32_t kSlotFloats = dev::kWgUnitCols * kRows;
  static constexpr std::uint32_t kOffHandover = kStages * kStageBytes;
  static constexpr std::uint32_t kOffBarriers = kOffHandover + dev::wgmma_handover_bytes(kRows);
  static_assert(dev::kWgAlign + kOffBarriers + dev::wgmma_barrier_bytes(kRows) == dev::wgmma_smem_bytes(kRows),
                "w8a16_wgmma_rows: shared memory layout differs from geometry.hpp");
  static_assert(kStageBytes % dev::kWgAlign == 0 && kHalfBytes % dev::kWgAlign == 0, "swizzle atoms");

  struct Smem {
    std::uint8_t* base;
    std::uint32_t base_addr;
    __device__ __forceinline__ std::uint32_t stage(std::uint32_t slot) const { return base_addr + slot * kStageBytes; }
    __device__ __forceinline__ const std::uint8_t* weights(std::uint32_t slot) const { return base + slot * kStageBytes; }
    __device__ __forceinline__ std::uint32_t full(std::uint32_t slot) const { return base_addr + kOffBarriers + 8 * slot; }
    __device__ __forceinline__ std::uint32_t empty(std::uint32_t slot) const { return base_addr + kOffBarriers + 8 * (kStages + slot); }
    __device__ __forceinline__ std::uint32_t hfull(std::uint32_t h) const { return base_addr + kOffBarriers + 8 * (2 * kStages + h); }
    __device__ __forceinline__ std::uint32_t hempty(std::uint32_t h) const {
      return base_addr + kOffBarriers + 8 * (2 * kStages + 2 + h);
    }
    __device__ __forceinline__ float* handover(std::uint32_t h) const {
      return reinterpret_cast<float*>(base + kOffHandover) + h * kSlotFloats;
    }
  };

  // Visits the CTA's steps in order: f(unit, step, first_of_piece, last_of_piece, piece).
  template <class F>
  __device__ __forceinline__ static void for_each_step(const dev::WgPieces& pc, std::uint32_t steps, F&& f) {
    if (pc.has_head)
      for (std::uint32_t s = pc.head.begin; s < pc.head.end; ++s) f(pc.head, s);
    for (std::uint32_t u = pc.full_begin; u < pc.full_end; ++u) {
      const dev::WgPiece whole{u, 0, steps, dev::WgPieceKind::full};
      for (std::uint32_t s = 0; s < steps; ++s) f(whole, s);
    }
    if (pc.has_tail)
      for (std::uint32_t s = pc.tail.begin; s < pc.tail.end; ++s) f(pc.tail, s);
  }

  // ---- producer: one thread issues every TMA load of the CTA, in step order --------------------
  __device__ __forceinline__ static void produce(const Smem& sm, const Shape& sh, const dev::WgPieces& pc, const CUtensorMap* wmap,
                                 const CUtensorMap* amap) {
    kn::tma_prefetch_map(wmap);
    kn::tma_prefetch_map(amap);
    std::uint32_t q = 0;
    for_each_step(pc, sh.steps, [&](const dev::WgPiece& piece, std::uint32_t s) {
      const std::uint32_t slot = q % kStages;
      if (q >= kStages) kn::mbar_wait(sm.empty(slot), (q / kStages - 1) & 1);
      const std::uint32_t col_unit = piece.unit / sh.row_tiles, row_tile = piece.unit % sh.row_tiles;
      const std::uint32_t dst = sm.stage(slot);
      kn::mbar_arrive_expect_tx(sm.full(slot), kStageBytes);
      kn::tma_load_2d(dst, wmap, static_cast<int32_t>(s * dev::kKBlock),
                      static_cast<int32_t>(col_unit * dev::kWgUnitCols), sm.full(slot));
      const auto row0 = static_cast<int32_t>(row_tile * kRows);
      kn::tma_load_2d(dst + dev::kWgWeightStepBytes, amap, static_cast<int32_t>(s * dev::kKBlock), row0, sm.full(slot));
      kn::tma_load_2d(dst + dev::kWgWeightStepBytes + kHalfBytes, amap, static_cast<int32_t>(s * dev::kKBlock + 64),
                      row0, sm.full(slot));
      ++q;
    });
  }

  // ---- a consumer's 128-K step: decode the unit's A fragments, 8 chained wgmmas into p ----------
  __device__ __forceinline__ static void step_mma(const Smem& sm, std::uint32_t slot, std::uint32_t warp, std::uint32_t lane,
                                  float (&p)[kAcc]) {
    const std::uint32_t g = lane / 4, t = lane % 4;
    const std::uint8_t* wt = sm.weights(slot);
    // Bytes 2t, 2t+1 of a window's first 8 and 2t+8, 2t+9 of its last 8 (the 4-byte words at
    // 4 (t / 2) and 8 + 4 (t / 2)), in that order: the permute takes the low or high half of each.
    const std::uint32_t sel = (t & 1) ? 0x7632u : 0x5410u;
    std::uint32_t codes[8][2];
    std::uint32_t nan_probe = 0;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const std::uint32_t r = 16 * warp + g + 8 * h;  // r % 8 == g: the TMA's 128-byte swizzle
        const std::uint8_t* at = wt + r * 128 + ((static_cast<std::uint32_t>(j) ^ g) << 4) + ((t >> 1) << 2);
        const std::uint32_t lo = *reinterpret_cast<const std::uint32_t*>(at);
        const std::uint32_t hi = *reinterpret_cast<const std::uint32_t*>(at + 8);
        codes[j][h] = kn::prmt(lo, hi, sel);
      }
    }
    std::uint32_t a[8][4];
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      std::uint32_t f0[2], f1[2];
      kn::e4m3x4_to_bf16_frag_int(codes[j][0], f0, nan_probe);
      kn::e4m3x4_to_bf16_frag_int(codes[j][1], f1, nan_probe);
      a[j][0] = f0[0];
      a[j][1] = f1[0];
      a[j][2] = f0[1];
      a[j][3] = f1[1];
    }
    // NaN codes (0x7F, 0xFF) decode to +-480 above; redo this thread's fragments exactly.
    if (kn::e4m3_nan_seen(nan_probe)) {
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        std::uint32_t f0[2], f1[2];
        kn::e4m3x4_to_bf16_frag(codes[j][0], f0);
        kn::e4m3x4_to_bf16_frag(codes[j][1], f1);
        a[j][0] = f0[0];
        a[j][1] = f1[0];
        a[j][2] = f0[1];
        a[j][3] = f1[1];
      }
    }
    const std::uint32_t act = sm.stage(slot) + dev::kWgWeightStepBytes;
    kn::wgmma_fence();
    kn::WgmmaRs<kRows>::template mma<false>(p, a[0], kn::wgmma_desc_sw128(act));
#pragma unroll
    for (int j = 1; j < 8; ++j)
      kn::WgmmaRs<kRows>::template mma<true>(p, a[j], kn::wgmma_desc_sw128(act + (j >> 2) * kHalfBytes + (j & 3) * 32));
    kn::wgmma_commit();
    kn::wgmma_wait<0>();
  }

  // ---- the second consumer: the odd steps; hands each p over to the first ----------------------
  __device__ __forceinline__ static void consume_odd(const Smem& sm, std::uint32_t total, std::uint32_t tid) {
    const std::uint32_t warp = tid / 32, lane = tid % 32;
    float p[kAcc];
    for (std::uint32_t q = 1; q < total; q += 2) {
      const std::uint32_t slot = q % kStages;
      kn::mbar_wait(sm.full(slot), (q / kStages) & 1);
      step_mma(sm, slot, warp, lane, p);
      if (lane == 0) kn::mbar_arrive(sm.empty(slot));
      const std::uint32_t i = q / 2, h = i & 1;
      if (i >= 2) kn::mbar_wait(sm.hempty(h), (i / 2 - 1) & 1);
      float* out = sm.handover(h);
#pragma unroll
      for (int r = 0; r < kAcc; ++r) out[r * 128 + tid] = p[r];
      kn::mbar_arrive(sm.hfull(h));
    }
  }

  // ---- the first consumer: the even steps, and the fold of every step in order ------------------
  __device__ __forceinline__ static void consume_even_and_fold(const Smem& sm, const Shape& sh, const dev::WgPieces& pc,
                                               std::uint32_t tid, const float* __restrict__ block_scale,
                                               std::uint16_t* __restrict__ output, float* workspace) {
    const std::uint32_t warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
    float acc[kAcc];
    float* const slots = workspace;
    std::uint32_t* const flags = reinterpret_cast<std::uint32_t*>(workspace + gridDim.x * kSlotFloats);
    std::uint32_t q = 0;
    float sc0 = 0.f, sc1 = 0.f, sc2 = 0.f;  // the scales of the next three steps of the piece
    for_each_step(pc, sh.steps, [&](const dev::WgPiece& piece, std::uint32_t s) {
      const float* srow = block_scale + (piece.unit / sh.row_tiles / 2) * sh.steps;  // S[64 cu / 128]
      if (s == piece.begin) {
        sc0 = __ldg(srow + s);
        sc1 = s + 1 < piece.end ? __ldg(srow + s + 1) : 0.f;
        sc2 = s + 2 < piece.end ? __ldg(srow + s + 2) : 0.f;
        if (piece.kind == dev::WgPieceKind::tail) {
          // acc after the steps before `begin`: the previous CTA's head, written first thing there.
          if (tid == 0) {
            while (kn::ld_acquire_gpu(flags + blockIdx.x - 1) != 1) {
            }
            flags[blockIdx.x - 1] = 0;  // its one reader: zero again for the next launch
          }
          kn::bar_sync(1, 128);
          const float* in = slots + (blockIdx.x - 1) * kSlotFloats;
#pragma unroll
          for (int r = 0; r < kAcc; ++r) acc[r] = kn::ld_cg(in + r * 128 + tid);
        } else {
#pragma unroll
          for (int r = 0; r < kAcc; ++r) acc[r] = 0.0f;  // +0 (NUMERICS.md 2.1)
        }
      }
      const float sc = sc0;
      sc0 = sc1;
      sc1 = sc2;
      sc2 = s + 3 < piece.end ? __ldg(srow + s + 3) : 0.f;
      if ((q & 1) == 0) {
        const std::uint32_t slot = q % kStages;
        kn::mbar_wait(sm.full(slot), (q / kStages) & 1);
        float p[kAcc];
        step_mma(sm, slot, warp, lane, p);
        if (lane == 0) kn::mbar_arrive(sm.empty(slot));
#pragma unroll
        for (int r = 0; r < kAcc; ++r) acc[r] = kn::fma_rn(p[r], sc, acc[r]);
      } else {
        const std::uint32_t i = q / 2, h = i & 1;
        kn::mbar_wait(sm.hfull(h), (i / 2) & 1);
        const float* in = sm.handover(h);
#pragma unroll
        for (int r = 0; r < kAcc; ++r) acc[r] = kn::fma_rn(in[r * 128 + tid], sc, acc[r]);
        kn::mbar_arrive(sm.hempty(h));
      }
      ++q;
      if (s + 1 != piece.end) return;
      if (piece.kind == dev::WgPieceKind::head) {
        float* out = slots + blockIdx.x * kSlotFloats;
#pragma unroll
        for (int r = 0; r < kAcc; ++r) out[r * 128 + tid] = acc[r];
        __threadfence();
        kn::bar_sync(1, 128);
        if (tid == 0) kn::st_release_gpu(flags + blockIdx.x, 1);
        return;
      }
      // C[row][col] = bf16_rne(acc) for the unit's columns and the row tile's rows inside [M, N).
      const std::uint32_t col0 = (piece.unit / sh.row_tiles) * dev::kWgUnitCols + 16 * warp + g;
      const std::uint32_t row0 = (piece.unit % sh.row_tiles) * kRows + 2 * t;
#pragma unroll
      for (int r = 0; r < kAcc; ++r) {
        const std::uint32_t col = col0 + ((r & 2) ? 8 : 0), row = row0 + 8 * (r / 4) + (r & 1);
        if (row < sh.m && col < sh.n) output[static_cast<std::size_t>(row) * sh.ldc + col] = kn::f32_to_bf16_rne_bits(acc[r]);
      }
    });
  }

  __device__ __forceinline__ static void run(std::uint8_t* smem, const float* __restrict__ block_scale, std::uint16_t* __restrict__ output,
                             const Shape& sh, float* workspace, const CUtensorMap* wmap, const CUtensorMap* amap) {
    const Smem sm{smem, kn::smem_addr(smem)};
    const dev::WgPieces pc = dev::wgmma_cta_pieces(blockIdx.x, gridDim.x, sh.units, sh.steps);
    const std::uint64_t range = std::uint64_t{sh.units} * sh.steps * (blockIdx.x + 1) / gridDim.x -
                                std::uint64_t{sh.units} * sh.steps * blockIdx.x / gridDim.x;
    const std::uint32_t wg = threadIdx.x / 128, tid = threadIdx.x % 128;
    if (threadIdx.x == 0) {
      for (std::uint32_t i = 0; i < kStages; ++i) {
        kn::mbar_init(sm.full(i), 1);
        kn::mbar_init(sm.empty(i), 4);  // lane 0 of each warp of the consuming warpgroup
      }
      for (std::uint32_t h = 0; h < 2; ++h) {
        kn::mbar_init(sm.hfull(h), 128);
        kn::mbar_init(sm.hempty(h), 128);
      }
      kn::mbar_fence_init();
    }
    __syncthreads();
    if (wg == 0) {
      kn::regs_dec<40>();
      if (threadIdx.x == 0) produce(sm, sh, pc, wmap, amap);
      return;
    }
    kn::regs_inc<232>();
    if (wg == 1)
      consume_even_and_fold(sm, sh, pc, tid, block_scale, output, workspace);
    else
      consume_odd(sm, static_cast<std::uint32_t>(range), tid);
  }
};

}  // namespace

// Grid (wgmma_ctas(m, n, SMs), 1, 1), 384 threads, wgmma_smem_bytes(m) of dynamic shared memory;
// `workspace` holds wgmma_workspace_bytes(m, grid) bytes whose flags are zero; `wmap` is W as a
// 2-D UINT8 tensor {k, n} with box {128, 64}, `amap` A as a 2-D UINT16 tensor {k, m} (row pitch
// a_row_stride) with box {64, wgmma_tile_rows(m)}, both in the 128-byte swizzle (the CUDA backend
// encodes them; device/README.md, the kernel ABI).
extern "C" __global__ void __launch_bounds__(384, 1)
    w8a16_wgmma_rows(const uint16_t* __restrict__ input, const uint8_t* __restrict__ weight,
                     const float* __restrict__ block_scale, uint16_t* __restrict__ output, uint32_t m, uint32_t n,
                     uint32_t k, uint32_t a_row_stride, uint32_t c_row_stride, float* workspace,
                     const __grid_constant__ CUtensorMap wmap, const __grid_constant__ CUtensorMap amap) {
  (void)input;
  (void)weight;  // read through the tensor maps
  extern __shared__ __align__(16) unsigned char smem_raw[];
  std::uint8_t* smem = reinterpret_cast<std::uint8_t*>(
      (reinterpret_cast<std::uintptr_t>(smem_raw) + dev::kWgAlign - 1) & ~std::uintptr_t{dev::kWgAlign - 1});
  const std::uint32_t rows = dev::wgmma_tile_rows(m);
  const Shape sh{m, n, k, a_row_stride, c_row_stride, k / dev::kKBlock, dev::wgmma_row_tiles(m),
                                     dev::wgmma_units(m, n)};
#define W8A16_WG_CASE(R) \
  case R: WgRows<R>::run(smem, block_scale, output, sh, workspace, &wmap, &amap); break;
  switch (rows) {
    W8A16_WG_CASE(8)
    W8A16_WG_CASE(16)
    W8A16_WG_CASE(24)
    W8A16_WG_CASE(32)
    W8A16_WG_CASE(48)
    W8A16_WG_CASE(64)
    W8A16_WG_CASE(96)
    default: WgRows<128>::run(smem, block_scale, output, sh, workspace, &wmap, &amap);
  }
#undef W8A16_WG_CASE
}
#endif
