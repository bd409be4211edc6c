// SPDX-License-Identifier: MIT OR Apache-2.0
// `w8a16check vectors FILE...`: replays recorded MMAs (.mmav) against the emulator's policy.
#include "run_vectors.hpp"

#include <cinttypes>
#include <cstdio>

#include "w8a16/golden/files.hpp"
#include "w8a16/golden/mmav.hpp"
#include "w8a16/properties/mmav_replay.hpp"
#include "w8a16/reference/mma.hpp"

namespace w8a16::cli {
namespace cmd_vectors {

int run_vectors(const VectorsArgs& a) {
  ref::Arch arch;
  if (!ref::parse_arch(a.arch_name, &arch)) {
    std::fprintf(stderr, "vectors: unknown --arch %s (sm90, sm80)\n", golden::quote(a.arch_name).c_str());
    return 2;
  }
  const ref::MmaPolicy& policy = ref::mma_policy(arch);
  if (!policy.verified)
    std::printf("note: policy %s is UNVERIFIED (%s)\n", std::string(policy.name).c_str(),
                std::string(policy.evidence).c_str());
  int status = 0;
  for (const std::string& path : a.files) {
    golden::MmavFile file;
    std::string error;
    if (!golden::read_mmav_file(path, &file, &error)) {
      const bool folder = golden::path_kind(path) == "a folder";
      std::fprintf(stderr, "%s: error: %s%s\n", golden::shown(path).c_str(), error.c_str(),
                   folder ? " (vectors reads .mmav files: name them, e.g. DIR/*.mmav)" : "");
      status = 2;
      continue;
    }
    if (file.cases.empty()) {
      // A file that checks nothing must not read as a pass.
      std::fprintf(stderr, "%s: error: the file holds no cases: nothing was checked\n", golden::shown(path).c_str());
      status = 2;
      continue;
    }
    const props::MmavReplay r = props::replay_mmav(file, policy, a.show);
    std::printf("%s: %" PRIu64 " mismatches of %" PRIu64 " dot products\n", golden::shown(path).c_str(), r.mismatches,
                r.dot_products);
    for (const std::string& line : r.details) std::printf("  %s\n", line.c_str());
    if (r.mismatches != 0 && status == 0) status = 1;
  }
  return status;
}

}  // namespace cmd_vectors
}  // namespace w8a16::cli
