// SPDX-License-Identifier: MIT OR Apache-2.0
// The rule for whole numbers on a command line, in the library so that the CLI's validators
// (cli/options.hpp whole_number) and a subcommand that reads a number itself (probe's --seed) agree.
#pragma once
#include <cstdint>
#include <string>

namespace w8a16::cli {

// True with the value for decimal or 0x hex digits below 2^64; false on anything else (a sign, a
// space, a fraction, an exponent, overflow).
bool parse_whole_number(const std::string& text, std::uint64_t* out);

}  // namespace w8a16::cli
