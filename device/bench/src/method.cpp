// SPDX-License-Identifier: MIT OR Apache-2.0
// The arithmetic of a timing (method.hpp).
#include "w8a16/bench/method.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace w8a16::bench {

bool parse_shape(const std::string& text, Shape* out, std::string* why) {
  const std::size_t sep = text.find('x');
  if (sep == std::string::npos || sep == 0 || sep + 1 == text.size()) {
    *why = "'" + text + "' is not NxK (e.g. 12288x2048)";
    return false;
  }
  const std::string ns = text.substr(0, sep), ks = text.substr(sep + 1);
  if (ns.find_first_not_of("0123456789") != std::string::npos ||
      ks.find_first_not_of("0123456789") != std::string::npos || ns.size() > 9 || ks.size() > 9) {
    *why = "'" + text + "' is not NxK with decimal N and K";
    return false;
  }
  const unsigned long n = std::strtoul(ns.c_str(), nullptr, 10), k = std::strtoul(ks.c_str(), nullptr, 10);
  if (n == 0 || k == 0 || k % 128 != 0) {
    *why = "'" + text + "': N must be >= 1 and K a positive multiple of 128";
    return false;
  }
  if (static_cast<std::uint64_t>(n) * k > 0xFFFFFFFFull) {
    *why = "'" + text + "': N*K must stay below 2^32 (the kernels' 32-bit offsets)";
    return false;
  }
  *out = Shape{static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(k)};
  return true;
}

bool check_row_count(std::uint32_t m, std::string* why) {
  if (m == 0 || m > 65536) {
    *why = "--m " + std::to_string(m) + ": must be in 1..65536";
    return false;
  }
  return true;
}

bool check_rows(std::uint32_t m, Shape sh, std::string* why) {
  if (!check_row_count(m, why)) return false;
  if (static_cast<std::uint64_t>(m) * sh.k > 0xFFFFFFFFull || static_cast<std::uint64_t>(m) * sh.n > 0xFFFFFFFFull) {
    *why = "M=" + std::to_string(m) + " with N=" + std::to_string(sh.n) + ", K=" + std::to_string(sh.k) +
           ": M*K and M*N must stay below 2^32";
    return false;
  }
  return true;
}

double weight_bytes(Shape sh) {
  // W's codes and S's FP32 scales, one per 128 x 128 block (NUMERICS.md 2): whole blocks, hence the
  // integer divisions, counted in 64 bits before the conversion.
  const std::uint64_t scales = std::uint64_t{(sh.n + 127) / 128} * (sh.k / 128);
  return static_cast<double>(sh.n) * sh.k + 4.0 * static_cast<double>(scales);
}

double floor_bytes(Shape sh, std::uint32_t m) { return weight_bytes(sh) + 2.0 * m * sh.k + 2.0 * m * sh.n; }

double copy_bandwidth(std::size_t copied_bytes, double median_us) {
  return 2.0 * static_cast<double>(copied_bytes) / (median_us * 1e-6);
}

double floor_us(double bytes, double copy_bytes_per_s) { return bytes / copy_bytes_per_s * 1e6; }

int rotation_copies(double bytes_per_copy, double rotate_mib) {
  return std::max(2, static_cast<int>(std::ceil(rotate_mib * 1048576.0 / bytes_per_copy)));
}

Timing summarize(std::vector<float> per_launch_us, bool graph) {
  Timing t;
  t.graph = graph;
  if (per_launch_us.empty()) {
    t.error = "no timed launch";
    return t;
  }
  std::sort(per_launch_us.begin(), per_launch_us.end());
  t.ok = true;
  t.median_us = per_launch_us[per_launch_us.size() / 2];
  t.min_us = per_launch_us.front();
  t.max_us = per_launch_us.back();
  return t;
}

}  // namespace w8a16::bench
