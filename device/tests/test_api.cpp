// SPDX-License-Identifier: MIT OR Apache-2.0
// The Launcher's named entry points keep the seed's argument order: each call, with a distinct
// value in every position, yields the plan of the matching Entry with every argument in its place.
#include <gtest/gtest.h>

#include "w8a16/device/api.hpp"
#include "w8a16/device/recording_backend.hpp"

namespace w8a16::device {
namespace {

constexpr DevPtr kA = 0x10000000000ull, kW = 0x20000000000ull, kS = 0x30000000000ull, kC = 0x40000000000ull;
constexpr Stream kStream = 42;

void expect_plan(const RecordingBackend& rec, Entry e, std::uint32_t m, std::uint32_t lda, std::uint32_t ldc) {
  ASSERT_EQ(rec.plans().size(), 1u) << entry_name(e);
  const Plan& p = rec.plans().front();
  EXPECT_EQ(p.entry, e);
  EXPECT_EQ(p.params.input, kA);
  EXPECT_EQ(p.params.weight, kW);
  EXPECT_EQ(p.params.block_scale, kS);
  EXPECT_EQ(p.params.output, kC);
  EXPECT_EQ(p.params.m, m);
  EXPECT_EQ(p.params.n, 7u);
  EXPECT_EQ(p.params.k, 256u);
  EXPECT_EQ(p.params.a_row_stride, lda);
  EXPECT_EQ(p.params.c_row_stride, ldc);
  EXPECT_EQ(p.stream, kStream);
}

TEST(Api, NamedEntryPointsKeepTheSeedsArgumentOrder) {
  struct Strided {
    Entry e;
    Status (Launcher::*fn)(KernelHandle, DevPtr, DevPtr, DevPtr, DevPtr, std::uint32_t, std::uint32_t, std::uint32_t,
                           std::uint32_t, std::uint32_t, Stream);
  } strided[] = {{Entry::gemm_pipelined_m32_strided, &Launcher::gemm_pipelined_m32_strided},
                 {Entry::gemm_pipelined_m64_strided, &Launcher::gemm_pipelined_m64_strided},
                 {Entry::gemv_batch4_strided, &Launcher::gemv_batch4_strided},
                 {Entry::gemv_batch16_strided, &Launcher::gemv_batch16_strided}};
  for (const auto& s : strided) {
    RecordingBackend rec;
    Launcher api(rec);
    const Status st = (api.*s.fn)(KernelHandle{3}, kA, kW, kS, kC, 3, 7, 256, 264, 9,
                                  kStream);  // m <= 4 for every GEMV
    ASSERT_TRUE(st.ok()) << st.message;
    expect_plan(rec, s.e, 3, 264, 9);
  }
  struct Contiguous {
    Entry e;
    Status (Launcher::*fn)(KernelHandle, DevPtr, DevPtr, DevPtr, DevPtr, std::uint32_t, std::uint32_t, std::uint32_t,
                           Stream);
  } contiguous[] = {{Entry::gemm_pipelined, &Launcher::gemm_pipelined},
                    {Entry::gemm_pipelined_m32, &Launcher::gemm_pipelined_m32},
                    {Entry::gemm_pipelined_m64, &Launcher::gemm_pipelined_m64}};
  for (const auto& c : contiguous) {
    RecordingBackend rec;
    Launcher api(rec);
    const Status st = (api.*c.fn)(KernelHandle{3}, kA, kW, kS, kC, 5, 7, 256, kStream);
    ASSERT_TRUE(st.ok()) << st.message;
    expect_plan(rec, c.e, 5, 256, 7);
  }
}

TEST(Api, ByMTakesItsThreeHandlesInTheSeedsOrder) {
  RecordingBackend rec(StaticRegistry::without_hopper_tier());  // the seed's by_m, below the Hopper tier
  Launcher api(rec);
  const KernelHandle full{11}, m32{12}, m64{13};
  // m = 5: the 32-row twin, on the second handle (seed line 332).
  ASSERT_TRUE(api.gemm_pipelined_by_m(full, m32, m64, kA, kW, kS, kC, 5, 7, 256, kStream).ok());
  expect_plan(rec, Entry::gemm_pipelined_by_m, 5, 256, 7);
  EXPECT_EQ(rec.plans().back().handle, m32);
  // m = 40: the 64-row twin, on the third; m = 65: the 128-row tile, on the first.
  ASSERT_TRUE(api.gemm_pipelined_by_m(full, m32, m64, kA, kW, kS, kC, 40, 7, 256, kStream).ok());
  EXPECT_EQ(rec.plans().back().handle, m64);
  ASSERT_TRUE(api.gemm_pipelined_by_m(full, m32, m64, kA, kW, kS, kC, 65, 7, 256, kStream).ok());
  EXPECT_EQ(rec.plans().back().handle, full);
}

}  // namespace
}  // namespace w8a16::device
