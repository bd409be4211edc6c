// SPDX-License-Identifier: MIT OR Apache-2.0
// The arithmetic of a timing (method.hpp), the operands (inputs.hpp) and the byte check (check.hpp):
// shape parsing and its messages, the floor against the committed bench runs, the rotation plan,
// the median, the samples and the emulator's bytes over them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "w8a16/bench/check.hpp"
#include "w8a16/bench/inputs.hpp"
#include "w8a16/bench/method.hpp"
#include "w8a16/reference/bf16.hpp"
#include "w8a16/reference/contract.hpp"
#include "w8a16/reference/e4m3fn.hpp"

namespace {

using namespace w8a16;
using bench::Range;
using bench::Shape;

TEST(BenchShape, NxKParsesAndEveryRuleHasItsMessage) {
  Shape sh;
  std::string why;
  ASSERT_TRUE(bench::parse_shape("12288x2048", &sh, &why)) << why;
  EXPECT_EQ(sh.n, 12288u);
  EXPECT_EQ(sh.k, 2048u);
  ASSERT_TRUE(bench::parse_shape("1x128", &sh, &why));
  EXPECT_EQ(sh.n, 1u);
  const std::pair<const char*, const char*> bad[] = {
      {"", "is not NxK (e.g. 12288x2048)"},
      {"12288", "is not NxK (e.g. 12288x2048)"},
      {"x2048", "is not NxK (e.g. 12288x2048)"},
      {"12288x", "is not NxK (e.g. 12288x2048)"},
      {"12 288x2048", "is not NxK with decimal N and K"},
      {"-5x128", "is not NxK with decimal N and K"},
      {"0x12", "N must be >= 1 and K a positive multiple of 128"},  // not hex: N = 0, K = 12
      {"1234567890x128", "is not NxK with decimal N and K"},
      {"0x128", "N must be >= 1 and K a positive multiple of 128"},
      {"64x0", "N must be >= 1 and K a positive multiple of 128"},
      {"64x100", "N must be >= 1 and K a positive multiple of 128"},
      {"65536x65536", "N*K must stay below 2^32 (the kernels' 32-bit offsets)"},
  };
  for (const auto& [text, rule] : bad) {
    why.clear();
    sh = Shape{7, 7};
    EXPECT_FALSE(bench::parse_shape(text, &sh, &why)) << text;
    EXPECT_NE(why.find(rule), std::string::npos) << text << ": " << why;
    EXPECT_NE(why.find(std::string("'") + text + "'"), std::string::npos) << "the message names the text: " << why;
    EXPECT_EQ(sh.n, 7u) << "a refused shape changes nothing";
  }
}

TEST(BenchShape, TheRowsBoundAAndC) {
  std::string why;
  EXPECT_TRUE(bench::check_rows(1, {12288, 2048}, &why));
  EXPECT_TRUE(bench::check_rows(65536, {65535, 65408}, &why)) << why;
  EXPECT_FALSE(bench::check_row_count(0, &why));
  EXPECT_EQ(why, "--m 0: must be in 1..65536");
  EXPECT_FALSE(bench::check_rows(65537, {1, 128}, &why));
  EXPECT_EQ(why, "--m 65537: must be in 1..65536");
  EXPECT_FALSE(bench::check_rows(65536, {65536, 128}, &why));
  EXPECT_EQ(why, "M=65536 with N=65536, K=128: M*K and M*N must stay below 2^32");
  EXPECT_FALSE(bench::check_rows(65536, {128, 65536}, &why));
}

TEST(BenchFloor, BytesAreWSAReadAndCWritten) {
  // W 12288*2048, S 4*96*16, A 2*1*2048, C 2*1*12288.
  EXPECT_EQ(bench::floor_bytes({12288, 2048}, 1), 25165824.0 + 6144 + 4096 + 24576);
  // A partial scale row counts whole: N = 129 has two rows of scales.
  EXPECT_EQ(bench::weight_bytes({129, 256}), 129.0 * 256 + 4.0 * 2 * 2);
  EXPECT_EQ(bench::floor_bytes({129, 256}, 3), 129.0 * 256 + 16 + 2.0 * 3 * 256 + 2.0 * 3 * 129);
  // A copy reads and writes each byte.
  EXPECT_DOUBLE_EQ(bench::copy_bandwidth(std::size_t{1} << 30, 500.0), 2.0 * 1073741824 / 500e-6);
  EXPECT_DOUBLE_EQ(bench::floor_us(4.0e6, 4.0e12), 1.0);
  EXPECT_STREQ(bench::kFloorFormula, "bytes (W n*k, S 4*ceil(n/128)*k/128, A 2*m*k, C 2*m*n) / copy bandwidth");
  EXPECT_EQ(bench::kCopyBandwidthBytes, std::size_t{1} << 30);
}

// The committed runs (device/kernels/bench-h200*.json) are what the next GPU run is compared with:
// every row's bytes and floor must come out of this arithmetic the same, to the last bit.
TEST(BenchFloor, TheCommittedRunsFloorsAreRecomputedBitForBit) {
  std::size_t rows = 0;
  for (const char* name : {"bench-h200.json", "bench-h200-hopper.json"}) {
    std::ifstream f(std::string(W8A16_SOURCE_DIR) + "/device/kernels/" + name);
    ASSERT_TRUE(f) << name;
    const nlohmann::json j = nlohmann::json::parse(f);
    const double bw = j.at("copy_bandwidth_bytes_per_s").get<double>();
    EXPECT_EQ(j.at("method").at("floor").get<std::string>(), bench::kFloorFormula) << name;
    for (const nlohmann::json& r : j.at("rows")) {
      const Shape sh{r.at("n").get<std::uint32_t>(), r.at("k").get<std::uint32_t>()};
      const std::uint32_t m = r.at("m").get<std::uint32_t>();
      EXPECT_EQ(bench::floor_bytes(sh, m), r.at("bytes").get<double>()) << name << " " << r.dump();
      EXPECT_EQ(bench::floor_us(bench::floor_bytes(sh, m), bw), r.at("floor_us").get<double>())
          << name << " " << r.dump();
      ++rows;
    }
  }
  EXPECT_GE(rows, 100u);
}

TEST(BenchRotation, CopiesPassTheMibAndAreNeverFewerThanTwo) {
  const double w = bench::weight_bytes({12288, 2048});  // 25,171,968 bytes
  EXPECT_EQ(bench::rotation_copies(w, 512), static_cast<int>(std::ceil(512.0 * 1048576 / w)));
  EXPECT_EQ(bench::rotation_copies(w, 512), 22);
  EXPECT_GE(bench::rotation_copies(w, 512) * w, 512.0 * 1048576);
  EXPECT_LT((bench::rotation_copies(w, 512) - 1) * w, 512.0 * 1048576);
  EXPECT_EQ(bench::rotation_copies(1048576, 8), 8);  // exactly 8 MiB: 8 copies, not 9
  EXPECT_EQ(bench::rotation_copies(1048576, 8.5), 9);
  EXPECT_EQ(bench::rotation_copies(bench::weight_bytes({51200, 5120}), 512), 3);
  EXPECT_EQ(bench::rotation_copies(1e12, 512), 2);  // one copy passes the MiB: still 2
  EXPECT_EQ(bench::rotation_copies(w, 0), 2);
}

TEST(BenchTiming, TheMedianIsTheUpperMiddleOfTheSortedTimes) {
  bench::Timing t = bench::summarize({5, 1, 3}, true);
  ASSERT_TRUE(t.ok);
  EXPECT_EQ(t.median_us, 3);
  EXPECT_EQ(t.min_us, 1);
  EXPECT_EQ(t.max_us, 5);
  EXPECT_TRUE(t.graph);
  t = bench::summarize({4, 1, 3, 2}, false);
  EXPECT_EQ(t.median_us, 3);
  EXPECT_FALSE(t.graph);
  t = bench::summarize({}, true);
  EXPECT_FALSE(t.ok);
  EXPECT_EQ(t.error, "no timed launch");
}

std::uint64_t fnv(std::uint64_t h, const void* p, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) h = (h ^ static_cast<const unsigned char*>(p)[i]) * 0x100000001B3ull;
  return h;
}

