// SPDX-License-Identifier: MIT OR Apache-2.0
// The Hopper tier's pipeline as types: the state of a ring, the shared storage and its barriers, the
// producer/consumer protocol on them, and the named barriers. sm_90a only (the callers guard).
#pragma once
#include <cstddef>  // offsetof
#include <cstdint>

#include "w8a16/device/geometry.hpp"
#include "w8a16_timing.cuh"
#include "w8a16_tma.cuh"

namespace w8a16::kernels {

// ---- the state of a ring of mbarrier-guarded buffers (CUTLASS's PipelineState is the model) ---
// The count-th use of a ring of kSlots buffers takes slot count % kSlots, and its barriers are then
// in phase count / kSlots: an mbarrier completes one phase per lap of the ring, and try_wait.parity
// names a phase by its parity (PTX ISA 9.7.13.15.16), so each wait is on (count / kSlots) & 1. The
// state holds the count and the slot and phase follow from it: the loops that use a ring compare
// the count with their ranges and step it by one or two. A producer refills a slot once its
// previous use, one lap back, has been released; in the first lap no use precedes it.
template <uint32_t kSlots>
struct PipelineState {
  uint32_t count;  // uses of the ring before this one
  __device__ __forceinline__ uint32_t index() const { return count % kSlots; }
  __device__ __forceinline__ uint32_t phase() const { return (count / kSlots) & 1; }
  __device__ __forceinline__ bool first_lap() const { return count < kSlots; }
  // The phase of this slot's previous use (only outside the first lap).
  __device__ __forceinline__ uint32_t previous_phase() const { return (count / kSlots - 1) & 1; }
  // The one place a state advances.
  __device__ __forceinline__ PipelineState& operator+=(uint32_t uses) {
    count += uses;
    return *this;
  }
  __device__ __forceinline__ PipelineState& operator++() { return *this += 1; }
  __device__ __forceinline__ PipelineState operator+(uint32_t uses) const {
    PipelineState later = *this;
    return later += uses;
  }
};

// ---- named barriers (PTX ISA 9.7.13.1, bar.sync and bar.arrive: ids 0..15) --------------------
// 0 is __syncthreads's. The others each have one use in the CTA, so that no two protocols count
// arrivals on the same barrier.
enum class NamedBarrier : uint32_t {
  cta = 0,
  cta_handover = 1,  // the threads that hold acc, around the workspace hand-over between CTAs (the fold)
  turn0 = 2,         // opens consumer 0's next issue (WgTurns); consumer 1's is turn0 + 1
  turn1 = 3,
};
__host__ __device__ __forceinline__ constexpr uint32_t barrier_id(NamedBarrier b) { return static_cast<uint32_t>(b); }
__device__ __forceinline__ void bar_sync(NamedBarrier b, uint32_t threads) {
  bar_sync(static_cast<uint32_t>(b), threads);
}

// ---- shared memory, at the 1,024-aligned base (geometry.hpp: wgmma_smem_bytes) ------------------
using Mbarrier = uint64_t;  // an opaque 8-byte, 8-aligned object in shared memory (PTX ISA 9.7.13.15.1)
static_assert(sizeof(Mbarrier) == w8a16::device::kWgMbarrierBytes, "mbarrier size");
// One pipeline stage: W's step (kCols rows of 128 E4M3 codes, the A operand, decoded in registers)
// and the row tile's (kRows rows of 128 BF16 as two 64-column halves of 128-byte rows, the B
// operand), each as its W layout and the TMA's 128-byte swizzle place them.
template <uint32_t kWeightBytes, uint32_t kHalfBytes>
struct WgStage {
  uint8_t weight[kWeightBytes];
  uint8_t act[2][kHalfBytes];
};
// The barriers of the pipeline (PipelineTmaAsync's roles): full[s], stage s has landed (the producer
// arrives with its byte count, the TMA unit completes it; the consumers wait); empty[s], stage s is
// read (one arrival per thread of each consumer that reads it; the producer waits before refilling
// it); and the 64-column symbol's hand-over ring, handover_full[h], slot h holds the second
// consumer's partial sums, and handover_empty[h], the first has folded them (128 arrivals each).
template <uint32_t kStages>
struct WgBarriers {
  Mbarrier full[kStages];
  Mbarrier empty[kStages];
  Mbarrier handover_full[w8a16::device::kWgHandoverSlots];
  Mbarrier handover_empty[w8a16::device::kWgHandoverSlots];
};
// The stages, the hand-over slots (the 64-column symbol's: kSlotFloats FP32 each, in the second
// consumer's register order; none for the 128-column ones) and the barriers.
template <class Stage, uint32_t kStages, uint32_t kSlotFloats>
struct WgSharedStorage {
  Stage stage[kStages];
  float handover[w8a16::device::kWgHandoverSlots][kSlotFloats];
  WgBarriers<kStages> bar;
};
template <class Stage, uint32_t kStages>
struct WgSharedStorage<Stage, kStages, 0> {
  Stage stage[kStages];
  WgBarriers<kStages> bar;
};

// ---- the pipeline's protocol on a WgSharedStorage at shared-window address `base` --------------
// (The PTX wrappers take 32-bit shared addresses, which the compiler cannot derive from a generic
// pointer.) Each wait names its phase through the ring's state, nowhere else; kReleases is the
// arrivals that release a stage (one per thread of each consumer warpgroup that reads it). Each
// hand-over is also a point of the timing policy (w8a16_timing.cuh: nothing in the product module).
template <class Stage, uint32_t kStages, uint32_t kSlotFloats, uint32_t kReleases>
struct WgPipeline {
  using Storage = WgSharedStorage<Stage, kStages, kSlotFloats>;
  using Barriers = WgBarriers<kStages>;
  using Stages = PipelineState<kStages>;                         // the ring of stages
  using Slots = PipelineState<w8a16::device::kWgHandoverSlots>;  // the hand-over ring
  template <class T>
  static constexpr uint32_t u32(T bytes) {
    return static_cast<uint32_t>(bytes);
  }
  static constexpr uint32_t kStageBytes = u32(sizeof(Stage));
  // Byte offsets of the Storage's members, as 32-bit shared-window offsets.
  static constexpr uint32_t kOffStages = u32(offsetof(Storage, stage)), kOffBarriers = u32(offsetof(Storage, bar));
  static constexpr uint32_t kOffHandover = kOffStages + u32(sizeof(Storage::stage));  // the slots, if any
  static constexpr uint32_t kOffWeight = u32(offsetof(Stage, weight)), kOffAct = u32(offsetof(Stage, act)),
                            kMbarrierBytes = u32(sizeof(Mbarrier));
  // The barriers as one array of Mbarrier: where each member's first one sits in it.
  static constexpr uint32_t kFull = u32(offsetof(Barriers, full)) / kMbarrierBytes,
                            kEmpty = u32(offsetof(Barriers, empty)) / kMbarrierBytes,
                            kHandoverFull = u32(offsetof(Barriers, handover_full)) / kMbarrierBytes,
                            kHandoverEmpty = u32(offsetof(Barriers, handover_empty)) / kMbarrierBytes;

