// SPDX-License-Identifier: MIT OR Apache-2.0
// w8a16_wgmma_rows*: the Hopper tier of the canonical fold (NUMERICS.md 2.1): wgmma.mma_async fed
// by the tensor memory accelerator, persistent CTAs over units (geometry.hpp); one symbol per
// bodies.def row of params `tma`, over its unit variant and its W layout (w8a16_w_layout.cuh).
#include <cuda.h>  // CUtensorMap

#include <cstddef>
#include <cstdint>

#include "w8a16/device/geometry.hpp"

// wgmma and setmaxnreg exist only in the sm_90a target: every other cubin of the module lacks the
// symbols, their handles are zero there, and the entry points fall back to the other tiers.
#if !defined(__CUDA_ARCH__) || defined(__CUDA_ARCH_FEAT_SM90_ALL)
#include "w8a16_ptx.cuh"
#include "w8a16_tma.cuh"
#include "w8a16_w_layout.cuh"
#include "w8a16_wgmma_mma.cuh"
#include "w8a16_wgmma_pipeline.cuh"

namespace {
namespace dev = w8a16::device;
namespace kn = w8a16::kernels;

struct Shape {
  std::uint32_t m, n, k, lda, ldc, steps, row_tiles, units;
};

// The CTA's steps in order (geometry.hpp's pieces: head, whole units, tail), one advance a step:
// at.unit, at.s (the step of that unit), and the piece [at.begin, at.end) of kind at.kind.
struct StepAt {
  std::uint32_t unit, s, begin, end;
  dev::WgPieceKind kind;
};
struct Cursor {
  StepAt at;
  std::uint32_t next_full, full_end, steps;
  bool has_tail;
  dev::WgPiece tail;
  __device__ __forceinline__ Cursor(const dev::WgPieces& pc, std::uint32_t steps_per_unit)
      : at{},
        next_full(pc.full_begin),
        full_end(pc.full_end),
        steps(steps_per_unit),
        has_tail(pc.has_tail),
        tail(pc.tail) {
    if (pc.has_head) at = {pc.head.unit, 0, 0, pc.head.end, dev::WgPieceKind::head};
    else start_next_piece();
  }
  __device__ __forceinline__ void start_next_piece() {
    if (next_full < full_end) {
      at = {next_full++, 0, 0, steps, dev::WgPieceKind::full};
    } else if (has_tail) {
      at = {tail.unit, tail.begin, tail.begin, steps, dev::WgPieceKind::tail};
      has_tail = false;
    } else {
      at.s = at.end = 0;  // past the range: nothing is read from here on
    }
  }
  __device__ __forceinline__ void advance() {
    if (++at.s >= at.end) start_next_piece();
  }
};

// ---- one symbol at one row-tile height: geometry.hpp's numbers, its storage, its registers -------
// The operand swap (geometry.hpp): per 128-K step, a warpgroup's 64 x 128 E4M3 codes are the A
// operand of 8 chained wgmma m64nRk16, each thread decoding its A fragments from shared memory into
// registers (the W layout's Wg::decode), and the row tile's R x 128 BF16 are the B operand, read by
// wgmma from shared memory. D[c][r] is the step's partial sum p for output (row r, column c);
// accumulators d[4i..4i+3] = D[16w+g][8i+2t..+1], D[16w+g+8][8i+2t..+1] (PTX ISA 9.7.15.5.1; warp w
// of the warpgroup, g = lane / 4, t = lane % 4).
//
// kV = k64 (w8a16_wgmma_rows): 64-column units, the two consumers take the steps in turn and the
// first folds them all; n128 and n128_x2: 128-column units, consumer c owns columns 64c..64c+63
// and folds them itself.
template <int kRows, dev::WgVariant kV>
struct WgConfig {
  static constexpr bool kN128 = dev::wgmma_n128(kV);
  static constexpr std::uint32_t kCols = dev::wgmma_unit_cols(kV);
  static constexpr std::uint32_t kStages = dev::wgmma_stages(kRows, kV);
  static constexpr std::uint32_t kStageBytes = dev::wgmma_stage_bytes(kRows, kV);
  static constexpr std::uint32_t kWeightBytes = kCols * dev::kKBlock;           // the stage's W tile
  static constexpr std::uint32_t kHalfBytes = kRows * dev::kWgSwizzleRowBytes;  // rows x 64 BF16
  static constexpr std::uint32_t kSliceBytes = 16 * 2;                          // one wgmma's K = 16 BF16 of a row
  // 64 x kRows FP32 over a warpgroup's 128 threads
  static constexpr int kAcc = dev::kWgWarpgroupCols * kRows / dev::kWgWarpgroupThreads;
  static constexpr std::uint32_t kSlotFloats = kCols * kRows;  // one workspace slot
  static constexpr std::uint32_t kHandoverFloats = dev::kWgWarpgroupCols * kRows;
  // The consumer warpgroups that read every stage and hold acc: both, or the first (the second
  // reads every other stage and hands its partial sums to the first).
  static constexpr std::uint32_t kReaders = kN128 ? dev::kWgConsumers : 1;
  // The arrivals that release a stage: one per thread of each warpgroup that reads it (consume).
  static constexpr std::uint32_t kReleases = kReaders * dev::kWgWarpgroupThreads;
  // The threads that hold acc (the named barrier of the workspace hand-over between CTAs).
  static constexpr std::uint32_t kFolders = kReaders * dev::kWgWarpgroupThreads;
  using Stage = kn::WgStage<kWeightBytes, kHalfBytes>;
  using Pipeline = kn::WgPipeline<Stage, kStages, dev::wgmma_handover_bytes(kRows, kV) / (dev::kWgHandoverSlots * 4),
                                  kReleases>;
  using Stages = typename Pipeline::Stages;
  using Slots = typename Pipeline::Slots;
  static_assert(sizeof(Stage) == kStageBytes && offsetof(Stage, act) == kWeightBytes, "stage layout (geometry.hpp)");
  static_assert(sizeof(typename Pipeline::Barriers) == dev::wgmma_barrier_bytes(kRows, kV), "barriers (geometry.hpp)");
  static_assert(dev::kWgAlign + sizeof(typename Pipeline::Storage) == dev::wgmma_smem_bytes(kRows, kV) &&
                    Pipeline::kOffBarriers == kStages * kStageBytes + dev::wgmma_handover_bytes(kRows, kV),
                "w8a16_wgmma_rows: shared memory layout differs from geometry.hpp");
  static_assert(kStageBytes % dev::kWgAlign == 0 && kHalfBytes % dev::kWgAlign == 0, "swizzle atoms");
  static_assert(kStages >= 2, "at least two stages");
  // setmaxnreg (run): the consumers' increase is paid from the producer's decrease, within the
  // registers the launch gave the CTA (geometry.hpp, wgmma_launch_regs).
  static constexpr int kProducerRegs = dev::kWgProducerRegs, kConsumerRegs = dev::wgmma_consumer_regs(kV);
  static_assert(dev::kWgWarpgroupThreads * kProducerRegs +
                        dev::kWgConsumers * dev::kWgWarpgroupThreads * kConsumerRegs <=
                    dev::kWgThreads * dev::wgmma_launch_regs(kV),
                "setmaxnreg: the consumers would wait forever for registers");
  // Two fragment sets, the decode of each step overlapping the previous step's wgmmas. The
  // 64-column symbol's first consumer holds acc, p and the hand-over's reads: at 64 rows and more a
  // second fragment set does not fit its registers (ptxas spills), and there the two consumers'
  // alternation already overlaps one's decode with the other's wgmmas.
  static constexpr bool kPipelined = kN128 || kRows < 64;
};

// ---- the fold of the steps in order, with the pieces' starts and ends (geometry.hpp) ----------
// Held by the threads that own acc: 64 columns x kRows (consumer `wg` of the 128-column symbol
// owns columns 64 wg ..). acc = fma(p, S, acc) step by step (NUMERICS.md 2.1); a unit cut between
// two CTAs continues in the second from the first's acc (kn::CtaHandover).
template <class Cfg>
struct WgFolder {
  static constexpr int kAcc = Cfg::kAcc;
  static constexpr std::uint32_t kCols = Cfg::kCols;
  static constexpr int kRows = static_cast<int>(Cfg::kHalfBytes / dev::kWgSwizzleRowBytes);
  const Shape& sh;
  const float* __restrict__ block_scale;
  std::uint16_t* __restrict__ output;
  float* workspace;
  std::uint32_t tid, wg;    // thread in the warpgroup; which consumer (0 or 1) of the columns
  Cursor folding, loading;  // the next step to fold, and the next whose scale to load
  float acc[kAcc];
  // The scales of the step being folded (sc) and of the one being decoded (sc_next), loaded a step
  // ahead; [1]: of the step after it, which the 64-column symbol's first consumer also folds.
  float sc[2] = {0.f, 0.f}, sc_next[2] = {0.f, 0.f};

