// SPDX-License-Identifier: MIT OR Apache-2.0
// Properties 4, 6 and 8 on the GPU: the kernels' bytes equal the emulator's, the GEMV kernels equal
// the GEMV emulation, and repeated runs give identical bytes. Without a GPU each test is Skipped.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <memory>

#include "property_support.hpp"
#if W8A16_HAVE_CUDA
#include "w8a16/device/cuda_backend.hpp"
#endif

namespace {

namespace golden = w8a16::golden;
namespace device = w8a16::device;
namespace props = w8a16::props;

// The CUDA backend on device 0, or nullptr with the reason in *why (no CUDA build, no driver, no
// GPU): the caller skips, visibly.
std::unique_ptr<device::Backend> gpu_backend(std::string* why) {
#if W8A16_HAVE_CUDA
  device::Status st;
  auto b = device::CudaBackend::create(0, &st);
  if (!b) *why = "no usable GPU: " + st.message;
  return b;
#else
  *why = "built without CUDA (W8A16_HAVE_CUDA is off): no device to compare against";
  return nullptr;
#endif
}

// A GPU budget: the emulator's side runs on the host's cores, so cases may be larger than on CPU
// runs, and the model shapes appear at small m.
props::DrawOptions gpu_options() {
  props::DrawOptions opt;
  opt.max_macs = std::uint64_t{1} << 27;
  return opt;
}

#define W8A16_GPU_OR_SKIP(backend)          \
  std::string skip_reason;                  \
  auto backend = gpu_backend(&skip_reason); \
  if (!backend) GTEST_SKIP() << skip_reason

// Property 4: every entry point, on the GPU, writes the emulator's bytes and leaves the padding.
TEST(Gpu, EveryEntryPointWritesTheEmulatorsBytes) {
  W8A16_GPU_OR_SKIP(gpu);
  rc::detail::checkGTest([&] {
    const golden::Case c = *props::gen_case(gpu_options());
    const golden::CaseInputs in = props::test::inputs_for(c);
    const props::Launched got = props::launch_case(*gpu, c, in);
    props::test::require(got.status.ok(), c, "launch: " + got.status.message);
    props::test::require_bits_equal(c, props::compare_output(c, props::expected_output(c, in), got.c_bits),
                                    "GPU vs emulator");
  });
}

// Property 6: the scalar GEMV kernels against the GEMV order's emulation (NUMERICS.md 2.2).
TEST(Gpu, GemvKernelsWriteTheGemvEmulationsBytes) {
  W8A16_GPU_OR_SKIP(gpu);
  rc::detail::checkGTest([&] {
    props::DrawOptions opt = gpu_options();
    opt.entries = {golden::EntryPoint::gemv_batch4_strided, golden::EntryPoint::gemv_batch16_strided};
    const golden::Case c = *props::gen_case(opt);
    const golden::CaseInputs in = props::test::inputs_for(c);
    const props::Launched got = props::launch_case(*gpu, c, in);
    props::test::require(got.status.ok(), c, "launch: " + got.status.message);
    props::test::require_bits_equal(c, props::compare_output(c, props::expected_output(c, in), got.c_bits),
                                    "GPU GEMV vs GEMV emulation");
  });
}

// Property 8: three runs of one case give the same bytes (no races, no order-dependent sums).
TEST(Gpu, RepeatedRunsGiveIdenticalBytes) {
  W8A16_GPU_OR_SKIP(gpu);
  rc::detail::checkGTest([&] {
    const golden::Case c = *props::gen_case(gpu_options());
    const golden::CaseInputs in = props::test::inputs_for(c);
    const props::Launched first = props::launch_case(*gpu, c, in);
    props::test::require(first.status.ok(), c, "launch: " + first.status.message);
    for (int run = 2; run <= 3; ++run) {
      const props::Launched again = props::launch_case(*gpu, c, in);
      props::test::require(again.status.ok(), c, "launch: " + again.status.message);
      props::test::require_bits_equal(c, props::compare_output(c, first.c_bits, again.c_bits),
                                      "run " + std::to_string(run) + " vs run 1");
    }
  });
}

}  // namespace
