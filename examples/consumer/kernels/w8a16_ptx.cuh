// SPDX-License-Identifier: MIT OR Apache-2.0
// PTX wrappers the kernels share: cp.async staging, mma.sync m16n8k16, E4M3 decode, fma.rn, BF16 RNE.
#pragma once
#include <cuda_fp16.h>

#include <cstdint>

namespace w8a16::kernels {

// ---- cp.async (PTX ISA 9.7.9.25) -------------------------------------------------------------
// 16-byte copy global -> shared. src_bytes is 16 or 0: with 0 nothing is read and the 16 shared
// bytes are zero-filled, which is how rows past M and columns past N are staged without reading
// out of bounds. `src` must still be a valid address (callers pass a clamped one).
__device__ __forceinline__ void cp_async_16(void* smem_dst, const void* src, uint32_t src_bytes) {
  const uint32_t dst = static_cast<uint32_t>(__cvta_generic_to_shared(smem_dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

// ---- mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 (PTX ISA 9.7.14.5.8) ----------------
// d = c + A(16x16) * B(16x8) with NUMERICS.md 1.1's fused 17-term step per output element.
//
// Fragment layout used by every kernel here (g = lane / 4, t = lane % 4). The ISA places
// A[g][2t, 2t+1] in a0, A[g+8][2t, 2t+1] in a1, A[g][2t+8, 2t+9] in a2, A[g+8][2t+8, 2t+9] in a3,
// and B[2t, 2t+1][g] in b0, B[2t+8, 2t+9][g] in b1. The kernels feed k positions
// {2t, 2t+1, 2t+8, 2t+9} of an instruction with k = {4t, 4t+1, 4t+2, 4t+3} of its 16-wide K window,
// the same permutation for A and B. That is allowed: per NUMERICS.md 1.1 the instruction is one
// fused step whose result does not depend on the order of its 16 products (E is a max, every term
// is truncated on its own, the sum is exact), so only WHICH 16 k form an instruction matters, and
// that stays k0 .. k0+15 (NUMERICS.md 2.1). It turns each thread's operand into one contiguous
// 8-byte (A, BF16) or 4-byte (B, E4M3) shared or global load.
__device__ __forceinline__ void mma_bf16_16816(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// ---- E4M3 (fn: bias 7, no Inf, 0x7F/0xFF NaN) decode ------------------------------------------
// Two E4M3 codes (low byte -> low half) to two FP16 values, exactly (NUMERICS.md 1.2: every finite
// code is exact in FP16; 0x7F/0xFF give NaN; 0x80 gives -0).
__device__ __forceinline__ uint32_t e4m3x2_to_f16x2(uint16_t codes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  uint32_t h2;
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;\n" : "=r"(h2) : "h"(codes));  // PTX ISA 9.7.9.21, sm_89+
  return h2;
#else
  // Before sm_89 there is no cvt from E4M3. E4M3 and FP16 share the layout s|e|m with 3 vs 10
  // fraction bits, so shifting the magnitude into FP16 position gives the value times 2^-8 (bias
  // 15 vs 7; subnormals included), and an exact FP16 multiply by 2^8 restores it.
  uint32_t out = 0;
  for (int i = 0; i < 2; ++i) {
    const uint32_t c = (codes >> (8 * i)) & 0xFFu;
    uint16_t h;
    if ((c & 0x7Fu) == 0x7Fu) {
      h = 0x7FFF;
    } else {
      const __half scaled = __ushort_as_half(static_cast<unsigned short>(((c & 0x80u) << 8) | ((c & 0x7Fu) << 7)));
      h = __half_as_ushort(__hmul(scaled, __ushort_as_half(0x5C00)));  // 0x5C00 = 2^8
    }
    out |= static_cast<uint32_t>(h) << (16 * i);
  }
  return out;
#endif
}

// FP16x2 -> BF16x2 for values exact in both (every decoded E4M3 is): cvt.f32.f16 is exact and
// cvt.rn.bf16x2.f32 (PTX ISA 9.7.9.21; a -> upper half, b -> lower) then rounds nothing; a NaN
// stays a NaN.
__device__ __forceinline__ uint32_t f16x2_to_bf16x2_exact(uint32_t h2) {
  uint32_t out;
  asm("{\n .reg .f16 lo, hi;\n .reg .f32 flo, fhi;\n mov.b32 {lo, hi}, %1;\n"
      " cvt.f32.f16 flo, lo;\n cvt.f32.f16 fhi, hi;\n cvt.rn.bf16x2.f32 %0, fhi, flo;\n}\n"
      : "=r"(out)
      : "r"(h2));
  return out;
}

// Four E4M3 codes (little-endian, lowest k in the low byte) -> B fragment {b0, b1}: k 4t, 4t+1
// in b0 and 4t+2, 4t+3 in b1 (the permutation documented at mma_bf16_16816).
__device__ __forceinline__ void e4m3x4_to_bf16_frag(uint32_t codes, uint32_t (&b)[2]) {
  b[0] = f16x2_to_bf16x2_exact(e4m3x2_to_f16x2(static_cast<uint16_t>(codes & 0xFFFFu)));
  b[1] = f16x2_to_bf16x2_exact(e4m3x2_to_f16x2(static_cast<uint16_t>(codes >> 16)));
}

// The same fragment with integer operations and one BF16x2 multiply per pair instead of six
// conversions (type conversions run at 16 lanes per clock per SM on sm_90, a quarter of the
// integer rate, and the row-tile kernel is bound by instruction issue: PERF_NOTES.md). A code
// s|eeee|mmm placed as BF16 bits s|0000eeee|mmm0000 is its value times 2^-120, subnormal codes
// included (both formats' subnormals scale the same way), so multiplying by 2^120 restores it
// exactly (every E4M3 value is a BF16 value; mul.rn.bf16x2 keeps subnormal inputs). Checked on
// the H200 against e4m3x4_to_bf16_frag for all 65,536 code pairs (docs/JOURNAL.md, the harness of
// this kernel's experiments), and through every row-tile case of device/tests/gpu.
// NaN codes (0x7F, 0xFF) come out as +-480, NOT NaN: the caller ORs `nan_probe` over the codes it
// decodes and, when e4m3_nan_seen() says so, decodes again with e4m3x4_to_bf16_frag.
__device__ __forceinline__ uint32_t mul_bf16x2(uint32_t a, uint32_t b) {
  uint32_t d;
  asm("mul.rn.bf16x2 %0, %1, %2;\n" : "=r"(d) : "r"(a), "r"(b));  // PTX ISA half-precision mul; .bf16x2 needs sm_90
  return d;
}
// prmt.b32 in its generic form (PTX ISA, prmt: a selector nibble's msb replicates the selected
// byte's sign), written out because __byte_perm keeps only the low 3 bits of each nibble.
__device__ __forceinline__ uint32_t prmt(uint32_t a, uint32_t b, uint32_t sel) {
  uint32_t d;
  asm("prmt.b32 %0, %1, %2, %3;\n" : "=r"(d) : "r"(a), "r"(b), "r"(sel));
  return d;
}
__device__ __forceinline__ void e4m3x4_to_bf16_frag_int(uint32_t codes, uint32_t (&b)[2], uint32_t& nan_probe) {
  // A byte's bit 7 flips under +1 exactly when its magnitude is 0x7F (0xFF's carry can only
  // disturb the next byte when a NaN is already present), so the probe never fires without one.
  nan_probe |= codes ^ (codes + 0x01010101u);
  // Codes 0, 1 to bytes 0, 2 with their sign bits replicated over bytes 1, 3 (PRMT's sign mode,
  // PTX ISA, prmt generic form); << 4 puts magnitudes at bits 4..10 / 20..26 and a sign at bits 15 / 31;
  // the mask drops the rest.
  const uint32_t x0 = (prmt(codes, 0u, 0x9180u) << 4) & 0x87F087F0u;
  const uint32_t x1 = (prmt(codes, 0u, 0xB3A2u) << 4) & 0x87F087F0u;
  b[0] = mul_bf16x2(x0, 0x7B807B80u);  // 0x7B80 = 2^120
  b[1] = mul_bf16x2(x1, 0x7B807B80u);
}
__device__ __forceinline__ bool e4m3_nan_seen(uint32_t nan_probe) { return (nan_probe & 0x80808080u) != 0; }

// Two E4M3 codes -> two FP32 values, exactly (for the scalar GEMVs).
__device__ __forceinline__ void e4m3x2_to_f32x2(uint16_t codes, float& lo, float& hi) {
  const uint32_t h2 = e4m3x2_to_f16x2(codes);
  asm("{\n .reg .f16 l, h;\n mov.b32 {l, h}, %2;\n cvt.f32.f16 %0, l;\n cvt.f32.f16 %1, h;\n}\n"
      : "=f"(lo), "=f"(hi)
      : "r"(h2));
}

// ---- FP32 arithmetic and output -----------------------------------------------------------
// fma.rn.f32 (PTX ISA 9.7.3.6) spelled out so the compiler can neither contract nor reorder the
// fold (NUMERICS.md 2.1: acc = fma(p, S, acc)).
__device__ __forceinline__ float fma_rn(float a, float b, float c) {
  float d;
  asm("fma.rn.f32 %0, %1, %2, %3;\n" : "=f"(d) : "f"(a), "f"(b), "f"(c));
  return d;
}
__device__ __forceinline__ float add_rn(float a, float b) {
  float d;
  asm("add.rn.f32 %0, %1, %2;\n" : "=f"(d) : "f"(a), "f"(b));
  return d;
}

// cvt.rn.bf16.f32 (PTX ISA 9.7.9.21): round to nearest even; NaN -> 0x7FFF as measured
// (NUMERICS.md 1.2).
__device__ __forceinline__ uint16_t f32_to_bf16_rne_bits(float x) {
  uint16_t r;
  asm("cvt.rn.bf16.f32 %0, %1;\n" : "=h"(r) : "f"(x));
  return r;
}

// BF16 bits -> FP32: BF16 is the upper half of FP32, so the shift is the exact conversion.
__device__ __forceinline__ float bf16_bits_to_f32(uint32_t b) { return __uint_as_float(b << 16); }

}  // namespace w8a16::kernels
