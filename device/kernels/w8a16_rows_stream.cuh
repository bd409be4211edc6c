// SPDX-License-Identifier: MIT OR Apache-2.0
// The row-tile body: a strip of columns for every row of a short M, streamed through a deep
// cp.async pipeline; the canonical fold (NUMERICS.md 2.1) with no split of the fold. W unpacked
// ([n][k]) or, with kPacked, in the packed layout (NUMERICS.md 2.3).
#pragma once
#include <cstddef>
#include <cstdint>

#include "w8a16/device/geometry.hpp"
#include "w8a16_ptx.cuh"
#if defined(W8A16_PERTURB)
#include "w8a16_sync_timing.cuh"
#endif

namespace w8a16::kernels {

// Operand roles. The MMA computes the transposed product C^T = W A^T: the decoded weights are
// its A operand (16 columns of W x 16 k) and the activations its B operand (16 k x 8 rows of A).
// Per NUMERICS.md 1.1 an output element is c plus the 16 exact products a_k * b_k in one fused
// step (E is the maximum of the product exponents ea + eb, every term is truncated on its own,
// the sum is exact), which is symmetric in the two operands; so output (m, n) is the same
// function of A[m, k0..k0+15], W[n, k0..k0+15] and c whichever operand carries which, and the
// fold of 2.1 is unchanged. What it buys at M <= 8: one MMA per 16 columns instead of two
// half-empty ones, and B fragments that load straight into their registers.
//
// Fragments (g = lane / 4, t = lane % 4), with the k permutation of mma_bf16_16816 (MMA slots
// {2t, 2t+1, 2t+8, 2t+9} take k {4t .. 4t+3} of the 16-wide window, for both operands):
//   A (weights): a0/a2 = codes 4t..4t+3 of column g (one 4-byte load, decoded to two BF16x2),
//                a1/a3 = the same of column g + 8;
//   B (activations): b0/b1 = A[row g][4t .. 4t+3] (one 8-byte load);
//   C: c0, c1 = (column g, rows 2t, 2t+1), c2, c3 = (column g + 8, rows 2t, 2t+1).
//
// CTA = 8 warps in 8 / kKG groups; a group owns kNt 16-column tiles, so the CTA owns
// kCols = 16 * kNt * (8 / kKG) columns of rows [0, m), m <= 8 * kMb. K is walked in rounds of
// kRound 128-K steps; kStages rounds are staged at once (kStages - 1 in flight while one is
// computed), A and W both through shared memory, so no global load is on the compute's path.
// The kKG warps of a group split a round's steps: warp kg computes the partial sums p_s of steps
// kg, kg + kKG, ... of the round for the group's tiles (2.1 lets different warps compute
// different steps' p).
//   kKG = 1: the warp computes every step of its tiles and folds them in registers, in order.
//   kKG > 1: the p_s go to shared memory and, after the next round's barrier, every thread folds
//            its outputs' p_s of that round in step order.
// Either way acc = fma(p_s, S[n/128][s], acc) for s = 0, 1, ... exactly as 2.1 states. A warp's
// chains (different steps, tiles, row blocks) are independent and interleave to hide the MMA
// latency; only the fold is serial.
//
// At decode sizes the bound is instruction issue, not HBM (PERF_NOTES.md), hence the integer
// E4M3 decode, A rows past m zeroed once in shared memory instead of predicated per fragment,
// and a round's tail steps zero-filled so the inner loop has no branch.
template <int kKG, int kNt, int kRound, int kStages, int kMb, bool kPacked = false>
struct RowsStream {
  static constexpr int kWarps = 8;
  static constexpr int kGroups = kWarps / kKG;
  static constexpr int kTiles = kGroups * kNt;  // 16-column tiles per CTA
  static constexpr int kCols = 16 * kTiles;
  static constexpr int kRows = 8 * kMb;
  static constexpr int kChains = kRound / kKG;  // steps per warp per round
  static_assert(kKG == 1 || kKG == 2 || kKG == 4 || kKG == 8, "warps per group");
  static_assert(kRound % kKG == 0 && kStages >= 2, "round shape");
  static_assert(128 % kCols == 0, "a CTA's columns share one scale row (n / 128)");

