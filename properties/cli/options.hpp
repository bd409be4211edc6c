// SPDX-License-Identifier: MIT OR Apache-2.0
// Option values the CLI refuses before anything runs: numbers that would wrap or mean nothing
// (--cases -1, --seed -1, a NaN or negative budget), and the options of the work limits every
// command that runs cases applies (--max-macs, --max-bytes).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "exit_status.hpp"
#include "numbers.hpp"
#include "w8a16/properties/contract_choice.hpp"
#include "w8a16/properties/launcher.hpp"
#include "w8a16/properties/work_limits.hpp"

namespace w8a16::cli {

// A whole number in [lo, hi], written in decimal or as 0x hex, with nothing else: no sign (so "-1"
// is refused instead of wrapping to 2^64 - 1), no spaces, no fraction, no exponent. Attach it with
// ->transform(): it rewrites the value in decimal, since CLI11 itself reads "010" as octal 8.
CLI::Validator whole_number(std::uint64_t lo, std::uint64_t hi);
// The same rule as a function: numbers.hpp parse_whole_number.
// A finite decimal number in [lo, hi]: NaN, infinities and out-of-range values are refused.
CLI::Validator finite_number(double lo, double hi);

// Every option of `app` and of its subcommands, at any depth, that takes a value (flags excepted,
// positionals included) refuses an empty one: "--json: an empty value ...", exit 2. Without it an
// explicit `--json ""` or `--data-dir ""` reads as the option left out, and the run goes on doing
// something the user did not ask for. Called once, after every subcommand has registered.
void refuse_empty_values(CLI::App* app);

// The work limits (work_limits.hpp) as --max-macs and --max-bytes.
using props::case_cost;
using props::CaseCost;
using props::count_text;
using props::over_limits;
using props::WorkLimits;
void add_limit_options(CLI::App* cmd, WorkLimits* limits);

// --launch-deadline SECONDS on a subcommand that launches, else W8A16_LAUNCH_DEADLINE, parsed into
// *deadlines (properties/launcher.hpp DeadlinePolicy), which the command hands to its launchers.
void add_deadline_option(CLI::App* cmd, props::DeadlinePolicy* deadlines);
// --module FILE on a subcommand (docs/KERNEL_ABI.md 5).
void add_module_option(CLI::App* cmd, std::string* module);
// --contract NAME|FILE|ENTRY=NAME|FILE on a subcommand that compares with the emulator
// (NUMERICS.md 2.4; contract_choice.hpp), repeatable, later ones winning for the same entry point.
// Each value is resolved into *choice once, while the command line is parsed, so an unknown name or
// a bad file is a usage error (exit 2) before anything runs, and the command receives the choice.
void add_contract_option(CLI::App* cmd, props::ContractChoice* choice);

}  // namespace w8a16::cli
