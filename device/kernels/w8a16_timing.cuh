// SPDX-License-Identifier: MIT OR Apache-2.0
// Timing at the pipeline's hand-overs, as a policy: what the product module does there (nothing)
// and what the perturbed module does (a seeded delay), so that the ordering the protocol promises,
// not the order this GPU's timing happens to give, is what the bytes test.
//
// Every hand-over the Hopper tier's pipeline rests on calls Timing::at(point, use) (and the wgmma
// issue Timing::kStretch): the producer's acquire of a stage and its commit (before the copies that
// fill it are issued), a consumer's wait and release, the time a step's wgmmas are in flight
// between their issue and their wait, and the cross-CTA hand-over of a cut unit. Each call sits
// under `if constexpr (Timing::kPerturbs)`: in the product module (W8A16_PERTURB undefined) it is
// discarded before code generation, so the compiler is handed the code it was handed without
// these points (even empty inline calls change the front end's output: its PTX, then the SASS), and
// the machine code is unchanged (the JOURNAL records the comparison). With
// W8A16_PERTURB defined (the perturbed module, device/CMakeLists.txt W8A16_PERTURBED_MODULE), each
// call sleeps for a length drawn from the seed in the module's global w8a16_timing_seed (set by the
// host before a launch: CudaBackend::set_timing_seed), the point, the use's count, the CTA and the
// warp: a run under one seed replays, and another seed moves every hand-over.
#pragma once
#include <cstdint>

#if defined(W8A16_PERTURB)
// The seed of the launch (0: no delays; the host writes it by this name, cuModuleGetGlobal). Defined
// here: the one kernel file that includes this header, w8a16_wgmma_rows.cu, is compiled as a
// whole program, where a separate extern declaration would make it a file-local (static) variable.
extern "C" {
__device__ unsigned long long w8a16_timing_seed = 0;
__device__ float w8a16_timing_sink = 0;  // SeededTiming::keep
}
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
  // Extra wgmmas the issue puts in front of a step's own, over the same stage (w8a16_wgmma_rows.cu,
  // issue): they keep the tensor cores busy, so the step's own start later and read the stage for
  // longer after the issue, which a release before the wait then races. A constant: wgmma is
  // .sync.aligned (every thread of the warpgroup issues the same ones, PTX ISA 9.7.15.5), and a
  // count ptxas cannot prove uniform puts them on a divergent path, where it serialises every wgmma
  // (C7520) and nothing is in flight at the release any more.
  // 192 of m64n8k16 (4 accumulator registers: a larger N costs registers the consumers lack, and
  // ptxas serialises, C7512): microseconds of tensor-core work, longer than the producer's refill
  // takes once a stage is released (with 16 of them, no release before the wait changed a byte).
  static constexpr uint32_t kStretch = 192;
  // Their accumulators, read once their wait has passed: ptxas removes a wgmma whose result is dead
  // (an empty asm's operands do not reach the PTX), so they are stored where the seed is 0, which
  // ptxas cannot rule out.
  __device__ __forceinline__ static void keep(const float (&q)[4]) {
    if (*static_cast<volatile unsigned long long*>(&w8a16_timing_seed) == 0)
      *static_cast<volatile float*>(&w8a16_timing_sink) = q[0] + q[1] + q[2] + q[3];
  }
};
using Timing = SeededTiming;
#else
struct ProductTiming {
  static constexpr bool kPerturbs = false;
  __device__ __forceinline__ static void at(HandOver, uint32_t) {}
  static constexpr uint32_t kStretch = 0;
  __device__ __forceinline__ static void keep(const float (&)[4]) {}
};
using Timing = ProductTiming;
#endif

}  // namespace w8a16::kernels
