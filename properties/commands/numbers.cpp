// SPDX-License-Identifier: MIT OR Apache-2.0
// The rule for whole numbers on a command line (numbers.hpp).
#include "numbers.hpp"

#include <cstdint>

namespace w8a16::cli {

bool parse_whole_number(const std::string& s, std::uint64_t* out) {
  const bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  const std::size_t start = hex ? 2 : 0;
  if (s.size() == start || s.size() - start > (hex ? 16u : 20u)) return false;
  std::uint64_t v = 0;
  for (std::size_t i = start; i < s.size(); ++i) {
    const char ch = s[i];
    unsigned d;
    if (ch >= '0' && ch <= '9') d = static_cast<unsigned>(ch - '0');
    else if (hex && ch >= 'a' && ch <= 'f') d = static_cast<unsigned>(ch - 'a' + 10);
    else if (hex && ch >= 'A' && ch <= 'F') d = static_cast<unsigned>(ch - 'A' + 10);
    else return false;
    const std::uint64_t base = hex ? 16 : 10;
    if (v > (UINT64_MAX - d) / base) return false;
    v = v * base + d;
  }
  *out = v;
  return true;
}

}  // namespace w8a16::cli
