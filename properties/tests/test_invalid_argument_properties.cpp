// SPDX-License-Identifier: MIT OR Apache-2.0
// Property 2: a call with one argument broken gets that argument's error, launches nothing and
// leaves every byte of the output as it was (docs/KERNEL_ABI.md 3).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "property_support.hpp"
#include "w8a16/device/api.hpp"
#include "w8a16/device/sim_backend.hpp"

namespace {

namespace golden = w8a16::golden;
namespace device = w8a16::device;
namespace props = w8a16::props;
using device::Errc;

// One way to break a valid call, the error it must give and a word the message must contain.
struct Breakage {
  const char* name;
  Errc error;
  const char* message_has;
  bool strided_only;  // contiguous entry points ignore the pitches they are given
};
const Breakage kBreakages[] = {
    {"m=0", Errc::m_zero, "m=0", false},
    {"k=0", Errc::k_not_block_multiple, "k=0", false},
    {"k not a multiple of 128", Errc::k_not_block_multiple, "multiple of 128", false},
    {"a_row_stride < k", Errc::a_pitch_short, "a_row_stride", true},
    {"c_row_stride < n", Errc::c_pitch_short, "c_row_stride", true},
    {"a_row_stride not a multiple of 8", Errc::a_pitch_misaligned, "a_row_stride", true},
    {"n=0", Errc::n_zero, "n=0", false},
    {"null input", Errc::null_pointer, "input", false},
    {"null weight", Errc::null_pointer, "weight", false},
    {"null block_scale", Errc::null_pointer, "block_scale", false},
    {"null output", Errc::null_pointer, "output", false},
    {"misaligned input", Errc::misaligned_pointer, "input", false},
    {"misaligned weight", Errc::misaligned_pointer, "weight", false},
    {"misaligned block_scale", Errc::misaligned_pointer, "block_scale", false},
    {"misaligned output", Errc::misaligned_pointer, "output", false},
    {"output aliases input", Errc::output_overlaps_input, "overlap", false},
    {"32-bit index overflow", Errc::index_overflow, "m * a_row_stride", false},
    {"32-bit index overflow in n * k", Errc::index_overflow, "n * k", false},
    {"GEMV rows over its limit", Errc::gemv_too_many_rows, "at most", false},
    {"no kernel in the module", Errc::kernel_missing, "zero handle", false},
};

// One breakage applied to one valid case: the error, no plan, the output's bytes unchanged.
void check_breakage(const golden::Case& c, const golden::CaseInputs& in, const Breakage& b) {
  device::StaticRegistry reg = b.error == Errc::kernel_missing ? device::StaticRegistry::none_present()
                                                               : device::StaticRegistry::all_present();
  device::SimBackend sim(reg);
  // The packed entry point's W is the packed layout's size (NUMERICS.md 2.3).
  const std::uint64_t w_bytes = c.entry == golden::EntryPoint::gemm_packed_strided
                                    ? device::packed_weight_bytes(c.n, c.k)
                                    : std::uint64_t{in.w_e4m3.size()};
  auto a = sim.allocate(in.a_bits.size() * 2 + 64), w = sim.allocate(w_bytes + 64),
       s = sim.allocate(in.s_f32.size() * 4 + 64);
  const std::vector<std::uint16_t> before = golden::sentinel_output(c);
  auto out = sim.allocate(before.size() * 2 + 64);
  RC_ASSERT(a && w && s && out);
  RC_ASSERT(out->upload(before.data(), before.size() * 2).ok());

  device::Call call = props::case_call(c, reg, a->address(), w->address(), s->address(), out->address());
  device::Args& g = call.args;
  const std::string what = b.name;
  if (what == "m=0") g.m = 0;
  else if (what == "k=0") g.k = 0;
  else if (what == "k not a multiple of 128") g.k = c.k + *rc::gen::inRange<std::uint32_t>(1, 128);
  else if (what == "a_row_stride < k") g.a_row_stride = c.k - *rc::gen::inRange<std::uint32_t>(1, 9);
  else if (what == "c_row_stride < n") g.c_row_stride = c.n - 1;  // n = 1 gives 0, still < n
  else if (what == "a_row_stride not a multiple of 8") g.a_row_stride = c.k + *rc::gen::inRange<std::uint32_t>(1, 8);
  else if (what == "n=0") g.n = 0;
  else if (what == "null input") g.input = 0;
  else if (what == "null weight") g.weight = 0;
  else if (what == "null block_scale") g.block_scale = 0;
  else if (what == "null output") g.output = 0;
  else if (what == "misaligned input") g.input += 2 * *rc::gen::inRange<std::uint64_t>(1, 8);  // off 16 bytes
  else if (what == "misaligned weight") g.weight += *rc::gen::inRange<std::uint64_t>(1, 16);
  else if (what == "misaligned block_scale") g.block_scale += *rc::gen::inRange<std::uint64_t>(1, 4);
  else if (what == "misaligned output") g.output += 1;
  else if (what == "output aliases input") g.output = g.input;
  // m * a_row_stride (and m * c_row_stride) past 2^32 - 1 with every earlier rule kept.
  else if (what == "32-bit index overflow") g.m = static_cast<std::uint32_t>((std::uint64_t{1} << 32) / c.k + 1);
  else if (what == "32-bit index overflow in n * k") {
    g.n = static_cast<std::uint32_t>((std::uint64_t{1} << 32) / c.k + 1);
    g.c_row_stride = g.n;
  } else if (what == "GEMV rows over its limit")
    g.m = golden::entry_point_max_rows(c.entry) + *rc::gen::inRange<std::uint32_t>(1, 100);

  const device::Status st = device::Launcher(sim).launch(call);
  std::vector<std::uint16_t> after(before.size());
  RC_ASSERT(out->download(after.data(), after.size() * 2).ok());

  const std::string got = std::string(device::errc_name(st.code)) + ": " + st.message;
  props::test::require(st.code == b.error, c,
                       std::string("broke ") + b.name + ": expected " + device::errc_name(b.error) + ", got " + got);
  props::test::require(st.message.find(b.message_has) != std::string::npos, c,
                       std::string("broke ") + b.name + ": the message does not name '" + b.message_has + "': " + got);
  props::test::require(sim.plans().empty(), c, std::string("broke ") + b.name + ": a plan reached the backend");
  props::test::require(after == before, c, std::string("broke ") + b.name + ": the output changed");
}

// Every breakage that applies to the drawn case, one at a time: contiguous entry points take no
// pitches, only the GEMVs have a row limit (and there it comes before the index check).
RC_GTEST_PROP(InvalidArguments, EachBrokenArgumentGivesItsErrorLaunchesNothingAndKeepsTheOutput, ()) {
  props::DrawOptions opt;
  opt.max_macs = std::uint64_t{1} << 16;  // buffers are real; nothing is computed
  const golden::Case c = *props::gen_case(opt);
  const bool gemv = golden::entry_point_is_gemv(c.entry);
  golden::CaseInputs in;
  std::string error;
  RC_ASSERT(golden::regenerate_inputs(c, &in, &error));
  RC_TAG(std::string(golden::entry_point_name(c.entry)));
  for (const Breakage& b : kBreakages) {
    if (b.strided_only && golden::entry_point_is_contiguous(c.entry)) continue;
    if (b.error == Errc::gemv_too_many_rows && !gemv) continue;
    if (std::string(b.name) == "32-bit index overflow" && gemv) continue;
    check_breakage(c, in, b);
  }
}

}  // namespace
