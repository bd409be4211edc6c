// SPDX-License-Identifier: MIT OR Apache-2.0
// The simulation's stand-ins for `w8a16check identify`: a body whose values follow other
// conventions of the family (NUMERICS.md 2.4), carry a planted bug, or break invariance on purpose
// (the controls of `w8a16check invariance`). Read from
// W8A16_SIM_CONVENTIONS by the CLI; an item that cannot be read is an error and nothing runs.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <string>

#include "regular_file.hpp"
#include "sim_internal.hpp"
#include "w8a16/reference/conventions.hpp"

namespace w8a16::device {
namespace {

bool parse_u32(const std::string& t, std::uint32_t* out) {
  if (t.empty() || t.size() > 9 || t.find_first_not_of("0123456789") != std::string::npos) return false;
  *out = static_cast<std::uint32_t>(std::stoul(t));
  return true;
}

// "X:Y" -> two numbers.
bool parse_pair(const std::string& t, std::uint32_t* x, std::uint32_t* y) {
  const std::size_t c = t.find(':');
  return c != std::string::npos && parse_u32(t.substr(0, c), x) && parse_u32(t.substr(c + 1), y);
}

bool parse_bug(const std::string& t, BodyStandIn* si, std::string* error) {
  const std::size_t at = t.find('@');
  const std::string kind = t.substr(0, at), where = at == std::string::npos ? "" : t.substr(at + 1);
  if (kind == "bug:flip") {
    si->bug = PlantedBug::flip;
    if (at == std::string::npos) return true;
    if (parse_pair(where, &si->x, &si->y)) return true;
    *error = "'" + t + "': bug:flip takes @ROW:COLUMN";
    return false;
  }
  if (kind == "bug:swap-k") {
    si->bug = PlantedBug::swap_k;
    if (at != std::string::npos && parse_pair(where, &si->x, &si->y) && si->x != si->y) return true;
    *error = "'" + t + "': bug:swap-k takes @I:J, two different K positions";
    return false;
  }
  if (kind == "bug:early-nan") {
    si->bug = PlantedBug::early_nan;
    if (at != std::string::npos && parse_u32(where, &si->x) && si->x >= 1) return true;
    *error = "'" + t + "': bug:early-nan takes @L, the lanes of the scan (1 or more)";
    return false;
  }
  *error = "'" + t + "': the bug must be bug:flip[@R:C], bug:swap-k@I:J or bug:early-nan@L";
  return false;
}

// A library name, else a file in the text form.
bool load_conventions(const std::string& spec, ref::Conventions* out, std::string* error) {
  if (const ref::Conventions* named = ref::find_conventions(spec)) {
    *out = *named;
    return true;
  }
  // A regular file of at most a contract's size, refused before any read otherwise.
  std::vector<unsigned char> bytes;
  std::string problem;
  read_regular_file(spec, 64 * 1024, "a contract file", "64 KiB", &bytes, &problem);
  const std::string text(bytes.begin(), bytes.end());
  if (!problem.empty()) {
    std::string names;
    for (const ref::Conventions& c : ref::conventions_library()) names += (names.empty() ? "" : ", ") + c.name;
    *error = "'" + spec + "' is neither a named contract (" + names + ") nor a contract file: it " + problem;
    return false;
  }
  std::string why;
  if (!ref::parse_conventions(text, out, &why)) {
    *error = "'" + spec + "': " + why;
    return false;
  }
  return true;
}

}  // namespace

bool parse_stand_ins(const std::string& text, std::vector<BodyStandIn>* out, std::string* error) {
  std::vector<BodyStandIn> all;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find(',', pos);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(pos, end - pos);
    pos = end + 1;
    if (item.empty()) {
      if (end == text.size()) break;
      continue;
    }
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 >= item.size()) {
      *error =
          "'" + item +
          "': expected BODY=NAME|FILE|bug:...|split-k-by-m|row-order|nondeterministic|row-copy (e.g. m32_skinny=seed-skinny)";
      return false;
    }
    BodyStandIn si;
    si.text = item;
    const std::string body = item.substr(0, eq), spec = item.substr(eq + 1);
    bool found = false;
    for (Body b : kAllBodies)
      if (body == body_name(b)) si.body = b, found = true;
    if (!found) {
      std::string names;
      for (Body b : kAllBodies) names += (names.empty() ? "" : ", ") + std::string(body_name(b));
      *error = "'" + item + "': '" + body + "' is no body (" + names + ")";
      return false;
    }
    for (const BodyStandIn& seen : all)
      if (seen.body == si.body) {
        *error = "'" + item + "': body " + body + " is given twice";
        return false;
      }
    // The invariance controls, alone on the canonical values.
    if (spec == "split-k-by-m" || spec == "row-order" || spec == "nondeterministic" || spec == "row-copy") {
      si.variation = spec == "split-k-by-m" ? StandInVariation::split_k_by_m
                     : spec == "row-order"  ? StandInVariation::row_order
                     : spec == "row-copy"   ? StandInVariation::row_copy
                                            : StandInVariation::nondeterministic;
      all.push_back(std::move(si));
      if (end == text.size()) break;
      continue;
    }
    // NAME, NAME+bug:..., or bug:... alone (on the canonical values).
    const std::size_t plus = spec.rfind("+bug:");
    std::string conv = spec, bug;
    if (spec.rfind("bug:", 0) == 0) conv.clear(), bug = spec;
    else if (plus != std::string::npos) conv = spec.substr(0, plus), bug = spec.substr(plus + 1);
    if (!conv.empty() && !load_conventions(conv, &si.conventions, error)) {
      *error = "'" + item + "': " + *error;
      return false;
    }
    if (!bug.empty() && !parse_bug(bug, &si, error)) return false;
    all.push_back(std::move(si));
    if (end == text.size()) break;
  }
  *out = std::move(all);
  return true;
}

