// SPDX-License-Identifier: MIT OR Apache-2.0
// The one driver table (src/cuda_driver.hpp) on a machine without a driver: every user of it (the
// backend, the probes' launcher, the timing session) gets the same reason and starts nothing. On a
// machine with a driver this skips, visibly: the GPU tests use the table there.
#include <gtest/gtest.h>

#include "cuda_driver.hpp"
#include "w8a16/device/cuda_backend.hpp"

namespace {

using namespace w8a16;

TEST(CudaDriverTable, WithoutADriverEveryUserGetsTheLoadersReason) {
  std::string why;
  if (device::cuda::driver(&why))
    GTEST_SKIP() << "a CUDA driver is present here, so the no-driver path cannot be shown";
  EXPECT_EQ(why.rfind("the CUDA driver could not be loaded: ", 0), 0u) << why;
  EXPECT_NE(why.find("libcuda.so.1"), std::string::npos) << why;
  std::string again;
  EXPECT_EQ(device::cuda::driver(&again), nullptr);
  EXPECT_EQ(again, why) << "loaded once: the same answer every time";
  EXPECT_EQ(device::cuda::timing_driver(&again), nullptr);
  EXPECT_EQ(again, why);
  device::Status st;
  EXPECT_FALSE(device::CudaBackend::create(0, &st));
  // No driver is "no GPU here" (the CLI's exit status 77, a skip), not a backend that refused.
  EXPECT_EQ(st.code, device::Errc::no_device);
  EXPECT_EQ(st.message, why);
}

}  // namespace
