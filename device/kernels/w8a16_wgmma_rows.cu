// SPDX-License-Identifier: MIT OR Apache-2.0
// w8a16_wgmma_rows, w8a16_wgmma_rows_n128: the Hopper tier of the canonical fold (NUMERICS.md 2.1):
// wgmma.mma_async fed by the tensor memory accelerator, persistent CTAs over units (geometry.hpp).
#include <cuda.h>  // CUtensorMap

#include <cstddef>  // offsetof
#include <cstdint>

#include "w8a16/device/geometry.hpp"

// wgmma and setmaxnreg exist only in the sm_90a target: every other cubin of the module lacks the
// symbols, their handles are zero there, and the entry points fall back to the other tiers.
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

// ---- shared memory, at the 1,024-aligned base (geometry.hpp: wgmma_smem_bytes) ------------------
using Mbarrier = std::uint64_t;  // an opaque 8-byte, 8-aligned object in shared memory (PTX ISA 9.7.13.15.1)
static_assert(sizeof(Mbarrier) == dev::kWgMbarrierBytes, "mbarrier size");
// One pipeline stage: W's step (kCols rows of 128 E4M3 codes, the A operand, decoded in registers)
// and the row tile's (kRows rows of 128 BF16 as two 64-column halves of 128-byte rows, the B
// operand), each in the TMA's 128-byte swizzle.
template <std::uint32_t kWeightBytes, std::uint32_t kHalfBytes>
struct WgStage {
  std::uint8_t weight[kWeightBytes];
  std::uint8_t act[2][kHalfBytes];
};
// The barriers of the pipeline (PipelineTmaAsync's roles): full[s], stage s has landed (the producer
// arrives with its byte count, the TMA unit completes it; the consumers wait); empty[s], stage s is
// read (one arrival per thread of each consumer that reads it; the producer waits before refilling
// it); and the 64-column symbol's hand-over ring, handover_full[h], slot h holds the second
// consumer's partial sums, and handover_empty[h], the first has folded them (128 arrivals each).
template <std::uint32_t kStages>
struct WgBarriers {
  Mbarrier full[kStages];
  Mbarrier empty[kStages];
  Mbarrier handover_full[dev::kWgHandoverSlots];
  Mbarrier handover_empty[dev::kWgHandoverSlots];
};
// The stages, the hand-over slots (the 64-column symbol's: kSlotFloats FP32 each, in the second
// consumer's register order; none for the 128-column ones) and the barriers.
template <class Stage, std::uint32_t kStages, std::uint32_t kSlotFloats>
struct WgSharedStorage {
  Stage stage[kStages];
  float handover[dev::kWgHandoverSlots][kSlotFloats];
  WgBarriers<kStages> bar;
};
template <class Stage, std::uint32_t kStages>
struct WgSharedStorage<Stage, kStages, 0> {
  Stage stage[kStages];
  WgBarriers<kStages> bar;
};

