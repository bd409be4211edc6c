// SPDX-License-Identifier: MIT OR Apache-2.0
// The case line (golden/case.hpp): round trip, strict errors, and inputs that regenerate the same bytes.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>

#include "w8a16/device/kernels.hpp"
#include "w8a16/device/plan.hpp"
#include "w8a16/properties/case_runner.hpp"
#include "w8a16/golden/case.hpp"
#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/golden/case_rng.hpp"
#include "w8a16/properties/generators.hpp"

namespace {

using w8a16::golden::Case;
using w8a16::golden::CaseInputs;
using w8a16::golden::Distribution;
using w8a16::golden::EntryPoint;
namespace golden = w8a16::golden;

constexpr const char* kLine =
    "case/1 w8a16_gemm_pipelined_m32_strided m=17 n=257 k=5248 a_row_stride=5256 c_row_stride=263 "
    "dist=specials seed=0x0123456789abcdef gen=1";

CaseInputs regenerate_or_die(const Case& c) {
  CaseInputs in;
  std::string error;
  if (!golden::regenerate_inputs(c, &in, &error)) ADD_FAILURE() << golden::format_case(c) << ": " << error;
  return in;
}

TEST(CaseLine, ParsesEveryFieldOfAWrittenOutLine) {
  Case c;
  std::string error;
  ASSERT_TRUE(golden::parse_case(kLine, &c, &error)) << error;
  EXPECT_EQ(c.entry, EntryPoint::gemm_pipelined_m32_strided);
  EXPECT_EQ(c.m, 17u);
  EXPECT_EQ(c.n, 257u);
  EXPECT_EQ(c.k, 5248u);
  EXPECT_EQ(c.a_row_stride, 5256u);
  EXPECT_EQ(c.c_row_stride, 263u);
  EXPECT_EQ(c.dist, Distribution::specials);
  EXPECT_EQ(c.seed, 0x0123456789abcdefull);
  EXPECT_EQ(c.gen, 1u);
  EXPECT_EQ(golden::format_case(c), kLine);
}

// A case that takes kernels away (the Hopper tier, to reach the 32-row tile on an sm_90a module):
// one key more, after gen=, and the same first ten fields as any line.
TEST(CaseLine, AWithoutKeyNamesTheKernelsTakenAwayAndRoundTrips) {
  const std::string line = std::string(kLine) +
                           " without=w8a16_wgmma_rows,w8a16_wgmma_rows_n128,w8a16_wgmma_rows_n128_x2";
  Case c;
  std::string error;
  ASSERT_TRUE(golden::parse_case(line, &c, &error)) << error;
  EXPECT_EQ(c.without, golden::kWithoutHopperTier);
  EXPECT_EQ(golden::format_case(c), line);
  Case plain;
  ASSERT_TRUE(golden::parse_case(kLine, &plain, &error)) << error;
  EXPECT_EQ(plain.without, 0u);
  EXPECT_NE(c, plain);
  c.without = 0;
  EXPECT_EQ(golden::format_case(c), kLine);  // no key at all when nothing is taken away
}

// The symbols a line may name are the launch layer's, in its KernelId order (the mask is applied
// as device::KernelId bits).
TEST(CaseLine, WithoutNamesTheLaunchLayersKernelsInItsOrder) {
  ASSERT_EQ(static_cast<std::size_t>(golden::kKernelSymbolCount), w8a16::device::kKernelCount);
  for (std::size_t i = 0; i < w8a16::device::kKernelCount; ++i)
    EXPECT_EQ(golden::kKernelSymbols[i], w8a16::device::kernel_name(w8a16::device::kAllKernels[i])) << i;
  // An entry point's own kernel: the one its `kernel` argument names (device::entry_own_kernel).
  for (EntryPoint e : golden::kAllEntryPoints) {
    const auto id = static_cast<w8a16::device::KernelId>(golden::entry_point_own_symbol(e));
    EXPECT_EQ(id, w8a16::device::entry_own_kernel(w8a16::props::to_device_entry(e))) << golden::entry_point_name(e);
  }
}

RC_GTEST_PROP(CaseLine, ALineWithKernelsTakenAwayRoundTrips, ()) {
  Case c = *w8a16::props::gen_case();
  c.without = *rc::gen::inRange<std::uint32_t>(0, 1u << golden::kKernelSymbolCount) &
              ~golden::entry_point_own_mask(c.entry);
  const std::string line = golden::format_case(c);
  Case back;
  std::string error;
  RC_ASSERT(golden::parse_case(line, &back, &error));
  RC_ASSERT(back == c);
  RC_ASSERT(golden::format_case(back) == line);
}

RC_GTEST_PROP(CaseLine, FormattingThenParsingGivesTheSameCaseAndTheSameLine, ()) {
  const Case c = *w8a16::props::gen_case();
  const std::string line = golden::format_case(c);
  Case back;
  std::string error;
  RC_ASSERT(golden::parse_case(line, &back, &error));
  RC_ASSERT(back == c);
  RC_ASSERT(golden::format_case(back) == line);
}

// Each malformed line, and a fragment its error must contain (the field it names).
struct Malformed {
  const char* line;
  const char* error_has;
};
const Malformed kMalformed[] = {
    {"", "must start with 'case/1'"},
    {"garbage", "must start with 'case/1'"},
    {"case/2 w8a16_gemm_pipelined m=1 n=1 k=128 a_row_stride=128 c_row_stride=1 dist=specials seed=0x1 gen=1",
     "line format 'case/2' is not known"},
    {"case/1 w8a16_gemm_pipelined m=1 n=1 k=128 a_row_stride=128 c_row_stride=1 dist=specials seed=0x1", "expected 10"},
    {"case/1 w8a16_gemm_pipelined  m=1 n=1 k=128 a_row_stride=128 c_row_stride=1 dist=specials seed=0x1 gen=1",
     "expected 10"},
    {"case/1 w8a16_gemm_bogus m=1 n=1 k=128 a_row_stride=128 c_row_stride=1 dist=specials seed=0x1 gen=1",
     "unknown entry point 'w8a16_gemm_bogus'"},
    {"case/1 w8a16_gemm_pipelined n=1 m=1 k=128 a_row_stride=128 c_row_stride=1 dist=specials seed=0x1 gen=1",
     "expected 'm=...'"},
    {"case/1 w8a16_gemm_pipelined m=-1 n=1 k=128 a_row_stride=128 c_row_stride=1 dist=specials seed=0x1 gen=1",
     "m='-1' is not a decimal number"},
    {"case/1 w8a16_gemm_pipelined m=4294967296 n=1 k=128 a_row_stride=128 c_row_stride=1 dist=specials seed=0x1 gen=1",
     "m='4294967296'"},
    {"case/1 w8a16_gemm_pipelined m=0 n=1 k=128 a_row_stride=128 c_row_stride=1 dist=specials seed=0x1 gen=1",
     "m=0 must be in 1..65536"},
    {"case/1 w8a16_gemm_pipelined m=70000 n=1 k=128 a_row_stride=128 c_row_stride=1 dist=specials seed=0x1 gen=1",
     "m=70000 must be in 1..65536"},
    {"case/1 w8a16_gemm_pipelined m=1 n=0 k=128 a_row_stride=128 c_row_stride=0 dist=specials seed=0x1 gen=1",
     "n=0 must be in"},
    {"case/1 w8a16_gemm_pipelined m=1 n=1 k=100 a_row_stride=104 c_row_stride=1 dist=specials seed=0x1 gen=1",
     "k=100 must be a positive multiple of 128"},
    {"case/1 w8a16_gemm_pipelined_m32_strided m=1 n=1 k=128 a_row_stride=132 c_row_stride=1 dist=specials seed=0x1 gen=1",
     "a_row_stride=132 must be >= k=128 and a multiple of 8"},
    {"case/1 w8a16_gemm_pipelined_m32_strided m=1 n=9 k=128 a_row_stride=128 c_row_stride=8 dist=specials seed=0x1 gen=1",
     "c_row_stride=8 must be >= n=9"},
    {"case/1 w8a16_gemm_pipelined m=1 n=9 k=128 a_row_stride=136 c_row_stride=9 dist=specials seed=0x1 gen=1",
     "is contiguous"},
    {"case/1 w8a16_gemv_batch4_strided m=5 n=9 k=128 a_row_stride=128 c_row_stride=9 dist=specials seed=0x1 gen=1",
     "takes at most 4 rows, m=5"},
    {"case/1 w8a16_gemm_pipelined m=1 n=1 k=128 a_row_stride=128 c_row_stride=1 dist=gaussian seed=0x1 gen=1",
     "unknown distribution 'gaussian'"},
    {"case/1 w8a16_gemm_pipelined m=1 n=1 k=128 a_row_stride=128 c_row_stride=1 dist=specials seed=12 gen=1",
     "seed='12' is not 0x"},
    {"case/1 w8a16_gemm_pipelined m=1 n=1 k=128 a_row_stride=128 c_row_stride=1 dist=specials seed=0x10000000000000000 gen=1",
     "seed='0x10000000000000000'"},
    {"case/1 w8a16_gemm_pipelined m=1 n=1 k=128 a_row_stride=128 c_row_stride=1 dist=specials seed=0xfg gen=1",
     "seed='0xfg'"},
    {"case/1 w8a16_gemm_pipelined m=1 n=1 k=128 a_row_stride=128 c_row_stride=1 dist=specials seed=0x1 gen=2",
     "generator version gen=2 is not known to this build"},
    {"case/1 w8a16_gemm_pipelined m=1 n=1 k=128 a_row_stride=128 c_row_stride=1 dist=specials seed=0x1 gen=0",
     "generator version gen=0 is not known"},
    {"case/1 w8a16_gemm_pipelined m=65536 n=1048576 k=1048576 a_row_stride=1048576 c_row_stride=1048576 "
     "dist=specials seed=0x1 gen=1",
     "operands exceed"},
    {"case/1 w8a16_gemm_pipelined m=1 n=1 k=128 a_row_stride=128 c_row_stride=1 dist=specials seed=0x1 gen=1 "
     "without=w8a16_wgmma_rows without=w8a16_tc_rows",
     "expected 10"},
    {"case/1 w8a16_gemm_pipelined m=1 n=1 k=128 a_row_stride=128 c_row_stride=1 dist=specials seed=0x1 gen=1 with=x",
     "then optionally without=), found 11"},
    {"case/1 w8a16_gemm_pipelined m=1 n=1 k=128 a_row_stride=128 c_row_stride=1 dist=specials seed=0x1 gen=1 without=",
     "without= names '', which is no kernel symbol"},
    {"case/1 w8a16_gemm_pipelined m=1 n=1 k=128 a_row_stride=128 c_row_stride=1 dist=specials seed=0x1 gen=1 "
     "without=w8a16_wgmma_rows,w8a16_tc_rows_m65",
     "without= names 'w8a16_tc_rows_m65'"},
    {"case/1 w8a16_gemm_pipelined m=1 n=1 k=128 a_row_stride=128 c_row_stride=1 dist=specials seed=0x1 gen=1 "
     "without=w8a16_wgmma_rows_n128,w8a16_wgmma_rows",
     "in the family's order"},
    {"case/1 w8a16_gemm_pipelined m=1 n=1 k=128 a_row_stride=128 c_row_stride=1 dist=specials seed=0x1 gen=1 "
     "without=w8a16_tc_rows,w8a16_tc_rows",
     "each symbol once"},
    {"case/1 w8a16_gemm_pipelined_by_m m=1 n=1 k=128 a_row_stride=128 c_row_stride=1 dist=specials seed=0x1 gen=1 "
     "without=w8a16_gemm_pipelined",
     "the kernel w8a16_gemm_pipelined_by_m is called with"},
    {"case/1 w8a16_gemm_pipelined m=1 n=1 k=128 a_row_stride=128 c_row_stride=1 dist=tiny2 seed=0x1 gen=1",
     "unknown distribution 'tiny2'"},
};

TEST(CaseLine, RejectsEachMalformedLineNamingTheFieldAndLeavesTheOutputAlone) {
  for (const Malformed& bad : kMalformed) {
    Case c;
    c.seed = 0x5EED;
    const Case before = c;
    std::string error;
    EXPECT_FALSE(golden::parse_case(bad.line, &c, &error)) << bad.line;
    EXPECT_NE(error.find(bad.error_has), std::string::npos) << "line: " << bad.line << "\nerror: " << error;
    EXPECT_EQ(c, before) << bad.line;
  }
}

RC_GTEST_PROP(CaseLine, ACorruptedLineParsesToAValidCaseOrGivesAnErrorNeverACrash, ()) {
  std::string line = golden::format_case(*w8a16::props::gen_case());
  const std::size_t at = *rc::gen::inRange<std::size_t>(0, line.size());
  if (*rc::gen::arbitrary<bool>()) line[at] = *rc::gen::arbitrary<char>();
  else line.resize(at);
  Case c;
  c.seed = 0x5EED;
  const Case before = c;
  std::string error;
  if (golden::parse_case(line, &c, &error)) {
    RC_ASSERT(golden::case_problem(c).empty());
  } else {
    RC_ASSERT(!error.empty());
    RC_ASSERT(c == before);
  }
}

TEST(CaseFile, SkipsCommentsAndBlankLinesAndNamesTheLineOfAnError) {
  std::vector<Case> cases;
  std::string error;
  const std::string good = std::string("# saved by a test\n\n") + kLine + "\r\n" + kLine + "\n";
  ASSERT_TRUE(golden::parse_case_text(good, "x.case", &cases, &error)) << error;
  EXPECT_EQ(cases.size(), 2u);
  const std::vector<Case> before = cases;
  EXPECT_FALSE(golden::parse_case_text(good + "case/1 nonsense\n", "x.case", &cases, &error));
  EXPECT_EQ(error.rfind("x.case:5: ", 0), 0u) << error;
  EXPECT_EQ(cases, before);
}

TEST(CaseFile, AppendsCommentedCasesThatReadBack) {
  const std::string path = ::testing::TempDir() + "w8a16_case_file_test.case";
  std::remove(path.c_str());
  Case a, b;
  std::string error;
  ASSERT_TRUE(golden::parse_case(kLine, &a, &error)) << error;
  b = a;
  b.seed = 42;
  ASSERT_TRUE(golden::append_case_file(path, a, "first\nsecond line", &error)) << error;
  ASSERT_TRUE(golden::append_case_file(path, b, "", &error)) << error;
  std::vector<Case> back;
  ASSERT_TRUE(golden::read_case_file(path, &back, &error)) << error;
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0], a);
  EXPECT_EQ(back[1], b);
  std::remove(path.c_str());
  EXPECT_FALSE(golden::read_case_file(path, &back, &error));
  EXPECT_NE(error.find("no such file"), std::string::npos) << error;
}