  __device__ __forceinline__ WgFolder(const Shape& shape, const dev::WgPieces& pc, const float* __restrict__ s,
                                      std::uint16_t* __restrict__ c, float* ws, std::uint32_t thread,
                                      std::uint32_t which)
      : sh(shape),
        block_scale(s),
        output(c),
        workspace(ws),
        tid(thread),
        wg(which),
        folding(pc, shape.steps),
        loading(pc, shape.steps) {}
  // S[first column of the unit / 128][step]: both consumers of a 128-column unit share its row.
  __device__ __forceinline__ float load_scale() {
    const float v = __ldg(block_scale + (loading.at.unit / sh.row_tiles * kCols / 128) * sh.steps + loading.at.s);
    loading.advance();
    return v;
  }
  // Step q is decoded next (q = range: none): what was loaded becomes current, q's scales load.
  __device__ __forceinline__ void next(std::uint32_t q, std::uint32_t range) {
    sc[0] = sc_next[0];
    sc[1] = sc_next[1];
    if (q < range) sc_next[0] = load_scale();
    if (!Cfg::kN128 && q + 1 < range) sc_next[1] = load_scale();
  }
  // acc = fma(p, S, acc) for the next step in order, with `p(r)` its partial sums; `slot` picks sc[slot].
  template <class P>
  __device__ __forceinline__ void fold(int slot, P&& p) {
    const StepAt at = folding.at;
    folding.advance();
    const kn::CtaHandover<Cfg::kSlotFloats> handover(workspace);
    if (at.s == at.begin) {
      if (at.kind == dev::WgPieceKind::tail) {
        // acc after the steps before `begin`: the previous CTA's head, written first thing there.
        if (tid == 0 && wg == 0) {
          handover.wait_for_previous();
          if constexpr (kn::Timing::kPerturbs) kn::Timing::at(kn::HandOver::cta_take, at.unit);
        }
        kn::bar_sync(kn::NamedBarrier::cta_handover, Cfg::kFolders);
        const float* in = handover.previous_slot() + wg * Cfg::kHandoverFloats;
#pragma unroll
        for (int r = 0; r < kAcc; ++r) acc[r] = kn::ld_cg(in + r * dev::kWgWarpgroupThreads + tid);
      } else {
#pragma unroll
        for (int r = 0; r < kAcc; ++r) acc[r] = 0.0f;  // +0 (NUMERICS.md 2.1)
      }
    }
    const float s = sc[slot];
#pragma unroll
    for (int r = 0; r < kAcc; ++r) acc[r] = kn::fma_rn(p(r), s, acc[r]);
    if (at.s + 1 != at.end) return;
    if (at.kind == dev::WgPieceKind::head) {  // this CTA's head of the unit, for the next CTA
      if constexpr (kn::Timing::kPerturbs) kn::Timing::at(kn::HandOver::cta_publish, at.unit);
      float* out = handover.own_slot() + wg * Cfg::kHandoverFloats;
#pragma unroll
      for (int r = 0; r < kAcc; ++r) out[r * dev::kWgWarpgroupThreads + tid] = acc[r];
      __threadfence();
      kn::bar_sync(kn::NamedBarrier::cta_handover, Cfg::kFolders);
      if (tid == 0 && wg == 0) handover.publish();
      return;
    }
    // C[row][col] = bf16_rne(acc) for the columns and the row tile's rows inside [M, N).
    const std::uint32_t warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
    const std::uint32_t col0 = at.unit / sh.row_tiles * kCols + wg * dev::kWgWarpgroupCols + 16 * warp + g;
    const std::uint32_t row0 = at.unit % sh.row_tiles * kRows + 2 * t;
#pragma unroll
    for (int r = 0; r < kAcc; ++r) {
      const std::uint32_t col = col0 + ((r & 2) ? 8 : 0), row = row0 + 8 * (r / 4) + (r & 1);
      if (row < sh.m && col < sh.n)
        output[static_cast<std::size_t>(row) * sh.ldc + col] = kn::f32_to_bf16_rne_bits(acc[r]);
    }
  }
};

// ---- the main loop: the producer's loads and a consumer's decode, wgmmas and releases ----------
// W's loads and fragments are the layout's (w8a16_w_layout.cuh, Layout::Wg); the activations' and
// the ring's are the same for every layout.
template <class Cfg, class Layout>
struct WgMainloop {
  using W = typename Layout::Wg;
  using Pipeline = typename Cfg::Pipeline;
  using Stages = typename Cfg::Stages;
  static constexpr int kAcc = Cfg::kAcc;
  static constexpr int kRows = static_cast<int>(Cfg::kHalfBytes / dev::kWgSwizzleRowBytes);
  static_assert(W::kUnitCols == 0 || W::kUnitCols == Cfg::kCols, "the layout's tiles are units of another width");

