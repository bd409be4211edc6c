// SPDX-License-Identifier: MIT OR Apache-2.0
// The invariance sweep (properties/invariance.hpp) against kernels that break it on purpose, on the
// GPU: each module of invariance_breakers.cu replaces one family symbol of the embedded module, and
// each must FAIL on its own verdict at the M where its defect starts, which the tests name exactly:
// a K split chosen by M (batch, M = 9), an order set by a row's position (batch, M = 2, row 1),
// atomics in arrival order (run-to-run, M = 1), and a tier with another window order (tier, where
// the symbol first meets another body, and contract). The breakers fold as NUMERICS.md 2.1 where
// they do not break, so the K split and the row order are "right but not invariant": their contract
// verdict PASSes. The embedded module keeps every verdict, repeated beside a load on a second stream.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "w8a16/device/cuda_backend.hpp"
#include "w8a16/properties/invariance.hpp"
#include "w8a16/properties/launcher.hpp"

namespace {

namespace fs = std::filesystem;
using namespace w8a16;
using props::InvarianceKind;

fs::path beside_this_binary(const std::string& name) {
  std::error_code ec;
  return fs::read_symlink("/proc/self/exe", ec).parent_path() / name;
}

const props::InvarianceVerdict& verdict(const props::InvarianceReport& r, golden::EntryPoint e, InvarianceKind k) {
  for (const props::EntryInvariance& ei : r.shapes.at(0).entries)
    if (ei.entry == e) return ei.verdicts[static_cast<int>(k)];
  static const props::InvarianceVerdict none;
  ADD_FAILURE() << golden::entry_point_name(e) << " was not swept";
  return none;
}

class InvarianceFixtures : public ::testing::Test {
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
    if (!backend_) GTEST_SKIP() << "GPU test skipped: no usable CUDA device, or " << module << ": " << st.message;
    cases_ = std::make_unique<props::InProcessLauncher>(*backend_);
    launcher_ = std::make_unique<props::BackendInvarianceLauncher>(*cases_, *backend_);
  }
  // One shape (N = 136, K = 512: four steps, so every defect has room to show), one needle, M 1..max.
  props::InvarianceReport sweep(golden::EntryPoint e, std::uint32_t m_max, golden::Distribution needle,
                                std::initializer_list<InvarianceKind> kinds) {
    props::InvarianceOptions o;
    o.shapes = {{136, 512}};
    o.entries = {e};
    for (std::uint32_t m = 1; m <= m_max; ++m) o.ms.push_back(m);
    o.needles = {needle};
    for (bool& k : o.kinds) k = false;
    for (InvarianceKind k : kinds) o.kinds[static_cast<int>(k)] = true;
    o.backend_name = "cuda";
    return props::run_invariance(*launcher_, o, backend_->registry(), backend_->limits());
  }
  // The breakers of w8a16_gemm_pipelined are reached at these M only where the GPU's plan runs the
  // 128-row tile there (NUMERICS.md 2.1's tiers, bodies.def): a precondition, not a verdict.
  void expect_tile_dispatch(std::uint32_t m_max) {
    for (std::uint32_t m = 1; m <= m_max; ++m) {
      const props::Dispatched d = props::dispatch_of(golden::EntryPoint::gemm_pipelined, m, 136, 512, 0,
                                                     backend_->registry(), backend_->limits());
      ASSERT_TRUE(d.ok && d.body == device::Body::gemm128_tile) << "M = " << m << ": " << d.label();
    }
  }
  std::unique_ptr<device::CudaBackend> backend_;
  std::unique_ptr<props::InProcessLauncher> cases_;
  std::unique_ptr<props::BackendInvarianceLauncher> launcher_;
};

constexpr auto kTile = golden::EntryPoint::gemm_pipelined;

TEST_F(InvarianceFixtures, TheEmbeddedModuleKeepsEveryVerdictBesideALoadOnASecondStream) {
  open("");
  if (IsSkipped()) return;
  const props::InvarianceReport r = sweep(golden::EntryPoint::gemm_pipelined_m32, 40,
                                          golden::Distribution::cancelling_steps,
                                          {InvarianceKind::run_to_run, InvarianceKind::batch, InvarianceKind::tier,
                                           InvarianceKind::contract});
  EXPECT_NE(r.run_to_run_how.find("beside a load"), std::string::npos) << r.run_to_run_how;
  for (InvarianceKind k : props::kAllInvarianceKinds) {
    const props::InvarianceVerdict& v = verdict(r, golden::EntryPoint::gemm_pipelined_m32, k);
    EXPECT_TRUE(v.pass()) << props::invariance_kind_name(k) << ": " << v.first.what << " " << v.first.error;
    EXPECT_GT(v.comparisons, 0u) << props::invariance_kind_name(k);
  }
}