RC_GTEST_PROP(CaseInputs, RegeneratingACaseTwiceGivesTheSameBytes, ()) {
  const Case c = *w8a16::props::gen_case();
  const CaseInputs x = regenerate_or_die(c), y = regenerate_or_die(c);
  RC_ASSERT(x.a_bits == y.a_bits);
  RC_ASSERT(x.w_e4m3 == y.w_e4m3);
  RC_ASSERT(golden::inputs_digest(x) == golden::inputs_digest(y));
}

RC_GTEST_PROP(CaseInputs, OperandsHaveTheShapeOfTheCaseAndPaddingIsPoisoned, ()) {
  const Case c = *w8a16::props::gen_case();
  const CaseInputs in = regenerate_or_die(c);
  RC_ASSERT(in.a_bits.size() == std::size_t{c.m} * c.a_row_stride);
  RC_ASSERT(in.w_e4m3.size() == std::size_t{c.n} * c.k);
  RC_ASSERT(in.s_f32.size() == std::size_t{(c.n + 127) / 128} * (c.k / 128));
  for (std::uint32_t r = 0; r < c.m; ++r)
    for (std::uint32_t col = c.k; col < c.a_row_stride; ++col)
      RC_ASSERT(in.a_bits[std::size_t{r} * c.a_row_stride + col] == golden::kAPaddingBits);
}

