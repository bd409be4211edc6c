// SPDX-License-Identifier: MIT OR Apache-2.0
// invariance's JSON report (--json), a formatter over the library's result
// (properties/invariance.hpp): the four verdicts, and per shape and entry point the dispatch map,
// the edges crossed and each verdict's first failure with its replay line. Its text is
// props::invariance_text, over the same result.
#pragma once
#include <string>

#include "w8a16/properties/invariance.hpp"

namespace w8a16::cli {

std::string invariance_json_report(const props::InvarianceReport& report, const props::InvarianceOptions& opt,
                                   const std::string& backend);

}  // namespace w8a16::cli