  uint32_t base;
  __device__ __forceinline__ uint32_t stage(Stages st) const { return base + kOffStages + st.index() * kStageBytes; }
  __device__ __forceinline__ uint32_t barrier(uint32_t i) const { return base + kOffBarriers + kMbarrierBytes * i; }
  __device__ __forceinline__ uint32_t full(uint32_t i) const { return barrier(kFull + i); }
  __device__ __forceinline__ uint32_t empty(uint32_t i) const { return barrier(kEmpty + i); }
  __device__ __forceinline__ uint32_t handover_full(uint32_t h) const { return barrier(kHandoverFull + h); }
  __device__ __forceinline__ uint32_t handover_empty(uint32_t h) const { return barrier(kHandoverEmpty + h); }
  __device__ __forceinline__ uint32_t handover(uint32_t h) const { return base + kOffHandover + 4u * h * kSlotFloats; }

  // Every wait of the protocol: until the barrier's phase of that parity has completed; in the
  // perturbed module, or until the timing policy gives up (w8a16_timing.cuh, until).
  __device__ __forceinline__ static void wait(uint32_t bar, uint32_t parity) {
    if constexpr (Timing::kPerturbs) Timing::until([&] { return mbar_try_wait(bar, parity); });
    else mbar_wait(bar, parity);
  }

