// SPDX-License-Identifier: MIT OR Apache-2.0
// What a module given with --module must hold (docs/KERNEL_ABI.md 1.2), on static registries: the
// rule the CLI applies before it launches anything from a module built elsewhere.
#include <gtest/gtest.h>

#include "w8a16/device/module_abi.hpp"

namespace {

using namespace w8a16::device;

TEST(ModuleAbi, EachEntryRequiresItsOwnKernelAndByMAllThreeTiles) {
  EXPECT_EQ(required_kernels(Entry::gemm_pipelined), std::vector<KernelId>{KernelId::gemm_pipelined});
  EXPECT_EQ(required_kernels(Entry::gemm_pipelined_m32_strided), std::vector<KernelId>{KernelId::gemm_pipelined_m32});
  EXPECT_EQ(required_kernels(Entry::gemm_pipelined_m64), std::vector<KernelId>{KernelId::gemm_pipelined_m64});
  EXPECT_EQ(required_kernels(Entry::gemv_batch16_strided), std::vector<KernelId>{KernelId::gemv_batch16_strided});
  EXPECT_EQ(required_kernels(Entry::gemm_pipelined_by_m),
            (std::vector<KernelId>{KernelId::gemm_pipelined, KernelId::gemm_pipelined_m32,
                                   KernelId::gemm_pipelined_m64}));
}

TEST(ModuleAbi, TheRowTileKernelAndTheHopperTierAreOptionalAndUnusedByTheGemvs) {
  const std::vector<KernelId> hopper{KernelId::wgmma_rows, KernelId::wgmma_rows_n128, KernelId::wgmma_rows_n128_x2};
  std::vector<KernelId> twins{KernelId::tc_rows, KernelId::tc_rows_m64};
  twins.insert(twins.end(), hopper.begin(), hopper.end());
  EXPECT_EQ(optional_kernels(Entry::gemm_pipelined_m32), twins);
  EXPECT_EQ(optional_kernels(Entry::gemm_pipelined_m64_strided), twins);
  EXPECT_EQ(optional_kernels(Entry::gemm_pipelined_by_m), twins);
  EXPECT_EQ(optional_kernels(Entry::gemm_pipelined), hopper);
  EXPECT_TRUE(optional_kernels(Entry::gemv_batch4_strided).empty());
  EXPECT_TRUE(optional_kernels(Entry::gemv_batch16_strided).empty());
}

TEST(ModuleAbi, AModuleWithoutTheHopperTierSaysWhichBodiesRunInItsPlace) {
  const ModuleCoverage c = module_coverage(StaticRegistry::without_hopper_tier(), {Entry::gemm_pipelined});
  EXPECT_TRUE(c.ok());
  ASSERT_EQ(c.optional.size(), 3u);
  const std::string text = missing_optional_text(c);
  EXPECT_NE(text.find("w8a16_wgmma_rows_n128_x2 (tried first by gemm_pipelined): absent; the entry points run the "
                      "tiers below the Hopper tier in its place"),
            std::string::npos)
      << text;
}

TEST(ModuleAbi, AFullModuleCoversEveryEntryPoint) {
  const StaticRegistry all = StaticRegistry::all_present();
  const ModuleCoverage c = module_coverage(all, {Entry::gemm_pipelined, Entry::gemm_pipelined_m32,
                                                 Entry::gemm_pipelined_m32_strided, Entry::gemm_pipelined_m64,
                                                 Entry::gemm_pipelined_m64_strided, Entry::gemm_pipelined_by_m,
                                                 Entry::gemv_batch4_strided, Entry::gemv_batch16_strided});
  EXPECT_TRUE(c.ok());
  EXPECT_TRUE(c.optional.empty());
  EXPECT_EQ(missing_required_text(c), "");
}

TEST(ModuleAbi, AMissingTwinIsNamedWithEveryEntryThatNeedsIt) {
  StaticRegistry r = StaticRegistry::all_present();
  r.set_present(KernelId::gemm_pipelined_m32, false);
  const ModuleCoverage c = module_coverage(r, {Entry::gemm_pipelined_m32_strided, Entry::gemv_batch4_strided,
                                               Entry::gemm_pipelined_by_m});
  ASSERT_FALSE(c.ok());
  ASSERT_EQ(c.required.size(), 1u);
  EXPECT_EQ(c.required[0].kernel, KernelId::gemm_pipelined_m32);
  EXPECT_EQ(missing_required_text(c),
            "the module lacks w8a16_gemm_pipelined_m32, required by gemm_pipelined_m32_strided, gemm_pipelined_by_m "
            "(docs/KERNEL_ABI.md 1.2)\n");
}

TEST(ModuleAbi, AMissingKernelOfAnEntryNotVerifiedIsNoError) {
  StaticRegistry r = StaticRegistry::all_present();
  r.set_present(KernelId::gemm_pipelined_m64, false);
  EXPECT_TRUE(module_coverage(r, {Entry::gemv_batch4_strided, Entry::gemm_pipelined_m32}).ok());
  EXPECT_FALSE(module_coverage(r, {Entry::gemm_pipelined_m64}).ok());
}

TEST(ModuleAbi, AnAbsentRowTileKernelIsReportedButAllowed) {
  StaticRegistry r = StaticRegistry::all_present();
  r.set_present(KernelId::tc_rows, false).set_present(KernelId::tc_rows_m64, false);
  const ModuleCoverage c = module_coverage(r, {Entry::gemm_pipelined_m32_strided, Entry::gemv_batch16_strided});
  EXPECT_TRUE(c.ok());
  ASSERT_EQ(c.optional.size(), 2u);
  EXPECT_NE(missing_optional_text(c).find("w8a16_tc_rows (tried first by gemm_pipelined_m32_strided): absent"),
            std::string::npos);
}

TEST(ModuleAbi, NamesLikeTheFamilysButNotInItAreListed) {
  EXPECT_EQ(foreign_family_names({"w8a16_tc_rows", "w8a16_tc_rowz", "helper", "w8a16_gemm_pipelined_m3x"}),
            (std::vector<std::string>{"w8a16_gemm_pipelined_m3x", "w8a16_tc_rowz"}));
}

// The probes live in their own module (device/probes/): in a product module their symbols are
// strays like any other, and no entry point ever requires one.
TEST(ModuleAbi, ProbeSymbolsInAProductModuleAreReportedAndNeverRequired) {
  EXPECT_EQ(foreign_family_names({"w8a16_gemm_pipelined", "w8a16_probe_mma_m16n8k16_bf16",
                                  "w8a16_probe_wgmma_m64n8k16_bf16"}),
            (std::vector<std::string>{"w8a16_probe_mma_m16n8k16_bf16", "w8a16_probe_wgmma_m64n8k16_bf16"}));
  for (Entry e : {Entry::gemm_pipelined, Entry::gemm_pipelined_m32, Entry::gemm_pipelined_m32_strided,
                  Entry::gemm_pipelined_m64, Entry::gemm_pipelined_m64_strided, Entry::gemm_pipelined_by_m,
                  Entry::gemv_batch4_strided, Entry::gemv_batch16_strided}) {
    std::vector<KernelId> all = required_kernels(e);
    const std::vector<KernelId> optional = optional_kernels(e);
    all.insert(all.end(), optional.begin(), optional.end());
    for (KernelId k : all)
      EXPECT_EQ(std::string(kernel_name(k)).find("probe"), std::string::npos)
          << entry_name(e) << " needs " << kernel_name(k);
  }
  for (KernelId k : kAllKernels) EXPECT_EQ(std::string(kernel_name(k)).find("probe"), std::string::npos);
}

}  // namespace
