// SPDX-License-Identifier: MIT OR Apache-2.0
// The gate against kernels that break (properties/launcher.hpp), on the GPU: the hang and fault
// fixture modules (hang_kernel.cu, fault_kernel.cu, linked into the embedded module in place of
// its GEMV kernels) through an IsolatedLauncher whose workers are the CLI beside this binary. A
// hang is a launch_timeout within its deadline and the next case runs in a fresh worker; each
// fault is context_lost with the driver's own error, and a case of another kernel right after it
// is byte-identical to the emulator.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "w8a16/device/cuda_backend.hpp"
#include "w8a16/golden/case.hpp"
#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/properties/case_runner.hpp"
#include "w8a16/properties/launcher.hpp"

namespace {

namespace fs = std::filesystem;
using namespace w8a16;

fs::path beside_this_binary(const std::string& name) {
  std::error_code ec;
  return fs::read_symlink("/proc/self/exe", ec).parent_path() / name;
}

golden::Case case_of(const std::string& line) {
  golden::Case c;
  std::string error;
  EXPECT_TRUE(golden::parse_case(line, &c, &error)) << error;
  return c;
}

const char* kGemv4 =
    "case/1 w8a16_gemv_batch4_strided m=4 n=9 k=384 a_row_stride=392 c_row_stride=16 dist=activation_like seed=0x0000000000000501 gen=1";
const char* kGemv16 =
    "case/1 w8a16_gemv_batch16_strided m=16 n=17 k=5248 a_row_stride=5248 c_row_stride=17 dist=special_scales seed=0x0000000000000503 gen=1";
const char* kM32 =
    "case/1 w8a16_gemm_pipelined_m32 m=13 n=260 k=1280 a_row_stride=1280 c_row_stride=260 dist=activation_like seed=0x0000000000000600 gen=1";

class GateFixtures : public ::testing::Test {
 protected:
  // GTEST_SKIP here returns from open alone: the tests return when IsSkipped().
  void open(const std::string& fixture, props::DeadlinePolicy deadlines = {}) {
    const fs::path module = beside_this_binary(fixture), cli = beside_this_binary("w8a16check");
    if (!fs::is_regular_file(cli)) GTEST_SKIP() << cli << " is not beside this binary (tools/gpu-build puts it there)";
    device::Status st;
    backend_ = device::CudaBackend::create_from_file(0, module.string(), &st);
    if (!backend_) GTEST_SKIP() << "GPU test skipped: no usable CUDA device, or " << fixture << ": " << st.message;
    props::WorkerSpec spec{
        {cli.string(), "launch-worker", "--backend", "cuda", "--gpu", "0", "--module", module.string()},
        "cuda",
        device::BackendKind::cuda};
    launcher_ = std::make_unique<props::IsolatedLauncher>(spec, backend_->registry(), backend_->limits(), deadlines);
  }
  // The case through the launcher; its bytes against the emulator's when it completes.
  props::Launched run(const std::string& line, bool* equal = nullptr) {
    const golden::Case c = case_of(line);
    golden::CaseInputs in;
    std::string error;
    EXPECT_TRUE(golden::regenerate_inputs(c, &in, &error)) << error;
    props::Launched got = launcher_->launch(c, in);
    if (equal) *equal = got.status.ok() && props::compare_output(c, props::expected_output(c, in), got.c_bits).equal();
    return got;
  }
  std::unique_ptr<device::CudaBackend> backend_;
  std::unique_ptr<props::IsolatedLauncher> launcher_;
};

TEST_F(GateFixtures, AHangingKernelIsALaunchTimeoutAndTheNextCaseRunsInAFreshWorker) {
  props::DeadlinePolicy five_seconds;
  std::string why;
  ASSERT_TRUE(five_seconds.set_fixed("5", &why)) << why;
  open("w8a16_fixture_hang.fatbin", five_seconds);
  if (IsSkipped()) return;
  const auto start = std::chrono::steady_clock::now();
  const props::Launched hung = run(kGemv16);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(hung.status.code, device::Errc::launch_timeout) << hung.status.message;
  EXPECT_LT(s, 5 + 30);
  ASSERT_TRUE(hung.planned);
  EXPECT_STREQ(hung.plan.kernel_name, "w8a16_gemv_batch16_strided");
  bool equal = false;
  const props::Launched next = run(kM32, &equal);
  EXPECT_TRUE(next.status.ok()) << next.status.message;
  EXPECT_TRUE(equal);
  EXPECT_EQ(launcher_->restarts(), 2u);
}

TEST_F(GateFixtures, EachFaultIsItsCaseAloneWithTheDriversError) {
  open("w8a16_fixture_fault.fatbin");
  if (IsSkipped()) return;
  const props::Launched a = run(kGemv4);
  EXPECT_EQ(a.status.code, device::Errc::context_lost) << a.status.message;
  EXPECT_NE(a.status.message.find("CUDA_ERROR_ILLEGAL_ADDRESS"), std::string::npos) << a.status.message;
  const props::Launched b = run(kGemv16);
  EXPECT_EQ(b.status.code, device::Errc::context_lost) << b.status.message;
  EXPECT_NE(b.status.message.find("CUDA_ERROR_MISALIGNED_ADDRESS"), std::string::npos) << b.status.message;
  bool equal = false;
  const props::Launched c = run(kM32, &equal);
  EXPECT_TRUE(c.status.ok()) << c.status.message;
  EXPECT_TRUE(equal) << "a case after two faults, in a fresh worker, must be the emulator's bytes";
  EXPECT_EQ(launcher_->restarts(), 3u);
}

}  // namespace
