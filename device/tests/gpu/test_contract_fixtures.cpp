// SPDX-License-Identifier: MIT OR Apache-2.0
// `w8a16check identify` (properties/identify.hpp) against kernels that keep another contract on
// purpose, on the GPU: each module of contract_fixtures.cu replaces family symbols of the embedded
// module with a kernel that is correct under its own contract, and identify must say which:
//   - the prescaled BF16 GEMM (w8a16_gemm_pipelined): exactly tc.nan = propagate, tc.fold = prescale,
//     tc.period = end, tc.bias = 0, tc.scales = bf16, contiguous K (NUMERICS.md 2.4);
//   - the split-K GEMV (both GEMV symbols): no value of 2.4 has a K split, so KEEPS NONE, with the
//     first element the nearest candidate gives otherwise, on bytes that are the split's exactly;
//   - the embedded module's w8a16_gemm_pipelined: canonical (the control).
// Each runs identify as `w8a16check identify --entry E --body B` does (run_identify.cpp): one entry
// point and one body, the probes and the confirmation, the candidates emulated on every core.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "w8a16/device/cuda_backend.hpp"
#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/properties/case_runner.hpp"
#include "w8a16/properties/identify.hpp"
#include "w8a16/properties/launcher.hpp"
#include "w8a16/reference/bf16.hpp"
#include "w8a16/reference/conventions.hpp"
#include "w8a16/reference/e4m3fn.hpp"
#include "w8a16/reference/fp32.hpp"