  // The producer: wait until the consumers released the stage's previous use; arrive on its full
  // barrier announcing the bytes that the TMA loads, which complete on full_barrier(st), will bring.
  __device__ __forceinline__ void producer_acquire(Stages st) const {
    if constexpr (Timing::kPerturbs) Timing::at(HandOver::producer_acquire, st.count);
    if (!st.first_lap()) wait(empty(st.index()), st.previous_phase());
    // Outside the first lap only: there the copies follow with no proxy fence (w8a16_timing.cuh).
    if constexpr (Timing::kPerturbs)
      if (!st.first_lap()) Timing::poison(stage(st), kStageBytes);
  }
  __device__ __forceinline__ void producer_expect(Stages st) const {
    if constexpr (Timing::kPerturbs) Timing::at(HandOver::producer_commit, st.count);
    mbar_arrive_expect_tx(full(st.index()), kStageBytes);
  }
  // The producer, outside the first lap, before the copies that refill a stage. The consumers read
  // the stage's previous W with generic-proxy shared loads (the decode), and the refill writes it
  // through the async proxy (a bulk or a tensor copy): the mbarrier orders their reads before the
  // producer's wait, and this proxy fence carries that order over to its async-proxy writes (PTX
  // ISA 8.6, proxies; 9.7.13.4, fence.proxy.async). It returns true: that it was issued, which the
  // perturbed module's producer_copied reads.
  __device__ __forceinline__ bool producer_fence() const {
    fence_proxy_async_shared();
    return true;
  }
  // The producer, once a refill's copies are issued (perturbed module only): where no proxy fence
  // came between the acquire's poison (w8a16_timing.cuh) and the copies, nothing orders the
  // poison's generic-proxy stores before the copies' async-proxy writes, and the latest order the
  // memory model allows is taken: the poison lands after the copies (Timing::poison_after_copy),
  // where the consumers, woken by the stage's phase, may already be reading.
  __device__ __forceinline__ void producer_copied(Stages st, bool fenced) const {
    if (st.first_lap() || fenced) return;
    Timing::poison_after_copy(stage(st), kStageBytes);
  }
  __device__ __forceinline__ uint32_t full_barrier(Stages st) const { return full(st.index()); }
  // A consumer: wait until the stage has landed; release it once its wgmmas have finished. Every
  // thread that read the stage arrives: mbarrier.arrive has release semantics for the arriving
  // thread's own accesses (PTX ISA 9.7.13.15.13), so each thread's shared loads are ordered
  // before the refill that the producer's wait admits, whichever copy brings it. One arrival a
  // warp after __syncwarp orders them too under the CUDA memory model, but racecheck does not
  // follow that for 1-D bulk copies (cp.async.bulk) and reports every refill as a hazard
  // (docs/JOURNAL.md, "GPU runs"); one arrival a thread costs nothing measurable.
  __device__ __forceinline__ void consumer_wait(Stages st) const {
    wait(full(st.index()), st.phase());
    if constexpr (Timing::kPerturbs) Timing::at(HandOver::consumer_wait, st.count);
  }
  __device__ __forceinline__ void consumer_release(Stages st) const {
    if constexpr (Timing::kPerturbs) Timing::at(HandOver::consumer_release, st.count);
    mbar_arrive(empty(st.index()));
  }
  // The hand-over ring. The second consumer: wait until the first has folded the slot's previous
  // use, write(slot address), commit (all 128 threads arrive). The first: wait for the slot,
  // read(slot address), release it. (Their timing points are the stages' with the use counted apart.)
  static constexpr uint32_t kSlotUse = 1u << 23;
  template <class W>
  __device__ __forceinline__ void handover_put(Slots hs, W&& write) const {
    const uint32_t h = hs.index();
    if constexpr (Timing::kPerturbs) Timing::at(HandOver::producer_acquire, kSlotUse | hs.count);
    if (!hs.first_lap()) wait(handover_empty(h), hs.previous_phase());
    write(handover(h));
    if constexpr (Timing::kPerturbs) Timing::at(HandOver::producer_commit, kSlotUse | hs.count);
    mbar_arrive(handover_full(h));
  }
  template <class R>
  __device__ __forceinline__ void handover_take(Slots hs, R&& read) const {
    const uint32_t h = hs.index();
    wait(handover_full(h), hs.phase());
    if constexpr (Timing::kPerturbs) Timing::at(HandOver::consumer_wait, kSlotUse | hs.count);
    read(handover(h));
    if constexpr (Timing::kPerturbs) Timing::at(HandOver::consumer_release, kSlotUse | hs.count);
    mbar_arrive(handover_empty(h));
  }
};

// ---- the consumers' turns (the 128-column symbols at 96 and 128 rows) -----------------------
// Consumer c waits on turn0 + c before it issues a step's wgmmas; the other consumer arrives there
// once it has issued its own step (and consumer 1 once before its first, so that consumer 0 goes
// first). Both consumers take the same number of steps, so the arrivals match the waits.
struct WgTurns {
  static constexpr uint32_t kTurn0 = static_cast<uint32_t>(NamedBarrier::turn0);
  uint32_t consumer;
  __device__ __forceinline__ static uint32_t barrier(uint32_t c) { return kTurn0 + c; }
  __device__ __forceinline__ static uint32_t threads() {
    return w8a16::device::kWgConsumers * w8a16::device::kWgWarpgroupThreads;
  }
  __device__ __forceinline__ void start() const {
    if (consumer == 1) bar_arrive(barrier(0), threads());
  }
  __device__ __forceinline__ void wait() const { bar_sync(barrier(consumer), threads()); }
  __device__ __forceinline__ void pass(bool more) const {
    if (consumer == 0 || more) bar_arrive(barrier(consumer ^ 1u), threads());
  }
};
static_assert(barrier_id(NamedBarrier::turn0) + 1 == barrier_id(NamedBarrier::turn1), "turn barriers adjacent");

// ---- the hand-over of a cut unit between CTAs (CUTLASS's GenericBarrier, in shape) ------------
// A unit cut between CTAs b and b + 1 (geometry.hpp's pieces: b's head, b + 1's tail): b writes its
// acc into workspace slot b and then sets flag b with release semantics; b + 1 waits for flag b
// with acquire semantics, sets it back to 0 for the next launch (it is the flag's one reader) and
// reads the slot past L1 (PTX ISA 8.2, memory consistency: release and acquire at gpu scope;
// ld_cg). The flags follow the grid's slots in the workspace (wgmma_workspace_bytes), zero at launch.
template <uint32_t kSlotFloats>
struct CtaHandover {
  float* slots;
  uint32_t* flags;
  __device__ __forceinline__ explicit CtaHandover(float* workspace)
      : slots(workspace), flags(reinterpret_cast<uint32_t*>(workspace + gridDim.x * kSlotFloats)) {}
  // The slot this CTA publishes its head in, and the one it takes its tail's acc from.
  __device__ __forceinline__ float* own_slot() const { return slots + blockIdx.x * kSlotFloats; }
  __device__ __forceinline__ float* previous_slot() const { return slots + (blockIdx.x - 1) * kSlotFloats; }
  // One thread of the taker: until the previous CTA has published (GenericBarrier's wait_eq), then
  // its flag back to 0. In the perturbed module the wait gives up (w8a16_timing.cuh, until).
  __device__ __forceinline__ void wait_for_previous() const {
    if constexpr (Timing::kPerturbs) Timing::until([&] { return ld_acquire_gpu(flags + blockIdx.x - 1) == 1; });
    else
      while (ld_acquire_gpu(flags + blockIdx.x - 1) != 1) {}
    flags[blockIdx.x - 1] = 0;
  }
  // One thread of the publisher, once every thread's stores to its slot are fenced and past a
  // barrier (GenericBarrier's arrive): the slot is the next CTA's.
  __device__ __forceinline__ void publish() const { st_release_gpu(flags + blockIdx.x, 1); }
};

}  // namespace w8a16::kernels
