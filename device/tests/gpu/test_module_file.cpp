// SPDX-License-Identifier: MIT OR Apache-2.0
// A kernel module loaded from a file (w8a16check --module, docs/KERNEL_ABI.md 1.2, 1.3 and 5): the
// embedded fatbin written to a file gives the embedded module's bytes; a module with a kernel
// renamed is refused for the entry points that need it, naming the symbol, with nothing launched;
// a family symbol with another parameter list is refused at load; a cut module is refused before
// the driver sees it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gpu_cases.hpp"
#include "gpu_rig.hpp"
#include "w8a16/device/api.hpp"
#include "w8a16/device/cuda_backend.hpp"
#include "w8a16/device/module_abi.hpp"
#include "w8a16/properties/case_runner.hpp"

namespace {

namespace fs = std::filesystem;
using namespace w8a16;
namespace props = w8a16::props;
using device::Body;
using device::Entry;
using device::KernelId;

// The test modules device/tests/gpu/CMakeLists.txt writes beside this binary (they travel with it).
fs::path beside_this_binary(const std::string& name) {
  std::error_code ec;
  return fs::read_symlink("/proc/self/exe", ec).parent_path() / name;
}

class ModuleFile : public ::testing::Test {
 protected:
  void SetUp() override {
    device::Status st;
    embedded_ = device::CudaBackend::create(0, &st);
    if (!embedded_) GTEST_SKIP() << "GPU test skipped: no usable CUDA device: " << st.message;
  }
  std::unique_ptr<device::CudaBackend> embedded_;
};

TEST_F(ModuleFile, TheEmbeddedFatbinWrittenToAFileGivesIdenticalBytes) {
  const fs::path path = fs::temp_directory_path() / ("w8a16_embedded_" + std::to_string(getpid()) + ".fatbin");
  {
    const std::vector<unsigned char> image = device::CudaBackend::embedded_module();
    ASSERT_FALSE(image.empty());
    std::ofstream f(path, std::ios::binary);
    f.write(reinterpret_cast<const char*>(image.data()), static_cast<std::streamsize>(image.size()));
    ASSERT_TRUE(f.flush()) << path;
  }
  device::Status st;
  auto from_file = device::CudaBackend::create_from_file(0, path.string(), &st);
  fs::remove(path);
  ASSERT_TRUE(from_file) << st.message;
  EXPECT_EQ(from_file->module_source(), path.string());
  EXPECT_EQ(from_file->module_bytes(), device::CudaBackend::embedded_module_bytes());
  for (KernelId id : device::kAllKernels)
    EXPECT_EQ(static_cast<bool>(embedded_->registry().resolve(id)),
              static_cast<bool>(from_file->registry().resolve(id)))
        << device::kernel_name(id);

  auto a = gputest::GpuRig::over(std::move(embedded_));
  auto b = gputest::GpuRig::over(std::move(from_file));
  // Every entry point through each body it can reach.
  using golden::EntryPoint;
  const std::pair<EntryPoint, Body> targets[] = {{EntryPoint::gemm_pipelined, Body::gemm128_tile},
                                                 {EntryPoint::gemm_pipelined_m32, Body::m32_skinny},
                                                 {EntryPoint::gemm_pipelined_m32_strided, Body::m32_tile},
                                                 {EntryPoint::gemm_pipelined_m32_strided, Body::tc_rows_strip},
                                                 {EntryPoint::gemm_pipelined_m64, Body::m64_tile},
                                                 {EntryPoint::gemm_pipelined_m64_strided, Body::tc_rows_strip},
                                                 {EntryPoint::gemm_pipelined_by_m, Body::gemm128_tile},
                                                 {EntryPoint::gemv_batch4_strided, Body::gemv_strip},
                                                 {EntryPoint::gemv_batch16_strided, Body::gemv_strip},
                                                 {EntryPoint::gemm_pipelined_m32_strided, Body::wgmma_units},
                                                 {EntryPoint::gemm_pipelined_m64_strided, Body::wgmma_units128},
                                                 {EntryPoint::gemm_pipelined, Body::wgmma_units128_x2}};
  std::size_t cases = 0, bytes = 0;
  for (const auto& [entry, body] : targets) {
    for (const gputest::GpuCase& g :
         gputest::make_cases(entry, body, 3, 0x30D01E, std::uint64_t{1} << 24, a->present())) {
      const golden::CaseInputs in = gputest::inputs_of(g.c);
      const gputest::GpuRun ra = a->run(g.c, in), rb = b->run(g.c, in);
      ASSERT_TRUE(ra.ok && rb.ok) << ra.error << " / " << rb.error << "\n  case: " << g.line();
      EXPECT_STREQ(ra.plan.kernel_name, rb.plan.kernel_name) << g.line();
      EXPECT_EQ(ra.plan.body, rb.plan.body) << g.line();
      EXPECT_TRUE(ra.c == rb.c) << "the module from the file gave other bytes than the embedded one\n  case: "
                                << g.line();
      // Equal to each other is not enough: both must be the contract's bytes.
      const props::Comparison cmp = props::compare_output(g.c, props::expected_output(g.c, in), ra.c);
      EXPECT_EQ(cmp.mismatches, 0u) << (cmp.details.empty() ? "" : cmp.details.front()) << "\n  case: " << g.line();
      ++cases;
      bytes += 2 * ra.c.size();
    }
  }
  std::printf("module file vs embedded: %zu cases, %zu bytes of C each, identical\n", cases, bytes);
  EXPECT_GE(cases, 30u);
}

// The perturbed module (device/kernels/w8a16_timing.cuh) has its two controls and the product module
// neither: there each is an error that writes nothing. Under a seed the perturbed module gives the
// contract's bytes with no wait given up, and its stall count reads 0 after every launch.
TEST_F(ModuleFile, ThePerturbedModuleHasItsControlsAndTheProductModuleNone) {
  EXPECT_FALSE(embedded_->is_perturbed_module());
  EXPECT_FALSE(embedded_->set_timing_seed(5).ok());
  std::uint32_t stalls = 7;
  EXPECT_FALSE(embedded_->take_timing_stalls(&stalls).ok());
  EXPECT_EQ(stalls, 0u);
  const fs::path path = beside_this_binary("w8a16_perturbed.fatbin");
  ASSERT_TRUE(fs::is_regular_file(path)) << path << " is built beside the CLI with the module (device/CMakeLists.txt)";
  device::Status st;
  auto perturbed = device::CudaBackend::create_from_file(0, path.string(), &st);
  ASSERT_TRUE(perturbed) << st.message;
  ASSERT_TRUE(perturbed->is_perturbed_module());
  auto rig = gputest::GpuRig::over(std::move(perturbed));
  std::size_t cases = 0;
  for (const gputest::GpuCase& g :
       gputest::make_cases(golden::EntryPoint::gemm_pipelined_m64_strided, Body::wgmma_units128, 3, 0x9E7,
                           std::uint64_t{1} << 24, rig->present())) {
    const golden::CaseInputs in = gputest::inputs_of(g.c);
    for (std::uint64_t seed : {std::uint64_t{0x51}, std::uint64_t{0xA17}}) {
      ASSERT_TRUE(rig->backend().set_timing_seed(seed).ok());
      const gputest::GpuRun r = rig->run(g.c, in);
      ASSERT_TRUE(r.ok) << r.error << "\n  case: " << g.line();
      EXPECT_EQ(r.plan.body, Body::wgmma_units128) << g.line();
      ASSERT_TRUE(rig->backend().take_timing_stalls(&stalls).ok());
      EXPECT_EQ(stalls, 0u) << "a wait of a correct pipeline gave up\n  case: " << g.line();
      const props::Comparison cmp = props::compare_output(g.c, props::expected_output(g.c, in), r.c);
      EXPECT_EQ(cmp.mismatches, 0u) << (cmp.details.empty() ? "" : cmp.details.front()) << "\n  case: " << g.line();
    }
    ++cases;
  }
  EXPECT_GE(cases, 3u);
}

TEST_F(ModuleFile, AModuleWithARenamedKernelIsRefusedNamingTheSymbol) {
  const fs::path path = beside_this_binary("w8a16_kernels_renamed_m32.fatbin");
  ASSERT_TRUE(fs::is_regular_file(path)) << path << " is built with this binary (device/tests/gpu/CMakeLists.txt)";
  device::Status st;
  auto b = device::CudaBackend::create_from_file(0, path.string(), &st);
  ASSERT_TRUE(b) << st.message;
  EXPECT_FALSE(b->registry().resolve(KernelId::gemm_pipelined_m32));
  EXPECT_TRUE(b->registry().resolve(KernelId::gemm_pipelined));

  const device::ModuleCoverage c = device::module_coverage(b->registry(),
                                                           {Entry::gemm_pipelined_m32_strided, Entry::gemm_pipelined});
  EXPECT_FALSE(c.ok());
  const std::string text = device::missing_required_text(c);
  EXPECT_NE(text.find("the module lacks w8a16_gemm_pipelined_m32, required by gemm_pipelined_m32_strided"),
            std::string::npos)
      << text;
  bool listed = false;
  const std::vector<std::string> foreign = device::foreign_family_names(b->module_functions(&listed));
  if (listed) {
    EXPECT_NE(std::find(foreign.begin(), foreign.end(), "w8a16_gemm_pipelined_m32_renamed"), foreign.end());
  }

  // Even past the CLI's check, the launch layer launches nothing on the zero handle: the skinny
  // body's shape (the row-tile kernel declines K <= 5120 at N <= 3968) is refused, C untouched.
  auto out = b->allocate(2 * 13 * 15, &st);
  auto ab = b->allocate(2 * 13 * 5128, &st), wb = b->allocate(13 * 5120, &st), sb = b->allocate(4 * 40, &st);
  ASSERT_TRUE(out && ab && wb && sb) << st.message;
  ASSERT_TRUE(out->fill(0xA5).ok());
  device::Launcher launcher(*b);
  device::Call call;
  call.entry = Entry::gemm_pipelined_m32_strided;
  call.kernel = b->registry().resolve(KernelId::gemm_pipelined_m32);
  call.args = device::Args{ab->address(), wb->address(), sb->address(), out->address(), 13, 13, 5120, 5128, 15, 0};
  st = launcher.launch(call);
  EXPECT_EQ(st.code, device::Errc::kernel_missing) << st.message;
  EXPECT_NE(st.message.find("w8a16_gemm_pipelined_m32"), std::string::npos) << st.message;
  ASSERT_TRUE(b->synchronize().ok());
  std::vector<unsigned char> after(2 * 13 * 15);
  ASSERT_TRUE(out->download(after.data(), after.size()).ok());
  EXPECT_TRUE(std::all_of(after.begin(), after.end(), [](unsigned char x) { return x == 0xA5; }));
}

TEST_F(ModuleFile, AFamilySymbolWithAnotherSignatureIsRefusedAtLoad) {
  const fs::path path = beside_this_binary("w8a16_fixture_wrong_signature.fatbin");
  ASSERT_TRUE(fs::is_regular_file(path)) << path << " is built with this binary (device/tests/gpu/CMakeLists.txt)";
  if (!embedded_->abi_checked())
    GTEST_SKIP() << "this driver lacks cuFuncGetParamInfo: parameter layouts cannot be checked here";
  device::Status st;
  auto b = device::CudaBackend::create_from_file(0, path.string(), &st);
  EXPECT_FALSE(b) << "a module whose w8a16_gemv_batch4_strided takes 2 parameters was accepted";
  EXPECT_NE(st.message.find("w8a16_gemv_batch4_strided has 2 parameters"), std::string::npos) << st.message;
}

TEST_F(ModuleFile, AFileThatIsNoModuleIsRefusedBeforeTheDriverSeesIt) {
  const fs::path path = fs::temp_directory_path() / ("w8a16_not_a_module_" + std::to_string(getpid()));
  std::ofstream(path) << "not a module\n";
  device::Status st;
  EXPECT_FALSE(device::CudaBackend::create_from_file(0, path.string(), &st));
  fs::remove(path);
  EXPECT_NE(st.message.find("neither a cubin (ELF) nor a fatbin"), std::string::npos) << st.message;
  EXPECT_FALSE(device::CudaBackend::create_from_file(0, "/nonexistent/w8a16.fatbin", &st));
  EXPECT_NE(st.message.find("no such file"), std::string::npos) << st.message;
}

// The driver crashed on a fatbin cut to half its length and hung on a cubin cut at 2,000 bytes:
// both are refused before it sees them (module_check.hpp), and the backend still loads the whole.
TEST_F(ModuleFile, ACutModuleIsRefusedBeforeTheDriverSeesIt) {
  const std::vector<unsigned char> image = device::CudaBackend::embedded_module();
  ASSERT_GT(image.size(), 80u + 2000u);
  const std::size_t cubin_at = 16 + (image[16 + 4] | image[16 + 5] << 8);  // the first entry's payload
  struct Cut {
    std::size_t from, bytes;
    const char* expect;
  } cuts[] = {{0, image.size() / 2, "the file is cut"},
              {cubin_at, 2000, "the section header table"},
              {cubin_at, 16, "the ELF header at byte 0 is cut"}};
  for (const Cut& c : cuts) {
    const fs::path path = fs::temp_directory_path() / ("w8a16_cut_" + std::to_string(getpid()) + ".module");
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(image.data() + c.from), static_cast<std::streamsize>(c.bytes));
    device::Status st;
    EXPECT_FALSE(device::CudaBackend::create_from_file(0, path.string(), &st)) << c.from << "+" << c.bytes;
    fs::remove(path);
    EXPECT_NE(st.message.find(c.expect), std::string::npos) << st.message;
    EXPECT_NE(st.message.find("--module "), std::string::npos) << st.message;
  }
}

}  // namespace
