// SPDX-License-Identifier: MIT OR Apache-2.0
// Failing cases, kept: a property notes each failing case; the test's end saves the last (minimal) one.
#pragma once
#include <optional>
#include <string>

#include "w8a16/golden/case.hpp"

namespace w8a16::props {

struct NotedFailure {
  golden::Case c;
  std::string why;  // the first mismatch or error, one line
};

// Called by a property each time a case fails. While RapidCheck shrinks, it calls again for each
// smaller case that still fails, so the last note is the shrunk counterexample.
void note_failing_case(const golden::Case& c, const std::string& why);
// The last note since the previous take (and forgets it).
std::optional<NotedFailure> take_noted_failure();

// Where regressions go: $W8A16_REGRESSIONS_DIR, else `default_dir` (the tests pass their source
// tree's golden/regressions, the CLI its data folder's: no path is built into the library).
std::string regressions_dir(const std::string& default_dir);
// Appends the failure to <dir>/<test_name>.case with a comment saying why and how to replay it;
// returns the path, or an empty string with *error set.
std::string save_regression(const NotedFailure& f, const std::string& test_name, const std::string& default_dir,
                            std::string* error);

}  // namespace w8a16::props