  // The producer: one thread issues every TMA load of the CTA, in step order.
  __device__ __forceinline__ static void produce(const Pipeline& sm, const Shape& sh, const dev::WgPieces& pc,
                                                 std::uint32_t range, const std::uint8_t* weight,
                                                 const CUtensorMap* wmap, const CUtensorMap* amap) {
    W::prefetch(wmap);
    kn::tma_prefetch_map(amap);
    Cursor cur(pc, sh.steps);
    for (Stages st{0}; st.count < range; ++st, cur.advance()) {
      sm.producer_acquire(st);
      const StepAt& at = cur.at;
      const auto k0 = static_cast<int32_t>(at.s * dev::kKBlock);
      const auto col0 = static_cast<int32_t>(at.unit / sh.row_tiles * Cfg::kCols);
      const auto row0 = static_cast<int32_t>(at.unit % sh.row_tiles * kRows);
      const std::uint32_t dst = sm.stage(st);
      sm.producer_expect(st);
      bool fenced = false;
      if (!st.first_lap()) fenced = sm.producer_fence();
      W::load(dst + Pipeline::kOffWeight, wmap, weight, at.unit / sh.row_tiles, at.s, sh.steps, k0, col0,
              Cfg::kWeightBytes, sm.full_barrier(st));
      kn::tma_load_2d(dst + Pipeline::kOffAct, amap, k0, row0, sm.full_barrier(st));
      kn::tma_load_2d(dst + Pipeline::kOffAct + Cfg::kHalfBytes, amap, k0 + 64, row0, sm.full_barrier(st));
      if constexpr (kn::Timing::kPerturbs) sm.producer_copied(st, fenced);
    }
  }