namespace sim {
namespace {

// The other order of the row-order and nondeterministic variations: each step's first two k16
// windows swapped (tensor-core), chunk 8 instead of the GEMV's own.
ref::Conventions other_order(ref::Conventions c) {
  const std::array<std::uint8_t, 128> o = c.tc.k_order;
  for (unsigned i = 0; i < 32; ++i) c.tc.k_order[i] = o[i ^ 16u];
  c.gemv.chunk = c.gemv.chunk == 8 ? 16 : 8;
  return c;
}

std::vector<std::uint16_t> emulate(const ref::GemmView& v, Contract contract, const ref::Conventions& c) {
  std::vector<std::uint16_t> out(std::size_t{v.m} * v.n);
  if (contract == Contract::gemv) ref::gemm_conventions(c.gemv, v, out.data(), v.n);
  else ref::gemm_conventions(c.tc, v, ref::Arch::sm90, out.data(), v.n);
  return out;
}

// splitmix64: the nondeterministic variation's per-element draw.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

std::vector<std::uint16_t> varied_output(const ref::GemmView& v, Contract contract, const BodyStandIn& si,
                                         std::uint64_t execution) {
  if (si.variation == StandInVariation::split_k_by_m) {
    ref::Conventions c = si.conventions;
    const std::uint32_t parts = std::min((v.m + 7) / 8, v.k / 128);
    if (parts >= 2) c.tc.fold = ref::Fold::mul_add, c.gemv.mac = ref::Mac::mul_add;
    return emulate(v, contract, c);
  }
  std::vector<std::uint16_t> out = emulate(v, contract, si.conventions);
  if (si.variation == StandInVariation::row_copy) {
    for (std::uint32_t r = 1; r < v.m; ++r)
      std::copy(out.begin(), out.begin() + v.n, out.begin() + std::size_t{r} * v.n);
    return out;
  }
  const std::vector<std::uint16_t> other = emulate(v, contract, other_order(si.conventions));
  for (std::uint32_t r = 0; r < v.m; ++r)
    for (std::uint32_t col = 0; col < v.n; ++col) {
      const bool take = si.variation == StandInVariation::row_order
                            ? r % 2 == 1
                            : (mix(execution * 0x100000001B3ull ^ mix((std::uint64_t{r} << 32) | col)) & 1u) != 0;
      if (take) out[std::size_t{r} * v.n + col] = other[std::size_t{r} * v.n + col];
    }
  return out;
}

}  // namespace

std::vector<std::uint16_t> stand_in_output(const ref::GemmView& v, Contract contract, const BodyStandIn& si,
                                           std::uint64_t execution, std::string* error) {
  if (si.variation != StandInVariation::none) return varied_output(v, contract, si, execution);
  // A swapped pair of K positions reads a copy of A with the two columns exchanged.
  std::vector<std::uint16_t> a_copy;
  ref::GemmView view = v;
  if (si.bug == PlantedBug::swap_k && si.x < v.k && si.y < v.k) {
    a_copy.resize(std::size_t{v.m} * v.k);
    for (std::uint32_t r = 0; r < v.m; ++r)
      for (std::uint32_t k = 0; k < v.k; ++k) a_copy[std::size_t{r} * v.k + k] = v.a[r * v.a_row_stride + k];
    for (std::uint32_t r = 0; r < v.m; ++r)
      std::swap(a_copy[std::size_t{r} * v.k + si.x], a_copy[std::size_t{r} * v.k + si.y]);
    view = ref::gemm_view(a_copy.data(), v.k, v.w, v.s, v.m, v.n, v.k);
  }
  const std::string problem = contract == Contract::gemv ? ref::conventions_view_problem(si.conventions.gemv, view)
                                                         : ref::conventions_view_problem(si.conventions.tc, view);
  if (!problem.empty()) {
    *error = problem;
    return {};
  }
  std::vector<std::uint16_t> c(std::size_t{v.m} * v.n);
  if (contract == Contract::gemv) ref::gemm_conventions(si.conventions.gemv, view, c.data(), v.n);
  else ref::gemm_conventions(si.conventions.tc, view, ref::Arch::sm90, c.data(), v.n);
  if (si.bug == PlantedBug::flip && si.x < v.m && si.y < v.n) c[std::size_t{si.x} * v.n + si.y] ^= 1u;
  if (si.bug == PlantedBug::early_nan) {
    // The columns whose every NaN code lies in a step the scan lost take the finite decode's values.
    const std::uint32_t steps = v.k / 128;
    std::vector<std::uint32_t> lost;
    for (std::uint32_t n = 0; n < v.n; ++n) {
      bool any = false, all_lost = true;
      for (std::uint32_t k = 0; k < v.k; ++k)
        if ((v.w[std::size_t{n} * v.k + k] & 0x7F) == 0x7F) any = true, all_lost = all_lost && k / 128 + si.x < steps;
      if (any && all_lost) lost.push_back(n);
    }
    if (!lost.empty()) {
      ref::Conventions finite = si.conventions;
      finite.tc.nan = finite.gemv.nan = ref::NanCodes::finite;
      const std::vector<std::uint16_t> f = emulate(view, contract, finite);
      for (std::uint32_t n : lost)
        for (std::uint32_t r = 0; r < v.m; ++r) c[std::size_t{r} * v.n + n] = f[std::size_t{r} * v.n + n];
    }
  }
  return c;
}

}  // namespace sim
}  // namespace w8a16::device
