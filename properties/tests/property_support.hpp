// SPDX-License-Identifier: MIT OR Apache-2.0
// What every case property does: regenerate and classify the inputs, compare bits, keep a failure.
#pragma once
#include <rapidcheck.h>

#include <string>

#include "w8a16/golden/case.hpp"
#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/properties/case_runner.hpp"
#include "w8a16/properties/generators.hpp"
#include "w8a16/properties/regression.hpp"

namespace w8a16::props::test {

// The inputs of a case, with the run's log labelled by entry, distribution and special classes.
inline golden::CaseInputs inputs_for(const golden::Case& c) {
  golden::CaseInputs in;
  std::string error;
  if (!golden::regenerate_inputs(c, &in, &error)) {
    note_failing_case(c, "inputs do not regenerate: " + error);
    RC_FAIL("inputs do not regenerate: " + error);
  }
  classify_case(c, in);
  return in;
}

// Fails the property (after noting the case for golden/regressions/) unless `ok`.
inline void require(bool ok, const golden::Case& c, const std::string& why) {
  if (ok) return;
  note_failing_case(c, why);
  RC_FAIL(golden::format_case(c) + ": " + why);
}

inline void require_bits_equal(const golden::Case& c, const Comparison& cmp, const std::string& what) {
  if (cmp.equal()) return;
  std::string why = what + ": " + std::to_string(cmp.mismatches) + " of " + std::to_string(cmp.bytes_compared / 2) +
                    " elements differ";
  for (const std::string& d : cmp.details) why += "; " + d;
  require(false, c, why);
}

}  // namespace w8a16::props::test
