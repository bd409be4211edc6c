// SPDX-License-Identifier: MIT OR Apache-2.0
// The contract as data (NUMERICS.md 2.4): the named values, the text form, and the emulation of
// every combination of the fields, element by element, straight from the pseudo-code. Plain on
// purpose, as contract.cpp is: the canonical values take contract.hpp's own paths, and the tests
// hold the two to the same bytes.
#include "w8a16/reference/conventions.hpp"

#include <algorithm>
#include <cstring>
#include <set>
#include <sstream>

#include "w8a16/reference/bf16.hpp"
#include "w8a16/reference/e4m3fn.hpp"
#include "w8a16/reference/fp32.hpp"
#include "w8a16/reference/parallel.hpp"

namespace w8a16::ref {
namespace {

constexpr std::uint32_t kMaxBias = 62;

std::uint32_t f32_mul_rne_bits(std::uint32_t a, std::uint32_t b) {
  const std::uint32_t bits = f32_to_bits(f32_from_bits(a) * f32_from_bits(b));
  return f32_bits_is_nan(bits) ? kF32CanonicalNan : bits;
}

// mac(x, y, acc): fma.rn, or mul.rn then add.rn.
std::uint32_t mac_bits(Mac mac, std::uint32_t x, std::uint32_t y, std::uint32_t acc) {
  return mac == Mac::fma ? f32_fma_rne_bits(x, y, acc) : f32_add_rne_bits(acc, f32_mul_rne_bits(x, y));
}

// 2^e as FP32 bits, |e| <= 126.
std::uint32_t pow2_bits(int e) { return static_cast<std::uint32_t>(127 + e) << 23; }

// ---- names ----------------------------------------------------------------------------------

Conventions make(std::string name, TensorCoreConventions tc, GemvConventions g) {
  Conventions c;
  c.name = std::move(name);
  c.tc = tc;
  c.gemv = g;
  return c;
}

std::vector<Conventions> build_library() {
  std::vector<Conventions> lib;
  lib.push_back(make("canonical", TensorCoreConventions{}, GemvConventions{}));

  // The seed family's public kernels as read from their sources (NUMERICS.md 2.4, "Named values"):
  // E4M3 tables with +-0 at the NaN codes; tiles that fold with one FMA where the compiler fuses
  // `acc += p * s` and with mul.rn then add.rn where it may not; a GEMV of two warps an output.
  GemvConventions seed_gemv;
  seed_gemv.nan = NanCodes::zero;
  seed_gemv.lanes = 64;
  seed_gemv.chunk = 16;
  seed_gemv.scale = GemvScale::element;
  seed_gemv.mac = Mac::mul_add;
  seed_gemv.tree = GemvTree::shfl_down;
  TensorCoreConventions seed_tile;
  seed_tile.nan = NanCodes::zero;
  lib.push_back(make("seed-tile", seed_tile, seed_gemv));
  TensorCoreConventions seed_skinny = seed_tile;
  seed_skinny.fold = Fold::mul_add;
  lib.push_back(make("seed-skinny", seed_skinny, seed_gemv));
  // The seed's row-tile kernel: W as the MMA's A operand decoded by bit placement (2^-120, NaN
  // codes as +-480), activations times 2^60, scale times 2^60; MMA (c, j) of a step, c in {0, 1},
  // j in 0..3, sums K = 64c + 16t + 4j + q for t, q in 0..3.
  TensorCoreConventions seed_rows;
  seed_rows.nan = NanCodes::finite;
  seed_rows.fold = Fold::mul_add;
  seed_rows.bias = 60;
  for (unsigned c = 0; c < 2; ++c)
    for (unsigned j = 0; j < 4; ++j)
      for (unsigned t = 0; t < 4; ++t)
        for (unsigned q = 0; q < 4; ++q)
          seed_rows.k_order[16 * (4 * c + j) + 4 * t + q] = static_cast<std::uint8_t>(64 * c + 16 * t + 4 * j + q);
  lib.push_back(make("seed-rows", seed_rows, seed_gemv));
  return lib;
}

// ---- the text form ----------------------------------------------------------------------------

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

const char* nan_name(NanCodes n) {
  switch (n) {
    case NanCodes::propagate: return "propagate";
    case NanCodes::zero: return "zero";
    case NanCodes::finite: return "finite";
  }
  return "?";
}
const char* mac_name(Mac m) { return m == Mac::mul_add ? "mul-add" : "fma"; }
const char* fold_name(Fold f) {
  switch (f) {
    case Fold::fma: return "fma";
    case Fold::mul_add: return "mul-add";
    case Fold::prescale: return "prescale";
  }
  return "?";
}
const char* period_name(FoldPeriod p) { return p == FoldPeriod::end ? "end" : "step"; }
const char* scales_name(ScaleFormat f) { return f == ScaleFormat::bf16 ? "bf16" : "fp32"; }
bool parse_scales(std::string_view v, ScaleFormat* out) {
  if (v == "fp32") return *out = ScaleFormat::fp32, true;
  if (v == "bf16") return *out = ScaleFormat::bf16, true;
  return false;
}
const char* scale_name(GemvScale s) { return s == GemvScale::element ? "element" : "chunk"; }
const char* tree_name(GemvTree t) { return t == GemvTree::shfl_down ? "down" : "xor"; }

bool parse_nan(std::string_view v, NanCodes* out) {
  if (v == "propagate") return *out = NanCodes::propagate, true;
  if (v == "zero") return *out = NanCodes::zero, true;
  if (v == "finite") return *out = NanCodes::finite, true;
  return false;
}
bool parse_mac(std::string_view v, Mac* out) {
  if (v == "fma") return *out = Mac::fma, true;
  if (v == "mul-add") return *out = Mac::mul_add, true;
  return false;
}
bool parse_fold(std::string_view v, Fold* out) {
  if (v == "fma") return *out = Fold::fma, true;
  if (v == "mul-add") return *out = Fold::mul_add, true;
  if (v == "prescale") return *out = Fold::prescale, true;
  return false;
}
bool parse_period(std::string_view v, FoldPeriod* out) {
  if (v == "step") return *out = FoldPeriod::step, true;
  if (v == "end") return *out = FoldPeriod::end, true;
  return false;
}
bool parse_scale(std::string_view v, GemvScale* out) {
  if (v == "chunk") return *out = GemvScale::chunk, true;
  if (v == "element") return *out = GemvScale::element, true;
  return false;
}
bool parse_tree(std::string_view v, GemvTree* out) {
  if (v == "xor") return *out = GemvTree::xor_butterfly, true;
  if (v == "down") return *out = GemvTree::shfl_down, true;
  return false;
}
bool parse_u32(std::string_view v, std::uint32_t* out) {
  if (v.empty() || v.size() > 9) return false;
  std::uint32_t x = 0;
  for (char ch : v) {
    if (ch < '0' || ch > '9') return false;
    x = x * 10 + static_cast<std::uint32_t>(ch - '0');
  }
  *out = x;
  return true;
}

// "contiguous" or 128 integers separated by spaces or commas that form a permutation of 0..127.
bool parse_k_order(std::string_view v, std::array<std::uint8_t, 128>* out, std::string* why) {
  if (v == "contiguous") {
    *out = TensorCoreConventions::identity_k_order();
    return true;
  }
  std::array<std::uint8_t, 128> o{};
  std::array<bool, 128> seen{};
  std::size_t count = 0, i = 0;
  while (i < v.size()) {
    while (i < v.size() && (v[i] == ' ' || v[i] == ',' || v[i] == '\t')) ++i;
    if (i == v.size()) break;
    std::size_t j = i;
    while (j < v.size() && v[j] != ' ' && v[j] != ',' && v[j] != '\t') ++j;
    std::uint32_t x = 0;
    if (!parse_u32(v.substr(i, j - i), &x) || x > 127) {
      *why = "'" + std::string(v.substr(i, j - i)) + "' is not a K position 0..127";
      return false;
    }
    if (count == 128) {
      *why = "more than 128 positions";
      return false;
    }
    if (seen[x]) {
      *why = "position " + std::to_string(x) + " appears twice";
      return false;
    }
    seen[x] = true;
    o[count++] = static_cast<std::uint8_t>(x);
    i = j;
  }
  if (count != 128) {
    *why = std::to_string(count) + " positions; a step has 128";
    return false;
  }
  *out = o;
  return true;
}

}  // namespace

const std::vector<Conventions>& conventions_library() {
  static const std::vector<Conventions> lib = build_library();
  return lib;
}

const Conventions& canonical_conventions() { return conventions_library().front(); }

const Conventions* find_conventions(std::string_view name) {
  for (const Conventions& c : conventions_library())
    if (c.name == name) return &c;
  return nullptr;
}

bool parse_conventions(std::string_view text, Conventions* out, std::string* error) {
  // Two passes: `base` first (wherever it stands), then the fields over it.
  struct Line {
    std::size_t number;
    std::string key, value;
  };
  std::vector<Line> lines;
  std::set<std::string> keys;
  std::size_t number = 0, pos = 0;
  if (text.find('\0') != std::string_view::npos) {
    *error = "a contract file is text: it holds a NUL byte";
    return false;
  }
  while (pos <= text.size()) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++number;
    if (const std::size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    line = trim(line);
    if (line.empty()) {
      if (end == text.size()) break;
      continue;
    }
    const std::size_t eq = line.find('=');
    if (eq == std::string_view::npos) {
      *error = "line " + std::to_string(number) + ": '" + std::string(line) + "' is not `key = value`";
      return false;
    }
    Line l{number, std::string(trim(line.substr(0, eq))), std::string(trim(line.substr(eq + 1)))};
    if (!keys.insert(l.key).second) {
      *error = "line " + std::to_string(number) + ": `" + l.key + "` is given twice";
      return false;
    }
    lines.push_back(std::move(l));
    if (end == text.size()) break;
  }
  Conventions c = canonical_conventions();
  for (const Line& l : lines) {
    if (l.key != "base") continue;
    const Conventions* base = find_conventions(l.value);
    if (!base) {
      std::string names;
      for (const Conventions& k : conventions_library()) names += (names.empty() ? "" : ", ") + k.name;
      *error = "line " + std::to_string(l.number) + ": base `" + l.value + "` is not a named contract (" + names + ")";
      return false;
    }
    c = *base;
  }
  bool named = false;
  for (const Line& l : lines) {
    const std::string at = "line " + std::to_string(l.number) + ": ";
    bool ok = true;
    std::string why;
    if (l.key == "base") continue;
    if (l.key == "contract") {
      ok = !l.value.empty() && l.value.find_first_of(" \t,") == std::string::npos;
      why = "a contract's name is one word";
      if (ok) c.name = l.value, named = true;
    } else if (l.key == "tc.nan") {
      ok = parse_nan(l.value, &c.tc.nan), why = "tc.nan is propagate, zero or finite";
    } else if (l.key == "tc.fold") {
      ok = parse_fold(l.value, &c.tc.fold), why = "tc.fold is fma, mul-add or prescale";
    } else if (l.key == "tc.period") {
      ok = parse_period(l.value, &c.tc.period), why = "tc.period is step or end";
    } else if (l.key == "tc.bias") {
      std::uint32_t x = 0;
      ok = parse_u32(l.value, &x) && x <= kMaxBias;
      why = "tc.bias is an exponent 0.." + std::to_string(kMaxBias);
      if (ok) c.tc.bias = x;
    } else if (l.key == "tc.scales") {
      ok = parse_scales(l.value, &c.tc.scales), why = "tc.scales is fp32 or bf16";
    } else if (l.key == "gemv.mac") {
      ok = parse_mac(l.value, &c.gemv.mac), why = "gemv.mac is fma or mul-add";
    } else if (l.key == "tc.k-order") {
      ok = parse_k_order(l.value, &c.tc.k_order, &why);
      why = "tc.k-order: " + why;
    } else if (l.key == "gemv.nan") {
      ok = parse_nan(l.value, &c.gemv.nan), why = "gemv.nan is propagate, zero or finite";
    } else if (l.key == "gemv.lanes") {
      std::uint32_t x = 0;
      ok = parse_u32(l.value, &x) && x >= 32 && x <= 1024 && x % 32 == 0;
      why = "gemv.lanes is a multiple of 32 from 32 to 1024";
      if (ok) c.gemv.lanes = x;
    } else if (l.key == "gemv.chunk") {
      std::uint32_t x = 0;
      ok = parse_u32(l.value, &x) && x >= 1 && x <= 128 && 128 % x == 0;
      why = "gemv.chunk divides 128 (1, 2, 4, 8, 16, 32, 64 or 128)";
      if (ok) c.gemv.chunk = x;
    } else if (l.key == "gemv.scale") {
      ok = parse_scale(l.value, &c.gemv.scale), why = "gemv.scale is chunk or element";
    } else if (l.key == "gemv.tree") {
      ok = parse_tree(l.value, &c.gemv.tree), why = "gemv.tree is xor or down";
    } else {
      ok = false;
      why = "unknown key `" + l.key +
            "` (contract, base, tc.nan, tc.fold, tc.period, tc.bias, tc.scales, tc.k-order, gemv.nan, gemv.lanes, "
            "gemv.chunk, gemv.scale, gemv.mac, gemv.tree)";
    }
    if (!ok) {
      *error = at + why + (l.key == "tc.k-order" || why.rfind("unknown", 0) == 0 ? "" : ", not `" + l.value + "`");
      return false;
    }
  }
  if (named) {
    // A library name is a fact about the fields: a file may call itself `canonical` only when it
    // keeps canonical's every field, since every report prints the name for them.
    if (const Conventions* lib = find_conventions(c.name); lib && !lib->same_numerics(c)) {
      const std::string mine = format_conventions(c), theirs = format_conventions(*lib);
      std::string first;
      std::istringstream a(mine), b(theirs);
      for (std::string x, y; std::getline(a, x) && std::getline(b, y);)
        if (x != y && x.rfind("contract", 0) != 0) {
          first = "`" + x + "` where " + c.name + " has `" + y + "`";
          break;
        }
      *error = "contract `" + c.name + "` is a named contract of the library, but this file's fields differ from it (" +
               first + "): name it otherwise, or take it as `base = " + c.name + "`";
      return false;
    }
  } else {
    // A file that names no contract is called by the library value it equals, else by its fields.
    c.name.clear();
    for (const Conventions& k : conventions_library())
      if (k.same_numerics(c)) c.name = k.name;
    if (c.name.empty()) c.name = "custom";
  }
  *out = std::move(c);
  return true;
}

std::vector<std::pair<std::string, std::string>> conventions_fields(const Conventions& c) {
  std::string order;
  if (c.tc.contiguous()) {
    order = "contiguous";
  } else {
    for (unsigned i = 0; i < 128; ++i) order += (i ? " " : "") + std::to_string(unsigned{c.tc.k_order[i]});
  }
  return {{"tc.nan", nan_name(c.tc.nan)},
          {"tc.fold", fold_name(c.tc.fold)},
          {"tc.period", period_name(c.tc.period)},
          {"tc.bias", std::to_string(c.tc.bias)},
          {"tc.scales", scales_name(c.tc.scales)},
          {"tc.k-order", order},
          {"gemv.nan", nan_name(c.gemv.nan)},
          {"gemv.lanes", std::to_string(c.gemv.lanes)},
          {"gemv.chunk", std::to_string(c.gemv.chunk)},
          {"gemv.scale", scale_name(c.gemv.scale)},
          {"gemv.mac", mac_name(c.gemv.mac)},
          {"gemv.tree", tree_name(c.gemv.tree)}};
}

std::string format_conventions(const Conventions& c) {
  std::ostringstream o;
  // A name is one word (parse_conventions' rule); a description or a list of names is kept as a
  // comment, so that the text always parses back.
  const bool one_word = !c.name.empty() && c.name.find_first_of(" \t,=#") == std::string::npos;
  if (!one_word && !c.name.empty()) o << "# " << c.name << "\n";
  o << "contract = " << (one_word ? c.name : "custom") << "\n";
  for (const auto& [key, value] : conventions_fields(c)) o << key << " = " << value << "\n";
  return o.str();
}

std::string describe(const TensorCoreConventions& tc) {
  std::string s = std::string("nan=") + nan_name(tc.nan) + " fold=" + fold_name(tc.fold) +
                  " period=" + period_name(tc.period) + (tc.bias ? " bias=" + std::to_string(tc.bias) : "") +
                  (tc.scales == ScaleFormat::bf16 ? " scales=bf16" : "") + " k-order=";
  if (tc.contiguous()) return s + "contiguous";
  // The first window's positions identify a permutation well enough for a report line.
  s += "permuted(";
  for (unsigned i = 0; i < 16; ++i) s += (i ? "," : "") + std::to_string(tc.k_order[i]);
  return s + ",...)";
}

std::string describe(const GemvConventions& g) {
  return std::string("nan=") + nan_name(g.nan) + " lanes=" + std::to_string(g.lanes) +
         " chunk=" + std::to_string(g.chunk) + " scale=" + scale_name(g.scale) + " mac=" + mac_name(g.mac) +
         " tree=" + tree_name(g.tree);
}

std::string conventions_view_problem(const TensorCoreConventions& tc, const GemmView& v) {
  if (const char* p = gemm_view_problem(v)) return p;
  if (tc.period != FoldPeriod::end || tc.fold == Fold::prescale) return "";
  // One fold at the end applies one scale to the whole K range: defined only where every block
  // of a row of blocks has the same scale (bit for bit), as a per-channel kernel's S would.
  for (std::uint32_t u = 0; u < v.scale_rows(); ++u)
    for (std::uint32_t s = 1; s < v.k_steps(); ++s) {
      const std::uint32_t a = f32_to_bits(v.s[std::size_t{u} * v.k_steps()]);
      const std::uint32_t b = f32_to_bits(v.s[std::size_t{u} * v.k_steps() + s]);
      if (a != b)
        return "tc.period = end (one fold at the end, per-channel scales) needs every scale of a block row equal, "
               "but S[" +
               std::to_string(u) + "][0] and S[" + std::to_string(u) + "][" + std::to_string(s) + "] differ";
    }
  return "";
}

std::string conventions_view_problem(const GemvConventions& g, const GemmView& v) {
  if (const char* p = gemm_view_problem(v)) return p;
  if (g.lanes == 0 || g.lanes % 32 != 0 || g.chunk == 0 || 128 % g.chunk != 0) return "gemv conventions out of range";
  return "";
}

std::uint16_t decode_weight_bf16(NanCodes nan, std::uint8_t code) {
  if (!e4m3fn_is_nan(code) || nan == NanCodes::propagate) return e4m3fn_to_bf16_bits(code);
  const auto sign = static_cast<std::uint16_t>((code & 0x80) << 8);
  // finite: exponent field 15, fraction 7 read as a normal: 1.875 * 2^8 = 480 (BF16 0x43F0).
  return nan == NanCodes::zero ? sign : static_cast<std::uint16_t>(sign | 0x43F0);
}

// ---- the tensor-core tiers --------------------------------------------------------------------
//
//   b(k) = decode(W[n][k])                           # tc.nan
//   if fold == prescale: b(k) = cvt.rn.bf16(mul.rn(b(k), S[n/128][k/128]))
//   a(k) = A[m][k]; s(step) = S[n/128][step] (tc.scales = bf16: cvt.rn.bf16 of it, before any use)
//   if bias: a(k) = cvt.rn.bf16(a(k) * 2^bias); b(k) = b(k) * 2^-2bias; s = mul.rn(s, 2^bias)
//   for s in steps:                                  # period step; period end: one chain over K
//     p = +0 (period end: p carries on from the previous step)
//     for j in 0..7: p = MMA17(p, a(128s + o[16j..16j+15]), b(128s + o[16j..16j+15]))
//     acc = fold(p, s(step), acc)
TcTrace tc_trace(const TensorCoreConventions& tc, const GemmView& v, Arch arch, std::uint32_t m, std::uint32_t n) {
  TcTrace t;
  const std::uint16_t* a_row = v.a + static_cast<std::size_t>(m) * v.a_row_stride;
  const std::uint8_t* w_row = v.w + static_cast<std::size_t>(n) * v.k;
  const bool end = tc.period == FoldPeriod::end;
  const int bias = static_cast<int>(std::min(tc.bias, kMaxBias));
  auto biased = [&](std::uint16_t bf16, int e) {
    return bias == 0 ? bf16 : f32_bits_to_bf16_rne(f32_mul_rne_bits(bf16_bits_to_f32_bits(bf16), pow2_bits(e)));
  };
  // tc.scales = bf16: each scale rounded to BF16 before any use (NaN stays NaN).
  auto scale_at = [&](std::uint32_t step) {
    const std::uint32_t s = f32_to_bits(v.scale(n, step));
    return tc.scales == ScaleFormat::bf16 ? bf16_bits_to_f32_bits(f32_bits_to_bf16_rne(s)) : s;
  };
  auto fold_scale = [&](std::uint32_t step) {
    const std::uint32_t s = scale_at(step);
    return bias == 0 ? s : f32_mul_rne_bits(s, pow2_bits(bias));
  };
  std::uint32_t acc = 0, p = 0;  // +0.0f
  t.window_partials.reserve(std::size_t{v.k_steps()} * 8);
  auto fold = [&](std::uint32_t partial, std::uint32_t scale_bits) {
    switch (tc.fold) {
      case Fold::fma: acc = f32_fma_rne_bits(partial, scale_bits, acc); break;
      case Fold::mul_add: acc = f32_add_rne_bits(acc, f32_mul_rne_bits(partial, scale_bits)); break;
      case Fold::prescale: acc = f32_add_rne_bits(acc, partial); break;
    }
    t.fold_acc.push_back(acc);
  };
  for (std::uint32_t s = 0; s < v.k_steps(); ++s) {
    const std::uint32_t scale_bits = scale_at(s);
    if (!end) p = 0;
    for (std::uint32_t j = 0; j < 8; ++j) {
      std::uint16_t a[16], b[16];
      for (std::uint32_t e = 0; e < 16; ++e) {
        const std::uint32_t k = s * kKStep + tc.k_order[16 * j + e];
        a[e] = biased(a_row[k], bias);
        b[e] = decode_weight_bf16(tc.nan, w_row[k]);
        if (tc.fold == Fold::prescale)
          b[e] = f32_bits_to_bf16_rne(f32_mul_rne_bits(bf16_bits_to_f32_bits(b[e]), scale_bits));
        b[e] = biased(b[e], -2 * bias);
      }
      p = mma_k16_bits(arch, p, a, b);
      t.window_partials.push_back(p);
    }
    if (!end) fold(p, fold_scale(s));
  }
  if (end) fold(p, fold_scale(0));
  t.acc = acc;
  return t;
}

std::uint32_t tc_acc_bits(const TensorCoreConventions& tc, const GemmView& v, Arch arch, std::uint32_t m,
                          std::uint32_t n) {
  if (tc == TensorCoreConventions{}) return canonical_acc_bits(v, arch, m, n, v.k_steps());
  return tc_trace(tc, v, arch, m, n).acc;
}

std::uint16_t tc_element_bf16(const TensorCoreConventions& tc, const GemmView& v, Arch arch, std::uint32_t m,
                              std::uint32_t n) {
  return f32_bits_to_bf16_rne(tc_acc_bits(tc, v, arch, m, n));
}

// ---- the GEMV -----------------------------------------------------------------------------------
//
//   lane l (0 .. lanes-1) takes chunks c = l, l + lanes, ... < K/chunk in increasing c:
//     scale chunk:   p = +0; for k in chunk: p = mac(A, w(k), p); acc[l] = mac(p, S, acc[l])
//     scale element: for k in chunk: acc[l] = mac(A, mul.rn(w(k), S), acc[l])
//   mac(x, y, acc) = fma.rn(x, y, acc), or add.rn(acc, mul.rn(x, y)) (gemv.mac)
//   each warp: tree over its 32 lanes (xor butterfly or shuffle-down), its sum in lane 0
//   r = warp 0's sum; r = add.rn(r, warp i's sum) for i = 1 .. warps-1
GemvTrace gemv_trace(const GemvConventions& g, const GemmView& v, std::uint32_t m, std::uint32_t n) {
  GemvTrace t;
  const std::uint16_t* a_row = v.a + static_cast<std::size_t>(m) * v.a_row_stride;
  const std::uint8_t* w_row = v.w + static_cast<std::size_t>(n) * v.k;
  const std::uint32_t chunks = v.k / g.chunk;
  t.lane_acc.assign(g.lanes, 0);
  for (std::uint32_t lane = 0; lane < g.lanes; ++lane) {
    std::uint32_t acc = 0;
    for (std::uint32_t c = lane; c < chunks; c += g.lanes) {
      const std::uint32_t scale_bits = f32_to_bits(v.scale(n, c * g.chunk / kKStep));
      std::uint32_t p = 0;
      for (std::uint32_t j = 0; j < g.chunk; ++j) {
        const std::uint32_t k = c * g.chunk + j;
        const std::uint32_t a = bf16_bits_to_f32_bits(a_row[k]);
        const std::uint32_t w = bf16_bits_to_f32_bits(decode_weight_bf16(g.nan, w_row[k]));
        if (g.scale == GemvScale::chunk) p = mac_bits(g.mac, a, w, p);
        else acc = mac_bits(g.mac, a, f32_mul_rne_bits(w, scale_bits), acc);
      }
      if (g.scale == GemvScale::chunk) acc = mac_bits(g.mac, p, scale_bits, acc);
    }
    t.lane_acc[lane] = acc;
  }
  std::vector<std::uint32_t> val = t.lane_acc;
  for (std::uint32_t off = 16; off >= 1; off /= 2) {
    std::vector<std::uint32_t> next(g.lanes);
    for (std::uint32_t lane = 0; lane < g.lanes; ++lane) {
      const std::uint32_t base = lane & ~31u, l = lane & 31u;
      std::uint32_t src;
      if (g.tree == GemvTree::xor_butterfly) src = base + (l ^ off);
      else src = l + off < 32 ? lane + off : lane;  // shfl.sync.down: past the warp, a lane reads itself
      next[lane] = f32_add_rne_bits(val[lane], val[src]);
    }
    val = std::move(next);
    t.tree_level.push_back(val);
  }
  for (std::uint32_t w = 0; w < g.lanes / 32; ++w) t.warp_sum.push_back(val[32 * w]);
  std::uint32_t r = t.warp_sum[0];
  for (std::size_t w = 1; w < t.warp_sum.size(); ++w) r = f32_add_rne_bits(r, t.warp_sum[w]);
  t.acc = r;
  return t;
}

std::uint32_t gemv_conv_acc_bits(const GemvConventions& g, const GemmView& v, std::uint32_t m, std::uint32_t n) {
  if (g == GemvConventions{}) return gemv_acc_bits(v, m, n);
  return gemv_trace(g, v, m, n).acc;
}

std::uint16_t gemv_conv_element_bf16(const GemvConventions& g, const GemmView& v, std::uint32_t m, std::uint32_t n) {
  return f32_bits_to_bf16_rne(gemv_conv_acc_bits(g, v, m, n));
}

namespace {
// Every element once, by one thread, in blocks of 64 columns of one row: a one-row output keeps
// every core busy too.
template <class Body>
void for_each_block(const GemmView& v, unsigned threads, Body&& body) {
  const std::uint32_t blocks = (v.n + 63) / 64;
  parallel_for(std::uint64_t{v.m} * blocks, threads, [&](std::uint64_t i) {
    const auto m = static_cast<std::uint32_t>(i / blocks), n0 = static_cast<std::uint32_t>(i % blocks) * 64;
    for (std::uint32_t n = n0; n < std::min(v.n, n0 + 64); ++n) body(m, n);
  });
}
}  // namespace

void gemm_conventions(const TensorCoreConventions& tc, const GemmView& v, Arch arch, std::uint16_t* c,
                      std::size_t c_row_stride, unsigned threads) {
  if (tc == TensorCoreConventions{}) return gemm_canonical(v, arch, c, c_row_stride, threads);
  for_each_block(v, threads, [&](std::uint32_t m, std::uint32_t n) {
    c[m * c_row_stride + n] = tc_element_bf16(tc, v, arch, m, n);
  });
}

void gemm_conventions(const GemvConventions& g, const GemmView& v, std::uint16_t* c, std::size_t c_row_stride,
                      unsigned threads) {
  if (g == GemvConventions{}) return gemm_gemv(v, c, c_row_stride, threads);
  for_each_block(v, threads, [&](std::uint32_t m, std::uint32_t n) {
    c[m * c_row_stride + n] = gemv_conv_element_bf16(g, v, m, n);
  });
}

}  // namespace w8a16::ref