namespace {

namespace fs = std::filesystem;
using namespace w8a16;

constexpr std::uint64_t kSeed = 0x1de7;  // the CLI's default --seed

fs::path beside_this_binary(const std::string& name) {
  std::error_code ec;
  return fs::read_symlink("/proc/self/exe", ec).parent_path() / name;
}

// ---- the split-K GEMV of contract_fixtures.cu, on the host ------------------------------------
// The same rule and the same operations, from the reference's FP32 pieces (fma.rn, add.rn,
// cvt.rn.bf16: NUMERICS.md 1.2).

// The largest divisor of K/128 that is at most min(4, max(1, K/512)).
std::uint32_t split_count(std::uint32_t k) {
  const std::uint32_t steps = k / ref::kKStep;
  std::uint32_t most = std::max<std::uint32_t>(1, std::min<std::uint32_t>(4, k / 512));
  while (steps % most != 0) --most;
  return most;
}

// One split's partial: the canonical GEMV order (NUMERICS.md 2.2) over K in [k_begin, k_begin + len).
std::uint32_t split_partial_bits(const ref::GemmView& v, std::uint32_t m, std::uint32_t n, std::uint32_t k_begin,
                                 std::uint32_t len) {
  const std::uint16_t* a = v.a + std::size_t{m} * v.a_row_stride;
  const std::uint8_t* w = v.w + std::size_t{n} * v.k;
  std::uint32_t lane_acc[32];
  for (std::uint32_t lane = 0; lane < 32; ++lane) {
    std::uint32_t acc = 0;
    for (std::uint32_t c = lane; c < len / 16; c += 32) {
      const std::uint32_t k0 = k_begin + 16 * c;
      std::uint32_t p = 0;
      for (std::uint32_t j = 0; j < 16; ++j)
        p = ref::f32_fma_rne_bits(ref::bf16_bits_to_f32_bits(a[k0 + j]),
                                  ref::bf16_bits_to_f32_bits(ref::e4m3fn_to_bf16_bits(w[k0 + j])), p);
      acc = ref::f32_fma_rne_bits(p, ref::f32_to_bits(v.scale(n, k0 / ref::kKStep)), acc);
    }
    lane_acc[lane] = acc;
  }
  for (std::uint32_t off = 16; off >= 1; off /= 2) {
    std::uint32_t next[32];
    for (std::uint32_t lane = 0; lane < 32; ++lane)
      next[lane] = ref::f32_add_rne_bits(lane_acc[lane], lane_acc[lane ^ off]);
    std::copy(next, next + 32, lane_acc);
  }
  return lane_acc[0];
}

std::uint16_t split_k_element(const ref::GemmView& v, std::uint32_t m, std::uint32_t n) {
  const std::uint32_t splits = split_count(v.k), len = v.k / splits;
  std::uint32_t r = split_partial_bits(v, m, n, 0, len);
  for (std::uint32_t i = 1; i < splits; ++i) r = ref::f32_add_rne_bits(r, split_partial_bits(v, m, n, i * len, len));
  return ref::f32_bits_to_bf16_rne(r);
}

// ---- the fixture ---------------------------------------------------------------------------------

class ContractFixtures : public ::testing::Test {
 protected:
  // module "": the embedded one. GTEST_SKIP here returns from open alone: the tests return when IsSkipped().
  void open(const std::string& module) {
    device::Status st;
    if (module.empty()) {
      backend_ = device::CudaBackend::create(0, &st);
    } else {
      const fs::path path = beside_this_binary(module);
      if (!fs::is_regular_file(path))
        GTEST_SKIP() << path << " is not beside this binary (tools/gpu-build puts it there)";
      backend_ = device::CudaBackend::create_from_file(0, path.string(), &st);
    }
    if (!backend_)
      GTEST_SKIP() << "GPU test skipped: no usable CUDA device, or "
                   << (module.empty() ? std::string("the embedded module") : module) << ": " << st.message;
    launcher_ = std::make_unique<props::InProcessLauncher>(*backend_);
  }
  // identify over one entry point and one body (the CLI's --entry E --body B): one verdict, one body.
  props::EntryVerdict identify_one(golden::EntryPoint e, device::Body b) {
    std::vector<props::EntryProbes> plan = props::identify_plan(backend_->registry(), backend_->limits(), {e}, kSeed);
    EXPECT_EQ(plan.size(), 1u);
    if (plan.empty()) return {};
    props::keep_bodies(&plan.front(), {b});
    EXPECT_EQ(plan.front().bodies, std::vector<device::Body>{b})
        << golden::entry_point_name(e) << " reaches no " << device::body_name(b) << " on this GPU";
    bool hung = false;
    std::vector<props::EntryVerdict> v = props::identify(*launcher_, plan, 0, &hung);
    EXPECT_FALSE(hung);
    EXPECT_EQ(v.size(), 1u);
    if (v.size() != 1) return {};
    text_ = props::identify_text(v);
    return v.front();
  }
  std::unique_ptr<device::CudaBackend> backend_;
  std::unique_ptr<props::InProcessLauncher> launcher_;
  std::string text_;  // identify's report, for failure messages
};

// The tensor-core part of what a body keeps, named by its one kept candidate.
const ref::TensorCoreConventions* kept_tc(const props::BodyVerdict& bv) {
  if (bv.match.keeps.size() != 1 || bv.match.keeps.front() >= bv.candidates.size()) return nullptr;
  return &bv.candidates[bv.match.keeps.front()].conventions.tc;
}

TEST_F(ContractFixtures, ThePrescaledBf16GemmIsNamedPrescaleAtTheEndWithBf16Scales) {
  open("w8a16_fixture_prescale_bf16.fatbin");
  if (IsSkipped()) return;
  const props::EntryVerdict ev = identify_one(golden::EntryPoint::gemm_pipelined, device::Body::gemm128_tile);
  ASSERT_EQ(ev.bodies.size(), 1u) << text_;
  const props::BodyVerdict& bv = ev.bodies.front();
  ASSERT_TRUE(bv.error.empty()) << bv.error;
  EXPECT_TRUE(bv.confirm_failure.empty()) << text_;
  EXPECT_GT(bv.confirm_cases, 0u) << text_;
  EXPECT_TRUE(bv.order.determined) << bv.order.why;
  ref::TensorCoreConventions want;  // NUMERICS.md 2.4: every field but these three is canonical's
  want.fold = ref::Fold::prescale;
  want.period = ref::FoldPeriod::end;
  want.scales = ref::ScaleFormat::bf16;
  const ref::TensorCoreConventions* got = kept_tc(bv);
  ASSERT_NE(got, nullptr) << "not exactly one candidate kept:\n" << text_;
  EXPECT_EQ(got->nan, ref::NanCodes::propagate);
  EXPECT_EQ(got->fold, ref::Fold::prescale);
  EXPECT_EQ(got->period, ref::FoldPeriod::end);
  EXPECT_EQ(got->bias, 0u);
  EXPECT_EQ(got->scales, ref::ScaleFormat::bf16);
  EXPECT_TRUE(got->contiguous());
  EXPECT_EQ(*got, want) << ref::describe(*got);
  EXPECT_EQ(bv.keeps, std::vector<std::string>{ref::describe(want)}) << text_;
  EXPECT_TRUE(ev.ok()) << text_;
}

TEST_F(ContractFixtures, TheSplitKGemvKeepsNoContractAndTheFirstDifferingElementIsNamed) {
  open("w8a16_fixture_split_k_gemv.fatbin");
  if (IsSkipped()) return;
  const props::EntryVerdict ev = identify_one(golden::EntryPoint::gemv_batch4_strided, device::Body::gemv_strip);
  ASSERT_EQ(ev.bodies.size(), 1u) << text_;
  const props::BodyVerdict& bv = ev.bodies.front();
  ASSERT_TRUE(bv.error.empty()) << bv.error;
  EXPECT_TRUE(bv.gemv);
  EXPECT_TRUE(bv.keeps.empty()) << text_;
  EXPECT_TRUE(bv.match.keeps.empty()) << text_;
  EXPECT_FALSE(ev.ok());
  EXPECT_NE(text_.find("KEEPS NONE"), std::string::npos) << text_;
  ASSERT_LT(bv.match.nearest, bv.candidates.size()) << text_;
  const props::IdentifyCandidate& nearest = bv.candidates[bv.match.nearest];
  if (!bv.confirm_failure.empty()) {
    // The probes kept a candidate that the confirmation refuted: its line names the element.
    EXPECT_NE(bv.confirm_failure.find("C["), std::string::npos) << bv.confirm_failure;
    return;
  }
  ASSERT_GT(bv.match.nearest_total, 0u) << text_;
  // The first probe the nearest candidate misses, launched again: every element must be the split's
  // (the fixture is the split, not a defect), and the first element where the nearest candidate
  // gives other bytes is reported.
  std::size_t pi = 0;
  while (pi < bv.match.nearest_differ.size() && bv.match.nearest_differ[pi] == 0) ++pi;
  ASSERT_LT(pi, bv.probes.size()) << text_;
  const golden::Case& c = bv.probes[pi];
  golden::CaseInputs in;
  std::string why;
  if (bv.probe_data[pi].rfind("gemv_split", 0) == 0) in = props::gemv_split_inputs(c, c.seed);
  else ASSERT_TRUE(golden::regenerate_inputs(c, &in, &why)) << why;
  const props::Launched got = launcher_->launch(c, in);
  ASSERT_TRUE(got.status.ok()) << got.status.message;
  const ref::GemmView v = golden::case_view(c, in);
  std::vector<std::uint16_t> near(std::size_t{c.m} * c.c_row_stride, 0);
  ref::gemm_conventions(nearest.conventions.gemv, v, near.data(), c.c_row_stride);
  std::string first;
  std::uint64_t not_split = 0;
  for (std::uint32_t r = 0; r < c.m; ++r)
    for (std::uint32_t col = 0; col < c.n; ++col) {
      const std::size_t at = std::size_t{r} * c.c_row_stride + col;
      const std::uint16_t split = split_k_element(v, r, col);
      if (got.c_bits.at(at) != split && not_split++ == 0)
        ADD_FAILURE() << "C[" << r << "][" << col << "] is 0x" << std::hex << got.c_bits[at] << ", the split gives 0x"
                      << split;
      if (first.empty() && got.c_bits[at] != near[at])
        first = "C[" + std::to_string(r) + "][" + std::to_string(col) + "] of " + golden::format_case(c) + " (" +
                bv.probe_data[pi] + ")";
    }
  EXPECT_EQ(not_split, 0u);
  ASSERT_FALSE(first.empty()) << "the relaunched probe matches the nearest candidate " << nearest.name;
  RecordProperty("first_differing_element", first);
  std::printf("split-K GEMV: KEEPS NONE; nearest %s, first differing element %s\n", nearest.name.c_str(),
              first.c_str());
}

TEST_F(ContractFixtures, TheEmbeddedGemmPipelinedKeepsCanonical) {
  open("");
  if (IsSkipped()) return;
  const props::EntryVerdict ev = identify_one(golden::EntryPoint::gemm_pipelined, device::Body::gemm128_tile);
  ASSERT_EQ(ev.bodies.size(), 1u) << text_;
  const props::BodyVerdict& bv = ev.bodies.front();
  ASSERT_TRUE(bv.error.empty()) << bv.error;
  const ref::TensorCoreConventions* got = kept_tc(bv);
  ASSERT_NE(got, nullptr) << "not exactly one candidate kept:\n" << text_;
  EXPECT_EQ(*got, ref::canonical_conventions().tc) << ref::describe(*got);
  EXPECT_EQ(bv.keeps, std::vector<std::string>{"canonical"}) << text_;
  EXPECT_TRUE(ev.ok()) << text_;
}

}  // namespace
