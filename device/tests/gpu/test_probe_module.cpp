// SPDX-License-Identifier: MIT OR Apache-2.0
// The probe module on the GPU (device/probes/): it loads beside the product module, every probe it
// holds has its documented parameters (checked by the driver at load), and each instruction form
// it records equals the emulator's verified policy bit for bit on the targeted cases and a uniform
// batch (what `w8a16check probe` records, on fewer cases). The product module, for its part, holds
// no probe. Skips without a GPU, and where no policy is verified for the device.
#include <gtest/gtest.h>

#include <algorithm>

#include "w8a16/device/cuda_backend.hpp"
#include "w8a16/device/module_abi.hpp"
#include "w8a16/golden/mma_probe.hpp"
#include "w8a16/probes/probes.hpp"
#include "w8a16/reference/mma.hpp"

namespace {

using namespace w8a16;
using probes::ProbeKernel;

class ProbeModule : public ::testing::Test {
 protected:
  void SetUp() override {
    device::Status st;
    launcher_ = probes::ProbeLauncher::create(0, &st);
    if (!launcher_) GTEST_SKIP() << "GPU test skipped: no usable CUDA device: " << st.message;
  }
  // Runs the targeted cases and 64 uniform ones through one form and compares every D element with
  // the sm90 policy (NUMERICS.md 1.1; with scale-d 0 the instruction adds no C).
  void expect_matches_sm90(ProbeKernel k, probes::ProbeForm form) {
    const device::CudaDeviceInfo info = launcher_->device_info();
    if (info.cc_major != 9 || info.cc_minor != 0)
      GTEST_SKIP() << "compute capability " << info.cc_major << "." << info.cc_minor
                   << " has no verified policy (NUMERICS.md 3): nothing to compare with";
    ASSERT_TRUE(launcher_->has(k)) << probes::probe_kernel_name(k);
    std::vector<golden::MmavCase> cases = golden::probe_targeted_cases();
    const std::vector<golden::MmavCase> uniform = golden::probe_regime_cases(golden::ProbeRegime::uniform, 64,
                                                                             0x5EED17);
    cases.insert(cases.end(), uniform.begin(), uniform.end());
    probes::ProbeOperands in;
    for (const golden::MmavCase& x : cases) {
      in.a.insert(in.a.end(), x.a.begin(), x.a.end());
      in.bt.insert(in.bt.end(), x.bt.begin(), x.bt.end());
      in.c.insert(in.c.end(), x.c.begin(), x.c.end());
    }
    std::vector<std::uint32_t> d;
    const device::Status st = launcher_->run(k, form, in, &d);
    ASSERT_TRUE(st.ok()) << st.message;
    ASSERT_EQ(d.size(), cases.size() * 128);
    std::size_t mismatches = 0;
    for (std::size_t i = 0; i < cases.size(); ++i)
      for (int m = 0; m < 16; ++m)
        for (int n = 0; n < 8; ++n) {
          const std::uint32_t c = form.scale_d ? cases[i].c[m * 8 + n] : 0;
          const std::uint32_t want = ref::mma_k16_bits(ref::kMmaSm90, c, &cases[i].a[m * 16], &cases[i].bt[n * 16]);
          const std::uint32_t got = d[i * 128 + m * 8 + n];
          if (got != want && mismatches++ < 3) {
            ADD_FAILURE() << probes::probe_kernel_name(k) << " case " << i << " D[" << m << "][" << n << "] = 0x"
                          << std::hex << got << ", emulator 0x" << want;
          }
        }
    EXPECT_EQ(mismatches, 0u);
    std::printf("%s (A from %s, scale-d %d): %zu cases, %zu dot products equal to the sm90 policy\n",
                probes::probe_kernel_name(k), form.a_from_regs ? "registers" : "shared memory", form.scale_d ? 1 : 0,
                cases.size(), cases.size() * 128);
  }
  std::unique_ptr<probes::ProbeLauncher> launcher_;
};

TEST_F(ProbeModule, LoadsWithEveryProbeTheDeviceCanRun) {
  EXPECT_TRUE(launcher_->has(ProbeKernel::mma_m16n8k16_bf16));
  const device::CudaDeviceInfo info = launcher_->device_info();
  if (info.cc_major == 9 && info.cc_minor == 0) {
    EXPECT_TRUE(launcher_->has(ProbeKernel::wgmma_m64n8k16_bf16));
  }
  EXPECT_TRUE(launcher_->abi_checked()) << "this driver lacks cuFuncGetParamInfo: the probes' layouts were not checked";
}

TEST_F(ProbeModule, MmaSyncMatchesTheVerifiedPolicy) {
  expect_matches_sm90(ProbeKernel::mma_m16n8k16_bf16, {false, true});
}
TEST_F(ProbeModule, WgmmaSharedScaleD1MatchesTheVerifiedPolicy) {
  expect_matches_sm90(ProbeKernel::wgmma_m64n8k16_bf16, {false, true});
}
TEST_F(ProbeModule, WgmmaRegistersScaleD1MatchesTheVerifiedPolicy) {
  expect_matches_sm90(ProbeKernel::wgmma_m64n8k16_bf16, {true, true});
}
TEST_F(ProbeModule, WgmmaSharedScaleD0MatchesTheVerifiedPolicy) {
  expect_matches_sm90(ProbeKernel::wgmma_m64n8k16_bf16, {false, false});
}
TEST_F(ProbeModule, WgmmaRegistersScaleD0MatchesTheVerifiedPolicy) {
  expect_matches_sm90(ProbeKernel::wgmma_m64n8k16_bf16, {true, false});
}

TEST_F(ProbeModule, OperandsThatAreNotWholeCasesAreRefusedBeforeAnyLaunch) {
  probes::ProbeOperands in;
  in.a.assign(256, 0);
  in.bt.assign(127, 0);
  in.c.assign(128, 0);
  std::vector<std::uint32_t> d = {7};
  const device::Status st = launcher_->run(ProbeKernel::mma_m16n8k16_bf16, {}, in, &d);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message.find("not whole cases"), std::string::npos) << st.message;
  EXPECT_EQ(d, std::vector<std::uint32_t>{7}) << "nothing written";
}

TEST_F(ProbeModule, TheProductModuleHoldsNoProbe) {
  device::Status st;
  auto product = device::CudaBackend::create(0, &st);
  ASSERT_TRUE(product) << st.message;
  bool listed = false;
  const std::vector<std::string> functions = product->module_functions(&listed);
  if (!listed) GTEST_SKIP() << "this driver cannot list a module's functions (cuModuleEnumerateFunctions)";
  for (const std::string& f : functions) EXPECT_EQ(f.find("w8a16_probe_"), std::string::npos) << f;
  EXPECT_TRUE(device::foreign_family_names(functions).empty());
}

}  // namespace
