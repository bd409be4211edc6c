// SPDX-License-Identifier: MIT OR Apache-2.0
// Timing at the pipeline's hand-overs, as a policy: what the product module does there (nothing)
// and what the perturbed module does (a seeded delay), so that the ordering the protocol promises,
// not the order this GPU's timing happens to give, is what the bytes test.
//
// Every hand-over the Hopper tier's pipeline rests on calls Timing::at(point, use): the producer's
// acquire of a stage and its commit (before the copies that fill it are issued), a consumer's wait
// and release, the time a step's wgmmas are in flight between their issue and their wait, and the
// cross-CTA hand-over of a cut unit. Where the hardware's own timing would hide an ordering however
// long the delays, the perturbed module takes the latest order the PTX ISA allows instead: a
// step's wgmmas read their stage again at the wait that covers them (w8a16_wgmma_rows.cu,
// wait_mmas), and the producer's generic stores to a stage reach the async proxy after the
// refill's copies where no proxy fence orders them before (WgPipeline::producer_copied). Each call sits
// under `if constexpr (Timing::kPerturbs)`: in the product module (W8A16_PERTURB undefined) it is
// discarded before code generation, so the compiler is handed the code it was handed without
// these points (even empty inline calls change the front end's output: its PTX, then the SASS), and
// the machine code is unchanged (the JOURNAL records the comparison). With
// W8A16_PERTURB defined (the perturbed module, device/CMakeLists.txt W8A16_PERTURBED_MODULE), each
// call sleeps for a length drawn from the seed in the module's global w8a16_timing_seed (set by the
// host before a launch: CudaBackend::set_timing_seed), the point, the use's count, the CTA and the
// warp: a run under one seed replays, and another seed moves every hand-over. Its waits give up
// after a bound (until), so that a protocol that deadlocks ends its launch with bytes to compare
// and a count the host reads, instead of a hang.
#pragma once
#include <cstdint>

#include "w8a16/device/geometry.hpp"

#if defined(W8A16_PERTURB)
// The seed of the launch (0: no delays; the host writes it by this name, cuModuleGetGlobal). Defined
// here: the one kernel file that includes this header, w8a16_wgmma_rows.cu, is compiled as a
// whole program, where a separate extern declaration would make it a file-local (static) variable.
extern "C" {
__device__ unsigned long long w8a16_timing_seed = 0;
__device__ unsigned int w8a16_timing_zero = 0;  // never written: SeededTiming::zero
// The waits of the launch that reached their bound (SeededTiming::until); the host reads it after
// each launch and, where it is not 0, zeroes it (CudaBackend::take_timing_stalls).
__device__ unsigned int w8a16_timing_stalls = 0;
}
#endif

// The perturbed module's bodies are larger, and the inliner then leaves a tile height's body of the
// Hopper tier a call (wgmma_rows_body's `run`): a call with wgmmas in flight across it makes ptxas
// serialise every wgmma of the kernel (C7510), so there that body is inlined by force. The product
// module keeps the inliner's own choices (forced there, they change its machine code).
#if defined(W8A16_PERTURB)
#define W8A16_TIMING_INLINE __attribute__((always_inline))
#else
#define W8A16_TIMING_INLINE
#endif

