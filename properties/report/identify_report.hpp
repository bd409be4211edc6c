// SPDX-License-Identifier: MIT OR Apache-2.0
// identify's JSON report (--json), a formatter over the library's verdicts (properties/identify.hpp):
// per entry point and body, what it keeps, the fields as determined, the probes and the
// confirmation. Its text is props::identify_text, over the same verdicts.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "w8a16/properties/identify.hpp"

namespace w8a16::cli {

struct IdentifyReportContext {
  std::string backend;  // the backend's name
  std::uint64_t seed = 0;
  bool hung = false;  // the run stopped at a launch that hung
  bool pass = false;  // every entry point keeps one contract in every body, and nothing hung
};

std::string identify_json_report(const std::vector<props::EntryVerdict>& verdicts, const IdentifyReportContext& ctx);

}  // namespace w8a16::cli