  // One step of a consumer: its 64 W rows of stage st into A fragments, once the stage has landed.
  __device__ __forceinline__ static void decode(const Pipeline& sm, Stages st, std::uint32_t row_base,
                                                std::uint32_t lane, std::uint32_t (&a)[8][4], bool may_nan) {
    sm.consumer_wait(st);
    W::decode(sm.stage(st) + Pipeline::kOffWeight, row_base, lane, a, may_nan);
  }

  // 8 chained wgmmas of stage st into p (scale-d 0 on the first: the step's p starts from +0). The
  // j-th reads K slice j of the row tile: slice j & 3 of half j >> 2 (4 slices per 128-byte row).
  // kAgain: the same wgmmas issued again at their wait (wait_mmas), the first taking its scale-d 0
  // from a register (w8a16_timing.cuh, zero).
  template <bool kAgain = false>
  __device__ __forceinline__ static void issue(const Pipeline& sm, Stages st, const std::uint32_t (&a)[8][4],
                                               float (&p)[kAcc]) {
    static_assert(4 * Cfg::kSliceBytes == dev::kWgSwizzleRowBytes, "four K slices per swizzle row");
    const std::uint32_t act = sm.stage(st) + Pipeline::kOffAct;
    kn::wgmma_fence();
    if constexpr (kAgain) kn::WgmmaRs<kRows>::mma(p, a[0], kn::wgmma_desc_sw128(act), kn::Timing::zero());
    else kn::WgmmaRs<kRows>::template mma<false>(p, a[0], kn::wgmma_desc_sw128(act));
#pragma unroll
    for (int j = 1; j < 8; ++j)
      kn::WgmmaRs<kRows>::template mma<true>(p, a[j],
                                             kn::wgmma_desc_sw128(act + (j >> 2) * Cfg::kHalfBytes +
                                                                  (j & 3) * Cfg::kSliceBytes));
    kn::wgmma_commit();
  }

