// SPDX-License-Identifier: MIT OR Apache-2.0
// The case line: names, validity, formatting and strict parsing (case.hpp states the format).
#include "w8a16/golden/case.hpp"

#include "w8a16/golden/files.hpp"

#include <cinttypes>
#include <cstdio>
#include <sstream>

namespace w8a16::golden {
namespace {

struct EntryName {
  EntryPoint e;
  std::string_view name;
};
constexpr EntryName kEntryNames[] = {
    {EntryPoint::gemm_pipelined, "w8a16_gemm_pipelined"},
    {EntryPoint::gemm_pipelined_m32, "w8a16_gemm_pipelined_m32"},
    {EntryPoint::gemm_pipelined_m32_strided, "w8a16_gemm_pipelined_m32_strided"},
    {EntryPoint::gemm_pipelined_m64, "w8a16_gemm_pipelined_m64"},
    {EntryPoint::gemm_pipelined_m64_strided, "w8a16_gemm_pipelined_m64_strided"},
    {EntryPoint::gemm_pipelined_by_m, "w8a16_gemm_pipelined_by_m"},
    {EntryPoint::gemv_batch4_strided, "w8a16_gemv_batch4_strided"},
    {EntryPoint::gemv_batch16_strided, "w8a16_gemv_batch16_strided"},
    {EntryPoint::gemm_packed_strided, "w8a16_gemm_packed_strided"},
};

struct DistName {
  Distribution d;
  std::string_view name;
};
constexpr DistName kDistNames[] = {
    {Distribution::activation_like, "activation_like"},
    {Distribution::wide_exponents, "wide_exponents"},
    {Distribution::cancellation, "cancellation"},
    {Distribution::specials, "specials"},
    {Distribution::pow2_scales, "pow2_scales"},
    {Distribution::special_scales, "special_scales"},
    {Distribution::ones_pow2_scales, "ones_pow2_scales"},
    {Distribution::near_overflow, "near_overflow"},
    {Distribution::tiny, "tiny"},
    {Distribution::mid_exponents, "mid_exponents"},
    {Distribution::cancellation_pairs, "cancellation_pairs"},
    {Distribution::row_specials, "row_specials"},
    {Distribution::fold_ties, "fold_ties"},
    {Distribution::zero_signs, "zero_signs"},
    {Distribution::cancelling_steps, "cancelling_steps"},
    {Distribution::every_special, "every_special"},
    {Distribution::nan_codes, "nan_codes"},
    {Distribution::lone_specials, "lone_specials"},
};

// Splits on single spaces; an empty token means doubled or leading/trailing spaces.
std::vector<std::string_view> split_spaces(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == ' ') {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

bool parse_u64_decimal(std::string_view t, std::uint64_t limit, std::uint64_t* out) {
  if (t.empty() || t.size() > 20) return false;
  std::uint64_t v = 0;
  for (char ch : t) {
    if (ch < '0' || ch > '9') return false;
    const std::uint64_t d = static_cast<std::uint64_t>(ch - '0');
    if (v > (limit - d) / 10) return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

bool parse_u64_hex(std::string_view t, std::uint64_t* out) {
  if (t.size() < 3 || t.size() > 18 || t[0] != '0' || t[1] != 'x') return false;
  std::uint64_t v = 0;
  for (char ch : t.substr(2)) {
    unsigned d;
    if (ch >= '0' && ch <= '9') d = static_cast<unsigned>(ch - '0');
    else if (ch >= 'a' && ch <= 'f') d = static_cast<unsigned>(ch - 'a' + 10);
    else if (ch >= 'A' && ch <= 'F') d = static_cast<unsigned>(ch - 'A' + 10);
    else return false;
    v = v << 4 | d;
  }
  *out = v;
  return true;
}

// "key=value" with the expected key; the value in *value.
bool take_key(std::string_view token, std::string_view key, std::string_view* value, std::string* error) {
  if (token.size() <= key.size() || token.substr(0, key.size()) != key || token[key.size()] != '=') {
    *error = "expected '" + std::string(key) + "=...' but found " + quote(token);
    return false;
  }
  *value = token.substr(key.size() + 1);
  return true;
}

bool take_u32(std::string_view token, std::string_view key, std::uint32_t* out, std::string* error) {
  std::string_view value;
  if (!take_key(token, key, &value, error)) return false;
  std::uint64_t v;
  if (!parse_u64_decimal(value, 0xFFFFFFFFu, &v)) {
    *error = std::string(key) + "=" + quote(value) + " is not a decimal number in 0..4294967295";
    return false;
  }
  *out = static_cast<std::uint32_t>(v);
  return true;
}

// "without=NAME,NAME,...": known symbols, in kKernelSymbols order, each once, at least one.
bool parse_without(std::string_view token, std::uint32_t* out, std::string* error) {
  std::string_view value;
  if (!take_key(token, "without", &value, error)) return false;
  std::uint32_t mask = 0;
  int last = -1;
  while (true) {
    const std::size_t comma = value.find(',');
    const std::string_view name = value.substr(0, comma);
    int index = -1;
    for (int i = 0; i < kKernelSymbolCount; ++i)
      if (kKernelSymbols[i] == name) index = i;
    if (index < 0) {
      *error = "without= names '" + std::string(name) + "', which is no kernel symbol of the family";
      return false;
    }
    if (index <= last) {
      *error = "without= must list each symbol once, in the family's order (" + std::string(name) + " is out of place)";
      return false;
    }
    mask |= 1u << index;
    last = index;
    if (comma == std::string_view::npos) break;
    value = value.substr(comma + 1);
  }
  *out = mask;
  return true;
}

}  // namespace

std::string_view entry_point_name(EntryPoint e) {
  for (const auto& x : kEntryNames)
    if (x.e == e) return x.name;
  return "?";
}

bool parse_entry_point(std::string_view name, EntryPoint* out) {
  for (const auto& x : kEntryNames)
    if (x.name == name) {
      *out = x.e;
      return true;
    }
  return false;
}

bool entry_point_is_contiguous(EntryPoint e) {
  return e == EntryPoint::gemm_pipelined || e == EntryPoint::gemm_pipelined_m32 ||
         e == EntryPoint::gemm_pipelined_m64 || e == EntryPoint::gemm_pipelined_by_m;
}

bool entry_point_is_gemv(EntryPoint e) {
  return e == EntryPoint::gemv_batch4_strided || e == EntryPoint::gemv_batch16_strided;
}

std::uint32_t entry_point_max_rows(EntryPoint e) {
  if (e == EntryPoint::gemv_batch4_strided) return 4;
  if (e == EntryPoint::gemv_batch16_strided) return 16;
  return 0;
}

std::string_view distribution_name(Distribution d) {
  for (const auto& x : kDistNames)
    if (x.d == d) return x.name;
  return "?";
}

bool parse_distribution(std::string_view name, Distribution* out) {
  for (const auto& x : kDistNames)
    if (x.name == name) {
      *out = x.d;
      return true;
    }
  return false;
}

int entry_point_own_symbol(EntryPoint e) {
  using detail::KernelSymbol;
  KernelSymbol s = KernelSymbol::gemm_pipelined;
  switch (e) {
    case EntryPoint::gemm_pipelined:
    case EntryPoint::gemm_pipelined_by_m: s = KernelSymbol::gemm_pipelined; break;
    case EntryPoint::gemm_pipelined_m32:
    case EntryPoint::gemm_pipelined_m32_strided: s = KernelSymbol::gemm_pipelined_m32; break;
    case EntryPoint::gemm_pipelined_m64:
    case EntryPoint::gemm_pipelined_m64_strided: s = KernelSymbol::gemm_pipelined_m64; break;
    case EntryPoint::gemv_batch4_strided: s = KernelSymbol::gemv_batch4_strided; break;
    case EntryPoint::gemv_batch16_strided: s = KernelSymbol::gemv_batch16_strided; break;
    case EntryPoint::gemm_packed_strided: s = KernelSymbol::wgmma_rows_n128_packed; break;
  }
  return static_cast<int>(s);
}

std::uint32_t entry_point_own_mask(EntryPoint e) {
  if (e == EntryPoint::gemm_packed_strided) return kPackedLayoutSymbols;
  return 1u << entry_point_own_symbol(e);
}

std::string without_text(std::uint32_t without) {
  std::string out;
  for (int i = 0; i < kKernelSymbolCount; ++i)
    if ((without >> i) & 1u) out += (out.empty() ? "" : ",") + std::string(kKernelSymbols[i]);
  return out;
}

std::string case_problem(const Case& c) {
  const auto s = [](std::uint64_t v) { return std::to_string(v); };
  if (c.gen < kCaseOldestGeneratorVersion || c.gen > kCaseGeneratorVersion)
    return "generator version gen=" + s(c.gen) +
           " is not known to this build (it replays gen=" + s(kCaseOldestGeneratorVersion) + ".." +
           s(kCaseGeneratorVersion) + "; use the w8a16check that wrote it)";
  if (c.m < 1 || c.m > kCaseMaxM) return "m=" + s(c.m) + " must be in 1.." + s(kCaseMaxM);
  if (c.n < 1 || c.n > kCaseMaxN) return "n=" + s(c.n) + " must be in 1.." + s(kCaseMaxN);
  if (c.k < 128 || c.k % 128 != 0 || c.k > kCaseMaxK)
    return "k=" + s(c.k) + " must be a positive multiple of 128 up to " + s(kCaseMaxK);
  if (c.a_row_stride < c.k || c.a_row_stride % 8 != 0)
    return "a_row_stride=" + s(c.a_row_stride) + " must be >= k=" + s(c.k) + " and a multiple of 8";
  if (c.c_row_stride < c.n) return "c_row_stride=" + s(c.c_row_stride) + " must be >= n=" + s(c.n);
  if (entry_point_is_contiguous(c.entry) && (c.a_row_stride != c.k || c.c_row_stride != c.n))
    return std::string(entry_point_name(c.entry)) + " is contiguous: a_row_stride must equal k and c_row_stride n";
  const std::uint32_t max_rows = entry_point_max_rows(c.entry);
  if (max_rows != 0 && c.m > max_rows)
    return std::string(entry_point_name(c.entry)) + " takes at most " + s(max_rows) + " rows, m=" + s(c.m);
  if (std::uint64_t{c.m} * c.a_row_stride > kCaseMaxElements ||
      std::uint64_t{c.m} * c.c_row_stride > kCaseMaxElements || std::uint64_t{c.n} * c.k > kCaseMaxElements)
    return "operands exceed " + s(kCaseMaxElements) + " elements";
  if (c.without >> kKernelSymbolCount) return "without= names a kernel symbol this build does not know";
  if (const std::uint32_t own = c.without & entry_point_own_mask(c.entry))
    return "without= takes away " + std::string(kKernelSymbols[__builtin_ctz(own)]) + ", the kernel " +
           std::string(entry_point_name(c.entry)) + " is called with";
  return {};
}

std::string format_case(const Case& c) {
  char seed[19];
  std::snprintf(seed, sizeof seed, "0x%016" PRIx64, c.seed);
  std::ostringstream o;
  o << kCaseFormatTag << ' ' << entry_point_name(c.entry) << " m=" << c.m << " n=" << c.n << " k=" << c.k
    << " a_row_stride=" << c.a_row_stride << " c_row_stride=" << c.c_row_stride << " dist=" << distribution_name(c.dist)
    << " seed=" << seed << " gen=" << c.gen;
  if (c.without != 0) o << " without=" << without_text(c.without);
  return o.str();
}

bool parse_case(std::string_view line, Case* out, std::string* error) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  const std::vector<std::string_view> t = split_spaces(line);
  if (t.empty() || t[0] != kCaseFormatTag) {
    const std::string first(t.empty() ? std::string_view{} : t[0]);
    *error = first.rfind("case/", 0) == 0 ? "line format " + quote(first) + " is not known to this build (it reads " +
                                                std::string(kCaseFormatTag) + ")"
                                          : "not a case line: it must start with '" + std::string(kCaseFormatTag) + "'";
    return false;
  }
  // An eleventh field is only ever without= (a doubled space also makes eleven, shifted ones).
  if (t.size() != 10 && !(t.size() == 11 && t[10].substr(0, 8) == "without=")) {
    *error = "expected 10 space-separated fields (" + std::string(kCaseFormatTag) +
             " ENTRY m= n= k= a_row_stride= c_row_stride= dist= seed= gen=, then optionally without=), found " +
             std::to_string(t.size());
    return false;
  }
  Case c;
  if (!parse_entry_point(t[1], &c.entry)) {
    *error = "unknown entry point " + quote(t[1]);
    return false;
  }
  if (!take_u32(t[2], "m", &c.m, error) || !take_u32(t[3], "n", &c.n, error) || !take_u32(t[4], "k", &c.k, error) ||
      !take_u32(t[5], "a_row_stride", &c.a_row_stride, error) ||
      !take_u32(t[6], "c_row_stride", &c.c_row_stride, error))
    return false;
  std::string_view value;
  if (!take_key(t[7], "dist", &value, error)) return false;
  if (!parse_distribution(value, &c.dist)) {
    *error = "unknown distribution " + quote(value);
    return false;
  }
  if (!take_key(t[8], "seed", &value, error)) return false;
  if (!parse_u64_hex(value, &c.seed)) {
    *error = "seed=" + quote(value) + " is not 0x followed by 1 to 16 hex digits";
    return false;
  }
  if (!take_u32(t[9], "gen", &c.gen, error)) return false;
  if (t.size() == 11 && !parse_without(t[10], &c.without, error)) return false;
  const std::string problem = case_problem(c);
  if (!problem.empty()) {
    *error = problem;
    return false;
  }
  *out = c;
  return true;
}

bool parse_case_text(std::string_view text, const std::string& source_name, std::vector<Case>* out,
                     std::string* error) {
  std::vector<Case> cases;
  std::size_t line_no = 0;
  while (!text.empty()) {
    const std::size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view{} : text.substr(eol + 1);
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line[0] == '#') continue;
    Case c;
    std::string why;
    if (!parse_case(line, &c, &why)) {
      *error = source_name + ":" + std::to_string(line_no) + ": " + why;
      return false;
    }
    cases.push_back(c);
  }
  *out = std::move(cases);
  return true;
}

bool read_case_file(const std::string& path, std::vector<Case>* out, std::string* error) {
  std::string text, why;
  if (!read_regular_file(path, kMaxInputFileBytes, &text, &why)) {
    *error = shown(path) + ": " + why;
    return false;
  }
  return parse_case_text(text, shown(path), out, error);
}

bool append_case_file(const std::string& path, const Case& c, const std::string& comment, std::string* error) {
  std::string text;
  std::istringstream lines(comment);
  for (std::string l; std::getline(lines, l);) text += "# " + l + "\n";
  text += format_case(c) + "\n";
  std::string why;
  if (!append_to_file(path, text, &why)) {
    *error = shown(path) + ": " + why;
    return false;
  }
  return true;
}

}  // namespace w8a16::golden
