// SPDX-License-Identifier: MIT OR Apache-2.0
// RapidCheck generators of cases, and the classification that shows in each run's log what was drawn.
#pragma once
#include <ostream>
#include <string>

#include <rapidcheck.h>

#include "w8a16/golden/case.hpp"
#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/properties/case_draw.hpp"

namespace w8a16::golden {
// RapidCheck prints counterexamples through this (found by ADL): the case line itself, so a
// failure's log holds the one line that replays it (`w8a16check repro`).
inline void showValue(const Case& c, std::ostream& os) { os << format_case(c); }
}  // namespace w8a16::golden

namespace w8a16::props {

// Each choice of the shared drawer (case_draw.hpp) is a RapidCheck integer in [0, bound), so a
// failing case shrinks toward the first entry of every table: one row, K = 128, tight pitches.
// Drawn at full size: RapidCheck's inRange otherwise crowds small runs toward 0, and the tables'
// weights, not the run's progress, should decide how often each entry point and shape appears.
struct RcSource {
  std::uint64_t below(std::uint64_t bound) {
    return *rc::gen::resize(rc::kNominalSize, rc::gen::inRange<std::uint64_t>(0, bound));
  }
};

inline rc::Gen<golden::Case> gen_case(DrawOptions opt = {}) {
  return rc::gen::exec([opt] {
    RcSource src;
    return CaseDrawer<RcSource>(src, opt).draw();
  });
}

// Options for one entry point (or one distribution) only.
inline DrawOptions only_entry(golden::EntryPoint e, DrawOptions opt = {}) {
  opt.entries = {e};
  return opt;
}
inline DrawOptions only_dist(golden::Distribution d, DrawOptions opt = {}) {
  opt.dists = {d};
  return opt;
}

inline rc::Gen<golden::EntryPoint> gen_entry_point() {
  return rc::gen::elementOf(std::vector<golden::EntryPoint>(std::begin(golden::kAllEntryPoints),
                                                            std::end(golden::kAllEntryPoints)));
}

// Labels the run's distribution table: the entry point, the distribution, and every special
// class the inputs hold (RapidCheck prints the share of runs per label after a passing property).
inline void classify_case(const golden::Case& c, const golden::CaseInputs& in) {
  RC_TAG(std::string(golden::entry_point_name(c.entry)));
  RC_TAG(std::string("dist=") + std::string(golden::distribution_name(c.dist)));
  const std::uint32_t seen = golden::special_classes(c, in);
  for (int i = 0; i < golden::kSpecialClassCount; ++i)
    RC_CLASSIFY((seen >> i) & 1u, std::string(golden::special_class_name(i)));
}

}  // namespace w8a16::props