TEST(BenchInputs, TheBytesOfASeedAreTheRecordedRunsBytes) {
  // Two 2^20-element chunks of W and of A. The digest is that of the inputs the committed runs
  // (device/kernels/bench-h200*.json, built with g++) timed; any compiler must draw the same.
  const Shape sh{2048, 1024};
  const bench::HostInputs in = bench::make_host_inputs(1100, sh, bench::inputs_seed(0x9BE7C4, sh));
  ASSERT_EQ(in.a.size(), 1100u * 1024);
  ASSERT_EQ(in.w.size(), 2048u * 1024);
  ASSERT_EQ(in.s.size(), 16u * 8);
  std::uint64_t h = 0xcbf29ce484222325ull;
  h = fnv(h, in.a.data(), in.a.size() * 2);
  h = fnv(h, in.w.data(), in.w.size());
  h = fnv(h, in.s.data(), in.s.size() * 4);
  EXPECT_EQ(h, 0x108e38b0915c6aceull);
  EXPECT_EQ(in.a[0], 0x3f5a);
  EXPECT_EQ(in.w[0], 0xe7);
  EXPECT_EQ(in.s[0], 0x1.9dd3fp-6f);
  EXPECT_EQ(in.s[1], 0x1.4747e6p-8f);
  EXPECT_EQ(bench::inputs_seed(0x9BE7C4, sh), 0x9BE7C4ull ^ (2048ull << 32) ^ 1024);
}

