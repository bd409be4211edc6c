// SPDX-License-Identifier: MIT OR Apache-2.0
// The pre-timing byte check (check.hpp): samples, the emulator's bytes over them, the comparison.
#include "w8a16/bench/check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "w8a16/reference/bf16.hpp"
#include "w8a16/reference/contract.hpp"
#include "w8a16/reference/parallel.hpp"

namespace w8a16::bench {

std::vector<Range> sample_ranges(std::uint32_t extent, std::uint32_t width, std::uint32_t align) {
  std::vector<Range> r;
  auto add = [&](std::uint32_t b, std::uint32_t e) {
    b = b / align * align;
    r.push_back({b, std::min(extent, e == 0 ? b + width : e)});
  };
  add(0, 0);
  add(extent / 2, 0);
  add(extent > width ? extent - width : 0, extent);
  std::sort(r.begin(), r.end(), [](Range x, Range y) { return x.begin < y.begin; });
  std::vector<Range> merged;
  for (Range x : r) {
    if (!merged.empty() && x.begin <= merged.back().end) merged.back().end = std::max(merged.back().end, x.end);
    else merged.push_back(x);
  }
  return merged;
}

std::uint64_t Sample::elements() const {
  std::uint64_t r = 0, c = 0;
  for (Range x : rows) r += x.end - x.begin;
  for (Range x : cols) c += x.end - x.begin;
  return r * c;
}

Sample choose_sample(std::uint32_t m, Shape sh, std::uint64_t check_macs) {
  Sample s;
  if (static_cast<std::uint64_t>(m) * sh.n * sh.k <= check_macs) {
    s.full = true;
    s.rows = {{0, m}};
    s.cols = {{0, sh.n}};
    return s;
  }
  s.rows = sample_ranges(m, 8, 1);
  s.cols = sample_ranges(sh.n, 128, 128);
  return s;
}

// A full check is one call (the emulator spreads N over the cores); a subsample is split into (row
// range, 16 columns) pieces run one per core, since one 128-column block alone would keep only 8
// cores busy. A piece never crosses a 128-column boundary, so its view of S starts at its own row
// of scales.
std::vector<std::uint16_t> expected_sample(const HostInputs& in, Shape sh, const Sample& smp,
                                           device::Contract contract) {
  std::uint32_t cols = 0;
  for (Range c : smp.cols) cols += c.end - c.begin;
  std::uint32_t rows = 0;
  for (Range r : smp.rows) rows += r.end - r.begin;
  std::vector<std::uint16_t> out(static_cast<std::size_t>(rows) * cols);
  const std::uint32_t steps = sh.k / 128;
  struct Piece {
    std::uint32_t r0, rows, c0, cols, out_row, out_col;
  };
  std::vector<Piece> pieces;
  const std::uint32_t piece_cols = smp.full ? sh.n : 16;
  std::uint32_t out_row = 0;
  for (Range r : smp.rows) {
    std::uint32_t out_col = 0;
    for (Range c : smp.cols)
      for (std::uint32_t c0 = c.begin; c0 < c.end; c0 += piece_cols) {
        const std::uint32_t w = std::min(piece_cols, c.end - c0);
        pieces.push_back({r.begin, r.end - r.begin, c0, w, out_row, out_col});
        out_col += w;
      }
    out_row += r.end - r.begin;
  }
  auto run = [&](const Piece& p, unsigned threads) {
    const ref::GemmView v = ref::gemm_view(in.a.data() + static_cast<std::size_t>(p.r0) * sh.k, sh.k,
                                           in.w.data() + static_cast<std::size_t>(p.c0) * sh.k,
                                           in.s.data() + static_cast<std::size_t>(p.c0 / 128) * steps, p.rows, p.cols,
                                           sh.k);
    std::uint16_t* dst = out.data() + static_cast<std::size_t>(p.out_row) * cols + p.out_col;
    if (contract == device::Contract::gemv) ref::gemm_gemv(v, dst, cols, threads);
    else ref::gemm_canonical(v, ref::Arch::sm90, dst, cols, threads);
  };
  if (pieces.empty()) return out;
  if (smp.full) {
    run(pieces.front(), 0);
  } else {
    ref::parallel_for(static_cast<std::uint32_t>(pieces.size()), 0, [&](std::uint32_t i) { run(pieces[i], 1); });
  }
  return out;
}

const std::vector<std::uint16_t>& Expected::for_contract(device::Contract contract) {
  const std::size_t i = contract == device::Contract::gemv ? 1 : 0;
  if (!computed_[i]) {
    by_contract_[i] = expected_sample(in_, sh_, smp_, contract);
    computed_[i] = true;
  }
  return by_contract_[i];
}

Check compare_sample(const std::vector<std::uint16_t>& got, std::uint32_t pitch, const Sample& smp,
                     const std::vector<std::uint16_t>& want) {
  Check ck;
  ck.full = smp.full;
  std::size_t i = 0;
  for (Range r : smp.rows)
    for (std::uint32_t row = r.begin; row < r.end; ++row)
      for (Range c : smp.cols)
        for (std::uint32_t col = c.begin; col < c.end; ++col, ++i) {
          const std::uint16_t g = got[static_cast<std::size_t>(row) * pitch + col];
          ++ck.compared;
          if (g != want[i] && ck.mismatches++ == 0) {
            char buf[96];
            std::snprintf(buf, sizeof buf, "C[%u][%u] = 0x%04x (emulator 0x%04x)", row, col, g, want[i]);
            ck.first = buf;
          }
        }
  return ck;
}

double cublas_rel_error(const std::vector<std::uint16_t>& got, const HostInputs& in,
                        const std::vector<std::uint16_t>& wdq, Shape sh, const Sample& smp) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> idx;
  for (Range r : smp.rows)
    for (std::uint32_t row = r.begin; row < r.end; ++row)
      for (Range c : smp.cols)
        for (std::uint32_t col = c.begin; col < c.end; ++col) idx.push_back({row, col});
  std::vector<double> err2(idx.size()), ref2(idx.size());
  const auto bf = [](std::uint16_t b) {
    const std::uint32_t bits = ref::bf16_bits_to_f32_bits(b);
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return static_cast<double>(f);
  };
  ref::parallel_for(static_cast<std::uint32_t>(idx.size()), 0, [&](std::uint32_t i) {
    const auto [row, col] = idx[i];
    const std::uint16_t* a = in.a.data() + static_cast<std::size_t>(row) * sh.k;
    const std::uint16_t* w = wdq.data() + static_cast<std::size_t>(col) * sh.k;
    double acc = 0;
    for (std::uint32_t k = 0; k < sh.k; ++k) acc += bf(a[k]) * bf(w[k]);
    const double g = bf(got[static_cast<std::size_t>(row) * sh.n + col]);
    err2[i] = std::isnan(g) ? INFINITY : (g - acc) * (g - acc);
    ref2[i] = acc * acc;
  });
  double e = 0, r = 0;
  for (std::size_t i = 0; i < idx.size(); ++i) {
    e += err2[i];
    r += ref2[i];
  }
  return r > 0 ? std::sqrt(e / r) : (e > 0 ? INFINITY : 0);
}

}  // namespace w8a16::bench
