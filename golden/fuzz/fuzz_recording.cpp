// SPDX-License-Identifier: MIT OR Apache-2.0
// libFuzzer target for golden::parse_recording (.rec): never a crash, all or nothing, what it
// accepts is self-consistent and formats back to text that parses to the same recording, and a
// version-2 text it accepts is refused once cut short.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "w8a16/golden/recording.hpp"

namespace {

namespace golden = w8a16::golden;

[[noreturn]] void finding(const char* what, std::string_view input) {
  std::fprintf(stderr, "fuzz_recording: invariant broken: %s\n  input (first 400 bytes): %.*s\n", what,
               static_cast<int>(input.size() < 400 ? input.size() : 400), input.data());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  golden::Recording r;
  r.header.gpu = "sentinel";  // a refusal must leave *out as it was
  std::string error;
  if (!golden::parse_recording(text, "fuzz", &r, &error)) {
    if (error.rfind("fuzz:", 0) != 0) finding("the error does not start with 'source:'", text);
    if (r.header.gpu != "sentinel" || !r.outputs.empty()) finding("a refused recording changed the output", text);
    return 0;
  }
  // Accepted: every output line is consistent with its case (case.hpp limits, m * n outputs, the
  // full bytes exactly when small, and then with the recorded digest).
  for (const golden::RecordedOutput& o : r.outputs) {
    if (!golden::case_problem(o.c).empty()) finding("accepted an invalid case", text);
    if (o.outputs != std::uint64_t{o.c.m} * o.c.n) finding("accepted an output count other than m * n", text);
    const bool small = o.outputs <= golden::kRecordingFullOutputsMax;
    if (small != (o.bits.size() == o.outputs) || (!small && !o.bits.empty()))
      finding("full bytes kept or dropped wrongly", text);
    if (small && golden::outputs_digest(o.bits) != o.digest) finding("accepted full bytes whose digest differs", text);
  }
  // A cut file is an error (recording.hpp): with the trailer checked, every shorter text but the one
  // without the final newline is refused; a few cuts are tried.
  if (r.length_verified && text.size() > 2) {
    for (const std::size_t cut : {text.size() / 2, text.rfind("\nend cases=") + 1, text.size() - 2}) {
      // Cuts that drop only the trailer's line ending ("\n" or "\r\n") leave it whole.
      if (cut == 0 || cut >= text.size() || text.find_first_not_of("\r\n", cut) == std::string_view::npos) continue;
      golden::Recording shorter;
      if (golden::parse_recording(text.substr(0, cut), "fuzz", &shorter, &error))
        finding("accepted a version-2 recording cut short", text);
    }
  }
  // Formatting is canonical: its text parses back to a recording that formats identically.
  const std::string once = golden::format_recording(r);
  golden::Recording back;
  if (!golden::parse_recording(once, "formatted", &back, &error))
    finding("format_recording() output does not parse", text);
  if (golden::format_recording(back) != once) finding("format(parse(format(r))) != format(r)", text);
  if (back.outputs.size() != r.outputs.size()) finding("the output count changed in a round trip", text);
  return 0;
}