TEST(BenchInputs, EveryOperandIsInItsRangeAndNoneIsAllZero) {
  const Shape sh{300, 384};
  const bench::HostInputs in = bench::make_host_inputs(5, sh, 42);
  std::size_t a_nonzero = 0, w_nonzero = 0;
  for (std::uint16_t x : in.a) {
    float f;
    const std::uint32_t bits = ref::bf16_bits_to_f32_bits(x);
    std::memcpy(&f, &bits, 4);
    // Drawn in [-2, 2); rounding to BF16 can reach 2 itself.
    ASSERT_TRUE(f >= -2.0f && f <= 2.0f) << std::hex << x;
    a_nonzero += f != 0;
  }
  for (std::uint8_t w : in.w) {
    ASSERT_FALSE(ref::e4m3fn_is_nan(w)) << int(w);
    w_nonzero += w != 0 && w != 0x80;
  }
  for (float s : in.s) ASSERT_TRUE(s >= 0x1p-8f && s < 0x1p-4f) << s;
  EXPECT_GT(a_nonzero, in.a.size() * 9 / 10);
  EXPECT_GT(w_nonzero, in.w.size() * 9 / 10);
  const bench::HostInputs again = bench::make_host_inputs(5, sh, 42), other = bench::make_host_inputs(5, sh, 43);
  EXPECT_EQ(in.a, again.a);
  EXPECT_EQ(in.w, again.w);
  EXPECT_EQ(in.s, again.s);
  EXPECT_NE(in.w, other.w);
}

TEST(BenchInputs, DequantizedWeightsAreWTimesSRoundedToBf16) {
  const Shape sh{130, 256};
  const bench::HostInputs in = bench::make_host_inputs(1, sh, 7);
  const std::vector<std::uint16_t> dq = bench::dequantize_bf16(in, sh);
  ASSERT_EQ(dq.size(), in.w.size());
  for (std::uint32_t n : {0u, 127u, 128u, 129u})
    for (std::uint32_t k : {0u, 127u, 128u, 255u}) {
      const float v = ref::e4m3fn_to_f32(in.w[n * 256 + k]) * in.s[(n / 128) * 2 + k / 128];
      std::uint32_t bits;
      std::memcpy(&bits, &v, 4);
      EXPECT_EQ(dq[n * 256 + k], ref::f32_bits_to_bf16_rne(bits)) << n << "," << k;
    }
}

TEST(BenchSample, RangesCoverTheEdgesAndTheMiddleAndMerge) {
  EXPECT_EQ(bench::sample_ranges(1000, 8, 1), (std::vector<Range>{{0, 8}, {500, 508}, {992, 1000}}));
  EXPECT_EQ(bench::sample_ranges(10, 8, 1), (std::vector<Range>{{0, 10}}));
  // Columns: starts at multiples of 128, the last range ends at N (a partial block too).
  EXPECT_EQ(bench::sample_ranges(300, 128, 128), (std::vector<Range>{{0, 300}}));
  EXPECT_EQ(bench::sample_ranges(12288, 128, 128), (std::vector<Range>{{0, 128}, {6144, 6272}, {12160, 12288}}));
  EXPECT_EQ(bench::sample_ranges(1000, 128, 128), (std::vector<Range>{{0, 128}, {384, 512}, {768, 1000}}));
}

TEST(BenchSample, SmallCasesAreCheckedWholeAndLargeOnesAtTheirEdges) {
  bench::Sample s = bench::choose_sample(16, {12288, 2048}, 1ull << 31);
  EXPECT_TRUE(s.full);
  EXPECT_EQ(s.elements(), 16u * 12288);
  s = bench::choose_sample(512, {51200, 5120}, 1ull << 31);
  EXPECT_FALSE(s.full);
  EXPECT_EQ(s.rows, (std::vector<Range>{{0, 8}, {256, 264}, {504, 512}}));
  EXPECT_EQ(s.cols, (std::vector<Range>{{0, 128}, {25600, 25728}, {51072, 51200}}));
  EXPECT_EQ(s.elements(), 24u * 384);
}