// The operand swap (geometry.hpp): per 128-K step, a warpgroup's 64 x 128 E4M3 codes are the A
// operand of 8 chained wgmma m64nRk16, each thread decoding its A fragments from shared memory into
// registers, and the row tile's R x 128 BF16 are the B operand, read by wgmma from shared memory.
// D[c][r] is the step's partial sum p for output (row r, column c).
//
// Fragments (PTX ISA 9.7.15.5.1, register A of m64nNk16, .bf16; warp w of the warpgroup, g = lane
// / 4, t = lane % 4): a0 = A[16w+g][2t..2t+1], a1 = A[16w+g+8][2t..2t+1], a2 = A[16w+g][2t+8..2t+9],
// a3 = A[16w+g+8][2t+8..2t+9]; accumulators d[4i..4i+3] = D[16w+g][8i+2t..+1], D[16w+g+8][8i+2t..+1].
// Unlike the mma.sync tiers the K positions are the ISA's own: the B operand is the activations as
// TMA lands them, so the A fragment takes the bytes at 2t, 2t+1, 2t+8, 2t+9 of each 16-byte window
// (two 4-byte shared loads and one byte permute per row and window).
//
// kN128 = false (w8a16_wgmma_rows): 64-column units, the two consumers take the steps in turn and
// the first folds them all; true (w8a16_wgmma_rows_n128): 128-column units, consumer c owns columns
// 64c..64c+63 and folds them itself.
// kPacked (the _packed symbols, 128-column units only): W is in the packed layout (NUMERICS.md 2.3),
// a step's tile one bulk copy, a thread's codes of a window one 8-byte shared load, and the NaN
// probe only on the tiles the layout's NaN table marks.
template <int kRows, dev::WgVariant kV, bool kPacked = false>
struct WgRows {
  static constexpr bool kN128 = dev::wgmma_n128(kV);
  static_assert(!kPacked || kN128, "the packed layout's tiles are 128-column units");
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
  using Stage = WgStage<kWeightBytes, kHalfBytes>;
  using Barriers = WgBarriers<kStages>;
  using Storage = WgSharedStorage<Stage, kStages, dev::wgmma_handover_bytes(kRows, kV) / (dev::kWgHandoverSlots * 4)>;
  using Stages = kn::PipelineState<kStages>;               // the ring of stages
  using Slots = kn::PipelineState<dev::kWgHandoverSlots>;  // the hand-over ring
  // Byte offsets of the Storage's members, as 32-bit shared-window offsets.
  template <class T>
  static constexpr std::uint32_t u32(T bytes) {
    return static_cast<std::uint32_t>(bytes);
  }
  static constexpr std::uint32_t kOffStages = u32(offsetof(Storage, stage)), kOffBarriers = u32(offsetof(Storage, bar));
  static constexpr std::uint32_t kOffHandover = kOffStages + u32(sizeof(Storage::stage));  // the slots, if any
  static constexpr std::uint32_t kOffWeight = u32(offsetof(Stage, weight)), kOffAct = u32(offsetof(Stage, act)),
                                 kMbarrierBytes = u32(sizeof(Mbarrier));
  // The barriers as one array of Mbarrier: where each member's first one sits in it.
  static constexpr std::uint32_t kFull = u32(offsetof(Barriers, full)) / kMbarrierBytes,
                                 kEmpty = u32(offsetof(Barriers, empty)) / kMbarrierBytes,
                                 kHandoverFull = u32(offsetof(Barriers, handover_full)) / kMbarrierBytes,
                                 kHandoverEmpty = u32(offsetof(Barriers, handover_empty)) / kMbarrierBytes;
  static_assert(sizeof(Stage) == kStageBytes && offsetof(Stage, act) == kWeightBytes, "stage layout (geometry.hpp)");
  static_assert(sizeof(Barriers) == dev::wgmma_barrier_bytes(kRows, kV), "barriers (geometry.hpp)");
  static_assert(dev::kWgAlign + sizeof(Storage) == dev::wgmma_smem_bytes(kRows, kV) &&
                    kOffBarriers == kStages * kStageBytes + dev::wgmma_handover_bytes(kRows, kV),
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

  // The Storage at shared-window address `base` (the PTX wrappers take 32-bit shared addresses,
  // which the compiler cannot derive from a generic pointer), and the pipeline's protocol on it:
  // each wait names its phase through the ring's state, nowhere else.
  struct Smem {
    std::uint32_t base;
    __device__ __forceinline__ std::uint32_t stage(Stages st) const {
      return base + kOffStages + st.index() * kStageBytes;
    }
    __device__ __forceinline__ std::uint32_t barrier(std::uint32_t i) const {
      return base + kOffBarriers + kMbarrierBytes * i;
    }
    __device__ __forceinline__ std::uint32_t full(std::uint32_t i) const { return barrier(kFull + i); }
    __device__ __forceinline__ std::uint32_t empty(std::uint32_t i) const { return barrier(kEmpty + i); }
    __device__ __forceinline__ std::uint32_t handover_full(std::uint32_t h) const { return barrier(kHandoverFull + h); }
    __device__ __forceinline__ std::uint32_t handover_empty(std::uint32_t h) const {
      return barrier(kHandoverEmpty + h);
    }
    __device__ __forceinline__ std::uint32_t handover(std::uint32_t h) const {
      return base + kOffHandover + 4u * h * kHandoverFloats;
    }
    // The producer: wait until the consumers released the stage's previous use; arrive on its full
    // barrier announcing the bytes that the TMA loads, which complete on full_barrier(st), will bring.
    __device__ __forceinline__ void producer_acquire(Stages st) const {
      if (!st.first_lap()) kn::mbar_wait(empty(st.index()), st.previous_phase());
    }
    __device__ __forceinline__ void producer_expect(Stages st) const {
      kn::mbar_arrive_expect_tx(full(st.index()), kStageBytes);
    }
    __device__ __forceinline__ std::uint32_t full_barrier(Stages st) const { return full(st.index()); }
    // A consumer: wait until the stage has landed; release it once its wgmmas have finished. Every
    // thread that read the stage arrives: mbarrier.arrive has release semantics for the arriving
    // thread's own accesses (PTX ISA 9.7.13.15.13), so each thread's shared loads are ordered
    // before the refill that the producer's wait admits, whichever copy brings it. One arrival a
    // warp after __syncwarp orders them too under the CUDA memory model, but racecheck does not
    // follow that for 1-D bulk copies (cp.async.bulk) and reports every refill as a hazard
    // (docs/JOURNAL.md, "GPU runs"); one arrival a thread costs nothing measurable.
    __device__ __forceinline__ void consumer_wait(Stages st) const { kn::mbar_wait(full(st.index()), st.phase()); }
    __device__ __forceinline__ void consumer_release(Stages st) const { kn::mbar_arrive(empty(st.index())); }
    // The hand-over ring. The second consumer: wait until the first has folded the slot's previous
    // use, write(slot address), commit (all 128 threads arrive). The first: wait for the slot,
    // read(slot address), release it.
    template <class W>
    __device__ __forceinline__ void handover_put(Slots hs, W&& write) const {
      const std::uint32_t h = hs.index();
      if (!hs.first_lap()) kn::mbar_wait(handover_empty(h), hs.previous_phase());
      write(handover(h));
      kn::mbar_arrive(handover_full(h));
    }
    template <class R>
    __device__ __forceinline__ void handover_take(Slots hs, R&& read) const {
      const std::uint32_t h = hs.index();
      kn::mbar_wait(handover_full(h), hs.phase());
      read(handover(h));
      kn::mbar_arrive(handover_empty(h));
    }
  };

  // ---- producer: one thread issues every TMA load of the CTA, in step order --------------------
  __device__ __forceinline__ static void produce(const Smem& sm, const Shape& sh, const dev::WgPieces& pc,
                                                 std::uint32_t range, const std::uint8_t* weight,
                                                 const CUtensorMap* wmap, const CUtensorMap* amap) {
    if constexpr (!kPacked) kn::tma_prefetch_map(wmap);
    kn::tma_prefetch_map(amap);
    Cursor cur(pc, sh.steps);
    for (Stages st{0}; st.count < range; ++st, cur.advance()) {
      sm.producer_acquire(st);
      const StepAt& at = cur.at;
      const auto k0 = static_cast<int32_t>(at.s * dev::kKBlock);
      const auto col0 = static_cast<int32_t>(at.unit / sh.row_tiles * kCols);
      const auto row0 = static_cast<int32_t>(at.unit % sh.row_tiles * kRows);
      const std::uint32_t dst = sm.stage(st);
      sm.producer_expect(st);
      // Both layouts: the consumers read the stage's previous W with generic-proxy shared loads
      // (the decode), and the refill writes it through the async proxy (a bulk or a tensor copy).
      // The mbarrier orders their reads before this thread's wait; the proxy fence carries that
      // order over to its async-proxy writes (PTX ISA 8.6, proxies; 9.7.13.4, fence.proxy.async).
      if (!st.first_lap()) kn::fence_proxy_async_shared();
      if constexpr (kPacked) {
        kn::bulk_load(dst + kOffWeight, weight + dev::packed_tile_offset(at.unit / sh.row_tiles, at.s, sh.steps),
                      kWeightBytes, sm.full_barrier(st));
      } else kn::tma_load_2d(dst + kOffWeight, wmap, k0, col0, sm.full_barrier(st));
      kn::tma_load_2d(dst + kOffAct, amap, k0, row0, sm.full_barrier(st));
      kn::tma_load_2d(dst + kOffAct + kHalfBytes, amap, k0 + 64, row0, sm.full_barrier(st));
    }
  }

  // ---- packed: whether a tile of the CTA's range holds a NaN code ------------------------------
  // The NaN table (NUMERICS.md 2.3) is read once, before the first decode, by each consumer warp for
  // itself (its lanes OR the range's bytes, __any_sync joins them: no barrier between warps), so
  // the consumers load nothing per step; a range with no NaN tile (every range, for weights without
  // NaN codes) takes the probe-free decode throughout. A range with one decodes every tile exactly,
  // which gives the same bits (w8a16_ptx.cuh), only slower.
  // The range is the steps [s0, steps) of unit u0 and on, in (unit, step) order: its tail piece
  // first if it has one (wgmma_cta_pieces). Step s of unit u reads the tile of column unit
  // u / row_tiles.
  __device__ __forceinline__ static bool range_has_nan(const Shape& sh, const dev::WgPieces& pc,
                                                       const std::uint8_t* weight, std::uint32_t range,
                                                       std::uint32_t lane) {
    const std::uint8_t* table = weight + dev::packed_table_offset(sh.n, sh.k);
    const std::uint32_t u0 = pc.has_tail ? pc.tail.unit : pc.full_begin < pc.full_end ? pc.full_begin : pc.head.unit;
    const std::uint32_t s0 = pc.has_tail ? pc.tail.begin : 0;
    std::uint32_t any = 0;
#pragma unroll 4
    for (std::uint32_t i = s0 + lane; i < s0 + range; i += 32) {
      const std::uint32_t u = u0 + i / sh.steps, s = i % sh.steps;
      any |= __ldg(table + dev::packed_tile_index(u / sh.row_tiles, s, sh.steps));
    }
    return __any_sync(0xFFFFFFFFu, any != 0);
  }

  // ---- one step of a consumer: decode its 64 W rows of stage st into A fragments -----------------
  // `may_nan` (packed only): a tile of the CTA's range holds a NaN code (its NaN table bytes, read
  // once: range_has_nan); the unpacked layout probes.
  __device__ __forceinline__ static void decode(const Smem& sm, Stages st, std::uint32_t row_base, std::uint32_t lane,
                                                std::uint32_t (&a)[8][4], bool may_nan) {
    sm.consumer_wait(st);
    if constexpr (kPacked) {
      // Row r = row_base + g + 8h, window j: the 8 bytes at group r / 16, window j, lane
      // (geometry.hpp packed_code_offset), codes of row g then of row g + 8.
      const std::uint32_t own = sm.stage(st) + kOffWeight + row_base / 16 * dev::kPackedGroupBytes + lane * 8;
      auto put = [&](int j, const std::uint32_t(&f0)[2], const std::uint32_t(&f1)[2]) {
        a[j][0] = f0[0];
        a[j][1] = f1[0];
        a[j][2] = f0[1];
        a[j][3] = f1[1];
      };
      if (!may_nan) {  // no NaN code in the tile: the integer decode is exact (w8a16_ptx.cuh)
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          std::uint32_t c[2], f0[2], f1[2], unused = 0;
          kn::lds_v2_u32(own + j * dev::kPackedWindowBytes, c);
          kn::e4m3x4_to_bf16_frag_int(c[0], f0, unused);
          kn::e4m3x4_to_bf16_frag_int(c[1], f1, unused);
          put(j, f0, f1);
        }
      } else {
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          std::uint32_t v[2], f0[2], f1[2];
          kn::lds_v2_u32(own + j * dev::kPackedWindowBytes, v);
          kn::e4m3x4_to_bf16_frag(v[0], f0);
          kn::e4m3x4_to_bf16_frag(v[1], f1);
          put(j, f0, f1);
        }
      }
      return;
    }
    (void)may_nan;
    const std::uint32_t g = lane / 4, t = lane % 4;
    // Row r = row_base + g + 8h (r % 8 == g), window j: its 16-byte chunk sits at chunk j ^ g of the
    // 128-byte row (the TMA's 128-byte swizzle), so the 8 windows are one XOR each away from the
    // thread's base address and the two rows an immediate 1,024 bytes apart.
    const std::uint32_t base = sm.stage(st) + (row_base + g) * dev::kWgSwizzleRowBytes + (g << 4) + ((t >> 1) << 2);
    // Bytes 2t, 2t+1 of a window's first 8 and 2t+8, 2t+9 of its last 8 (the 4-byte words at
    // 4 (t / 2) and 8 + 4 (t / 2)), in that order: the permute takes the low or high half of each.
    const std::uint32_t sel = (t & 1) ? 0x7632u : 0x5410u;
    auto codes = [&](int j, int h) {
      const std::uint32_t at = base ^ (static_cast<std::uint32_t>(j) << 4);
      return h == 0 ? kn::prmt(kn::lds_u32<0>(at), kn::lds_u32<8>(at), sel)
                    : kn::prmt(kn::lds_u32<1024>(at), kn::lds_u32<1032>(at), sel);
    };
    std::uint32_t nan_probe = 0;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      std::uint32_t f0[2], f1[2];
      kn::e4m3x4_to_bf16_frag_int(codes(j, 0), f0, nan_probe);
      kn::e4m3x4_to_bf16_frag_int(codes(j, 1), f1, nan_probe);
      a[j][0] = f0[0];
      a[j][1] = f1[0];
      a[j][2] = f0[1];
      a[j][3] = f1[1];
    }
    // NaN codes (0x7F, 0xFF) decode to +-480 above: this thread reads its codes again and decodes
    // them exactly (rare: the fast path keeps no copy of the codes, to save registers).
    if (kn::e4m3_nan_seen(nan_probe)) {
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        std::uint32_t f0[2], f1[2];
        kn::e4m3x4_to_bf16_frag(codes(j, 0), f0);
        kn::e4m3x4_to_bf16_frag(codes(j, 1), f1);
        a[j][0] = f0[0];
        a[j][1] = f1[0];
        a[j][2] = f0[1];
        a[j][3] = f1[1];
      }
    }
  }

  // 8 chained wgmmas of stage st into p (scale-d 0 on the first: the step's p starts from +0). The
  // j-th reads K slice j of the row tile: slice j & 3 of half j >> 2 (4 slices per 128-byte row).
  __device__ __forceinline__ static void issue(const Smem& sm, Stages st, const std::uint32_t (&a)[8][4],
                                               float (&p)[kAcc]) {
    static_assert(4 * kSliceBytes == dev::kWgSwizzleRowBytes, "four K slices per swizzle row");
    const std::uint32_t act = sm.stage(st) + kOffAct;
    kn::wgmma_fence();
    kn::WgmmaRs<kRows>::template mma<false>(p, a[0], kn::wgmma_desc_sw128(act));
#pragma unroll
    for (int j = 1; j < 8; ++j)
      kn::WgmmaRs<kRows>::template mma<true>(p, a[j],
                                             kn::wgmma_desc_sw128(act + (j >> 2) * kHalfBytes + (j & 3) * kSliceBytes));
    kn::wgmma_commit();
  }

  // A consumer's steps q = first, first + stride, ... < range, the decode of each step overlapping
  // the previous step's wgmmas (two fragment sets, alternating: the loop runs two steps a turn so
  // that each set is named at compile time). f.next(q) runs after q's decode (q = range: none is
  // left), f.done(q, p) once q's wgmmas have finished and its stage is released.
  // The 64-column symbol's first consumer holds acc, p and the hand-over's reads: at 64 rows and
  // more a second fragment set does not fit its registers (ptxas spills), and there the two
  // consumers' alternation already overlaps one's decode with the other's wgmmas.
  static constexpr bool kPipelined = kN128 || kRows < 64;
  // The 128-column symbols' two consumers read every stage, so left alone they reach each step
  // together and their folds and decodes overlap each other rather than the other's wgmmas. With
  // tiles of 96 and 128 rows they issue in turn instead (consumer 0's step q, consumer 1's step q,
  // consumer 0's step q + 1, ...), so that one folds and decodes while the other's wgmmas run (the
  // ping-pong order of CUTLASS's Hopper GEMMs). Measured (device/kernels/PERF_NOTES.md): faster at
  // 96, 128 and 512 rows, no faster at 16 and 64.
  // Named barrier 2 + c opens consumer c's next issue: c waits on it, the other consumer arrives
  // once it has issued its own step (and consumer 1 once before its first, so that consumer 0 goes
  // first). Both consumers take the same `range` steps, so the arrivals match the waits: `range`
  // on each barrier (kPingPong, in consume).
  struct Turns {
    std::uint32_t consumer;
    // Named barriers 2 and 3 (1 is the Folder's), over both consumers' threads.
    __device__ __forceinline__ static std::uint32_t barrier(std::uint32_t c) { return 2 + c; }
    __device__ __forceinline__ static std::uint32_t threads() { return dev::kWgConsumers * dev::kWgWarpgroupThreads; }
    __device__ __forceinline__ void start() const {
      if (consumer == 1) kn::bar_arrive(barrier(0), threads());
    }
    __device__ __forceinline__ void wait() const { kn::bar_sync(barrier(consumer), threads()); }
    __device__ __forceinline__ void pass(bool more) const {
      if (consumer == 0 || more) kn::bar_arrive(barrier(consumer ^ 1u), threads());
    }
  };
  template <class F>
  __device__ __forceinline__ static void consume(const Smem& sm, std::uint32_t first, std::uint32_t stride,
                                                 std::uint32_t range, std::uint32_t row_base, std::uint32_t lane, F& f,
                                                 Turns turns = Turns{0}) {
    if (first >= range) return;
    float p[kAcc];
    if constexpr (!kPipelined) {  // decode, wgmmas, fold, one step after the other
      std::uint32_t a[8][4];
      for (Stages st{first}; st.count < range; st += stride) {
        decode(sm, st, row_base, lane, a, f.may_nan());
        f.next(st.count);
        issue(sm, st, a, p);
        kn::wgmma_wait<0>();
        sm.consumer_release(st);
        f.next(range);
        f.done(st.count, p);
      }
      return;
    } else {
      constexpr bool kPingPong = kN128 && kRows > 64;
      std::uint32_t a0[8][4], a1[8][4];
      auto turn = [&](Stages st, const std::uint32_t(&cur)[8][4], std::uint32_t(&nxt)[8][4]) {
        const Stages later = st + stride;
        const bool more = later.count < range;
        if constexpr (kPingPong) turns.wait();
        issue(sm, st, cur, p);
        if constexpr (kPingPong) turns.pass(more);
        if (more) decode(sm, later, row_base, lane, nxt, f.may_nan());
        f.next(more ? later.count : range);
        kn::wgmma_wait<0>();
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

  // ---- the fold of the steps in order, with the pieces' starts and ends (geometry.hpp) ----------
  // Held by the threads that own acc: 64 columns x kRows (consumer `wg` of the 128-column symbol
  // owns columns 64 wg ..).
  struct Folder {
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

    __device__ __forceinline__ Folder(const Shape& shape, const dev::WgPieces& pc, const float* __restrict__ s,
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
      if (!kN128 && q + 1 < range) sc_next[1] = load_scale();
    }
    // acc = fma(p, S, acc) for the next step in order, with `p(r)` its partial sums; `slot` picks sc[slot].
    template <class P>
    __device__ __forceinline__ void fold(int slot, P&& p) {
      const StepAt at = folding.at;
      folding.advance();
      float* const slots = workspace;
      std::uint32_t* const flags = reinterpret_cast<std::uint32_t*>(workspace + gridDim.x * kSlotFloats);
      if (at.s == at.begin) {
        if (at.kind == dev::WgPieceKind::tail) {
          // acc after the steps before `begin`: the previous CTA's head, written first thing there.
          if (tid == 0 && wg == 0) {
            while (kn::ld_acquire_gpu(flags + blockIdx.x - 1) != 1) {}
            flags[blockIdx.x - 1] = 0;  // its one reader: zero again for the next launch
          }
          kn::bar_sync(1, kFolders);
          const float* in = slots + (blockIdx.x - 1) * kSlotFloats + wg * kHandoverFloats;
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
      if (at.kind == dev::WgPieceKind::head) {
        float* out = slots + blockIdx.x * kSlotFloats + wg * kHandoverFloats;
#pragma unroll
        for (int r = 0; r < kAcc; ++r) out[r * dev::kWgWarpgroupThreads + tid] = acc[r];
        __threadfence();
        kn::bar_sync(1, kFolders);
        if (tid == 0 && wg == 0) kn::st_release_gpu(flags + blockIdx.x, 1);
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

  __device__ __forceinline__ static void run(std::uint8_t* smem, const std::uint8_t* weight,
                                             const float* __restrict__ block_scale, std::uint16_t* __restrict__ output,
                                             const Shape& sh, float* workspace, const CUtensorMap* wmap,
                                             const CUtensorMap* amap) {
    const Smem sm{kn::smem_addr(smem)};
    const dev::WgPieces pc = dev::wgmma_cta_pieces(blockIdx.x, gridDim.x, sh.units, sh.steps);
    const std::uint64_t total = std::uint64_t{sh.units} * sh.steps;
    const auto range = static_cast<std::uint32_t>(total * (blockIdx.x + 1) / gridDim.x -
                                                  total * blockIdx.x / gridDim.x);
    const std::uint32_t wg = threadIdx.x / dev::kWgWarpgroupThreads, tid = threadIdx.x % dev::kWgWarpgroupThreads,
                        warp = tid / 32, lane = tid % 32;
    if (threadIdx.x == 0) {  // the barriers' arrival counts (WgBarriers)
      for (std::uint32_t i = 0; i < kStages; ++i) {
        kn::mbar_init(sm.full(i), 1);
        kn::mbar_init(sm.empty(i), kReleases);
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
      kn::regs_dec<kProducerRegs>();
      if (threadIdx.x == 0) produce(sm, sh, pc, range, weight, wmap, amap);
      return;
    }
    kn::regs_inc<kConsumerRegs>();
    const std::uint32_t consumer = wg - 1;
    if (kN128) {
      // Every step, this consumer's 64 columns of the 128.
      struct Own {
        Folder fold;
        std::uint32_t range;
        __device__ __forceinline__ void next(std::uint32_t q) { fold.next(q, range); }
        bool range_nan;  // packed: a tile of the range holds a NaN code; unpacked: true (the decode probes)
        __device__ __forceinline__ bool may_nan() const { return range_nan; }
        __device__ __forceinline__ void done(std::uint32_t q, const float (&p)[kAcc]) {
          fold.fold(0, [&](int r) { return p[r]; });
        }
      } f{Folder(sh, pc, block_scale, output, workspace, tid, consumer), range,
          !kPacked || range_has_nan(sh, pc, weight, range, lane)};
      consume(sm, 0, 1, range, consumer * dev::kWgWarpgroupCols + 16 * warp, lane, f, Turns{consumer});
    } else if (consumer == 0) {
      // The even steps, and the fold of every step: its own p, then the odd step's from the hand-over.
      struct Even {
        Folder fold;
        const Smem& sm;
        std::uint32_t range, tid;
        __device__ __forceinline__ void next(std::uint32_t q) { fold.next(q, range); }
        __device__ __forceinline__ bool may_nan() const { return true; }  // unpacked: the decode probes
        __device__ __forceinline__ void done(std::uint32_t q, const float (&p)[kAcc]) {
          fold.fold(0, [&](int r) { return p[r]; });
          if (q + 1 >= range) return;
          // The odd step q + 1 is the second consumer's (q / 2)-th.
          sm.handover_take(Slots{q / 2}, [&](std::uint32_t slot) {
            const std::uint32_t in = slot + sizeof(float) * tid;
            fold.fold(1, [&](int r) { return kn::lds_f32(in + sizeof(float) * dev::kWgWarpgroupThreads * r); });
          });
        }
      } f{Folder(sh, pc, block_scale, output, workspace, tid, 0), sm, range, tid};
      consume(sm, 0, 2, range, 16 * warp, lane, f);
    } else {
      // The odd steps: each p handed over in a two-slot ring.
      struct Odd {
        const Smem& sm;
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
      } f{sm, tid};
      consume(sm, 1, 2, range, 16 * warp, lane, f);
    }
  }
};

template <int kRows>
struct Rows {
  static constexpr int value = kRows;
};

template <dev::WgVariant kV, bool kPacked = false>
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
  auto run = [&](auto rows) {
    WgRows<decltype(rows)::value, kV, kPacked>::run(smem, weight, block_scale, output, sh, workspace, wmap, amap);
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

// Grid (wgmma_ctas(m, n, SMs, k64), 1, 1), kWgThreads = 384 threads, wgmma_smem_bytes(m, k64) of dynamic
// shared memory; `workspace` holds wgmma_workspace_bytes(m, grid, k64) bytes whose flags are zero;
// `wmap` is W as a 2-D UINT8 tensor {k, n} with box {128, 64}, `amap` A as a 2-D UINT16 tensor
// {k, m} (row pitch a_row_stride) with box {64, wgmma_tile_rows(m)}, both in the 128-byte swizzle
// (the CUDA backend encodes them; device/README.md, the kernel ABI).
extern "C" __global__ void __launch_bounds__(dev::kWgThreads, dev::wgmma_ctas_per_sm(dev::WgVariant::k64))
    w8a16_wgmma_rows(const uint16_t* __restrict__ input, const uint8_t* __restrict__ weight,
                     const float* __restrict__ block_scale, uint16_t* __restrict__ output, uint32_t m, uint32_t n,
                     uint32_t k, uint32_t a_row_stride, uint32_t c_row_stride, float* workspace,
                     const __grid_constant__ CUtensorMap wmap, const __grid_constant__ CUtensorMap amap) {
  (void)input;
  // W is read through the tensor maps
  extern __shared__ __align__(16) unsigned char smem_raw[];
  wgmma_rows_body<dev::WgVariant::k64>(weight, block_scale, output, m, n, k, a_row_stride, c_row_stride, workspace,
                                       &wmap, &amap, smem_raw);
}

// The same with 128-column units: grid (wgmma_ctas(m, n, SMs, n128), 1, 1), wgmma_smem_bytes(m,
// n128), wgmma_workspace_bytes(m, grid, n128), `wmap` in boxes of {128, 128}.
extern "C" __global__ void __launch_bounds__(dev::kWgThreads, dev::wgmma_ctas_per_sm(dev::WgVariant::n128))
    w8a16_wgmma_rows_n128(const uint16_t* __restrict__ input, const uint8_t* __restrict__ weight,
                          const float* __restrict__ block_scale, uint16_t* __restrict__ output, uint32_t m, uint32_t n,
                          uint32_t k, uint32_t a_row_stride, uint32_t c_row_stride, float* workspace,
                          const __grid_constant__ CUtensorMap wmap, const __grid_constant__ CUtensorMap amap) {
  (void)input;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  wgmma_rows_body<dev::WgVariant::n128>(weight, block_scale, output, m, n, k, a_row_stride, c_row_stride, workspace,
                                        &wmap, &amap, smem_raw);
}

// 128-column units with two CTAs per SM, 1 <= m <= 16: grid (wgmma_ctas(m, n, SMs, n128_x2), 1, 1),
// wgmma_smem_bytes(m, n128_x2), wgmma_workspace_bytes(m, grid, n128_x2), `wmap` in boxes of
// {128, 128}.
extern "C" __global__ void __launch_bounds__(dev::kWgThreads, dev::wgmma_ctas_per_sm(dev::WgVariant::n128_x2))
    w8a16_wgmma_rows_n128_x2(const uint16_t* __restrict__ input, const uint8_t* __restrict__ weight,
                             const float* __restrict__ block_scale, uint16_t* __restrict__ output, uint32_t m,
                             uint32_t n, uint32_t k, uint32_t a_row_stride, uint32_t c_row_stride, float* workspace,
                             const __grid_constant__ CUtensorMap wmap, const __grid_constant__ CUtensorMap amap) {
  (void)input;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  wgmma_rows_body<dev::WgVariant::n128_x2>(weight, block_scale, output, m, n, k, a_row_stride, c_row_stride, workspace,
                                           &wmap, &amap, smem_raw);
}

// The 128-column symbols over W in the packed layout (NUMERICS.md 2.3; gemm_packed_strided):
// `weight` is the packed buffer (packed_weight_bytes(n, k), 16-byte aligned), read by bulk copies;
// `wmap` is not read. Grid, shared memory and workspace as the unpacked symbol's.
extern "C" __global__ void __launch_bounds__(dev::kWgThreads, dev::wgmma_ctas_per_sm(dev::WgVariant::n128))
    w8a16_wgmma_rows_n128_packed(const uint16_t* __restrict__ input, const uint8_t* __restrict__ weight,
                                 const float* __restrict__ block_scale, uint16_t* __restrict__ output, uint32_t m,
                                 uint32_t n, uint32_t k, uint32_t a_row_stride, uint32_t c_row_stride, float* workspace,
                                 const __grid_constant__ CUtensorMap wmap, const __grid_constant__ CUtensorMap amap) {
  (void)input;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  wgmma_rows_body<dev::WgVariant::n128, true>(weight, block_scale, output, m, n, k, a_row_stride, c_row_stride,
                                              workspace, &wmap, &amap, smem_raw);
}
extern "C" __global__ void __launch_bounds__(dev::kWgThreads, dev::wgmma_ctas_per_sm(dev::WgVariant::n128_x2))
    w8a16_wgmma_rows_n128_x2_packed(const uint16_t* __restrict__ input, const uint8_t* __restrict__ weight,
                                    const float* __restrict__ block_scale, uint16_t* __restrict__ output, uint32_t m,
                                    uint32_t n, uint32_t k, uint32_t a_row_stride, uint32_t c_row_stride,
                                    float* workspace, const __grid_constant__ CUtensorMap wmap,
                                    const __grid_constant__ CUtensorMap amap) {
  (void)input;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  wgmma_rows_body<dev::WgVariant::n128_x2, true>(weight, block_scale, output, m, n, k, a_row_stride, c_row_stride,
                                                 workspace, &wmap, &amap, smem_raw);
}
#endif
