// SPDX-License-Identifier: MIT OR Apache-2.0
// libFuzzer target for the saved-case format: golden::parse_case (one line), parse_case_text (a
// file), and the input generator behind an accepted line.
#include <algorithm>
#include <iterator>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "w8a16/golden/case.hpp"
#include "w8a16/golden/case_inputs.hpp"

namespace {

namespace golden = w8a16::golden;

[[noreturn]] void finding(const char* what, std::string_view input) {
  std::fprintf(stderr, "fuzz_case_line: invariant broken: %s\n  input: %.*s\n", what, static_cast<int>(input.size()),
               input.data());
  std::abort();
}

// Regenerating inputs allocates m * a_row_stride + n * k elements; a line may legally ask for
// 2^31 of each (case.hpp limits), which is a replay's business, not a fuzzer's. Small cases only,
// and only for the one-line path: a file's cases get the cheap checks (executions per second).
constexpr std::uint64_t kRegenerateElements = 1u << 13;

// An independent reading of an accepted line's numbers (strtoull, with its own overflow report):
// the parser must have taken exactly these values, so a wrapped or truncated number shows.
bool numbers_match(std::string_view line, const golden::Case& c) {
  std::string s(line);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  std::vector<std::string> t;
  for (std::size_t start = 0;;) {
    const std::size_t sp = s.find(' ', start);
    t.push_back(s.substr(start, sp == std::string::npos ? std::string::npos : sp - start));
    if (sp == std::string::npos) break;
    start = sp + 1;
  }
  // Ten fields, or eleven with without= (case.hpp): its names read here one by one against the
  // symbol table, so a mask the parser built wrongly shows.
  if (t.size() != 10 && t.size() != 11) return false;
  std::uint32_t without = 0;
  if (t.size() == 11) {
    if (t[10].rfind("without=", 0) != 0) return false;
    const std::string names = t[10].substr(8);
    for (std::size_t start = 0; start <= names.size();) {
      const std::size_t comma = std::min(names.find(',', start), names.size());
      const std::string name = names.substr(start, comma - start);
      std::size_t i = 0;
      while (i < std::size(golden::kKernelSymbols) && golden::kKernelSymbols[i] != name) ++i;
      if (i == std::size(golden::kKernelSymbols)) return false;
      without |= std::uint32_t{1} << i;
      start = comma + 1;
    }
  }
  if (without != c.without) return false;
  auto value = [&](std::size_t i, int base, std::uint64_t* v) {
    const std::string& tok = t[i];
    const std::size_t eq = tok.find('=');
    if (eq == std::string::npos) return false;
    std::string digits = tok.substr(eq + 1);
    if (base == 16) digits = digits.substr(2);  // "0x"
    errno = 0;
    char* end = nullptr;
    const unsigned long long x = std::strtoull(digits.c_str(), &end, base);
    if (errno == ERANGE || end != digits.c_str() + digits.size()) return false;
    *v = x;
    return true;
  };
  const std::uint32_t want32[] = {c.m, c.n, c.k, c.a_row_stride, c.c_row_stride};
  for (std::size_t i = 0; i < 5; ++i) {
    std::uint64_t v;
    if (!value(2 + i, 10, &v) || v != want32[i]) return false;
  }
  std::uint64_t seed, gen;
  return value(8, 16, &seed) && seed == c.seed && value(9, 10, &gen) && gen == c.gen &&
         t[1] == golden::entry_point_name(c.entry) && t[7] == "dist=" + std::string(golden::distribution_name(c.dist));
}

void check_accepted(const golden::Case& c, std::string_view input, bool regenerate) {
  if (!golden::case_problem(c).empty()) finding("accepted a case that case_problem() refuses", input);
  // The canonical line parses back to the same case, and formatting is a fixed point.
  const std::string line = golden::format_case(c);
  golden::Case back;
  std::string error;
  if (!golden::parse_case(line, &back, &error)) finding("format_case() output does not parse", input);
  if (back != c) finding("parse(format(case)) != case", input);
  if (golden::format_case(back) != line) finding("format_case() is not a fixed point", input);

  const std::uint64_t elems = std::uint64_t{c.m} * c.a_row_stride + std::uint64_t{c.n} * c.k;
  if (!regenerate || elems > kRegenerateElements) return;
  golden::CaseInputs in;
  if (!golden::regenerate_inputs(c, &in, &error)) finding("an accepted case does not regenerate", input);
  if (in.a_bits.size() != std::size_t{c.m} * c.a_row_stride || in.w_e4m3.size() != std::size_t{c.n} * c.k ||
      in.s_f32.size() != std::size_t{(c.n + 127) / 128} * (c.k / 128))
    finding("regenerated operands have the wrong sizes", input);
  for (std::uint32_t r = 0; r < c.m; ++r)
    for (std::uint32_t col = c.k; col < c.a_row_stride; ++col)
      if (in.a_bits[std::size_t{r} * c.a_row_stride + col] != golden::kAPaddingBits)
        finding("A's pitch padding is not the NaN kAPaddingBits", input);
  // Pure function of the line (case.hpp's stability rule): a second regeneration is bit-identical.
  golden::CaseInputs again;
  if (!golden::regenerate_inputs(c, &again, &error) || golden::inputs_digest(in) != golden::inputs_digest(again))
    finding("regenerating the same case twice gave different inputs", input);
  (void)golden::special_classes(c, in);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  // One line. On refusal: a reason, and *out untouched (a sentinel case).
  golden::Case sentinel;
  sentinel.m = 0xFEEDu;
  golden::Case c = sentinel;
  std::string error;
  if (golden::parse_case(text, &c, &error)) {
    if (!error.empty()) finding("parse_case accepted but set an error", text);
    if (!numbers_match(text, c)) finding("the parsed fields differ from an independent reading of the line", text);
    check_accepted(c, text, true);
  } else {
    if (error.empty()) finding("parse_case refused without saying why", text);
    if (c != sentinel) finding("a refused line changed the output case", text);
  }

  // The same bytes as a case file: all or nothing, and a refusal names "source:line:".
  std::vector<golden::Case> cases(1, sentinel);
  error.clear();
  if (golden::parse_case_text(text, "fuzz", &cases, &error)) {
    for (const golden::Case& one : cases) check_accepted(one, text, false);
  } else {
    if (error.rfind("fuzz:", 0) != 0) finding("parse_case_text's error does not start with 'source:line:'", text);
    if (cases.size() != 1 || cases[0] != sentinel) finding("a refused file changed the output list", text);
  }
  return 0;
}