// The emulator's bytes over a subsample are the whole GEMM's bytes at those elements, for both
// contracts: the pieces see exactly the operands of their columns.
TEST(BenchSample, ExpectedBytesAreTheEmulatorsAtEverySampledElement) {
  const Shape sh{700, 384};
  const std::uint32_t m = 40;
  const bench::HostInputs in = bench::make_host_inputs(m, sh, 11);
  const bench::Sample smp = bench::choose_sample(m, sh, 1);  // force the subsample
  ASSERT_FALSE(smp.full);
  const ref::GemmView v = ref::gemm_view(in.a.data(), sh.k, in.w.data(), in.s.data(), m, sh.n, sh.k);
  for (device::Contract contract : {device::Contract::canonical, device::Contract::gemv}) {
    std::vector<std::uint16_t> whole(static_cast<std::size_t>(m) * sh.n);
    if (contract == device::Contract::gemv) ref::gemm_gemv(v, whole.data(), sh.n);
    else ref::gemm_canonical(v, ref::Arch::sm90, whole.data(), sh.n);
    const std::vector<std::uint16_t> want = bench::expected_sample(in, sh, smp, contract);
    ASSERT_EQ(want.size(), smp.elements());
    const bench::Check ck = bench::compare_sample(whole, sh.n, smp, want);
    EXPECT_EQ(ck.compared, smp.elements());
    EXPECT_EQ(ck.mismatches, 0u) << ck.first;
    // And the full sample is the whole output.
    const bench::Sample all = bench::choose_sample(m, sh, ~0ull);
    EXPECT_EQ(bench::expected_sample(in, sh, all, contract), whole);
  }
}

TEST(BenchCheck, AMismatchIsCountedAndTheFirstIsNamedWithBothBitPatterns) {
  const bench::Sample smp{{{0, 2}}, {{0, 3}}, true};
  const std::vector<std::uint16_t> want = {1, 2, 3, 4, 5, 6};
  std::vector<std::uint16_t> got = {1, 2, 3, 0xAA, 4, 5, 6, 0xBB};  // pitch 4: rows {1,2,3,_}, {4,5,6,_}
  bench::Check ck = bench::compare_sample(got, 4, smp, want);
  EXPECT_EQ(ck.compared, 6u);
  EXPECT_EQ(ck.mismatches, 0u) << "the pitch padding is not compared";
  got[5] = 0x7FFF;
  got[6] = 0xFFFF;
  ck = bench::compare_sample(got, 4, smp, want);
  EXPECT_EQ(ck.mismatches, 2u);
  EXPECT_EQ(ck.first, "C[1][1] = 0x7fff (emulator 0x0005)");
  EXPECT_TRUE(ck.full);
}

TEST(BenchCheck, CublasErrorIsRelativeToFloat64AndNaNIsInfinite) {
  const Shape sh{128, 128};
  const bench::HostInputs in = bench::make_host_inputs(2, sh, 3);
  const std::vector<std::uint16_t> dq = bench::dequantize_bf16(in, sh);
  const bench::Sample smp = bench::choose_sample(2, sh, ~0ull);
  std::vector<std::uint16_t> c(2 * 128);
  for (std::uint32_t r = 0; r < 2; ++r)
    for (std::uint32_t n = 0; n < 128; ++n) {
      double acc = 0;
      for (std::uint32_t k = 0; k < 128; ++k) {
        float a, w;
        const std::uint32_t ab = ref::bf16_bits_to_f32_bits(in.a[r * 128 + k]),
                            wb = ref::bf16_bits_to_f32_bits(dq[n * 128 + k]);
        std::memcpy(&a, &ab, 4);
        std::memcpy(&w, &wb, 4);
        acc += double(a) * w;
      }
      const float f = static_cast<float>(acc);
      std::uint32_t bits;
      std::memcpy(&bits, &f, 4);
      c[r * 128 + n] = ref::f32_bits_to_bf16_rne(bits);
    }
  const double e = bench::cublas_rel_error(c, in, dq, sh, smp);
  EXPECT_GT(e, 0.0);
  EXPECT_LT(e, 1.0 / 256) << "BF16 rounding alone";
  EXPECT_LE(e, bench::kCublasMaxRelError);
  std::vector<std::uint16_t> zero(c.size(), 0);
  EXPECT_DOUBLE_EQ(bench::cublas_rel_error(zero, in, dq, sh, smp), 1.0);
  c[77] = 0x7FC0;  // NaN
  EXPECT_TRUE(std::isinf(bench::cublas_rel_error(c, in, dq, sh, smp)));
}

}  // namespace