  // Row pitches: code rows (4-byte fragment loads, 8 rows x 4 threads) 16 bytes apart modulo 128;
  // BF16 rows (8-byte loads, served per half-warp as 4 rows x 4 threads) 32 bytes apart modulo
  // 128: every fragment load touches each bank once.
  static constexpr uint32_t kWPitch = kRound * 128 + 16;
  // Packed W (NUMERICS.md 2.3): a 16-column tile's step is one contiguous 2,048-byte group, staged
  // as it is ([tile][step][2048]); a thread's window is one 8-byte load of 256 contiguous a warp.
  // Its k order is the MMA's own (2t, 2t+1, 2t+8, 2t+9), so A is read with two 4-byte loads, and
  // A rows 16 bytes apart modulo 128 keep them conflict-free (8 rows x 4 threads).
  static constexpr uint32_t kPackedStepBytes = 16 * 128;
  static constexpr uint32_t kAPitch = kRound * 256 + (kPacked ? 16 : 32);
  static constexpr uint32_t kWBytes = kPacked ? kTiles * kRound * kPackedStepBytes : kCols * kWPitch;
  static constexpr uint32_t kABytes = kRows * kAPitch;
  static constexpr uint32_t kStageBytes = kWBytes + kABytes;
  static constexpr int kGroupOuts = kNt * kMb * 128;                         // outputs per group: [u][mb][q][lane]
  static constexpr uint32_t kPartialFloats = kRound * kGroups * kGroupOuts;  // [step][group][..]
  static constexpr uint32_t kPartialBytes = kKG > 1 ? 2 * kPartialFloats * 4 : 0;
  static constexpr uint32_t kSmemBytes = kStages * kStageBytes + kPartialBytes;
  // Outputs each thread folds (kKG > 1); when a group has fewer outputs than threads, the threads
  // past them fold nothing.
  static constexpr int kOutPerThread = kGroupOuts >= 32 * kKG ? kGroupOuts / (32 * kKG) : 1;
  static_assert(kGroupOuts % (32 * kKG) == 0 || (32 * kKG) % kGroupOuts == 0, "fold split");

  // f(i, u, mb, q) for every register of a round's partial sums p[kChains][kNt][kMb][4], unrolled.
  template <class F>
  __device__ __forceinline__ static void each_partial(F f) {
#pragma unroll
    for (int i = 0; i < kChains; ++i)
#pragma unroll
      for (int u = 0; u < kNt; ++u)
#pragma unroll
        for (int mb = 0; mb < kMb; ++mb)
#pragma unroll
          for (int q = 0; q < 4; ++q) f(i, u, mb, q);
  }

