// SPDX-License-Identifier: MIT OR Apache-2.0
// The byte check before any timing: which outputs are compared with the emulator (all of them for
// small cases, else rows and 128-column scale blocks at the edges and the middle), the emulator's
// bytes there, and the comparison, raw bits against raw bits. Also cuBLAS's error against float64.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "w8a16/bench/inputs.hpp"
#include "w8a16/device/plan.hpp"

namespace w8a16::bench {

struct Range {
  std::uint32_t begin = 0, end = 0;
  friend bool operator==(Range x, Range y) { return x.begin == y.begin && x.end == y.end; }
};
// Up to three ranges of about `width` (first, middle, last) with `align`-aligned starts, merged
// where they touch; the last ends at `extent`, so a partial last block is covered too.
std::vector<Range> sample_ranges(std::uint32_t extent, std::uint32_t width, std::uint32_t align);

// The checked outputs: rows x column ranges. Column ranges start at multiples of 128, so a range's
// view of S starts at a row of scales and the emulator sees exactly the operands the kernel reads.
struct Sample {
  std::vector<Range> rows, cols;
  bool full = false;
  std::uint64_t elements() const;
};
// All of C when m * n * k <= check_macs; else 8 rows at the top, middle and bottom (the first and
// last row tiles of every body) by 128 columns (one scale row) at the left, middle and right.
Sample choose_sample(std::uint32_t m, Shape sh, std::uint64_t check_macs);

// The emulator's C over the sample (NUMERICS.md 2.1 canonical, sm90, or 2.2 GEMV order), row-major
// over (sampled rows) x (sampled columns).
std::vector<std::uint16_t> expected_sample(const HostInputs& in, Shape sh, const Sample& smp,
                                           device::Contract contract);

// The expected bytes of one (shape, M), computed on first use for each contract and kept: every
// plan of the same call compares against them.
class Expected {
 public:
  Expected(const HostInputs& in, Shape sh, Sample smp) : in_(in), sh_(sh), smp_(std::move(smp)) {}
  const Sample& sample() const { return smp_; }
  const std::vector<std::uint16_t>& for_contract(device::Contract contract);

 private:
  const HostInputs& in_;
  Shape sh_;
  Sample smp_;
  std::vector<std::uint16_t> by_contract_[2];
  bool computed_[2] = {false, false};
};

struct Check {
  std::uint64_t compared = 0, mismatches = 0;
  std::string first;  // "C[r][c] = 0x.... (emulator 0x....)"
  bool full = false;
};
// `got` is C [rows][pitch] as the device wrote it; `want` the sample's expected bytes.
Check compare_sample(const std::vector<std::uint16_t>& got, std::uint32_t pitch, const Sample& smp,
                     const std::vector<std::uint16_t>& want);

// cuBLAS's output over the same sample against float64 sums of the BF16 operands it was given:
// ||out - ref|| / ||ref||, which BF16 output rounding puts near 2^-9; any NaN makes it infinite.
double cublas_rel_error(const std::vector<std::uint16_t>& got, const HostInputs& in,
                        const std::vector<std::uint16_t>& wdq, Shape sh, const Sample& smp);
// The largest relative error a cuBLAS output may have and still count as computing the same GEMM.
inline constexpr double kCublasMaxRelError = 1e-2;

}  // namespace w8a16::bench
