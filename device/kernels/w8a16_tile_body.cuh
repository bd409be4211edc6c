// SPDX-License-Identifier: MIT OR Apache-2.0
// The tile body of the canonical tiers (128 x 64, 32 x 32, 64 x 32): cp.async-staged 128-K steps,
// mma.sync m16n8k16 chains of 8 from +0, one fold per step (NUMERICS.md 2.1).
#pragma once
#include <cstddef>
#include <cstdint>

#include "w8a16_ptx.cuh"
#if defined(W8A16_PERTURB)
#include "w8a16_sync_timing.cuh"
#endif

namespace w8a16::kernels {

// kTm x kTn outputs per CTA, 8 warps as kWarpsM x kWarpsN, each warp (kTm/kWarpsM) x (kTn/kWarpsN).
// kStages shared stages of one 128-K step each (A: kTm x 128 BF16, W: kTn x 128 E4M3 codes).
// kDecodeInSmem: the CTA decodes the step's weights to BF16 once into shared memory (the 128-row
// tile, where 4 warps share every weight column); otherwise each warp decodes its B fragments
// from the raw codes in registers (the twins, where fewer warps share a column and shared memory
// is tighter).
template <int kTm, int kTn, int kWarpsM, int kWarpsN, int kStages, bool kDecodeInSmem>
struct TileBody {
  static_assert(kWarpsM * kWarpsN == 8, "256 threads");
  static constexpr int kWm = kTm / kWarpsM;
  static constexpr int kWn = kTn / kWarpsN;
  static constexpr int kMt = kWm / 16;  // m16 tiles per warp
  static constexpr int kNt = kWn / 8;   // n8 tiles per warp
  static_assert(kMt >= 1 && kNt >= 1 && kWm % 16 == 0 && kWn % 8 == 0, "warp tile");
  static_assert(128 % kTn == 0, "a CTA's columns share one scale row (n / 128)");

  // Row pitches chosen so a fragment load touches every bank once. BF16 rows (8-byte loads, served
  // per half-warp: 4 rows x 4 threads) start 32 bytes apart modulo 128; code rows (4-byte loads,
  // 8 rows x 4 threads) start 16 bytes apart modulo 128.
  static constexpr int kAPitch = (128 + 16) * 2;  // bytes: 128 BF16 + 16
  static constexpr int kWPitch = 128 + 16;        // bytes: 128 codes + 16
  static constexpr int kBPitch = (128 + 16) * 2;  // bytes: decoded BF16 weights
  static constexpr int kABytes = kTm * kAPitch;
  static constexpr int kWBytes = kTn * kWPitch;
  static constexpr int kStageBytes = kABytes + kWBytes;
  static constexpr int kDecodedBytes = kDecodeInSmem ? kTn * kBPitch : 0;
  static constexpr int kSmemBytes = kStages * kStageBytes + kDecodedBytes;

  // Stages step s's A and W tiles. Rows past m / columns past n are zero-filled and never read
  // from global memory (their outputs are not written, and a row or column only reaches its own
  // outputs, so the zeros change nothing that is kept).
  __device__ static void load_step(unsigned char* stage, const uint16_t* __restrict__ input,
                                   const uint8_t* __restrict__ weight, uint32_t m, uint32_t n, uint32_t k,
                                   uint32_t a_row_stride, uint32_t m0, uint32_t n0, uint32_t s) {
    const uint32_t tid = threadIdx.x;
    constexpr int kAChunks = kTm * 16;  // 16-byte chunks: 16 per 128-element BF16 row
    for (int c = tid; c < kAChunks; c += 256) {
      const uint32_t r = c >> 4, part = c & 15;
      const uint32_t row = m0 + r;
      const bool in = row < m;
      const uint16_t* src = input + static_cast<size_t>(in ? row : 0) * a_row_stride + s * 128u + part * 8u;
      cp_async_16(stage + r * kAPitch + part * 16, src, in ? 16u : 0u);
    }
    unsigned char* wst = stage + kABytes;
    constexpr int kWChunks = kTn * 8;  // 8 per 128-code row
    for (int c = tid; c < kWChunks; c += 256) {
      const uint32_t r = c >> 3, part = c & 7;
      const uint32_t col = n0 + r;
      const bool in = col < n;
      const uint8_t* src = weight + static_cast<size_t>(in ? col : 0) * k + s * 128u + part * 16u;
      cp_async_16(wst + r * kWPitch + part * 16, src, in ? 16u : 0u);
    }
  }

  // Raw codes of a stage -> BF16 in `decoded`, same layout as A (kBPitch).
  __device__ static void decode_step(const unsigned char* stage, unsigned char* decoded) {
    const unsigned char* wst = stage + kABytes;
    constexpr int kChunks = kTn * 8;  // 16 codes each
    for (int c = threadIdx.x; c < kChunks; c += 256) {
      const uint32_t r = c >> 3, part = c & 7;
      const uint4 codes = *reinterpret_cast<const uint4*>(wst + r * kWPitch + part * 16);
      const uint32_t words[4] = {codes.x, codes.y, codes.z, codes.w};
      uint32_t out[8];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        out[2 * i] = f16x2_to_bf16x2_exact(e4m3x2_to_f16x2(static_cast<uint16_t>(words[i] & 0xFFFFu)));
        out[2 * i + 1] = f16x2_to_bf16x2_exact(e4m3x2_to_f16x2(static_cast<uint16_t>(words[i] >> 16)));
      }
      uint4* dst = reinterpret_cast<uint4*>(decoded + r * kBPitch + part * 32);
      dst[0] = make_uint4(out[0], out[1], out[2], out[3]);
      dst[1] = make_uint4(out[4], out[5], out[6], out[7]);
    }
  }