  // Round r: the codes of kCols rows of W and A rows [0, m), for its steps. Steps past the
  // round's last and columns past n are zero-filled without reading (their partials are never
  // folded / their outputs never written). Rows past m are not touched: run() zeroed them.
  // A thread stages the same (row, 16-byte part) slots every round, so its addresses are formed
  // once (Loader) and each round only adds the round's K offset.
  static constexpr int kWPerRow = kRound * 8, kWChunks = kCols * kWPerRow;  // 16-byte chunks
  static constexpr int kAPerRow = kRound * 16, kAChunks = kRows * kAPerRow;
  static_assert(256 % kWPerRow == 0 && 256 % kAPerRow == 0, "a thread's chunks share one part");
  struct Loader {
    const uint8_t* w;         // this thread's first W chunk of round 0 (row tid / kWPerRow)
    const uint16_t* a;        // this thread's first A chunk of round 0
    uint32_t w_part, a_part;  // the 16-byte part within a row's round
    uint32_t w_rows_in;       // W rows of the CTA inside [0, n)
    uint32_t m;
    uint32_t w_dst, a_dst;  // shared-memory offsets of the first chunk within a stage
  };
  __device__ static Loader make_loader(const uint16_t* __restrict__ input, const uint8_t* __restrict__ weight,
                                       uint32_t m, uint32_t n, uint32_t k, uint32_t a_row_stride, uint32_t n0) {
    Loader l;
    const uint32_t tid = threadIdx.x;
    const uint32_t wrow = tid / kWPerRow, arow = tid / kAPerRow;
    l.w_part = tid % kWPerRow;
    l.a_part = tid % kAPerRow;
    l.w_rows_in = n - n0;
    l.m = m;
    l.w = weight + static_cast<size_t>(n0 + wrow) * k + l.w_part * 16;
    l.a = input + static_cast<size_t>(arow) * a_row_stride + l.a_part * 8;
    l.w_dst = wrow * kWPitch + l.w_part * 16;
    l.a_dst = kWBytes + arow * kAPitch + l.a_part * 16;
    if constexpr (kPacked) {
      // The (tile, step) slots a thread fills are tid / 128 + 2 it (w_part), its 16-byte part
      // tid % 128 of each; l.w is that part in step 0 of the CTA's first 16-column group.
      l.w_part = tid / 128;
      l.w = weight + w8a16::device::packed_tile_offset(n0 / 128, 0, k / 128) + (n0 % 128) / 16 * kPackedStepBytes +
            tid % 128 * 16;
      l.w_dst = tid % 128 * 16;
    }
    return l;
  }
  __device__ static void load_round(unsigned char* stage, const Loader& l, const uint8_t* __restrict__ weight,
                                    const uint16_t* __restrict__ input, uint32_t k, uint32_t a_row_stride, uint32_t r,
                                    uint32_t steps_here) {
    const uint32_t kbase = r * kRound * 128;
    constexpr uint32_t kWRowStep = 256 / kWPerRow, kARowStep = 256 / kAPerRow;  // rows per pass
    const bool w_part_in = l.w_part < steps_here * 8, a_part_in = l.a_part < steps_here * 16;
    if constexpr (kPacked) {
      // Tiles past N hold padding rows (NUMERICS.md 2.3): every slot is inside the buffer.
      static_assert(kWChunks % 256 == 0, "whole passes");
#pragma unroll
      for (int it = 0; it < kWChunks / 256; ++it) {
        const uint32_t slot = l.w_part + 2 * it, tile = slot / kRound, si = slot % kRound;
        const bool in = si < steps_here;
        const uint8_t* src = in ? l.w + (static_cast<size_t>(r) * kRound + si) * w8a16::device::kPackedTileBytes +
                                      tile * kPackedStepBytes
                                : weight;
        cp_async_16(stage + (tile * kRound + si) * kPackedStepBytes + l.w_dst, src, in ? 16u : 0u);
      }
    }
#pragma unroll
    for (int it = 0; it < (kPacked ? 0 : (kWChunks + 255) / 256); ++it) {
      if (kWChunks % 256 != 0 && threadIdx.x + 256 * it >= kWChunks) break;
      const uint32_t row = threadIdx.x / kWPerRow + kWRowStep * it;
      const bool in = w_part_in && row < l.w_rows_in;
      const uint8_t* src = in ? l.w + static_cast<size_t>(kWRowStep * it) * k + kbase : weight;
      cp_async_16(stage + l.w_dst + kWRowStep * it * kWPitch, src, in ? 16u : 0u);
    }
#pragma unroll
    for (int it = 0; it < (kAChunks + 255) / 256; ++it) {
      const uint32_t row = threadIdx.x / kAPerRow + kARowStep * it;
      if (row >= l.m || (kAChunks % 256 != 0 && threadIdx.x + 256 * it >= kAChunks)) break;
      const uint16_t* src = a_part_in ? l.a + static_cast<size_t>(kARowStep * it) * a_row_stride + kbase : input;
      cp_async_16(stage + l.a_dst + kARowStep * it * kAPitch, src, a_part_in ? 16u : 0u);
    }
  }

