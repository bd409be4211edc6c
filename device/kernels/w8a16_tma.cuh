// SPDX-License-Identifier: MIT OR Apache-2.0
// PTX wrappers of the Hopper tier: mbarriers, the tensor memory accelerator (cp.async.bulk.tensor),
// wgmma's fences and shared-memory descriptors, setmaxnreg. sm_90a only (the callers guard).
#pragma once
#include <cstdint>

namespace w8a16::kernels {

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// A 4-byte shared-memory load at a shared-window address plus an immediate offset (the compiler
// cannot see that an aligned dynamic-shared pointer is shared and would issue generic loads).
template <int kOffset>
__device__ __forceinline__ uint32_t lds_u32(uint32_t addr) {
  uint32_t v;
  asm volatile("ld.shared.u32 %0, [%1+%2];\n" : "=r"(v) : "r"(addr), "n"(kOffset) : "memory");
  return v;
}
__device__ __forceinline__ float lds_f32(uint32_t addr) {
  float v;
  asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(v) : "r"(addr) : "memory");
  return v;
}
__device__ __forceinline__ void sts_f32(uint32_t addr, float v) {
  asm volatile("st.shared.f32 [%0], %1;\n" ::"r"(addr), "f"(v) : "memory");
}

// ---- mbarrier (PTX ISA 9.7.13.15) ----------------------------------------------------------
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
// Makes the initialised barriers visible to the async proxy (the TMA unit completes on them).
__device__ __forceinline__ void mbar_fence_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// One arrival that also announces `bytes` of asynchronous copies the phase must wait for.
__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
// Whether the phase of parity `parity` has completed (a fresh barrier is in phase 0); try_wait may
// suspend the thread for a time the hardware chooses before it answers no.
__device__ __forceinline__ bool mbar_try_wait(uint32_t bar, uint32_t parity) {
  uint32_t done;
  asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
               : "=r"(done)
               : "r"(bar), "r"(parity)
               : "memory");
  return done != 0;
}
// Waits until the phase of parity `parity` has completed.
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  while (!mbar_try_wait(bar, parity)) {}
}

