// SPDX-License-Identifier: MIT OR Apache-2.0
// libFuzzer target for golden::parse_mmav, and the emulator's MMA over whatever bits a file holds.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <string>

#include "w8a16/golden/mmav.hpp"
#include "w8a16/reference/mma.hpp"

namespace {

namespace golden = w8a16::golden;
namespace ref = w8a16::ref;

// A broken invariant is a finding: abort, so libFuzzer saves the input as a crash-* file.
[[noreturn]] void finding(const char* what) {
  std::fprintf(stderr, "fuzz_mmav: invariant broken: %s\n", what);
  std::abort();
}

bool bf16_is_nan(std::uint16_t b) { return (b & 0x7F80) == 0x7F80 && (b & 0x007F) != 0; }
bool f32_is_nan(std::uint32_t b) { return (b & 0x7F800000u) == 0x7F800000u && (b & 0x007FFFFFu) != 0; }

// Runs every output element of a recorded case through the sm_90 and sm_80 models. Recorded bits
// are arbitrary here, so this is where UBSan sees the model's shifts and alignments on any input.
// Two NUMERICS.md 1.1 rules hold for every input and are checked on sm_90 (the verified policy):
// a NaN operand gives 0x7FFFFFFF (rule 7), and a zero result is +0, never -0 (rule 6).
void run_model(const golden::MmavCase& c) {
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 8; ++n) {
      const std::uint16_t* a = &c.a[16 * m];
      const std::uint16_t* b = &c.bt[16 * n];
      const std::uint32_t cin = c.c[8 * m + n];
      const std::uint32_t d90 = ref::mma_k16_bits(ref::Arch::sm90, cin, a, b);
      (void)ref::mma_k16_bits(ref::Arch::sm80, cin, a, b);
      bool any_nan = f32_is_nan(cin);
      for (int k = 0; k < 16; ++k) any_nan = any_nan || bf16_is_nan(a[k]) || bf16_is_nan(b[k]);
      if (any_nan && d90 != 0x7FFFFFFFu) finding("a NaN operand did not give 0x7FFFFFFF (NUMERICS.md 1.1 rule 7)");
      if (d90 == 0x80000000u) finding("the sm_90 model returned -0 (NUMERICS.md 1.1 rule 6: zero is +0)");
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // A sentinel the parser must leave alone when it refuses (bad input changes nothing).
  golden::MmavFile out;
  out.kind = 0xDEADBEEFu;
  std::string error;
  const bool ok = golden::parse_mmav(data, size, &out, &error);
  if (!ok) {
    if (error.empty()) finding("refused without saying why");
    if (out.kind != 0xDEADBEEFu || !out.cases.empty()) finding("a refused file changed the output");
    return 0;
  }
  if (!error.empty()) finding("accepted but set an error");
  // Accepted: the exact size the header promises, and the bytes round-trip unchanged.
  if (size != golden::kMmavHeaderBytes + out.cases.size() * golden::kMmavCaseBytes)
    finding("accepted a size other than header + count * 1792");
  const std::vector<std::uint8_t> again = golden::serialize_mmav(out);
  if (again.size() != size || std::memcmp(again.data(), data, size) != 0)
    finding("serialize_mmav(parse_mmav(bytes)) != bytes");
  // The model on the first case only: 256 element evaluations per input already dominate the time.
  if (!out.cases.empty()) run_model(out.cases.front());
  return 0;
}