  // The wait for step st's wgmmas (wgmma.wait_group 0), after which p holds its partial sums and its
  // stage may be released. A wgmma may read its shared-memory operands at any time until the wait
  // that covers it (PTX ISA 9.7.15.2, asynchronous warpgroup-level operations), but this GPU reads
  // them within the issue's first microsecond, so a stage released above this wait is never seen
  // refilled, however long the delays. So the perturbed module takes the latest read the ISA allows:
  // after the in-flight point's delay, the step's wgmmas are issued again over the same stage and
  // the same fragments (both still the step's until this wait: a and the stage are not touched
  // between) into p from +0, and this wait covers them too. The bytes are the first issue's; a stage
  // released early has been poisoned by then (w8a16_timing.cuh, poison), and its NaN reaches p.
  __device__ __forceinline__ static void wait_mmas(const Pipeline& sm, Stages st, const std::uint32_t (&a)[8][4],
                                                   float (&p)[kAcc]) {
    if constexpr (kn::Timing::kPerturbs) {
      kn::Timing::at(kn::HandOver::mma_in_flight, st.count);
      issue<true>(sm, st, a, p);
    }
    kn::wgmma_wait<0>();
  }

  // A consumer's steps q = first, first + stride, ... < range (Cfg::kPipelined: the decode of each
  // step overlapping the previous step's wgmmas, two fragment sets alternating, the loop running
  // two steps a turn so that each set is named at compile time). f.next(q) runs after q's decode
  // (q = range: none is left), f.done(q, p) once q's wgmmas have finished and its stage is released.
  template <class F>
  __device__ __forceinline__ static void consume(const Pipeline& sm, std::uint32_t first, std::uint32_t stride,
                                                 std::uint32_t range, std::uint32_t row_base, std::uint32_t lane, F& f,
                                                 kn::WgTurns turns = kn::WgTurns{0}) {
    if (first >= range) return;
    float p[kAcc];
    if constexpr (!Cfg::kPipelined) {  // decode, wgmmas, fold, one step after the other
      std::uint32_t a[8][4];
      for (Stages st{first}; st.count < range; st += stride) {
        decode(sm, st, row_base, lane, a, f.may_nan());
        f.next(st.count);
        issue(sm, st, a, p);
        wait_mmas(sm, st, a, p);
        sm.consumer_release(st);
        f.next(range);
        f.done(st.count, p);
      }
      return;
    } else {
      // The 128-column symbols' two consumers read every stage, so left alone they reach each step
      // together and their folds and decodes overlap each other rather than the other's wgmmas. With
      // tiles of 96 and 128 rows they issue in turn instead (kn::WgTurns: consumer 0's step q,
      // consumer 1's step q, consumer 0's step q + 1, ...), so that one folds and decodes while the
      // other's wgmmas run (the ping-pong order of CUTLASS's Hopper GEMMs). Measured
      // (device/kernels/PERF_NOTES.md): faster at 96, 128 and 512 rows, no faster at 16 and 64.
      constexpr bool kPingPong = Cfg::kN128 && kRows > 64;
      std::uint32_t a0[8][4], a1[8][4];
      auto turn = [&](Stages st, const std::uint32_t(&cur)[8][4], std::uint32_t(&nxt)[8][4]) {
        const Stages later = st + stride;
        const bool more = later.count < range;
        if constexpr (kPingPong) turns.wait();
        issue(sm, st, cur, p);
        if constexpr (kPingPong) turns.pass(more);
        if (more) decode(sm, later, row_base, lane, nxt, f.may_nan());
        f.next(more ? later.count : range);
        wait_mmas(sm, st, cur, p);
        sm.consumer_release(st);
        f.done(st.count, p);
        return more;
      };
      if constexpr (kPingPong) turns.start();
      decode(sm, Stages{first}, row_base, lane, a0, f.may_nan());
      f.next(first);
      for (Stages st{first};; st += 2 * stride) {
        if (!turn(st, a0, a1)) break;
        if (!turn(st + stride, a1, a0)) break;
      }
    }
  }
};

// ---- one symbol at one row-tile height: the warpgroups' roles ---------------------------------
template <int kRows, dev::WgVariant kV, class Layout>
struct WgRows {
  using Cfg = WgConfig<kRows, kV>;
  using Main = WgMainloop<Cfg, Layout>;
  using Folder = WgFolder<Cfg>;
  using Pipeline = typename Cfg::Pipeline;
  using Slots = typename Cfg::Slots;
  static constexpr int kAcc = Cfg::kAcc;