// ---- the tensor memory accelerator (PTX ISA 9.7.9.27, cp.async.bulk.tensor) ---------------------
// A 2-D box of the tensor `map` at element coordinates (x innermost, y) into shared memory at
// `dst`, completing `bytes` of the barrier's transaction count. Coordinates past the tensor's
// extent read nothing and fill zeros (the tensor map's extents are the operand's used extents).
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const void* map, int32_t x, int32_t y, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
          dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(bar)
      : "memory");
}
// `bytes` (a multiple of 16) contiguous bytes at `src` (16-byte aligned) into shared memory at
// `dst`, completing them on the barrier's transaction count (PTX ISA 9.7.9.25, cp.async.bulk).
__device__ __forceinline__ void bulk_load(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
               "l"(reinterpret_cast<uint64_t>(src)), "r"(bytes), "r"(bar)
               : "memory");
}
// fence.proxy.async.shared::cta (PTX ISA 9.7.13.4): orders this thread's view of shared memory
// through the generic proxy against its async-proxy operations (bulk copies) that follow.
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
// Eight bytes of shared memory, as two words.
__device__ __forceinline__ void lds_v2_u32(uint32_t addr, uint32_t (&v)[2]) {
  asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];\n" : "=r"(v[0]), "=r"(v[1]) : "r"(addr) : "memory");
}
__device__ __forceinline__ void tma_prefetch_map(const void* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

// ---- wgmma (PTX ISA 9.7.15) -----------------------------------------------------------------
// Orders this warpgroup's earlier register writes (accumulators, register A fragments) before the
// wgmma that follows.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}
// ---- wgmma's shared-memory matrix descriptor (PTX ISA 9.7.15.5.1.2.2, Matrix Descriptor Format) --
// A 64-bit register operand whose fields the table gives:
//   bits 13-0   matrix-descriptor-encode(start address)
//   bits 29-16  matrix-descriptor-encode(leading dimension byte offset)
//   bits 45-32  matrix-descriptor-encode(stride dimension byte offset)
//   bits 51-49  matrix base offset (all swizzling modes but none)
//   bits 63-62  swizzling mode: 0 none, 1 128-byte, 2 64-byte, 3 32-byte
// with matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4. The fields are named members (CuTe's
// GmmaDescriptor is a union of bitfields; a plain struct and bits() keep it a constant expression
// in C++17, so the layout is checked at compile time below).
enum class WgmmaSwizzle : uint32_t { none = 0, b128 = 1, b64 = 2, b32 = 3 };
struct WgmmaDescriptor {
  uint32_t start_address = 0;        // shared-window byte address of the matrix (16-byte aligned)
  uint32_t leading_byte_offset = 0;  // bytes (PTX ISA 9.7.15.5.1.2.1.1)
  uint32_t stride_byte_offset = 0;   // bytes (PTX ISA 9.7.15.5.1.2.1.2)
  uint32_t base_offset = 0;          // 0 when the swizzle pattern starts at its boundary (1,024 B for 128 B)
  WgmmaSwizzle swizzle = WgmmaSwizzle::none;
  static constexpr int kStartAddressBit = 0, kLeadingByteOffsetBit = 16, kStrideByteOffsetBit = 32, kBaseOffsetBit = 49,
                       kSwizzleBit = 62;
  __host__ __device__ static constexpr uint64_t encode(uint32_t bytes) { return (bytes & 0x3FFFFu) >> 4; }
  __host__ __device__ constexpr uint64_t bits() const {
    return encode(start_address) << kStartAddressBit | encode(leading_byte_offset) << kLeadingByteOffsetBit |
           encode(stride_byte_offset) << kStrideByteOffsetBit | uint64_t{base_offset & 0x7u} << kBaseOffsetBit |
           uint64_t{static_cast<uint32_t>(swizzle)} << kSwizzleBit;
  }
};
// A K-major operand in the 128-byte swizzle layout: rows of 128 bytes, 8-row atoms 1,024 bytes apart
// (the stride byte offset), the leading byte offset unused in this layout ("assumed 1": 16 bytes,
// encoded 1). `addr` may sit 32 * j bytes into an atom row to select the j-th 16-element K slice: the
// hardware applies the swizzle to the address, and the pattern still starts at the atom's 1,024-byte
// boundary (the stages are aligned to it), so the base offset stays 0.
__host__ __device__ constexpr WgmmaDescriptor wgmma_desc_k_major_sw128(uint32_t addr) {
  WgmmaDescriptor d;
  d.start_address = addr;
  d.leading_byte_offset = 16;
  d.stride_byte_offset = 8 * 128;
  d.base_offset = 0;
  d.swizzle = WgmmaSwizzle::b128;
  return d;
}
static_assert(wgmma_desc_k_major_sw128(0).bits() == 0x4000004000010000ull,
              "matrix descriptor: LBO 1, SBO 64, 128-byte swizzle");
static_assert(wgmma_desc_k_major_sw128(0x3FFF0u + 0x40000u).bits() == 0x4000004000013FFFull,
              "matrix descriptor: the start address keeps bits 17-4");
__device__ __forceinline__ uint64_t wgmma_desc_sw128(uint32_t addr) { return wgmma_desc_k_major_sw128(addr).bits(); }

// ---- register budget per warpgroup (PTX ISA 9.7.17.4, setmaxnreg) ---------------------------
template <int kRegs>
__device__ __forceinline__ void regs_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}
template <int kRegs>
__device__ __forceinline__ void regs_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}

// ---- the workspace hand-over between CTAs (PTX ISA 8.2 memory consistency) -------------------
__device__ __forceinline__ void st_release_gpu(uint32_t* p, uint32_t v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ uint32_t ld_acquire_gpu(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
  return v;
}
// A load that skips L1 (which is not coherent across SMs): the workspace slot another CTA wrote.
__device__ __forceinline__ float ld_cg(const float* p) {
  float v;
  asm volatile("ld.global.cg.f32 %0, [%1];\n" : "=f"(v) : "l"(p) : "memory");
  return v;
}
// Named barrier over `threads` threads (ids 1..15; 0 is __syncthreads).
__device__ __forceinline__ void bar_sync(uint32_t id, uint32_t threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
// Arrival at named barrier `id` without waiting (PTX ISA 9.7.13.1, bar.arrive): `threads` counts
// the arriving and the waiting (bar_sync) threads together.
__device__ __forceinline__ void bar_arrive(uint32_t id, uint32_t threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

}  // namespace w8a16::kernels
