// SPDX-License-Identifier: MIT OR Apache-2.0
// What a case costs and the limits no case may pass (work_limits.hpp).
#include "w8a16/properties/work_limits.hpp"

#include <cstdio>

namespace w8a16::props {
namespace {

std::string macs_of(const golden::Case& c) {
  return std::to_string(c.m) + "*" + std::to_string(c.n) + "*" + std::to_string(c.k);
}

// The smallest power of two >= v, as an option value that admits v.
std::uint64_t admitting(std::uint64_t v) {
  std::uint64_t p = 1;
  while (p < v && p < (std::uint64_t{1} << 63)) p <<= 1;
  return p < v ? v : p;
}

}  // namespace

CaseCost case_cost(const golden::Case& c) {
  const std::uint64_t a = 2 * std::uint64_t{c.m} * c.a_row_stride, w = std::uint64_t{c.n} * c.k;
  const std::uint64_t s = 4 * ((std::uint64_t{c.n} + 127) / 128) * (c.k / 128);
  const std::uint64_t cb = 2 * std::uint64_t{c.m} * c.c_row_stride, used = std::uint64_t{c.m} * c.n;
  CaseCost cost;
  cost.macs = std::uint64_t{c.m} * c.n * c.k;
  cost.a_bytes = a;
  cost.w_bytes = w;
  cost.s_bytes = s;
  // Inputs and the backend's copy of them; C as the sentinel, the backend's buffer, the download
  // and the expected output; the simulation's expected outputs and write counts (3 bytes per used
  // output) and a recording's used outputs (2); the emulator's unpacked A (bounded slabs).
  cost.host_bytes = 2 * (a + w + s) + 4 * cb + 5 * used + (std::uint64_t{64} << 20);
  return cost;
}

std::string count_text(std::uint64_t v) {
  std::string s = std::to_string(v);
  if (v != 0 && (v & (v - 1)) == 0) {
    int e = 0;
    while ((std::uint64_t{1} << e) != v) ++e;
    return s + " (2^" + std::to_string(e) + ")";
  }
  if (v >= 100000) {
    char buf[32];
    std::snprintf(buf, sizeof buf, " (about %.1e)", static_cast<double>(v));
    return s + buf;
  }
  return s;
}

std::string over_limits(const std::string& what, const CaseCost& cost, const WorkLimits& limits) {
  std::string out;
  if (cost.macs > limits.max_macs)
    out += what + ": needs " + count_text(cost.macs) + " multiply-adds, more than --max-macs " +
           count_text(limits.max_macs) + "; pass --max-macs " + std::to_string(admitting(cost.macs)) + " to run it\n";
  if (cost.host_bytes > limits.max_bytes)
    out += what + ": needs about " + count_text(cost.host_bytes) + " bytes of host memory, more than --max-bytes " +
           count_text(limits.max_bytes) + "; pass --max-bytes " + std::to_string(admitting(cost.host_bytes)) +
           " to run it\n";
  return out;
}

std::string over_limits(const std::vector<golden::Case>& cases, const std::vector<std::string>& sources,
                        const WorkLimits& limits) {
  std::string out;
  std::size_t over = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string what = (i < sources.size() ? sources[i] : "case #" + std::to_string(i)) +
                             " (m*n*k = " + macs_of(cases[i]) + ")";
    const std::string line = over_limits(what, case_cost(cases[i]), limits);
    if (line.empty()) continue;
    if (++over <= 5) out += line;
  }
  if (over > 5) out += "... and " + std::to_string(over - 5) + " more cases over the limits\n";
  if (!out.empty()) out.pop_back();
  return out;
}

}  // namespace w8a16::props

namespace w8a16::props {

std::string callable_over_limits(const std::vector<golden::Case>& cases, const std::vector<std::string>& sources) {
  const WorkLimits limits;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string source = i < sources.size() ? sources[i] : "case #" + std::to_string(i);
    if (const std::string p = golden::case_problem(cases[i]); !p.empty()) return source + ": " + p;
    const CaseCost cost = case_cost(cases[i]);
    const std::string shape = " (m*n*k = " + macs_of(cases[i]) + ")";
    if (cost.macs > limits.max_macs)
      return source + shape + " needs " + count_text(cost.macs) + " multiply-adds, past the work limit of " +
             count_text(limits.max_macs) + ": ask for fewer rows (m_values) or a smaller K";
    if (cost.host_bytes > limits.max_bytes)
      return source + shape + " needs " + count_text(cost.host_bytes) + " bytes of host memory, past the work " +
             "limit of " + count_text(limits.max_bytes) + ": ask for fewer rows (m_values) or a smaller N or K";
  }
  return "";
}

}  // namespace w8a16::props