namespace w8a16::kernels {

enum class HandOver : uint32_t {
  producer_acquire = 1,  // the producer, before it waits for a stage's release
  producer_commit,       // the producer, before it issues the copies that fill a stage
  consumer_wait,         // a consumer, once a stage has landed and before it reads it
  consumer_release,      // a consumer, before it releases a stage
  mma_in_flight,         // a consumer, between a step's wgmma commit and its wait
  cta_publish,           // the head CTA of a cut unit, before it publishes acc
  cta_take,              // the tail CTA, once the head's acc is published and before it reads it
};

#if defined(W8A16_PERTURB)

struct SeededTiming {
  static constexpr bool kPerturbs = true;
  // SplitMix64's finaliser: a well-mixed 64-bit value from the key.
  __device__ __forceinline__ static uint64_t mix(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
  }
  __device__ __forceinline__ static uint64_t draw(HandOver point, uint32_t use) {
    const uint64_t seed = *static_cast<volatile unsigned long long*>(&w8a16_timing_seed);
    const uint32_t warp = threadIdx.x / 32;  // each warp its own lengths: arrivals come apart
    const uint64_t x = mix(seed ^ mix((uint64_t{blockIdx.x} << 40) ^ (uint64_t{warp} << 32) ^
                                      (uint64_t{static_cast<uint32_t>(point)} << 24) ^ use));
    return seed == 0 ? 3 : x;  // 3: no sleep (at)
  }
  // One hand-over in three waits: 0.25 to about 4 us (nanosleep's length is a hint, PTX ISA
  // 9.7.13.10), longer than a stage's copy from L2 or a step's wgmmas, so that a protocol that
  // leans on one side being faster loses.
  // No branch: a sleep of 0 where there is none, so that no wgmma in flight across a point sits on
  // a divergent path (ptxas would serialise every wgmma of the kernel, C7520).
  __device__ __forceinline__ static void at(HandOver point, uint32_t use) {
    const uint64_t x = draw(point, use);
    const uint32_t ns = 256u << ((x >> 8) & 3u);  // 256, 512, 1024 or 2048 ns
    __nanosleep(x % 3 == 0 ? ns + static_cast<uint32_t>((x >> 16) % ns) : 0u);
  }
  // The register that is zero at run time: the scale-d of the first of a step's wgmmas issued again
  // at their wait (w8a16_wgmma_rows.cu, wait_mmas), so that they overwrite p from +0 as the first
  // issue did (scale-d 0, NUMERICS.md 3.1). ptxas cannot prove it zero; with an immediate 0 it would
  // find the first issue's results never read and remove those wgmmas (in-flight wgmmas whose
  // results nothing reads are removed, docs/JOURNAL.md).
  __device__ __forceinline__ static uint32_t zero() { return *static_cast<volatile unsigned int*>(&w8a16_timing_zero); }
  // A stage the producer may refill (its release has been waited for) is poisoned at once, before
  // the refill's copies are issued: the first 16 bytes of every 1,024 (in the activations, a row's
  // first K slice in each 128-byte swizzle atom, which the step's first wgmma reads; in W, codes of
  // its tile) become 0x7FC0 pairs, a BF16 NaN and the E4M3 NaN code 0x7F. A reader that released
  // the stage before it finished reading (a release above the wgmma wait, which the wgmmas issued
  // again at the wait then make read after it) meets NaN within the time of a few shared stores,
  // not a microsecond later when the copy lands, and the poison reaches the output whatever the next
  // step's bytes are. The producer's proxy fence orders these generic-proxy stores before the
  // copies' async-proxy writes (PTX ISA 9.7.13.4), which overwrite every byte, so a correct pipeline
  // never shows the poison; without the fence nothing orders them, and the producer writes them
  // again once the copies have landed (WgPipeline::producer_copied).
  static constexpr uint32_t kPoison = 0x7FC07FC0u;
  __device__ __forceinline__ static void poison16(uint32_t at) {
    asm volatile("st.shared.v4.b32 [%0], {%1, %1, %1, %1};\n" ::"r"(at), "r"(kPoison) : "memory");
  }
  __device__ __forceinline__ static void poison(uint32_t stage, uint32_t bytes) {
    for (uint32_t off = 0; off < bytes; off += 1024) poison16(stage + off);
  }
  // The same poison once the copies have written over it, 16 bytes at a time: each is stored again as
  // soon as a generic load sees the copy's bytes in their place. No barrier is waited on (the stage's
  // full barrier would do, but a wait in the producer's loop would stand, in the static protocol
  // check's eyes, for the release wait a refill needs). Bytes a copy brings that equal the poison
  // keep this spinning until the wait's bound, which then counts a stall: only on a path that lacks
  // its proxy fence.
  __device__ __forceinline__ static void poison_after_copy(uint32_t stage, uint32_t bytes) {
    for (uint32_t off = 0; off < bytes; off += 1024) {
      until([&] {
        uint32_t v[4];
        asm volatile("ld.volatile.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3])
                     : "r"(stage + off)
                     : "memory");
        return v[0] != kPoison || v[1] != kPoison || v[2] != kPoison || v[3] != kPoison;
      });
      poison16(stage + off);
    }
  }
  // Every wait of the protocol (a stage's or a hand-over slot's barrier phase, the cross-CTA flag)
  // spins on `ready` until it holds, or gives up once kPerturbStallNs have passed without it: a
  // protocol that deadlocks under these delays (a wait on the wrong phase, a refill that no release
  // admits) then ends its launch, and the bytes it leaves show how far it got, where an unbounded
  // wait would leave a hang and no element to count. A wait that reaches the bound counts itself in
  // w8a16_timing_stalls, which the host reads after the launch. Once one has, every other wait of
  // the launch gives up as soon as it has lasted kQuietNs, so the launch ends soon after: a wait
  // reads that global only past kQuietNs (longer than the longest delay above and a stage's copy),
  // so that the waits of a correct launch do not load it on every look. The bound is over 60,000
  // times the longest delay above: a correct pipeline never comes near it.
  static constexpr uint64_t kStallNs = w8a16::device::kPerturbStallNs;
  static constexpr uint64_t kQuietNs = 16'000;
  template <class Ready>
  __device__ __forceinline__ static void until(Ready&& ready) {
    uint64_t since = 0;
    while (!ready()) {
      const uint64_t t = now();
      since = since == 0 ? t : since;
      if (t - since < kQuietNs) continue;
      if (*static_cast<volatile unsigned int*>(&w8a16_timing_stalls) != 0) return;
      if (t - since >= kStallNs) {
        atomicAdd(&w8a16_timing_stalls, 1u);
        return;
      }
    }
  }
  // %globaltimer, in nanoseconds (PTX ISA 10.13): the same clock on every SM.
  __device__ __forceinline__ static uint64_t now() {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
    return t;
  }
};
using Timing = SeededTiming;
#else
struct ProductTiming {  // every call of it sits in a discarded `if constexpr` branch
  static constexpr bool kPerturbs = false;
  __device__ __forceinline__ static void at(HandOver, uint32_t) {}
  __device__ __forceinline__ static uint32_t zero() { return 0; }
  __device__ __forceinline__ static void poison(uint32_t, uint32_t) {}
  __device__ __forceinline__ static void poison_after_copy(uint32_t, uint32_t) {}
  template <class Ready>
  __device__ __forceinline__ static void until(Ready&&) {}
};
using Timing = ProductTiming;
#endif

}  // namespace w8a16::kernels