  // p[i][u][mb] = the chain of 8 k16 MMAs from +0 of round step kg + kKG * i, for column tile u
  // of the warp's group and row block mb. kExact: decode with cvt (e4m3x4_to_bf16_frag), used
  // only when the integer decode met a NaN code (which it turns into +-480); returns whether it
  // did. Row blocks past m hold zeros (run() zeroed them) and are multiplied all the same: the
  // launch picks the fewest blocks that hold m, so at most half of the MMAs are spent on them.
  template <bool kExact>
  __device__ static bool round_partials(float (&p)[kChains][kNt][kMb][4], const unsigned char* stage, uint32_t group,
                                        uint32_t kg) {
    const uint32_t lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    const unsigned char* wrow = kPacked ? stage + group * kNt * kRound * kPackedStepBytes + lane * 8
                                        : stage + (group * kNt * 16 + g) * kWPitch + 4 * t;
    const unsigned char* arow = stage + kWBytes + g * kAPitch + (kPacked ? 4 : 8) * t;
    uint32_t nan_probe = 0;
    each_partial([&](int i, int u, int mb, int q) { p[i][u][mb][q] = 0.0f; });  // every chain starts from +0
#pragma unroll
    for (int j = 0; j < 8; ++j) {
#pragma unroll
      for (int i = 0; i < kChains; ++i) {
        const uint32_t kk = (kg + kKG * i) * 128 + 16 * j;  // the window's first k in the round
        uint32_t b[kMb][2];
#pragma unroll
        for (int mb = 0; mb < kMb; ++mb) {
          if constexpr (kPacked) {  // k 2t, 2t+1 and 2t+8, 2t+9
            b[mb][0] = *reinterpret_cast<const uint32_t*>(arow + (mb * 8) * kAPitch + kk * 2);
            b[mb][1] = *reinterpret_cast<const uint32_t*>(arow + (mb * 8) * kAPitch + kk * 2 + 16);
          } else {
            const uint2 v = *reinterpret_cast<const uint2*>(arow + (mb * 8) * kAPitch + kk * 2);
            b[mb][0] = v.x;
            b[mb][1] = v.y;
          }
        }
#pragma unroll
        for (int u = 0; u < kNt; ++u) {
          uint32_t lo, hi;
          if constexpr (kPacked) {  // rows g, then g + 8 (NUMERICS.md 2.3)
            const uint2 c = *reinterpret_cast<const uint2*>(wrow + (u * kRound + kg + kKG * i) * kPackedStepBytes +
                                                            j * w8a16::device::kPackedWindowBytes);
            lo = c.x;
            hi = c.y;
          } else {
            lo = *reinterpret_cast<const uint32_t*>(wrow + (u * 16) * kWPitch + kk);
            hi = *reinterpret_cast<const uint32_t*>(wrow + (u * 16 + 8) * kWPitch + kk);
          }
          uint32_t dlo[2], dhi[2];
          if constexpr (kExact) {
            e4m3x4_to_bf16_frag(lo, dlo);
            e4m3x4_to_bf16_frag(hi, dhi);
          } else {
            e4m3x4_to_bf16_frag_int(lo, dlo, nan_probe);
            e4m3x4_to_bf16_frag_int(hi, dhi, nan_probe);
          }
          const uint32_t a[4] = {dlo[0], dhi[0], dlo[1], dhi[1]};
#pragma unroll
          for (int mb = 0; mb < kMb; ++mb) mma_bf16_16816(p[i][u][mb], a, b[mb]);
        }
      }
    }
    return e4m3_nan_seen(nan_probe);
  }

  // The NaN path, kept out of line so that its cvt decode's registers do not count against the
  // integer path's (w8a16_tc_rows is held to 80 registers, w8a16_tc_rows.cu).
  __device__ __noinline__ static void round_partials_exact(float (&p)[kChains][kNt][kMb][4], const unsigned char* stage,
                                                           uint32_t group, uint32_t kg) {
    round_partials<true>(p, stage, group, kg);
  }

