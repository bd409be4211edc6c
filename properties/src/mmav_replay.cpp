// SPDX-License-Identifier: MIT OR Apache-2.0
// Replays each recorded dot product of a .mmav file through the emulator's MMA policy, bit for bit.
#include "w8a16/properties/mmav_replay.hpp"

#include <cstdio>

namespace w8a16::props {

MmavReplay replay_mmav(const golden::MmavFile& file, const ref::MmaPolicy& policy, int max_details) {
  MmavReplay r;
  for (std::size_t i = 0; i < file.cases.size(); ++i) {
    const golden::MmavCase& c = file.cases[i];
    for (int m = 0; m < 16; ++m) {
      for (int n = 0; n < 8; ++n) {
        ++r.dot_products;
        const std::uint32_t got = ref::mma_k16_bits(policy, c.c[m * 8 + n], &c.a[m * 16], &c.bt[n * 16]);
        const std::uint32_t want = c.d[m * 8 + n];
        if (got == want) continue;
        if (r.mismatches++ >= static_cast<std::uint64_t>(max_details < 0 ? 0 : max_details)) continue;
        std::string line;
        char buf[64];
        std::snprintf(buf, sizeof buf, "case %zu m=%d n=%d c=%08X a=", i, m, n, c.c[m * 8 + n]);
        line += buf;
        for (int k = 0; k < 16; ++k) {
          std::snprintf(buf, sizeof buf, "%04X%s", c.a[m * 16 + k], k < 15 ? "," : "");
          line += buf;
        }
        line += " b=";
        for (int k = 0; k < 16; ++k) {
          std::snprintf(buf, sizeof buf, "%04X%s", c.bt[n * 16 + k], k < 15 ? "," : "");
          line += buf;
        }
        std::snprintf(buf, sizeof buf, " device=%08X emulator=%08X", want, got);
        line += buf;
        r.details.push_back(line);
      }
    }
  }
  return r;
}

}  // namespace w8a16::props
