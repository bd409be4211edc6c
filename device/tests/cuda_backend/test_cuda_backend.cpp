// SPDX-License-Identifier: MIT OR Apache-2.0
// The CUDA backend's mechanics on a real device, over fixture kernels (fixture_kernels.cu): the
// driver loads, limits come from the device, the registry resolves present kernels and zeroes the
// rest, buffers round-trip, and plans launch with the right arguments, grid and shared memory.
// Without a GPU (or a driver) every test skips and says why.
#include <gtest/gtest.h>

#include <vector>

#include "w8a16/device/api.hpp"
#include "w8a16/device/cuda_backend.hpp"

extern const unsigned char w8a16_fixture_fatbin[];
extern const std::size_t w8a16_fixture_fatbin_size;

namespace w8a16::device {
namespace {

std::unique_ptr<CudaBackend> fixture_backend(std::string* why) {
  Status st;
  auto b = CudaBackend::create_with_module(0, w8a16_fixture_fatbin, w8a16_fixture_fatbin_size, &st);
  if (!b) *why = st.message;
  return b;
}

#define REQUIRE_GPU(b)                \
  std::string why_##b;                \
  auto b = fixture_backend(&why_##b); \
  if (!b) GTEST_SKIP() << "no usable CUDA device or driver: " << why_##b

TEST(CudaBackend, LimitsComeFromTheDevice) {
  REQUIRE_GPU(b);
  const DeviceLimits l = b->limits();
  std::printf("max opt-in dynamic smem %u, grid (%u, %u, %u)\n", l.max_dynamic_smem_per_block, l.max_grid_x,
              l.max_grid_y, l.max_grid_z);
  EXPECT_GE(l.max_dynamic_smem_per_block, kSmemWithoutOptIn);
  EXPECT_EQ(l.max_grid_x, 2147483647u);
  EXPECT_EQ(l.max_grid_y, 65535u);
}

TEST(CudaBackend, RegistryResolvesPresentKernelsAndZeroesTheRest) {
  REQUIRE_GPU(b);
  const KernelRegistry& r = b->registry();
  EXPECT_TRUE(r.resolve(KernelId::gemm_pipelined));
  EXPECT_TRUE(r.resolve(KernelId::gemm_pipelined_m32));
  EXPECT_FALSE(r.resolve(KernelId::gemm_pipelined_m64));
  EXPECT_FALSE(r.resolve(KernelId::tc_rows));
  EXPECT_FALSE(r.resolve(KernelId::gemv_batch4_strided));
  Status st;
  auto empty = CudaBackend::create_with_module(0, nullptr, 0, &st);
  ASSERT_TRUE(empty) << st.message;
  for (KernelId id : kAllKernels) EXPECT_FALSE(empty->registry().resolve(id)) << kernel_name(id);
}

TEST(CudaBackend, TheEmbeddedModuleLoads) {
  REQUIRE_GPU(b);
  Status st;
  auto real = CudaBackend::create(0, &st);
  ASSERT_TRUE(real) << st.message;
  std::printf("embedded module: %zu bytes\n", CudaBackend::embedded_module_bytes());
  for (KernelId id : kAllKernels)
    std::printf("  %-28s %s\n", kernel_name(id), real->registry().resolve(id) ? "present" : "absent (zero handle)");
}

TEST(CudaBackend, BuffersRoundTrip) {
  REQUIRE_GPU(b);
  auto buf = b->allocate(1000);
  ASSERT_TRUE(buf);
  ASSERT_TRUE(buf->fill(0x5A).ok());
  std::vector<std::uint8_t> src(100), got(1000);
  for (int i = 0; i < 100; ++i) src[i] = static_cast<std::uint8_t>(i);
  ASSERT_TRUE(buf->upload(src.data(), 100, 900).ok());
  ASSERT_TRUE(buf->download(got.data(), 1000).ok());
  for (int i = 0; i < 900; ++i) ASSERT_EQ(got[i], 0x5A) << i;
  for (int i = 0; i < 100; ++i) ASSERT_EQ(got[900 + i], i) << i;
  EXPECT_FALSE(buf->upload(src.data(), 100, 901).ok());
}

// Launches through the API and checks every element of C: the probe inside [M, N), poison outside.
void launch_and_check(CudaBackend& b, Entry e, std::uint32_t m, std::uint32_t n, std::uint32_t k, std::uint32_t lda,
                      std::uint32_t ldc) {
  SCOPED_TRACE(std::string(entry_name(e)) + " m=" + std::to_string(m) + " n=" + std::to_string(n) +
               " k=" + std::to_string(k));
  std::vector<std::uint16_t> a(std::size_t{m} * lda);
  std::vector<std::uint8_t> w(std::size_t{n} * k);
  std::vector<float> s(((n + 127) / 128) * (k / 128), 3.0f);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<std::uint16_t>(i * 2654435761u >> 7);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<std::uint8_t>(i * 40503u >> 3);
  const std::size_t c_elems = std::size_t{m + 2} * ldc;
  auto da = b.allocate(a.size() * 2), dw = b.allocate(w.size()), ds = b.allocate(s.size() * 4),
       dc = b.allocate(c_elems * 2);
  ASSERT_TRUE(da && dw && ds && dc);
  ASSERT_TRUE(da->upload(a.data(), a.size() * 2).ok() && dw->upload(w.data(), w.size()).ok() &&
              ds->upload(s.data(), s.size() * 4).ok() && dc->fill(0xA5).ok());
  Launcher api(b);
  Call call;
  call.entry = e;
  call.kernel = api.handle(e == Entry::gemm_pipelined ? KernelId::gemm_pipelined : KernelId::gemm_pipelined_m32);
  call.args = Args{da->address(), dw->address(), ds->address(), dc->address(), m, n, k, lda, ldc, 0};
  const Status st = api.launch(call);
  ASSERT_TRUE(st.ok()) << st.message;
  ASSERT_TRUE(b.synchronize().ok());
  std::vector<std::uint16_t> got(c_elems);
  ASSERT_TRUE(dc->download(got.data(), c_elems * 2).ok());
  for (std::size_t r = 0; r < m + 2; ++r)
    for (std::size_t c = 0; c < ldc; ++c) {
      std::uint16_t want = 0xA5A5;
      if (r < m && c < n) want = static_cast<std::uint16_t>(a[r * lda + c % k] + w[c * k + r % k] + 3);
      ASSERT_EQ(got[r * ldc + c], want) << "C[" << r << "][" << c << "]";
    }
}

TEST(CudaBackend, LaunchesPlansWithTheirGeometry) {
  REQUIRE_GPU(b);
  launch_and_check(*b, Entry::gemm_pipelined, 129, 70, 128, 128, 70);              // opt-in smem 121,856
  launch_and_check(*b, Entry::gemm_pipelined_m32_strided, 5, 33, 256, 264, 37);    // skinny body
  launch_and_check(*b, Entry::gemm_pipelined_m32_strided, 40, 33, 128, 136, 35);   // tile body, grid.y = 2
  launch_and_check(*b, Entry::gemm_pipelined_m32_strided, 16, 9, 5120, 5128, 11);  // skinny at its K limit
}

TEST(CudaBackend, AMissingKernelLaunchesNothing) {
  REQUIRE_GPU(b);
  auto dc = b->allocate(64);
  ASSERT_TRUE(dc->fill(0xA5).ok());
  Launcher api(*b);
  auto da = b->allocate(4096), dw = b->allocate(4096), ds = b->allocate(64);
  const Status st = api.gemm_pipelined_m64(api.handle(KernelId::gemm_pipelined_m64), da->address(), dw->address(),
                                           ds->address(), dc->address(), 40, 1, 128);
  EXPECT_EQ(st.code, Errc::kernel_missing) << st.message;
  ASSERT_TRUE(b->synchronize().ok());
  std::vector<std::uint8_t> got(64);
  ASSERT_TRUE(dc->download(got.data(), 64).ok());
  EXPECT_EQ(got, std::vector<std::uint8_t>(64, 0xA5));
}

}  // namespace
}  // namespace w8a16::device
