// SPDX-License-Identifier: MIT OR Apache-2.0
// Strict number validators and the work-limit options (options.hpp).
#include "options.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "w8a16/golden/files.hpp"
#include "w8a16/properties/launcher.hpp"

namespace w8a16::cli {
CLI::Validator whole_number(std::uint64_t lo, std::uint64_t hi) {
  const std::string range = std::to_string(lo) + ".." + std::to_string(hi);
  return CLI::Validator(
      [lo, hi, range](std::string& s) -> std::string {
        std::uint64_t v = 0;
        if (!parse_whole_number(s, &v))
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

void add_deadline_option(CLI::App* cmd, props::DeadlinePolicy* deadlines) {
  CLI::Option* flag = cmd->add_option_function<std::string>(
      "--launch-deadline",
      [deadlines](const std::string& v) {
        std::string why;
        if (!deadlines->set_fixed(v, &why)) throw CLI::ValidationError("--launch-deadline", why);
      },
      "seconds each launch may run before it is a HANG, 1 to 1000000 (default: W8A16_LAUNCH_DEADLINE, else 20 s "
      "plus 1 ns a multiply-add on a GPU, 1 us on the simulation)");
  // The environment's value only where it is used, a command that launches, and only when the flag
  // does not replace it: a bad one fails this command (exit 2), never --version or another command.
  cmd->parse_complete_callback([flag, deadlines] {
    std::string why;
    if (flag->count() == 0 && !deadlines->from_environment(&why)) throw CLI::ValidationError(golden::escaped(why));
  });
}

void add_module_option(CLI::App* cmd, std::string* module) {
  cmd->add_option("--module", *module,
                  "a cubin or fatbin to load instead of the embedded kernels (docs/KERNEL_ABI.md); needs a GPU");
}

void add_contract_option(CLI::App* cmd, props::ContractChoice* choice) {
  // The values land in the choice through the check below, once each; the option's own strings
  // are kept only for CLI11's bookkeeping.
  auto specs = std::make_shared<std::vector<std::string>>();
  cmd->add_option("--contract", *specs,
                  "the contract the kernels are held to (NUMERICS.md 2.4): a name (canonical, the default; "
                  "seed-tile, seed-skinny, seed-rows) or a contract file; ENTRY=NAME|FILE for one entry point "
                  "(repeatable)")
      ->check(CLI::Validator(
          [choice, specs](const std::string& v) -> std::string {
            std::string why;
            if (props::apply_contract_arg(v, choice, &why)) return {};
            // CLI11 puts the option's name before the message already.
            const std::string own = "--contract: ";
            return why.rfind(own, 0) == 0 ? why.substr(own.size()) : why;
          },
          "NAME|FILE|ENTRY=NAME|FILE"))
      // One value each time it is given: a positional after it (repro's CASE) is not a contract.
      ->allow_extra_args(false);
}

}  // namespace w8a16::cli