TEST_F(InvarianceFixtures, AKSplitChosenByMFailsBatchAtNineAndIsRightAtOne) {
  open("w8a16_fixture_split_k_by_m.fatbin");
  if (IsSkipped()) return;
  expect_tile_dispatch(20);
  const props::InvarianceReport r = sweep(kTile, 20, golden::Distribution::cancelling_steps,
                                          {InvarianceKind::run_to_run, InvarianceKind::batch,
                                           InvarianceKind::contract});
  const props::InvarianceVerdict& batch = verdict(r, kTile, InvarianceKind::batch);
  EXPECT_FALSE(batch.pass());
  ASSERT_TRUE(batch.has_failure);
  EXPECT_EQ(batch.first.m, 9u) << batch.first.what;
  ASSERT_FALSE(batch.failing_ms.empty());
  EXPECT_EQ(batch.failing_ms.front(), 9u);
  EXPECT_TRUE(verdict(r, kTile, InvarianceKind::run_to_run).pass());
  EXPECT_TRUE(verdict(r, kTile, InvarianceKind::contract).pass())
      << verdict(r, kTile, InvarianceKind::contract).first.what;
}

TEST_F(InvarianceFixtures, AnOrderSetByARowsPositionFailsBatchAtTwoOnRowOne) {
  open("w8a16_fixture_row_order.fatbin");
  if (IsSkipped()) return;
  expect_tile_dispatch(12);
  const props::InvarianceReport r = sweep(kTile, 12, golden::Distribution::cancelling_steps,
                                          {InvarianceKind::run_to_run, InvarianceKind::batch,
                                           InvarianceKind::contract});
  const props::InvarianceVerdict& batch = verdict(r, kTile, InvarianceKind::batch);
  ASSERT_TRUE(batch.has_failure);
  EXPECT_EQ(batch.first.m, 2u) << batch.first.what;
  EXPECT_EQ(batch.first.row, 1u);
  EXPECT_TRUE(verdict(r, kTile, InvarianceKind::run_to_run).pass());
  EXPECT_TRUE(verdict(r, kTile, InvarianceKind::contract).pass());
}

TEST_F(InvarianceFixtures, AtomicsInArrivalOrderFailRunToRunAtOne) {
  open("w8a16_fixture_atomics.fatbin");
  if (IsSkipped()) return;
  expect_tile_dispatch(8);
  const props::InvarianceReport r = sweep(kTile, 8, golden::Distribution::cancelling_steps,
                                          {InvarianceKind::run_to_run});
  const props::InvarianceVerdict& v = verdict(r, kTile, InvarianceKind::run_to_run);
  EXPECT_FALSE(v.pass());
  ASSERT_TRUE(v.has_failure);
  EXPECT_EQ(v.first.m, 1u) << v.first.position;
}

TEST_F(InvarianceFixtures, ATierWithAnotherWindowOrderFailsTierWhereItMeetsAnotherBody) {
  open("w8a16_fixture_window_order.fatbin");
  if (IsSkipped()) return;
  constexpr auto kM32 = golden::EntryPoint::gemm_pipelined_m32;
  // The first M at which the replaced symbol's bodies (m32_tile, m32_skinny) and another body are
  // both reachable: where the tier verdict must first fail.
  std::uint32_t meets = 0;
  for (std::uint32_t m = 1; m <= 40 && meets == 0; ++m) {
    bool replaced = false, other = false;
    for (const props::ForcedBody& b : props::bodies_at(kM32, m, 136, 512, backend_->registry(), backend_->limits())) {
      const bool mine = b.body == device::Body::m32_tile || b.body == device::Body::m32_skinny;
      replaced = replaced || mine;
      other = other || !mine;
    }
    if (replaced && other) meets = m;
  }
  ASSERT_NE(meets, 0u) << "no M in 1..40 reaches both w8a16_gemm_pipelined_m32 and another body";
  const props::InvarianceReport r = sweep(kM32, 40, golden::Distribution::cancelling_steps,
                                          {InvarianceKind::tier, InvarianceKind::contract});
  const props::InvarianceVerdict& tier = verdict(r, kM32, InvarianceKind::tier);
  ASSERT_TRUE(tier.has_failure);
  EXPECT_EQ(tier.first.m, meets) << tier.first.what;
  EXPECT_FALSE(verdict(r, kM32, InvarianceKind::contract).pass());
}

}  // namespace
