// SPDX-License-Identifier: MIT OR Apache-2.0
// The GPU side of the timing library where no GPU is needed to see it: without a driver the session
// does not open and says why; without cuBLASLt the report says "not available" and why; cuBLASLt is
// looked for where the README says. On a machine with a driver the no-driver test skips, visibly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "cuda_driver.hpp"
#include "w8a16/bench/cublas.hpp"
#include "w8a16/bench/timer.hpp"
#include "w8a16/device/sim_backend.hpp"

namespace {

using namespace w8a16;

TEST(BenchGpuSide, WithoutADriverTheSessionDoesNotOpenAndSaysWhy) {
  std::string why;
  if (device::cuda::driver(&why))
    GTEST_SKIP() << "a CUDA driver is present here, so the no-driver path cannot be shown (the GPU runs time instead)";
  auto session = bench::GpuSession::open(0, &why);
  EXPECT_FALSE(session);
  EXPECT_NE(why.find("the CUDA driver could not be loaded"), std::string::npos) << why;
  std::string timing_why;
  EXPECT_EQ(device::cuda::timing_driver(&timing_why), nullptr);
  EXPECT_EQ(timing_why, why) << "one table, one reason";
}

TEST(BenchGpuSide, WithoutCublasTheReportSaysNotAvailableAndWhy) {
  device::SimBackend backend;
  const std::vector<std::string> nowhere = {"/nonexistent/libcublasLt.so.13", "libcublasLt-absent.so"};
  std::string why;
  EXPECT_FALSE(bench::CublasLt::load(nowhere, &why));
  EXPECT_EQ(why.rfind("cuBLASLt could not be loaded (set W8A16_CUBLASLT to its path): ", 0), 0u) << why;
  EXPECT_NE(why.find("/nonexistent/libcublasLt.so.13"), std::string::npos)
      << "each candidate's failure is named: " << why;
  EXPECT_NE(why.find("libcublasLt-absent.so"), std::string::npos) << why;

  const bench::CublasSetup absent = bench::open_cublas(backend, true, nowhere);
  EXPECT_FALSE(absent.runner);
  EXPECT_EQ(absent.note, "not available: " + why);
  const bench::CublasSetup off = bench::open_cublas(backend, false, nowhere);
  EXPECT_FALSE(off.runner);
  EXPECT_EQ(off.note, "not run (--no-cublas)");
  EXPECT_FALSE(bench::CublasLt::load({}, &why));
  EXPECT_NE(why.find("no candidate"), std::string::npos) << why;
}

TEST(BenchGpuSide, CublasIsLookedForInW8a16CublasltFirstThenTheToolkit) {
  const char* before = std::getenv("W8A16_CUBLASLT");
  const std::string saved = before ? before : "";
  setenv("W8A16_CUBLASLT", "/opt/elsewhere/libcublasLt.so.13", 1);
  const std::vector<std::string> c = bench::CublasLt::default_candidates();
  if (before) setenv("W8A16_CUBLASLT", saved.c_str(), 1);
  else unsetenv("W8A16_CUBLASLT");
  ASSERT_FALSE(c.empty());
  EXPECT_EQ(c.front(), "/opt/elsewhere/libcublasLt.so.13");
  EXPECT_NE(std::find(c.begin(), c.end(), "/usr/local/cuda/lib64/libcublasLt.so.13"), c.end());
  EXPECT_NE(std::find(c.begin(), c.end(), "libcublasLt.so.13"), c.end());
}

// Where the toolkit's cuBLASLt is installed (this machine has one; a GPU machine may not), it loads
// without a GPU and names its path and version, which is what the report's cuBLAS line shows.
TEST(BenchGpuSide, AnInstalledCublasLoadsWithEveryFunctionAndItsVersion) {
  std::string why;
  auto lt = bench::CublasLt::load(bench::CublasLt::default_candidates(), &why);
  if (!lt) GTEST_SKIP() << "no cuBLASLt here: " << why;
  EXPECT_FALSE(lt->path().empty());
  EXPECT_GE(lt->version(), 100000u) << "cublasLtGetVersion: major * 10000 + minor * 100 + patch";
}

}  // namespace
