// SPDX-License-Identifier: MIT OR Apache-2.0
// verify's three reports, each a formatter over the one result (properties/verify.hpp): the text
// summary after the campaign, the JSON (--json) and the JUnit XML (--junit). Every reason of
// verdict_reasons appears in all three: in the text, as an entry of the JSON's "failures" and as a
// <failure> of the JUnit. The coverage rows all three show come from props::coverage_rows.
#pragma once
#include <cstdio>
#include <string>

#include "gpu_identity.hpp"
#include "w8a16/properties/contract_choice.hpp"
#include "w8a16/properties/verify.hpp"

namespace w8a16::cli {

// What the reports say about the run besides the result.
struct VerifyReportContext {
  std::string backend;             // "cuda" or "sim"
  RunIdentity identity;            // gpu_identity.hpp
  std::string data_dir;            // the data folder used ("" when none)
  props::ContractChoice contract;  // what the kernels were held to (--contract; NUMERICS.md 2.4)
};

// The entry-point table, the coverage table (or why coverage was not judged), the counts of cases
// and launches and the seconds of each stage, as the text report prints them.
void print_verify_summary(std::FILE* out, const props::VerifyResult& v);

std::string verify_json_report(const props::VerifyResult& v, const VerifyReportContext& ctx);
std::string verify_junit_report(const props::VerifyResult& v, const VerifyReportContext& ctx);

}  // namespace w8a16::cli