  __device__ static void run(unsigned char* smem, const uint16_t* __restrict__ input,
                             const uint8_t* __restrict__ weight, const float* __restrict__ block_scale,
                             uint16_t* __restrict__ output, uint32_t m, uint32_t n, uint32_t k, uint32_t a_row_stride,
                             uint32_t c_row_stride) {
    const uint32_t m0 = blockIdx.y * kTm, n0 = blockIdx.x * kTn;
    const uint32_t steps = k / 128;
    const uint32_t warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const uint32_t g = lane >> 2, t = lane & 3;
    const uint32_t wm = (warp % kWarpsM) * kWm, wn = (warp / kWarpsM) * kWn;
    unsigned char* decoded = smem + kStages * kStageBytes;
    const float* scale_row = block_scale + static_cast<size_t>(n0 / 128) * steps;

    float acc[kMt][kNt][4];
#pragma unroll
    for (int i = 0; i < kMt; ++i)
#pragma unroll
      for (int j = 0; j < kNt; ++j)
#pragma unroll
        for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.0f;  // +0 (NUMERICS.md 2.1)

#pragma unroll
    for (int st = 0; st < kStages - 1; ++st) {
      if (st < static_cast<int>(steps))
        load_step(smem + st * kStageBytes, input, weight, m, n, k, a_row_stride, m0, n0, st);
      cp_async_commit();  // always commit: the wait below counts groups
    }

    for (uint32_t s = 0; s < steps; ++s) {
      cp_async_wait<kStages - 2>();
      // Step s is staged for every thread, and every thread is done with step s - 1's stage (and
      // the decoded buffer), which the loads below and the decode then overwrite.
      __syncthreads();
      const uint32_t next = s + kStages - 1;
#if defined(W8A16_PERTURB)
      sync_delay(SyncPoint::refill, s);
#endif
      if (next < steps)
        load_step(smem + (next % kStages) * kStageBytes, input, weight, m, n, k, a_row_stride, m0, n0, next);
      cp_async_commit();
#if defined(W8A16_PERTURB)
      sync_delay(SyncPoint::read, s);
#endif
      const unsigned char* stage = smem + (s % kStages) * kStageBytes;
      if constexpr (kDecodeInSmem) {
        decode_step(stage, decoded);
        __syncthreads();
      }
      const float scale = __ldg(scale_row + s);
      const unsigned char* a_st = stage;
      const unsigned char* w_st = stage + kABytes;

      // p = +0, then 8 chained k16 MMAs over k0 = 128 s + 16 j, j = 0..7 in order (2.1).
      float p[kMt][kNt][4];
#pragma unroll
      for (int i = 0; i < kMt; ++i)
#pragma unroll
        for (int j = 0; j < kNt; ++j)
#pragma unroll
          for (int q = 0; q < 4; ++q) p[i][j][q] = 0.0f;

#pragma unroll
      for (int j = 0; j < 8; ++j) {
        uint32_t a[kMt][4];
#pragma unroll
        for (int i = 0; i < kMt; ++i) {
          const unsigned char* row = a_st + (wm + i * 16 + g) * kAPitch + (16 * j + 4 * t) * 2;
          const uint2 lo = *reinterpret_cast<const uint2*>(row);                // row g
          const uint2 hi = *reinterpret_cast<const uint2*>(row + 8 * kAPitch);  // row g + 8
          a[i][0] = lo.x;
          a[i][1] = hi.x;
          a[i][2] = lo.y;
          a[i][3] = hi.y;
        }
        uint32_t b[kNt][2];
#pragma unroll
        for (int c = 0; c < kNt; ++c) {
          if constexpr (kDecodeInSmem) {
            const uint2 v = *reinterpret_cast<const uint2*>(decoded + (wn + c * 8 + g) * kBPitch +
                                                            (16 * j + 4 * t) * 2);
            b[c][0] = v.x;
            b[c][1] = v.y;
          } else {
            const uint32_t codes = *reinterpret_cast<const uint32_t*>(w_st + (wn + c * 8 + g) * kWPitch + 16 * j +
                                                                      4 * t);
            e4m3x4_to_bf16_frag(codes, b[c]);
          }
        }
#pragma unroll
        for (int i = 0; i < kMt; ++i)
#pragma unroll
          for (int c = 0; c < kNt; ++c) mma_bf16_16816(p[i][c], a[i], b[c]);
      }
#pragma unroll
      for (int i = 0; i < kMt; ++i)
#pragma unroll
        for (int c = 0; c < kNt; ++c)
#pragma unroll
          for (int q = 0; q < 4; ++q) acc[i][c][q] = fma_rn(p[i][c][q], scale, acc[i][c][q]);
    }
    cp_async_wait<0>();  // no copy may outlive the CTA's shared memory

    // C fragment: q = 0, 1 -> row g, columns 2t, 2t+1; q = 2, 3 -> row g + 8.
#pragma unroll
    for (int i = 0; i < kMt; ++i)
#pragma unroll
      for (int c = 0; c < kNt; ++c)
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          const uint32_t row = m0 + wm + i * 16 + g + (q >> 1) * 8;
          const uint32_t col = n0 + wn + c * 8 + 2 * t + (q & 1);
          if (row < m && col < n)
            output[static_cast<size_t>(row) * c_row_stride + col] = f32_to_bf16_rne_bits(acc[i][c][q]);
        }
  }
};

}  // namespace w8a16::kernels
