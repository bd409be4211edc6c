// SPDX-License-Identifier: MIT OR Apache-2.0
// libFuzzer target for golden::parse_manifest (evidence-manifest.txt, golden/README.md "Evidence
// manifests"): never a crash, all or nothing, and what it accepts formats back to text that parses
// to the same entries.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "w8a16/golden/manifest.hpp"

namespace {

namespace golden = w8a16::golden;

[[noreturn]] void finding(const char* what, std::string_view input) {
  std::fprintf(stderr, "fuzz_manifest: invariant broken: %s\n  input (first 400 bytes): %.*s\n", what,
               static_cast<int>(input.size() < 400 ? input.size() : 400), input.data());
  std::abort();
}

bool same(const golden::ManifestEntry& a, const golden::ManifestEntry& b) {
  return a.folder == b.folder && a.name == b.name && a.bytes == b.bytes && a.sha256 == b.sha256 && a.unit == b.unit &&
         a.count == b.count && a.source == b.source && a.from == b.from;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  golden::Manifest m;
  m.entries.push_back(golden::ManifestEntry{});
  m.entries.back().name = "sentinel";  // a refusal must leave *out as it was
  std::string error;
  if (!golden::parse_manifest(text, "fuzz", &m, &error)) {
    if (error.rfind("fuzz", 0) != 0) finding("the error does not start with the source name", text);
    if (m.entries.size() != 1 || m.entries[0].name != "sentinel")
      finding("a refused manifest changed the output", text);
    return 0;
  }
  for (std::size_t i = 1; i < m.entries.size(); ++i)
    if (!(m.entries[i - 1].name < m.entries[i].name)) finding("accepted names out of order or listed twice", text);
  const std::string again = golden::format_manifest(m);
  golden::Manifest back;
  if (!golden::parse_manifest(again, "fuzz", &back, &error)) finding("what it accepted does not format back", text);
  if (back.entries.size() != m.entries.size()) finding("the round trip changed the entry count", text);
  for (std::size_t i = 0; i < m.entries.size(); ++i)
    if (!same(m.entries[i], back.entries[i])) finding("the round trip changed an entry", text);
  return 0;
}