  // Every step, this consumer's 64 columns of the 128.
  struct Own {
    Folder fold;
    std::uint32_t range;
    __device__ __forceinline__ void next(std::uint32_t q) { fold.next(q, range); }
    bool range_nan;  // the layout's answer for the range (Layout::Wg::range_may_nan)
    __device__ __forceinline__ bool may_nan() const { return range_nan; }
    __device__ __forceinline__ void done(std::uint32_t q, const float (&p)[kAcc]) {
      fold.fold(0, [&](int r) { return p[r]; });
    }
  };
  // The 64-column symbol's first consumer: the even steps, and the fold of every step: its own p,
  // then the odd step's from the hand-over.
  struct Even {
    Folder fold;
    const Pipeline& sm;
    std::uint32_t range, tid;
    __device__ __forceinline__ void next(std::uint32_t q) { fold.next(q, range); }
    __device__ __forceinline__ bool may_nan() const { return true; }  // the row-major decode probes
    __device__ __forceinline__ void done(std::uint32_t q, const float (&p)[kAcc]) {
      fold.fold(0, [&](int r) { return p[r]; });
      if (q + 1 >= range) return;
      // The odd step q + 1 is the second consumer's (q / 2)-th.
      sm.handover_take(Slots{q / 2}, [&](std::uint32_t slot) {
        const std::uint32_t in = slot + sizeof(float) * tid;
        fold.fold(1, [&](int r) { return kn::lds_f32(in + sizeof(float) * dev::kWgWarpgroupThreads * r); });
      });
    }
  };
  // Its second consumer: the odd steps, each p handed over in a two-slot ring.
  struct Odd {
    const Pipeline& sm;
    std::uint32_t tid;
    __device__ __forceinline__ void next(std::uint32_t) {}
    __device__ __forceinline__ bool may_nan() const { return true; }
    __device__ __forceinline__ void done(std::uint32_t q, const float (&p)[kAcc]) {
      sm.handover_put(Slots{q / 2}, [&](std::uint32_t slot) {  // step q is this consumer's (q / 2)-th
        const std::uint32_t out = slot + sizeof(float) * tid;
#pragma unroll
        for (int r = 0; r < kAcc; ++r) kn::sts_f32(out + sizeof(float) * dev::kWgWarpgroupThreads * r, p[r]);
      });
    }
  };