  __device__ static void run(unsigned char* smem, const uint16_t* __restrict__ input,
                             const uint8_t* __restrict__ weight, const float* __restrict__ block_scale,
                             uint16_t* __restrict__ output, uint32_t m, uint32_t n, uint32_t k, uint32_t a_row_stride,
                             uint32_t c_row_stride) {
    const uint32_t n0 = blockIdx.x * kCols;
    const uint32_t steps = k / 128, rounds = (steps + kRound - 1) / kRound;
    const uint32_t warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const uint32_t group = warp % kGroups, kg = warp / kGroups;
    const float* scale_row = block_scale + static_cast<size_t>(n0 / 128) * steps;
    float* partials = reinterpret_cast<float*>(smem + kStages * kStageBytes);
    auto steps_in = [&](uint32_t r) { return min(static_cast<uint32_t>(kRound), steps - r * kRound); };

    // A rows [m, kRows) of every stage read as zero and are never loaded (NUMERICS.md 1.1: zero
    // terms take no part, so the rows < m are unaffected; rows >= m are never written).
    constexpr uint32_t kAChunksPerStage = kRows * (kAPitch / 16);
    for (uint32_t i = threadIdx.x; i < kStages * kAChunksPerStage; i += 256) {
      const uint32_t st = i / kAChunksPerStage, rem = i % kAChunksPerStage;
      const uint32_t row = rem / (kAPitch / 16), part = rem % (kAPitch / 16);
      if (row >= m)
        *reinterpret_cast<uint4*>(smem + st * kStageBytes + kWBytes + row * kAPitch + part * 16) = make_uint4(0, 0, 0,
                                                                                                              0);
    }

    // kKG == 1: acc[(u * kMb + mb) * 4 + q] is C register q of column tile u, row block mb.
    // kKG > 1: acc[x] is output o = (kg * 32 + lane) + 32 * kKG * x of the group, o indexing
    // [u][mb][q][lane] as the partials do.
    constexpr int kAcc = kKG == 1 ? kNt * kMb * 4 : kOutPerThread;
    float acc[kAcc];
#pragma unroll
    for (int x = 0; x < kAcc; ++x) acc[x] = 0.0f;

    // kKG > 1: round r's p_s, in step order; unrolled over the round, the steps past the last
    // (a short final round) predicated off.
    constexpr bool kEveryThreadFolds = kGroupOuts >= 32 * kKG;
    auto fold_step = [&](const float* pr, uint32_t sir, float sc) {
#pragma unroll
      for (int x = 0; x < kOutPerThread; ++x) {
        const uint32_t o = kg * 32 + lane + 32 * kKG * x;
        if (kEveryThreadFolds || o < kGroupOuts) acc[x] = fma_rn(pr[sir * (kGroups * kGroupOuts) + o], sc, acc[x]);
      }
    };
    auto fold_partials = [&](uint32_t r) {
      const float* pr = partials + (r & 1) * kPartialFloats + group * kGroupOuts;
      const uint32_t here = steps_in(r);
#pragma unroll
      for (int sir = 0; sir < kRound; ++sir)
        if (static_cast<uint32_t>(sir) < here) fold_step(pr, sir, __ldg(scale_row + r * kRound + sir));
    };

    const Loader loader = make_loader(input, weight, m, n, k, a_row_stride, n0);
#pragma unroll
    for (int st = 0; st < kStages - 1; ++st) {
      if (static_cast<uint32_t>(st) < rounds)
        load_round(smem + st * kStageBytes, loader, weight, input, k, a_row_stride, st, steps_in(st));
      cp_async_commit();
    }
    for (uint32_t r = 0; r < rounds; ++r) {
      cp_async_wait<kStages - 2>();
      __syncthreads();  // round r staged; every warp is past round r - 1 (its stage and partials)
      if constexpr (kKG > 1) {
        if (r > 0) fold_partials(r - 1);
      }
      const uint32_t next = r + kStages - 1;
#if defined(W8A16_PERTURB)
      sync_delay(SyncPoint::refill, r);
#endif
      if (next < rounds)
        load_round(smem + (next % kStages) * kStageBytes, loader, weight, input, k, a_row_stride, next, steps_in(next));
      cp_async_commit();
#if defined(W8A16_PERTURB)
      sync_delay(SyncPoint::read, r);
#endif

      const uint32_t here = steps_in(r);
      const unsigned char* stage = smem + (r % kStages) * kStageBytes;
      float p[kChains][kNt][kMb][4];
      if (__any_sync(0xFFFFFFFFu, round_partials<false>(p, stage, group, kg))) {
        // A NaN code: decode exactly (rare). The out-of-line call fills its own array, so `p`
        // never has its address taken and stays in registers on the integer path.
        float q[kChains][kNt][kMb][4];
        round_partials_exact(q, stage, group, kg);
        each_partial([&](int i, int u, int mb, int x) { p[i][u][mb][x] = q[i][u][mb][x]; });
      }
      if constexpr (kKG == 1) {
#pragma unroll
        for (int i = 0; i < kChains; ++i) {
          if (static_cast<uint32_t>(i) >= here) break;
          const float sc = __ldg(scale_row + r * kRound + i);
#pragma unroll
          for (int u = 0; u < kNt; ++u)
#pragma unroll
            for (int mb = 0; mb < kMb; ++mb)
#pragma unroll
              for (int q = 0; q < 4; ++q)
                acc[(u * kMb + mb) * 4 + q] = fma_rn(p[i][u][mb][q], sc, acc[(u * kMb + mb) * 4 + q]);
        }
      } else {
        float* pw = partials + (r & 1) * kPartialFloats + group * kGroupOuts;
#pragma unroll
        for (int i = 0; i < kChains; ++i) {
          const uint32_t sir = kg + kKG * i;
          if (sir >= here) continue;
#pragma unroll
          for (int u = 0; u < kNt; ++u)
#pragma unroll
            for (int mb = 0; mb < kMb; ++mb)
#pragma unroll
              for (int q = 0; q < 4; ++q)
                pw[sir * (kGroups * kGroupOuts) + ((u * kMb + mb) * 4 + q) * 32 + lane] = p[i][u][mb][q];
        }
      }
    }
    cp_async_wait<0>();  // the last groups are empty; leave none behind
    if constexpr (kKG > 1) {
      __syncthreads();
      if (rounds > 0) fold_partials(rounds - 1);
    }

    // (column tile u of the group, row block mb, C register q, lane) -> (row, col).
    auto store = [&](uint32_t u, uint32_t mb, uint32_t q, uint32_t ln, float v) {
      const uint32_t g = ln >> 2, t = ln & 3;
      const uint32_t col = n0 + (group * kNt + u) * 16 + g + (q >> 1) * 8, row = mb * 8 + 2 * t + (q & 1);
      if (row < m && col < n) output[static_cast<size_t>(row) * c_row_stride + col] = f32_to_bf16_rne_bits(v);
    };
    if constexpr (kKG == 1) {
#pragma unroll
      for (int u = 0; u < kNt; ++u)
#pragma unroll
        for (int mb = 0; mb < kMb; ++mb)
#pragma unroll
          for (int q = 0; q < 4; ++q) store(u, mb, q, lane, acc[(u * kMb + mb) * 4 + q]);
    } else {
#pragma unroll
      for (int x = 0; x < kOutPerThread; ++x) {
        const uint32_t o = kg * 32 + lane + 32 * kKG * x;
        if (o < kGroupOuts) store(o / (kMb * 128), (o / 128) % kMb, (o / 32) % 4, o % 32, acc[x]);
      }
    }
  }
};

}  // namespace w8a16::kernels