RC_GTEST_PROP(CaseInputs, ASmallerCaseWithTheSameSeedIsACornerOfTheLargerOne, ()) {
  Case big = *w8a16::props::gen_case(w8a16::props::only_entry(EntryPoint::gemm_pipelined_m32_strided));
  // specials, every_special and lone_specials are placed over the whole extent
  RC_PRE(big.dist != Distribution::specials && big.dist != Distribution::every_special &&
         big.dist != Distribution::lone_specials);
  Case small = big;
  small.m = *rc::gen::inRange<std::uint32_t>(1, big.m + 1);
  small.n = *rc::gen::inRange<std::uint32_t>(1, big.n + 1);
  small.c_row_stride = small.n;
  const CaseInputs b = regenerate_or_die(big), s = regenerate_or_die(small);
  for (std::uint32_t r = 0; r < small.m; ++r)
    for (std::uint32_t k = 0; k < big.k; ++k)
      RC_ASSERT(s.a_bits[std::size_t{r} * small.a_row_stride + k] == b.a_bits[std::size_t{r} * big.a_row_stride + k]);
  for (std::size_t i = 0; i < std::size_t{small.n} * small.k; ++i) RC_ASSERT(s.w_e4m3[i] == b.w_e4m3[i]);
}

TEST(CaseInputs, DifferentSeedsGiveDifferentInputs) {
  for (Distribution d : golden::kAllDistributions) {
    if (d == Distribution::ones_pow2_scales) continue;  // operands are constant by design
    const Case x = golden::CaseSpec{}.entry(EntryPoint::gemm_pipelined_m32_strided).shape(3, 20, 256).dist(d).seed(1);
    Case y = x;
    y.seed = 2;
    EXPECT_NE(golden::inputs_digest(regenerate_or_die(x)), golden::inputs_digest(regenerate_or_die(y)))
        << golden::distribution_name(d);
  }
}