  __device__ __forceinline__ static void run(std::uint8_t* smem, const std::uint8_t* weight,
                                             const float* __restrict__ block_scale, std::uint16_t* __restrict__ output,
                                             const Shape& sh, float* workspace, const CUtensorMap* wmap,
                                             const CUtensorMap* amap) {
    const Pipeline sm{kn::smem_addr(smem)};
    const dev::WgPieces pc = dev::wgmma_cta_pieces(blockIdx.x, gridDim.x, sh.units, sh.steps);
    const std::uint64_t total = std::uint64_t{sh.units} * sh.steps;
    const auto range = static_cast<std::uint32_t>(total * (blockIdx.x + 1) / gridDim.x -
                                                  total * blockIdx.x / gridDim.x);
    const std::uint32_t wg = threadIdx.x / dev::kWgWarpgroupThreads, tid = threadIdx.x % dev::kWgWarpgroupThreads,
                        warp = tid / 32, lane = tid % 32;
    if (threadIdx.x == 0) {  // the barriers' arrival counts (kn::WgBarriers)
      for (std::uint32_t i = 0; i < Cfg::kStages; ++i) {
        kn::mbar_init(sm.full(i), 1);
        kn::mbar_init(sm.empty(i), Cfg::kReleases);
      }
      for (std::uint32_t h = 0; h < dev::kWgHandoverSlots; ++h) {  // every thread of a warpgroup arrives
        kn::mbar_init(sm.handover_full(h), dev::kWgWarpgroupThreads);
        kn::mbar_init(sm.handover_empty(h), dev::kWgWarpgroupThreads);
      }
      kn::mbar_fence_init();
    }
    __syncthreads();
    // Registers (PTX ISA 9.7.17.4, setmaxnreg): the producer needs few, the consumers hold acc, p and
    // two fragment sets. A warpgroup's increase waits for registers its CTA's other warpgroups gave
    // back, so the CTA's launch allocation must cover the sum (or the increase waits forever; the
    // budgets and their sums: geometry.hpp, kWgProducerRegs).
    if (wg == 0) {
      kn::regs_dec<Cfg::kProducerRegs>();
      if (threadIdx.x == 0) Main::produce(sm, sh, pc, range, weight, wmap, amap);
      return;
    }
    kn::regs_inc<Cfg::kConsumerRegs>();
    const std::uint32_t consumer = wg - 1;
    if (Cfg::kN128) {
      Own f{Folder(sh, pc, block_scale, output, workspace, tid, consumer), range,
            !Layout::Wg::kNanTable || Layout::Wg::range_may_nan(sh, pc, weight, range, lane)};
      Main::consume(sm, 0, 1, range, consumer * dev::kWgWarpgroupCols + 16 * warp, lane, f, kn::WgTurns{consumer});
    } else if (consumer == 0) {
      Even f{Folder(sh, pc, block_scale, output, workspace, tid, 0), sm, range, tid};
      Main::consume(sm, 0, 2, range, 16 * warp, lane, f);
    } else {
      Odd f{sm, tid};
      Main::consume(sm, 1, 2, range, 16 * warp, lane, f);
    }
  }
};

template <int kRows>
struct Rows {
  static constexpr int value = kRows;
};

template <dev::WgVariant kV, class Layout>
__device__ __forceinline__ void wgmma_rows_body(const uint8_t* weight, const float* __restrict__ block_scale,
                                                uint16_t* __restrict__ output, uint32_t m, uint32_t n, uint32_t k,
                                                uint32_t a_row_stride, uint32_t c_row_stride, float* workspace,
                                                const CUtensorMap* wmap, const CUtensorMap* amap,
                                                unsigned char* smem_raw) {
  std::uint8_t* smem = reinterpret_cast<std::uint8_t*>((reinterpret_cast<std::uintptr_t>(smem_raw) + dev::kWgAlign -
                                                        1) &
                                                       ~std::uintptr_t{dev::kWgAlign - 1});
  const Shape sh{
      m, n, k, a_row_stride, c_row_stride, k / dev::kKBlock, dev::wgmma_row_tiles(m), dev::wgmma_units(m, n, kV)};
  auto run = [&](auto rows) W8A16_TIMING_INLINE {
    WgRows<decltype(rows)::value, kV, Layout>::run(smem, weight, block_scale, output, sh, workspace, wmap, amap);
  };
  if constexpr (kV == dev::WgVariant::n128_x2) {  // up to 16 rows (geometry.hpp)
    if (dev::wgmma_tile_rows(m) == 8) run(Rows<8>{});
    else run(Rows<16>{});
    return;
  } else {  // from 17 rows (plan.hpp wgmma_choice: below, the two-CTA symbol or none)
    switch (dev::wgmma_tile_rows(m)) {
      case 24: run(Rows<24>{}); break;
      case 32: run(Rows<32>{}); break;
      case 48: run(Rows<48>{}); break;
      case 64: run(Rows<64>{}); break;
      case 96: run(Rows<96>{}); break;
      default: run(Rows<128>{});
    }
  }
}

}  // namespace

