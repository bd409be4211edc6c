// SPDX-License-Identifier: MIT OR Apache-2.0
// One measurement (measure.hpp) on the simulation backend with a stand-in timer: the check launch
// reads copy 0 into a poisoned C and is compared byte for byte, the timed launches rotate over
// every copy, and a timed output that differs from the checked one, an expected output that
// differs from the device's, or a launch that fails is reported, never passed. No time is asserted.
#include <gtest/gtest.h>

#include <set>

#include "w8a16/bench/measure.hpp"
#include "w8a16/device/sim_backend.hpp"

namespace {

using namespace w8a16;
using bench::Shape;

// Launches what a timing would launch, one by one (the GPU session's direct mode: a warm-up batch,
// then `batches` batches of `reps`), and reports a nominal time.
class StandInTimer final : public bench::Timer {
 public:
  device::Stream stream() const override { return 0x5EED; }
  bench::Timing time(int reps, int batches, bool try_graph, const bench::Launch& launch) override {
    ++calls;
    last_reps = reps;
    last_graph_asked = try_graph;
    for (int b = 0; b <= batches; ++b)
      for (int i = 0; i < reps; ++i)
        if (std::string e = launch(b * reps + i, stream()); !e.empty()) {
          bench::Timing t;
          t.error = e;
          return t;
        }
    return bench::summarize(std::vector<float>(static_cast<std::size_t>(batches), 1.0f), false);
  }
  int calls = 0, last_reps = 0;
  bool last_graph_asked = false;
};

struct Fixture {
  Shape sh{200, 256};
  std::uint32_t m = 5;
  device::SimBackend backend;
  bench::HostInputs in = bench::make_host_inputs(m, sh, 99);
  bench::DeviceOperands ops;
  device::Plan plan;
  explicit Fixture(int copies) {
    std::string why;
    EXPECT_TRUE(bench::upload_operands(backend, in, sh, m, copies, &ops, &why)) << why;
    device::Call c;
    c.entry = device::Entry::gemm_pipelined_m32_strided;
    c.kernel = backend.registry().resolve(device::KernelId::gemm_pipelined_m32);
    c.args = device::Args{
        ops.a->address(), ops.w[0]->address(), ops.s[0]->address(), ops.c->address(), m, sh.n, sh.k, sh.k, sh.n, 0};
    const device::Planned p = device::plan_launch(c, backend.registry(), backend.limits());
    EXPECT_TRUE(p.ok()) << p.status.message;
    plan = p.plan;
  }
};

TEST(BenchMeasure, OperandsAreIdenticalCopiesOfTheHostBytes) {
  Fixture f(3);
  ASSERT_EQ(f.ops.copies(), 3);
  std::set<device::DevPtr> addresses;
  for (int i = 0; i < 3; ++i) {
    std::vector<std::uint8_t> w(f.in.w.size());
    std::vector<float> s(f.in.s.size());
    ASSERT_TRUE(f.ops.w[i]->download(w.data(), w.size()).ok());
    ASSERT_TRUE(f.ops.s[i]->download(s.data(), s.size() * 4).ok());
    EXPECT_EQ(w, f.in.w) << "copy " << i;
    EXPECT_EQ(s, f.in.s) << "copy " << i;
    addresses.insert(f.ops.w[i]->address());
  }
  EXPECT_EQ(addresses.size(), 3u);
  EXPECT_EQ(f.ops.c->size(), std::size_t{5} * 200 * 2);
}

TEST(BenchMeasure, CheckedFirstThenTimedOverEveryCopy) {
  Fixture f(4);
  StandInTimer timer;
  bench::Expected expected(f.in, f.sh, bench::choose_sample(f.m, f.sh, ~0ull));
  const bench::MeasureOptions opt{2, 3, true};
  const bench::Measurement r = bench::measure_plan(f.backend, timer, f.plan, f.ops, expected, opt);
  ASSERT_TRUE(r.launched) << r.error;
  EXPECT_EQ(r.check.mismatches, 0u) << r.check.first;
  EXPECT_EQ(r.check.compared, 5u * 200);
  EXPECT_TRUE(r.check.full);
  EXPECT_TRUE(r.timing.ok);
  EXPECT_TRUE(r.stable);
  EXPECT_TRUE(r.bytes_ok());
  EXPECT_EQ(timer.calls, 1);
  EXPECT_EQ(timer.last_reps, 4) << "at least one launch per copy in a timed batch";
  EXPECT_TRUE(timer.last_graph_asked);
  // The check launch (copy 0), then the timed ones: launch i on copy i % 4, all on the timer's stream.
  const std::vector<device::Plan>& plans = f.backend.plans();
  ASSERT_EQ(plans.size(), 1u + 4 * (3 + 1));
  EXPECT_EQ(plans[0].params.weight, f.ops.w[0]->address());
  for (std::size_t i = 1; i < plans.size(); ++i) {
    EXPECT_EQ(plans[i].params.weight, f.ops.w[(i - 1) % 4]->address()) << i;
    EXPECT_EQ(plans[i].params.block_scale, f.ops.s[(i - 1) % 4]->address()) << i;
  }
  for (const device::Plan& p : plans) EXPECT_EQ(p.stream, timer.stream());
}

TEST(BenchMeasure, AnOutputThatIsNotTheEmulatorsIsAMismatch) {
  Fixture f(2);
  StandInTimer timer;
  const bench::HostInputs other = bench::make_host_inputs(f.m, f.sh, 100);
  bench::Expected expected(other, f.sh, bench::choose_sample(f.m, f.sh, ~0ull));
  const bench::Measurement r = bench::measure_plan(f.backend, timer, f.plan, f.ops, expected, {});
  ASSERT_TRUE(r.launched);
  EXPECT_GT(r.check.mismatches, 0u);
  EXPECT_NE(r.check.first.find("(emulator 0x"), std::string::npos) << r.check.first;
  EXPECT_FALSE(r.bytes_ok());
}

TEST(BenchMeasure, ACopyThatDiffersLeavesAnotherOutputAndIsCaught) {
  Fixture f(3);
  std::vector<std::uint8_t> w = f.in.w;
  for (auto& x : w) x = static_cast<std::uint8_t>(x ^ 0x01);
  ASSERT_TRUE(f.ops.w[2]->upload(w.data(), w.size()).ok());  // the last copy read by the timed launches
  StandInTimer timer;
  bench::Expected expected(f.in, f.sh, bench::choose_sample(f.m, f.sh, ~0ull));
  const bench::Measurement r = bench::measure_plan(f.backend, timer, f.plan, f.ops, expected,
                                                   bench::MeasureOptions{3, 1, false});
  ASSERT_TRUE(r.launched);
  EXPECT_EQ(r.check.mismatches, 0u) << "copy 0 is right";
  EXPECT_TRUE(r.timing.ok);
  EXPECT_FALSE(r.stable);
  EXPECT_FALSE(r.bytes_ok());
}

TEST(BenchMeasure, ALaunchThatFailsIsNotRunAndSaysWhy) {
  Fixture f(2);
  StandInTimer timer;
  bench::Expected expected(f.in, f.sh, bench::choose_sample(f.m, f.sh, ~0ull));
  device::Plan broken = f.plan;
  broken.dynamic_smem += 16;  // not the body's declared need: the simulation refuses the plan
  const bench::Measurement r = bench::measure_plan(f.backend, timer, broken, f.ops, expected, {});
  EXPECT_FALSE(r.launched);
  EXPECT_FALSE(r.error.empty());
  EXPECT_EQ(timer.calls, 0) << "nothing is timed after a failed check launch";
  EXPECT_FALSE(r.bytes_ok());
}

}  // namespace