// The random source against its published definitions, not against itself: SplitMix64 from seed
// 0 (Vigna's splitmix64.c) begins 0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4; below() is the high
// half of a 128-bit product, checked here with the compiler's 128-bit integers.
TEST(CaseRng, Splitmix64MatchesItsReferenceOutputs) {
  std::uint64_t state = 0;
  EXPECT_EQ(golden::splitmix64_next(&state), 0xe220a8397b1dcdafull);
  EXPECT_EQ(golden::splitmix64_next(&state), 0x6e789e6aa1b965f4ull);
}

// xoshiro256** (Blackman and Vigna's xoshiro256starstar.c) seeded with four SplitMix64 outputs
// from 0, as computed by a separate Python transcription of both reference programs.
TEST(CaseRng, Xoshiro256StarStarMatchesAnIndependentTranscription) {
  golden::Xoshiro256ss r(0);
  EXPECT_EQ(r.next(), 0x99ec5f36cb75f2b4ull);
  EXPECT_EQ(r.next(), 0xbf6e1f784956452aull);
  EXPECT_EQ(r.next(), 0x1a5f849d4933e6e0ull);
}

RC_GTEST_PROP(CaseRng, BelowIsTheHighHalfOfTheProductWithTheBound, (std::uint64_t seed, std::uint64_t bound)) {
  RC_PRE(bound != 0);
  golden::Xoshiro256ss a(seed), b(seed);
  const std::uint64_t draw = a.next();
  const auto wide = static_cast<unsigned __int128>(draw) * bound;
  RC_ASSERT(b.below(bound) == static_cast<std::uint64_t>(wide >> 64));
}

