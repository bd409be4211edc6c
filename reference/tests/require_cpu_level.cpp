// SPDX-License-Identifier: MIT OR Apache-2.0
// Skips every test of a binary whose SIMD code needs an x86-64 level this CPU lacks (visible as
// SKIPPED, never as passed).
#include <gtest/gtest.h>

namespace {

class RequireCpuLevel : public ::testing::Environment {
 public:
  void SetUp() override {
#if defined(W8A16_TEST_REQUIRES_X86_64_V4)
    if (!__builtin_cpu_supports("x86-64-v4")) GTEST_SKIP() << "this CPU is not x86-64-v4: the v4 copy was not run";
#elif defined(W8A16_TEST_REQUIRES_X86_64_V3)
    if (!__builtin_cpu_supports("x86-64-v3")) GTEST_SKIP() << "this CPU is not x86-64-v3: the v3 copy was not run";
#endif
  }
};

::testing::Environment* const kRequireCpuLevel = ::testing::AddGlobalTestEnvironment(new RequireCpuLevel);

}  // namespace
