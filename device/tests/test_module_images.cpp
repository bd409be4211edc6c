// SPDX-License-Identifier: MIT OR Apache-2.0
// The embedded product module read from its bytes (module_image.hpp), without a GPU: it holds the
// family's kernels and nothing else (no calibration probe: device/probes/ has its own module), each
// with the parameters of docs/KERNEL_ABI.md 1.1, in every cubin of the build. The reader is shown
// to refuse damaged images, and the check to catch a planted stray symbol, so neither can pass
// vacuously.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "module_image.hpp"
#include "product_module_check.hpp"
#include "w8a16/device/cuda_backend.hpp"

namespace {

using namespace w8a16;
using image::Cubin;

std::vector<Cubin> read_or_fail(const std::vector<unsigned char>& image) {
  std::vector<Cubin> cubins;
  std::string error;
  EXPECT_TRUE(image::read_module_image(image, &cubins, &error)) << error;
  return cubins;
}

TEST(ProductModuleImage, HoldsTheFamilyAndNothingElseWithItsParameters) {
  const std::vector<Cubin> cubins = read_or_fail(device::CudaBackend::embedded_module());
  ASSERT_FALSE(cubins.empty());
  EXPECT_EQ(image::product_module_problems(cubins, W8A16_CUDA_ARCHITECTURES), "");
  std::size_t kernels = 0;
  for (const Cubin& c : cubins) kernels += c.kernels.size();
  std::printf("product module: %zu cubins, %zu kernels (architectures %s)\n", cubins.size(), kernels,
              W8A16_CUDA_ARCHITECTURES);
}

TEST(ProductModuleImage, HoldsNoCalibrationProbe) {
  for (const Cubin& c : read_or_fail(device::CudaBackend::embedded_module()))
    for (const auto& [name, params] : c.kernels)
      EXPECT_EQ(name.find("probe"), std::string::npos) << name << " in the sm_" << c.arch << " cubin";
}

// Replaces every occurrence of `from` by `to` (same length) in the image's bytes.
std::size_t plant(std::vector<unsigned char>* image, const std::string& from, const std::string& to) {
  EXPECT_EQ(from.size(), to.size());
  std::size_t n = 0;
  for (auto it = image->begin(); (it = std::search(it, image->end(), from.begin(), from.end())) != image->end(); ++n)
    it = std::copy(to.begin(), to.end(), it);
  return n;
}

TEST(ProductModuleImage, AStraySymbolOrAMissingKernelOrAnotherLayoutIsCaught) {
  std::vector<unsigned char> image = device::CudaBackend::embedded_module();
  // A probe's name where the 64-row twin's was: both a stray symbol and a missing required kernel.
  ASSERT_GT(plant(&image, "w8a16_gemm_pipelined_m64", "w8a16_probe_pipeline_m64"), 0u);
  const std::string problems = image::product_module_problems(read_or_fail(image), W8A16_CUDA_ARCHITECTURES);
  EXPECT_NE(problems.find("w8a16_probe_pipeline_m64 is not a kernel of the family"), std::string::npos) << problems;
  EXPECT_NE(problems.find("lacks w8a16_gemm_pipelined_m64"), std::string::npos) << problems;

  std::vector<Cubin> cubins = read_or_fail(device::CudaBackend::embedded_module());
  ASSERT_FALSE(cubins.empty());
  cubins.front().kernels.at("w8a16_gemv_batch4_strided").at(4).size = 8;
  EXPECT_NE(image::product_module_problems(cubins, W8A16_CUDA_ARCHITECTURES)
                .find("w8a16_gemv_batch4_strided has 9 parameters (offset:size 0:8 8:8 16:8 24:8 32:8"),
            std::string::npos);
}

TEST(ModuleImageReader, RefusesWhatItCannotRead) {
  std::vector<Cubin> cubins;
  std::string error;
  EXPECT_FALSE(image::read_module_image({}, &cubins, &error));
  EXPECT_EQ(error, "the file is empty");
  EXPECT_FALSE(image::read_module_image({'n', 'o', 't', ' ', 'a', ' ', 'm', 'o', 'd', 'u', 'l', 'e', 0, 0, 0, 0},
                                        &cubins, &error));
  EXPECT_NE(error.find("neither a cubin (ELF) nor a fatbin"), std::string::npos) << error;
  const std::vector<unsigned char> good = device::CudaBackend::embedded_module();
  ASSERT_GT(good.size(), 200u);
  std::vector<unsigned char> truncated(good.begin(), good.begin() + 100);
  EXPECT_FALSE(image::read_module_image(truncated, &cubins, &error));
  EXPECT_NE(error.find("the file is cut"), std::string::npos) << error;
  // The first entry's ELF magic clobbered: what a compressed entry not marked as one would look like.
  std::vector<unsigned char> squashed = good;
  const std::size_t payload = 16 + (squashed[16 + 4] | squashed[16 + 5] << 8);
  ASSERT_EQ(std::memcmp(&squashed[payload],
                        "\x7f"
                        "ELF",
                        4),
            0);
  squashed[payload + 1] = 'X';
  EXPECT_FALSE(image::read_module_image(squashed, &cubins, &error));
  EXPECT_NE(error.find("no ELF magic at byte " + std::to_string(payload)), std::string::npos) << error;
}

}  // namespace