// Pinned: the FNV-1a digests of a few gen=1 cases. If one changes, the generator changed and every
// saved gen=1 case with it: restore gen=1's bytes and put the change in a new version (case.hpp).
struct Pinned {
  const char* line;
  std::uint64_t digest;
};
const Pinned kPinned[] = {
    {"case/1 w8a16_gemm_pipelined m=3 n=7 k=256 a_row_stride=256 c_row_stride=7 dist=activation_like seed=0x0000000000000001 gen=1",
     0x99a6f4d59c2366ull},
    {"case/1 w8a16_gemm_pipelined_m32_strided m=17 n=129 k=384 a_row_stride=392 c_row_stride=131 dist=wide_exponents seed=0x00000000deadbeef gen=1",
     0xf65baa1e647277full},
    {"case/1 w8a16_gemv_batch16_strided m=16 n=33 k=128 a_row_stride=136 c_row_stride=40 dist=cancellation seed=0x0123456789abcdef gen=1",
     0x45e2380757f7ff8aull},
    {"case/1 w8a16_gemm_pipelined_m64_strided m=40 n=300 k=1280 a_row_stride=1280 c_row_stride=300 dist=specials seed=0xffffffffffffffff gen=1",
     0x457ebd25760bb6ull},
    {"case/1 w8a16_gemm_pipelined_by_m m=2 n=257 k=2560 a_row_stride=2560 c_row_stride=257 dist=special_scales seed=0x0000000000000007 gen=1",
     0xd52a3e2d7607dd28ull},
    {"case/1 w8a16_gemv_batch4_strided m=4 n=200 k=3072 a_row_stride=3072 c_row_stride=200 dist=pow2_scales seed=0x0000000000000008 gen=1",
     0x582eabb57f28c1e0ull},
    {"case/1 w8a16_gemm_pipelined_m32 m=5 n=385 k=3840 a_row_stride=3840 c_row_stride=385 dist=ones_pow2_scales seed=0x0000000000000009 gen=1",
     0xcd7db547a137798bull},
    // The distributions added to gen=1 after the first seven (and a line with without=, which the
    // inputs do not depend on).
    {"case/1 w8a16_gemm_pipelined_m32_strided m=9 n=130 k=512 a_row_stride=520 c_row_stride=133 dist=near_overflow seed=0x0000000000000011 gen=1",
     0x61655045a546c967ull},
    {"case/1 w8a16_gemv_batch16_strided m=13 n=40 k=256 a_row_stride=256 c_row_stride=40 dist=tiny seed=0x0000000000000012 gen=1",
     0x32cdd4539ca7cb59ull},
    {"case/1 w8a16_gemm_pipelined_m64 m=33 n=65 k=384 a_row_stride=384 c_row_stride=65 dist=mid_exponents seed=0x0000000000000013 gen=1",
     0xdb605f8cbdc10e7cull},
    {"case/1 w8a16_gemm_pipelined m=17 n=129 k=256 a_row_stride=256 c_row_stride=129 dist=cancellation_pairs seed=0x0000000000000014 gen=1",
     0x2a1e4c62863f55a0ull},
    {"case/1 w8a16_gemm_pipelined_by_m m=20 n=300 k=640 a_row_stride=640 c_row_stride=300 dist=row_specials seed=0x0000000000000015 gen=1",
     0x6a80aa2fff7f5fb5ull},
    {"case/1 w8a16_gemm_pipelined_m32 m=5 n=257 k=1152 a_row_stride=1152 c_row_stride=257 dist=fold_ties seed=0x0000000000000016 gen=1",
     0xd19629d6f5c8aff3ull},
    {"case/1 w8a16_gemv_batch4_strided m=4 n=100 k=768 a_row_stride=776 c_row_stride=103 dist=zero_signs seed=0x0000000000000017 gen=1",
     0x50f09ff07de1c8bull},
    {"case/1 w8a16_gemm_pipelined_m64_strided m=40 n=200 k=1536 a_row_stride=1544 c_row_stride=203 dist=cancelling_steps seed=0x0000000000000018 gen=1",
     0xd2b04b58ee140a0aull},
    {"case/1 w8a16_gemm_pipelined_m32_strided m=13 n=770 k=256 a_row_stride=264 c_row_stride=773 dist=every_special seed=0x0000000000000019 gen=1 without=w8a16_wgmma_rows,w8a16_wgmma_rows_n128,w8a16_wgmma_rows_n128_x2",
     0xdb5386cb51b0f32full},
    {"case/1 w8a16_gemm_pipelined_m32 m=23 n=77 k=768 a_row_stride=768 c_row_stride=77 dist=nan_codes seed=0x000000000000001a gen=1",
     0x0cefff42108e25afull},
    // lone_specials: a NaN code at a middle step; a kind and a step drawn (seed bits 0-3 = 0xf).
    {"case/1 w8a16_gemm_packed_strided m=5 n=77 k=4224 a_row_stride=4232 c_row_stride=80 dist=lone_specials seed=0x00000000000001b4 gen=1",
     0x67a9361f696d375full},
    {"case/1 w8a16_gemv_batch4_strided m=3 n=130 k=1280 a_row_stride=1288 c_row_stride=133 dist=lone_specials seed=0x00000000000001cf gen=1",
     0x108e415de63413ddull},
};

TEST(CaseInputs, PinnedCasesRegenerateTheirPinnedDigests) {
  for (const Pinned& p : kPinned) {
    Case c;
    std::string error;
    ASSERT_TRUE(golden::parse_case(p.line, &c, &error)) << error;
    const std::uint64_t digest = golden::inputs_digest(regenerate_or_die(c));
    EXPECT_EQ(digest, p.digest) << p.line << "\n  digest now 0x" << std::hex << digest;
  }
}

TEST(CaseInputs, RegeneratingAnInvalidCaseFailsAndLeavesTheInputsAlone) {
  Case c;
  c.k = 200;
  CaseInputs in;
  in.w_e4m3 = {1, 2, 3};
  std::string error;
  EXPECT_FALSE(golden::regenerate_inputs(c, &in, &error));
  EXPECT_NE(error.find("k=200"), std::string::npos) << error;
  EXPECT_EQ(in.w_e4m3, (std::vector<std::uint8_t>{1, 2, 3}));
}

}  // namespace
