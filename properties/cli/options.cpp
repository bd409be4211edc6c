// SPDX-License-Identifier: MIT OR Apache-2.0
// Strict number validators and the work-limit options (options.hpp).
#include "options.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "w8a16/golden/files.hpp"

namespace w8a16::cli {
namespace {

// Decimal or 0x hex digits only, below 2^64; false on anything else (sign, space, overflow).
bool parse_whole(const std::string& s, std::uint64_t* out) {
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

}  // namespace

bool parse_whole_number(const std::string& text, std::uint64_t* out) { return parse_whole(text, out); }

CLI::Validator whole_number(std::uint64_t lo, std::uint64_t hi) {
  const std::string range = std::to_string(lo) + ".." + std::to_string(hi);
  return CLI::Validator(
      [lo, hi, range](std::string& s) -> std::string {
        std::uint64_t v = 0;
        if (!parse_whole(s, &v))
          return golden::quote(s, 40) + " is not a whole number (decimal or 0x hex, no sign) in " + range;
        if (v < lo || v > hi) return s + " is outside " + range;
        s = std::to_string(v);  // CLI11 reads "010" as octal: what it converts is the decimal value
        return {};
      },
      range);
}

CLI::Validator finite_number(double lo, double hi) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%g..%g", lo, hi);
  const std::string range = buf;
  return CLI::Validator(
      [lo, hi, range](std::string& s) -> std::string {
        const char* p = s.c_str();
        char* end = nullptr;
        errno = 0;
        const double v = std::strtod(p, &end);
        const bool whole = !s.empty() && end == p + s.size() && s.find_first_of(" \t\n") == std::string::npos;
        if (!whole || errno == ERANGE || !std::isfinite(v))
          return golden::quote(s, 40) + " is not a finite number in " + range;
        if (v < lo || v > hi) return s + " is outside " + range;
        return {};
      },
      range);
}

void refuse_empty_values(CLI::App* app) {
  for (CLI::Option* opt : app->get_options()) {
    if (opt->get_type_size() == 0) continue;  // a flag: it takes no value
    const std::string name = opt->get_name().empty() ? std::string("this option") : opt->get_name();
    opt->check(CLI::Validator(
        [name](const std::string& s) -> std::string {
          if (!s.empty()) return {};
          return "an empty value: give " + name + " a value, or leave it out";
        },
        ""));
  }
  for (CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; })) refuse_empty_values(sub);
}

void add_limit_options(CLI::App* cmd, WorkLimits* limits) {
  cmd->add_option("--max-macs", limits->max_macs,
                  "refuse any case of more multiply-adds (m*n*k) than this: the emulator computes each on the CPU")
      ->transform(whole_number(1, UINT64_MAX))
      ->capture_default_str();
  cmd->add_option("--max-bytes", limits->max_bytes,
                  "refuse any case needing more host memory than this (bytes; inputs, copies and outputs)")
      ->transform(whole_number(1, UINT64_MAX))
      ->capture_default_str();
}

}  // namespace w8a16::cli
