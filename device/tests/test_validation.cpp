// SPDX-License-Identifier: MIT OR Apache-2.0
// One test per validation rule: the error carries the rule's code and a message naming the
// argument, its value and the rule; nothing reaches the backend (the recording and simulation
// backends both see no plan); the poisoned output buffer keeps every byte.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "w8a16/device/api.hpp"
#include "w8a16/device/recording_backend.hpp"
#include "w8a16/device/sim_backend.hpp"

namespace w8a16::device {
namespace {

constexpr std::uint8_t kPoison = 0xA5;

// A valid strided call (m32 twin) over real buffers; each test breaks one thing. The module has
// every kernel but the Hopper tier (which would take every such call first), so the seed's bodies
// and limits are what the tests reach.
struct BadCall {
  Entry entry = Entry::gemm_pipelined_m32_strided;
  std::uint32_t m = 4, n = 40, k = 256, lda = 264, ldc = 48;
  StaticRegistry registry = StaticRegistry::without_hopper_tier();
  DeviceLimits limits = DeviceLimits::h200();
  bool zero_handle = false;
  // Applied to the call after it is built from the buffers.
  std::function<void(Call&)> mutate;
};

void expect_refused(const BadCall& s, Errc code, const std::vector<std::string>& says) {
  RecordingBackend rec(s.registry, s.limits);
  SimBackend sim(s.registry, s.limits);
  for (Backend* be : {static_cast<Backend*>(&rec), static_cast<Backend*>(&sim)}) {
    SCOPED_TRACE(be->name());
    auto a = be->allocate(2 * 64 * 1024);
    auto w = be->allocate(64 * 1024);
    auto sc = be->allocate(4096);
    auto c = be->allocate(2 * 64 * 48);
    ASSERT_TRUE(a && w && sc && c);
    ASSERT_TRUE(a->fill(0x3F).ok() && w->fill(0x38).ok() && sc->fill(0).ok() && c->fill(kPoison).ok());
    Call call;
    call.entry = s.entry;
    KernelId kid = KernelId::gemm_pipelined_m32;
    if (s.entry == Entry::gemv_batch4_strided) kid = KernelId::gemv_batch4_strided;
    if (s.entry == Entry::gemv_batch16_strided) kid = KernelId::gemv_batch16_strided;
    call.kernel = s.zero_handle ? KernelHandle{} : s.registry.resolve(kid);
    call.args = Args{a->address(), w->address(), sc->address(), c->address(), s.m, s.n, s.k, s.lda, s.ldc, 0};
    if (s.mutate) s.mutate(call);

    Launcher api(*be);
    const Status st = api.launch(call);
    EXPECT_EQ(st.code, code) << errc_name(st.code) << ": " << st.message;
    for (const std::string& text : says) EXPECT_NE(st.message.find(text), std::string::npos) << st.message;
    EXPECT_TRUE(rec.plans().empty());
    EXPECT_TRUE(sim.plans().empty());
    std::vector<std::uint8_t> after(c->size());
    ASSERT_TRUE(c->download(after.data(), after.size()).ok());
    EXPECT_EQ(after, std::vector<std::uint8_t>(c->size(), kPoison)) << "output bytes changed";
  }
}

TEST(Validation, TheBaseCallIsAccepted) {
  // The fixture's call must be valid, or every refusal below would prove nothing.
  BadCall s;
  RecordingBackend rec;
  auto a = rec.allocate(2 * 64 * 1024), w = rec.allocate(64 * 1024), sc = rec.allocate(4096),
       c = rec.allocate(2 * 64 * 48);
  Launcher api(rec);
  const Status st = api.gemm_pipelined_m32_strided(api.handle(KernelId::gemm_pipelined_m32), a->address(), w->address(),
                                                   sc->address(), c->address(), s.m, s.n, s.k, s.lda, s.ldc);
  EXPECT_TRUE(st.ok()) << st.message;
  EXPECT_EQ(rec.plans().size(), 1u);
}

TEST(Validation, MZeroIsRefused) {
  BadCall s;
  s.m = 0;
  expect_refused(s, Errc::m_zero, {"m=0", "at least 1"});
}

TEST(Validation, KMustBeAPositiveMultipleOf128) {
  for (std::uint32_t k : {0u, 64u, 129u, 200u, 136u}) {
    BadCall s;
    s.k = k;
    s.lda = 264;
    expect_refused(s, Errc::k_not_block_multiple, {"k=" + std::to_string(k), "positive multiple of 128"});
  }
}

TEST(Validation, APitchMustCoverK) {
  BadCall s;
  s.lda = 248;
  expect_refused(s, Errc::a_pitch_short, {"a_row_stride=248", "at least k=256"});
}

TEST(Validation, CPitchMustCoverN) {
  BadCall s;
  s.ldc = 39;
  expect_refused(s, Errc::c_pitch_short, {"c_row_stride=39", "at least n=40"});
}

TEST(Validation, APitchMustBeAMultipleOf8) {
  BadCall s;
  s.lda = 260;
  expect_refused(s, Errc::a_pitch_misaligned, {"a_row_stride=260", "multiple of 8", "cp.async"});
}

TEST(Validation, NZeroIsRefused) {
  BadCall s;
  s.n = 0;
  expect_refused(s, Errc::n_zero, {"n=0", "at least 1"});
}

TEST(Validation, NullPointersAreRefused) {
  const std::pair<const char*, DevPtr Args::*> fields[] = {{"input", &Args::input},
                                                           {"weight", &Args::weight},
                                                           {"block_scale", &Args::block_scale},
                                                           {"output", &Args::output}};
  for (const auto& f : fields) {
    BadCall s;
    s.mutate = [&](Call& c) { c.args.*(f.second) = 0; };
    expect_refused(s, Errc::null_pointer, {std::string(f.first) + "=null"});
  }
}

TEST(Validation, MisalignedPointersAreRefused) {
  const struct {
    const char* name;
    DevPtr Args::*field;
    DevPtr offset;
    const char* rule;
  } cases[] = {{"input", &Args::input, 8, "16-byte aligned"},
               {"weight", &Args::weight, 4, "16-byte aligned"},
               {"block_scale", &Args::block_scale, 2, "4-byte aligned"},
               {"output", &Args::output, 1, "2-byte aligned"}};
  for (const auto& q : cases) {
    BadCall s;
    s.mutate = [&](Call& c) { c.args.*(q.field) += q.offset; };
    expect_refused(s, Errc::misaligned_pointer, {std::string(q.name) + "=0x", q.rule});
  }
}

TEST(Validation, GemvRowLimits) {
  BadCall s4;
  s4.entry = Entry::gemv_batch4_strided;
  s4.m = 5;
  expect_refused(s4, Errc::gemv_too_many_rows, {"m=5", "at most 4"});
  BadCall s16;
  s16.entry = Entry::gemv_batch16_strided;
  s16.m = 17;
  expect_refused(s16, Errc::gemv_too_many_rows, {"m=17", "at most 16"});
}

// Extent products past 32 bits: the pointers stay valid, only the sizes grow; nothing is read.
TEST(Validation, ThirtyTwoBitIndexOverflowIsRefused) {
  BadCall a;
  a.lda = 1u << 30;  // m * a_row_stride = 2^32
  expect_refused(a, Errc::index_overflow, {"m * a_row_stride=4294967296", "below 2^32"});
  BadCall w;
  w.n = 1u << 24;  // n * k = 2^32
  w.ldc = 1u << 24;
  expect_refused(w, Errc::index_overflow, {"n * k=4294967296", "below 2^32"});
  BadCall c;
  c.ldc = 1u << 30;  // m * c_row_stride = 2^32
  expect_refused(c, Errc::index_overflow, {"m * c_row_stride=4294967296"});
}

TEST(Validation, TheLargestUnwrappedExtentIsAccepted) {
  // n * k = 2^32 - 2^16 stays within 32 bits: the bound is not off by a factor.
  Call c;
  c.entry = Entry::gemm_pipelined_m32_strided;
  c.kernel = KernelHandle{9};
  c.args = Args{
      0x10000000000ull, 0x20000000000ull, 0x30000000000ull, 0x40000000000ull, 1, 65535, 65536, 65536, 65535, 0};
  const Planned p = plan_launch(c, StaticRegistry::all_present(), DeviceLimits::h200());
  EXPECT_TRUE(p.ok()) << p.status.message;
}

TEST(Validation, GridPastTheDeviceLimitIsRefused) {
  BadCall y;
  y.m = 65;  // m32 tile body: grid.y = 3
  y.limits.max_grid_y = 2;
  expect_refused(y, Errc::grid_too_large, {"grid.y=3", "device limit 2"});
  BadCall x;
  x.limits.max_grid_x = 4;  // n = 40 in 8-column skinny strips: grid.x = 5
  expect_refused(x, Errc::grid_too_large, {"grid.x=5", "device limit 4"});
}

TEST(Validation, GridYPastTheH200LimitIsRefused) {
  // m = 65535 * 32 + 1 rows of the 32-row twin need grid.y = 65536 > 65535 on an H200.
  Call c;
  c.entry = Entry::gemm_pipelined_m32_strided;
  c.kernel = KernelHandle{9};
  c.args = Args{
      0x10000000000ull, 0x20000000000ull, 0x30000000000ull, 0x40000000000ull, 65535u * 32 + 1, 1, 128, 128, 1, 0};
  const Planned p = plan_launch(c, StaticRegistry::without_hopper_tier(), DeviceLimits::h200());
  EXPECT_EQ(p.status.code, Errc::grid_too_large) << p.status.message;
  EXPECT_NE(p.status.message.find("grid.y=65536"), std::string::npos) << p.status.message;
  c.args.m -= 1;
  EXPECT_TRUE(plan_launch(c, StaticRegistry::without_hopper_tier(), DeviceLimits::h200()).ok());
  // The Hopper tier's grid is one CTA per SM at most, whatever M is.
  const Planned h = plan_launch(c, StaticRegistry::all_present(), DeviceLimits::h200());
  ASSERT_TRUE(h.ok()) << h.status.message;
  EXPECT_EQ(h.plan.body, Body::wgmma_units128);  // 16,384 row tiles of one 128-column unit
  EXPECT_EQ(h.plan.grid, (Dim3{132, 1, 1}));     // one CTA per SM
}

TEST(Validation, SharedMemoryPastTheDeviceLimitIsRefused) {
  BadCall s;
  s.m = 33;  // the 32-row tile body (N = 40 is below the row-tile kernel's 33..64-row rule): 44,032 bytes
  s.limits.max_dynamic_smem_per_block = 44031;
  expect_refused(s, Errc::smem_too_large, {"dynamic_smem=44032", "opt-in limit 44031"});
}

TEST(Validation, HopperTierSharedMemoryPastTheDeviceLimitIsRefused) {
  BadCall s;
  s.registry = StaticRegistry::all_present();
  s.m = 100;  // 128-row tiles, one 64-column unit (N = 40): geometry.hpp's wgmma_smem_bytes(100, k64)
  s.limits.max_dynamic_smem_per_block = wgmma_smem_bytes(100, WgVariant::k64) - 1;
  expect_refused(s, Errc::smem_too_large,
                 {"dynamic_smem=" + std::to_string(wgmma_smem_bytes(100, WgVariant::k64)), "wgmma_units"});
}

TEST(Validation, OutputOverlappingAnOperandIsRefused) {
  const struct {
    const char* name;
    DevPtr Args::*field;
  } cases[] = {{"input", &Args::input}, {"weight", &Args::weight}, {"block_scale", &Args::block_scale}};
  for (const auto& q : cases) {
    BadCall s;
    s.mutate = [&](Call& c) { c.args.*(q.field) = c.args.output + 64; };  // inside C's used bytes
    expect_refused(s, Errc::output_overlaps_input, {"output=0x", std::string("overlap ") + q.name});
  }
}

TEST(Validation, OutputAdjacentToTheInputIsAcceptedAndOneElementCloserIsNot) {
  // C may start at the first byte past A's used span, or end at A's first: the overlap test is
  // exact at both boundaries.
  Call c;
  c.entry = Entry::gemm_pipelined_m32_strided;
  c.kernel = KernelHandle{9};
  c.args = Args{0x10000000000ull, 0x20000000000ull, 0x30000000000ull, 0, 4, 40, 256, 264, 48, 0};
  c.args.output = c.args.input + 2 * (3 * 264 + 256);
  EXPECT_TRUE(plan_launch(c, StaticRegistry::all_present(), DeviceLimits::h200()).ok());
  c.args.output -= 2;
  EXPECT_EQ(plan_launch(c, StaticRegistry::all_present(), DeviceLimits::h200()).status.code,
            Errc::output_overlaps_input);
  // And at the other end: C's last used byte right before A's first, then one element into it.
  c.args.output = c.args.input - 2 * (3 * 48 + 40);
  EXPECT_TRUE(plan_launch(c, StaticRegistry::all_present(), DeviceLimits::h200()).ok());
  c.args.output += 2;
  EXPECT_EQ(plan_launch(c, StaticRegistry::all_present(), DeviceLimits::h200()).status.code,
            Errc::output_overlaps_input);
}

TEST(Validation, AZeroHandleWithNoStandInIsRefused) {
  BadCall s;
  s.zero_handle = true;  // m = 4, k = 256: the skinny body of the m32 kernel, whose handle is zero
  expect_refused(s, Errc::kernel_missing, {"w8a16_gemm_pipelined_m32", "zero handle"});
}

TEST(Validation, EveryErrorCodeHasAName) {
  for (int c = 0; c <= static_cast<int>(Errc::no_device); ++c)
    EXPECT_STRNE(errc_name(static_cast<Errc>(c)), "unknown") << c;
}

}  // namespace
}  // namespace w8a16::device
