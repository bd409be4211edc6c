// SPDX-License-Identifier: MIT OR Apache-2.0
// Timing at the cp.async bodies' hand-overs (the tiles, the twins, the skinny body, the row-tile
// stream), in the perturbed module only: the refill of a stage (the copies of a later step issued
// once the CTA barrier has released the stage; the skinny body's partial sums written over its
// weights) and the read of a stage (a warp's first look at the step its wait and barrier covered).
// A warp that sleeps before it reads lets the others run ahead to their refills; a warp that sleeps
// before it refills leaves its copies in flight longer. With the
// barrier and the wait_group where the ring needs them, neither changes a byte; a refill above its
// barrier then overwrites a stage a slow warp has not read, and a wait one group short lets a warp
// read a stage whose copies have not landed. The call sites sit under `#if defined(W8A16_PERTURB)`
// with this header's include: the product module's kernels are compiled from the text they were
// before (their machine code unchanged), as the Hopper tier's points are (w8a16_timing.cuh).
// The seed is its own global, w8a16_sync_timing_seed, defined in w8a16_gemm_pipelined.cu: these
// files are relocatable code, linked with each other, while the Hopper tier's file is a whole
// program whose globals no other object sees. The host writes both seeds (CudaBackend::set_timing_seed).
#pragma once
#include <cstdint>

extern "C" __device__ unsigned long long w8a16_sync_timing_seed;

namespace w8a16::kernels {

enum class SyncPoint : uint32_t {
  refill = 1,  // before a thread issues the copies that refill a released stage
  read,        // before a warp reads the stage its wait and barrier covered
};

// One hand-over in three waits 0.25 to about 4 us (a hint, PTX ISA 9.7.13.10), drawn from the seed,
// the point, the use (the step or round), the CTA and the warp: a seed replays, another moves every
// point. Seed 0: no delay.
__device__ __forceinline__ void sync_delay(SyncPoint point, uint32_t use) {
  const uint64_t seed = *static_cast<volatile unsigned long long*>(&w8a16_sync_timing_seed);
  if (seed == 0) return;
  uint64_t x = seed ^ ((uint64_t{blockIdx.y} << 52) ^ (uint64_t{blockIdx.x} << 36) ^
                       (uint64_t{threadIdx.x / 32} << 28) ^ (uint64_t{static_cast<uint32_t>(point)} << 24) ^ use);
  x ^= x >> 30;  // SplitMix64's finaliser
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  const uint32_t ns = 256u << ((x >> 8) & 3u);
  if (x % 3 == 0) __nanosleep(ns + static_cast<uint32_t>((x >> 16) % ns));
}

}  // namespace w8a16::kernels
