// SPDX-License-Identifier: MIT OR Apache-2.0
// Argument validation, before anything is planned or launched: the seed's checks
// (docs/KERNEL_ABI.md 3; seed lines 105-123) in its order, then what a real user
// also needs (README.md, "Validation"). Each message: "<entry>: <argument>=<value>: <rule>".
#include <cinttypes>
#include <cstdio>
#include <string>

#include "w8a16/device/plan.hpp"

namespace w8a16::device {
namespace {

std::string prefix(Entry e) { return std::string("w8a16_") + entry_name(e) + ": "; }

std::string hex(std::uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}

struct Span {
  std::uint64_t lo, hi;  // [lo, hi), bytes
};

// The bytes a kernel may touch of each operand (NUMERICS.md 2: the used extents only).
Span a_span(const Args& a) { return {a.input, a.input + 2 * ((std::uint64_t{a.m} - 1) * a.a_row_stride + a.k)}; }
// gemm_packed_strided reads the packed W: its tiles and NaN table (NUMERICS.md 2.3).
Span w_span(Entry e, const Args& a) {
  return {a.weight,
          a.weight + (e == Entry::gemm_packed_strided ? packed_weight_bytes(a.n, a.k) : std::uint64_t{a.n} * a.k)};
}
std::uint64_t scale_count(const Args& a) {
  return std::uint64_t{(a.n + kScaleRowsPerBlock - 1) / kScaleRowsPerBlock} * (a.k / kKBlock);
}
Span s_span(const Args& a) { return {a.block_scale, a.block_scale + 4 * scale_count(a)}; }
Span c_span(const Args& a) { return {a.output, a.output + 2 * ((std::uint64_t{a.m} - 1) * a.c_row_stride + a.n)}; }
bool overlap(Span x, Span y) { return x.lo < y.hi && y.lo < x.hi; }

}  // namespace

bool entry_is_contiguous(Entry e) {
  return e == Entry::gemm_pipelined || e == Entry::gemm_pipelined_m32 || e == Entry::gemm_pipelined_m64 ||
         e == Entry::gemm_pipelined_by_m;
}

Args effective_args(Entry e, Args a) {
  if (entry_is_contiguous(e)) {
    a.a_row_stride = a.k;  // seed lines 185-198: the pitches are k and n
    a.c_row_stride = a.n;
  }
  return a;
}

Status validate_args(Entry entry, const Args& in) {
  const Args a = effective_args(entry, in);
  const std::string p = prefix(entry);
  auto fail = [&](Errc c, const std::string& what) { return Status::error(c, p + what); };
  const auto u = [](std::uint64_t v) { return std::to_string(v); };

  // ---- the seed's checks, in its order ----
  if (a.m < 1) return fail(Errc::m_zero, "m=0: must be at least 1 (no rows to compute)");
  if (a.k < kKBlock || a.k % kKBlock != 0)
    return fail(Errc::k_not_block_multiple,
                "k=" + u(a.k) + ": must be a positive multiple of 128 (one FP8 scale block per K-step)");
  if (a.a_row_stride < a.k)
    return fail(Errc::a_pitch_short, "a_row_stride=" + u(a.a_row_stride) + ": must be at least k=" + u(a.k) +
                                         " (the pitch must cover the k elements read from each row of A)");
  if (a.c_row_stride < a.n)
    return fail(Errc::c_pitch_short, "c_row_stride=" + u(a.c_row_stride) + ": must be at least n=" + u(a.n) +
                                         " (the pitch must cover the n elements written to each row of C)");
  if (a.a_row_stride % kARowAlignElems != 0)
    return fail(Errc::a_pitch_misaligned,
                "a_row_stride=" + u(a.a_row_stride) + ": must be a multiple of 8 (16-byte cp.async rows of A)");

  // ---- the rest ----
  if (a.n == 0) return fail(Errc::n_zero, "n=0: must be at least 1 (no columns to compute)");
  if (entry == Entry::gemv_batch4_strided && a.m > kGemvBatch4MaxRows)
    return fail(Errc::gemv_too_many_rows,
                "m=" + u(a.m) + ": must be at most 4 (w8a16_gemv_batch4_strided computes up to 4 rows per warp)");
  if (entry == Entry::gemv_batch16_strided && a.m > kGemvBatch16MaxRows)
    return fail(Errc::gemv_too_many_rows,
                "m=" + u(a.m) + ": must be at most 16 (w8a16_gemv_batch16_strided computes up to 16 rows per warp)");

  const struct {
    const char* name;
    DevPtr ptr;
    std::uint64_t align;
    const char* why;
  } ptrs[] = {
      {"input", a.input, 16, "16-byte cp.async chunks of A"},
      {"weight", a.weight, 16,
       entry == Entry::gemm_packed_strided ? "bulk copies of the packed W's 16 KB tiles"
                                           : "16-byte loads of the E4M3 rows of W"},
      {"block_scale", a.block_scale, 4, "FP32 loads of S"},
      {"output", a.output, 2, "BF16 stores of C, one element each, since rows may start at any even byte"},
  };
  for (const auto& q : ptrs)
    if (q.ptr == 0) return fail(Errc::null_pointer, std::string(q.name) + "=null: must point to the operand");
  for (const auto& q : ptrs)
    if (q.ptr % q.align != 0)
      return fail(Errc::misaligned_pointer,
                  std::string(q.name) + "=" + hex(q.ptr) + ": must be " + u(q.align) + "-byte aligned (" + q.why + ")");

  // The kernels index with uint32_t element offsets (row * pitch + col): the largest offset of
  // each operand is below these products, so each product must stay within 32 bits.
  const struct {
    const char* what;
    std::uint64_t product;
  } extents[] = {
      {"m * a_row_stride", std::uint64_t{a.m} * a.a_row_stride},
      {"n * k", std::uint64_t{a.n} * a.k},
      {"m * c_row_stride", std::uint64_t{a.m} * a.c_row_stride},
      {"ceil(n / 128) * (k / 128)", scale_count(a)},
  };
  for (const auto& e : extents)
    if (e.product > kMaxElementOffsets)
      return fail(Errc::index_overflow, std::string(e.what) + "=" + u(e.product) +
                                            ": must be below 2^32 (the kernels index elements with 32-bit offsets)");

  const Span c = c_span(a);
  const struct {
    const char* name;
    Span span;
  } inputs[] = {{"input", a_span(a)}, {"weight", w_span(entry, a)}, {"block_scale", s_span(a)}};
  for (const auto& q : inputs)
    if (overlap(c, q.span))
      return fail(Errc::output_overlaps_input, "output=" + hex(a.output) + ": its bytes [" + hex(c.lo) + ", " +
                                                   hex(c.hi) + ") overlap " + q.name + " [" + hex(q.span.lo) + ", " +
                                                   hex(q.span.hi) + ") (C must not alias an operand the kernel reads)");
  return Status::success();
}

}  // namespace w8a16::device
