// SPDX-License-Identifier: MIT OR Apache-2.0
// Option values the CLI refuses before anything runs: numbers that would wrap or mean nothing
// (--cases -1, --seed -1, a NaN or negative budget), and the work limits every command that runs
// cases applies (--max-macs, --max-bytes) with what one case costs.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "w8a16/golden/case.hpp"

namespace w8a16::cli {

// The exit statuses of every subcommand (README "Exit status"): 0 the check passed, 1 a mismatch or
// a failed check, 2 a usage or input error (nothing was checked, or a report could not be written).
inline constexpr int kExitPass = 0;
inline constexpr int kExitFail = 1;
inline constexpr int kExitUsage = 2;

// A whole number in [lo, hi], written in decimal or as 0x hex, with nothing else: no sign (so "-1"
// is refused instead of wrapping to 2^64 - 1), no spaces, no fraction, no exponent. Attach it with
// ->transform(): it rewrites the value in decimal, since CLI11 itself reads "010" as octal 8.
CLI::Validator whole_number(std::uint64_t lo, std::uint64_t hi);
// The same rule as a function: true with the value for decimal or 0x hex digits below 2^64.
bool parse_whole_number(const std::string& text, std::uint64_t* out);
// A finite decimal number in [lo, hi]: NaN, infinities and out-of-range values are refused.
CLI::Validator finite_number(double lo, double hi);

// Every option of `app` and of its subcommands, at any depth, that takes a value (flags excepted,
// positionals included) refuses an empty one: "--json: an empty value ...", exit 2. Without it an
// explicit `--json ""` or `--data-dir ""` reads as the option left out, and the run goes on doing
// something the user did not ask for. Called once, after every subcommand has registered.
void refuse_empty_values(CLI::App* app);

// The work limits of the commands that run cases: no case starts whose multiply-adds or host
// memory exceed them; the command refuses, names the case and says how to raise the limit.
// Defaults fit a laptop: 2^34 multiply-adds (four times the largest committed case, the model
// shapes 16 x 51200 x 5120; minutes of emulation on two cores) and 4 GiB.
inline constexpr std::uint64_t kDefaultMaxMacs = std::uint64_t{1} << 34;
inline constexpr std::uint64_t kDefaultMaxBytes = std::uint64_t{4} << 30;
struct WorkLimits {
  std::uint64_t max_macs = kDefaultMaxMacs;
  std::uint64_t max_bytes = kDefaultMaxBytes;
};
void add_limit_options(CLI::App* cmd, WorkLimits* limits);

// What running one case costs: m * n * k multiply-adds (the emulator computes every output on the
// host, whatever the backend), and the host bytes of its inputs, the backend's copies, the expected
// and produced C and the simulation's bookkeeping, at their largest at one time.
struct CaseCost {
  std::uint64_t macs = 0;
  std::uint64_t host_bytes = 0;
};
CaseCost case_cost(const golden::Case& c);

// "" when every case fits the limits; else one line per case over a limit (at most 5, then a
// count), each naming its source, what it needs, the limit and the option value that admits it.
std::string over_limits(const std::vector<golden::Case>& cases, const std::vector<std::string>& sources,
                        const WorkLimits& limits);
// The same for work described by its totals (an operand bundle, a benchmark's host buffers).
std::string over_limits(const std::string& what, const CaseCost& cost, const WorkLimits& limits);

// 17179869184 -> "17179869184 (2^34)", 5000000000 -> "5000000000 (about 5.0e9)".
std::string count_text(std::uint64_t v);

}  // namespace w8a16::cli