// The symbols: one per bodies.def kernel row of params `tma`, its variant and layout columns the
// template arguments. For variant V, grid (wgmma_ctas(m, n, SMs, V), 1, 1), kWgThreads = 384
// threads, wgmma_smem_bytes(m, V) of dynamic shared memory; `workspace` holds
// wgmma_workspace_bytes(m, grid, V) bytes whose flags are zero; `wmap` is W as a 2-D UINT8 tensor
// {k, n} with box {128, wgmma_unit_cols(V)}, `amap` A as a 2-D UINT16 tensor {k, m} (row pitch
// a_row_stride) with box {64, wgmma_tile_rows(m)}, both in the 128-byte swizzle (the CUDA backend
// encodes them; docs/KERNEL_ABI.md 1.1). A layout that reads W otherwise (packed: `weight` is the
// packed buffer, packed_weight_bytes(n, k), 16-byte aligned, read by bulk copies) leaves `wmap`
// unread. `input` is read through `amap` only. The layout column names a policy of
// w8a16_w_layout.cuh through W8A16_WG_LAYOUT_<layout>, which a tool may define before including
// this file to build the same symbols over a layout of its own (tools/gpu-decode-variants).
#ifndef W8A16_WG_LAYOUT_row_major
#define W8A16_WG_LAYOUT_row_major kn::WRowMajor
#endif
#ifndef W8A16_WG_LAYOUT_packed
#define W8A16_WG_LAYOUT_packed kn::WPacked
#endif
#define W8A16_WG_ENTRY_plain(id, variant, layout)
#define W8A16_WG_ENTRY_tma(id, variant, layout)                                                                      \
  extern "C" __global__ void __launch_bounds__(dev::kWgThreads, dev::wgmma_ctas_per_sm(dev::WgVariant::variant))     \
      w8a16_##id(const uint16_t* __restrict__ input, const uint8_t* __restrict__ weight,                             \
                 const float* __restrict__ block_scale, uint16_t* __restrict__ output, uint32_t m, uint32_t n,       \
                 uint32_t k, uint32_t a_row_stride, uint32_t c_row_stride, float* workspace,                         \
                 const __grid_constant__ CUtensorMap wmap, const __grid_constant__ CUtensorMap amap) {               \
    (void)input;                                                                                                     \
    extern __shared__ __align__(16) unsigned char smem_raw[];                                                        \
    wgmma_rows_body<dev::WgVariant::variant, W8A16_WG_LAYOUT_##layout>(weight, block_scale, output, m, n, k,         \
                                                                       a_row_stride, c_row_stride, workspace, &wmap, \
                                                                       &amap, smem_raw);                             \
  }
#define W8A16_KERNEL(id, file, arch, params, variant, layout) W8A16_WG_ENTRY_##params(id, variant, layout)
#include "w8a16/device/bodies.def"
#undef W8A16_WG_ENTRY_plain
#undef W8A16_WG_ENTRY_tma
#endif
