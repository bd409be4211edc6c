// SPDX-License-Identifier: MIT OR Apache-2.0
// libFuzzer target for the operand bundle and run-operands output readers (operands.hpp): never a
// crash, all or nothing, what they accept is within the format's limits, and what the writers make of
// it reads back to the same bits. The first input byte picks the format; the rest is the file.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "w8a16/golden/operands.hpp"

namespace {

namespace golden = w8a16::golden;

[[noreturn]] void finding(const char* what, std::string_view input) {
  std::fprintf(stderr, "fuzz_operands: invariant broken: %s (input of %zu bytes)\n", what, input.size());
  std::abort();
}

// Expanding a bundle sizes A from its header; the fuzzer's inputs are small (-max_len), so a header
// that implies more than this is one the size check must already have refused.
constexpr std::uint64_t kMaxExpandedElements = std::uint64_t{1} << 22;

void bundle(std::string_view b) {
  golden::OperandBundle r;
  r.header.launches = 0xDEAD;  // a refusal must leave *out as it was
  std::string error;
  golden::BundleHeader h;
  if (!golden::parse_bundle_header(b, &h, &error)) {
    if (error.empty()) finding("a refused header gave no reason", b);
    return;
  }
  if (h.encoding == 0 && 2 * h.a_elements() > b.size()) finding("accepted a dense A larger than its file", b);
  if (h.rows() * h.shape.a_row_stride > kMaxExpandedElements)
    return;  // a patched header expands beyond this run's memory
  if (!golden::parse_bundle(b, &r, &error)) {
    if (error.empty() || r.header.launches != 0xDEAD)
      finding("a refused bundle changed the output or gave no reason", b);
    return;
  }
  const golden::Case& c = r.header.shape;
  if (c.m == 0 || c.n == 0 || c.k % 128 != 0 || c.a_row_stride < c.k || c.c_row_stride < c.n || r.header.launches == 0)
    finding("accepted a shape the format forbids", b);
  if (r.a.size() != r.header.a_elements() || r.w.size() != r.header.w_bytes() || r.s.size() != r.header.s_elements())
    finding("operand sizes disagree with the header", b);
  // Written back densely, it reads as the same operands.
  golden::BundleSource src;
  src.entry = r.header.entry;
  src.m = c.m;
  src.n = c.n;
  src.k = c.k;
  src.a_row_stride = c.a_row_stride;
  src.c_row_stride = c.c_row_stride;
  src.launches = r.header.launches;
  src.a_dense = r.a;
  src.w = r.w;
  src.s = r.s;
  std::string dense;
  if (!golden::format_bundle(src, &dense, &error)) finding("the writer refused what the reader accepted", b);
  golden::OperandBundle again;
  if (!golden::parse_bundle(dense, &again, &error)) finding("the writer wrote what the reader refuses", b);
  if (again.a != r.a || again.w != r.w || std::memcmp(again.s.data(), r.s.data(), 4 * r.s.size()) != 0 ||
      again.header.entry != r.header.entry)
    finding("a dense copy reads differently", b);
  // From byte 44 on (the entry may have been written with its "w8a16_" prefix).
  if (h.encoding == 0 && dense.substr(44) != b.substr(44))
    finding("a dense bundle does not format back to its bytes", b);
}

void output(std::string_view b) {
  golden::OperandOutput o;
  o.m = 0xBEEF;
  std::string error;
  if (!golden::parse_operand_output(b, &o, &error)) {
    if (error.empty() || o.m != 0xBEEF) finding("a refused output changed the output or gave no reason", b);
    return;
  }
  if (o.contract > 1 || o.c_row_stride < o.n || o.c.size() != std::uint64_t{o.launches} * o.m * o.c_row_stride)
    finding("accepted an output the format forbids", b);
  std::string again;
  if (!golden::format_operand_output(o, &again, &error)) finding("the writer refused what the reader accepted", b);
  if (again != b) finding("an output does not format back to its bytes", b);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view file(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] & 1) output(file);
  else bundle(file);
  return 0;
}
