// SPDX-License-Identifier: MIT OR Apache-2.0
// The probes as typed instruments: one identifier per kernel, the parameters docs/KERNEL_ABI.md 7
// gives them, the embedded probe module holding exactly those kernels with exactly those parameters
// (read from its bytes: module_image.hpp) and none of the product's, and a launcher that, without a
// driver, refuses with the driver's reason and launches nothing.
#include <gtest/gtest.h>

#include <set>

#include "cuda_driver.hpp"
#include "module_image.hpp"
#include "w8a16/device/cuda_backend.hpp"
#include "w8a16/probes/probes.hpp"

namespace {

using namespace w8a16;
using probes::ProbeKernel;
using probes::ProbeParam;

TEST(ProbeKernels, EachHasOneNameThatMapsBack) {
  std::set<std::string> names;
  for (ProbeKernel k : probes::kAllProbeKernels) {
    const std::string name = probes::probe_kernel_name(k);
    EXPECT_EQ(name.rfind("w8a16_probe_", 0), 0u) << name;
    EXPECT_TRUE(names.insert(name).second) << name;
    ProbeKernel back;
    ASSERT_TRUE(probes::probe_kernel_from_name(name, &back)) << name;
    EXPECT_EQ(back, k);
    device::KernelId product;
    EXPECT_FALSE(device::kernel_from_name(name, &product)) << name << " is no product kernel";
  }
  EXPECT_EQ(names.size(), probes::kProbeKernelCount);
  EXPECT_STREQ(probes::probe_kernel_name(ProbeKernel::mma_m16n8k16_bf16), "w8a16_probe_mma_m16n8k16_bf16");
  EXPECT_STREQ(probes::probe_kernel_name(ProbeKernel::wgmma_m64n8k16_bf16), "w8a16_probe_wgmma_m64n8k16_bf16");
  ProbeKernel k;
  EXPECT_FALSE(probes::probe_kernel_from_name("w8a16_gemm_pipelined", &k));
  EXPECT_FALSE(probes::probe_kernel_from_name("w8a16_probe_mma", &k));
}

TEST(ProbeKernels, ParametersAndGeometryAreTheDocumentedOnes) {
  const std::vector<ProbeParam> mma = {{"a", 0, 8}, {"bt", 8, 8}, {"c", 16, 8}, {"d", 24, 8}, {"count", 32, 4}};
  EXPECT_EQ(probes::probe_kernel_params(ProbeKernel::mma_m16n8k16_bf16), mma);
  std::vector<ProbeParam> wgmma = mma;
  wgmma.push_back({"a_from_regs", 36, 4});
  wgmma.push_back({"scale_d", 40, 4});
  EXPECT_EQ(probes::probe_kernel_params(ProbeKernel::wgmma_m64n8k16_bf16), wgmma);
  EXPECT_EQ(probes::probe_threads(ProbeKernel::mma_m16n8k16_bf16), 32u);
  EXPECT_EQ(probes::probe_threads(ProbeKernel::wgmma_m64n8k16_bf16), 128u);
  EXPECT_EQ(probes::probe_d_words(ProbeKernel::mma_m16n8k16_bf16), 128u);
  EXPECT_EQ(probes::probe_d_words(ProbeKernel::wgmma_m64n8k16_bf16), 512u);
}

std::vector<image::KernelParamLayout> layout_of(ProbeKernel k) {
  std::vector<image::KernelParamLayout> out;
  std::uint32_t i = 0;
  for (const ProbeParam& p : probes::probe_kernel_params(k)) out.push_back({i++, p.offset, p.size});
  return out;
}

TEST(ProbeModuleImage, HoldsExactlyTheProbesWithTheirParameters) {
  std::vector<image::Cubin> cubins;
  std::string error;
  ASSERT_TRUE(image::read_module_image(probes::ProbeLauncher::embedded_module(), &cubins, &error)) << error;
  ASSERT_FALSE(cubins.empty());
  const bool hopper_built = (std::string(";") + W8A16_CUDA_ARCHITECTURES + ";").find(";90a;") != std::string::npos;
  bool wgmma_seen = false;
  for (const image::Cubin& c : cubins) {
    for (const auto& [name, params] : c.kernels) {
      ProbeKernel k;
      ASSERT_TRUE(probes::probe_kernel_from_name(name, &k))
          << name << " in the probe module's sm_" << c.arch << " cubin";
      EXPECT_EQ(params, layout_of(k)) << name;
      wgmma_seen |= k == ProbeKernel::wgmma_m64n8k16_bf16;
    }
    EXPECT_TRUE(c.kernels.count("w8a16_probe_mma_m16n8k16_bf16")) << "sm_" << c.arch;
  }
  EXPECT_EQ(wgmma_seen, hopper_built) << "the wgmma probe is in the sm_90a cubin, and only there";
}

TEST(ProbeModuleImage, SharesNoSymbolWithTheProductModule) {
  std::vector<image::Cubin> product, probe;
  std::string error;
  ASSERT_TRUE(image::read_module_image(device::CudaBackend::embedded_module(), &product, &error)) << error;
  ASSERT_TRUE(image::read_module_image(probes::ProbeLauncher::embedded_module(), &probe, &error)) << error;
  std::set<std::string> in_product;
  for (const image::Cubin& c : product)
    for (const auto& kv : c.kernels) in_product.insert(kv.first);
  for (const image::Cubin& c : probe)
    for (const auto& kv : c.kernels) EXPECT_FALSE(in_product.count(kv.first)) << kv.first << " is in both modules";
  EXPECT_FALSE(in_product.empty());
}

TEST(ProbeLauncher, WithoutADriverRefusesWithTheDriversReason) {
  std::string why;
  if (device::cuda::driver(&why))
    GTEST_SKIP()
        << "a CUDA driver is present here, so the no-driver path cannot be shown (device_gpu_tests runs the probes)";
  device::Status st;
  EXPECT_FALSE(probes::ProbeLauncher::create(0, &st));
  // No driver is "no GPU here" (probe exits 77 on it), not a refusing driver.
  EXPECT_EQ(st.code, device::Errc::no_device);
  EXPECT_EQ(st.message, why);
  EXPECT_NE(st.message.find("the CUDA driver could not be loaded"), std::string::npos) << st.message;
}

}  // namespace
