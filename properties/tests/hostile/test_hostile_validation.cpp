// SPDX-License-Identifier: MIT OR Apache-2.0
// Hostile calls the launch layer must refuse: every validation rule through every named entry
// point it applies to (device/tests/test_validation.cpp checks each rule on one entry point), and
// output buffers overlapping an operand at each edge. A refusal names its rule, launches nothing
// and leaves every byte (C, A, W, S) as it was.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "hostile_support.hpp"
#include "w8a16/device/recording_backend.hpp"

namespace w8a16::hostile {
namespace {

using device::DeviceLimits;
using device::Errc;
using device::StaticRegistry;

// The valid call every rule case starts from; m = 3 fits every entry (GEMV batch 4 included).
struct Base {
  std::uint32_t m = 3, n = 40, k = 256, lda = 264, ldc = 48;
};

// One broken call: what to change, the code, and the message it must carry after
// "w8a16_<entry>: ". Pointers are changed through `ptrs` (input, weight, block_scale, output).
struct Breakage {
  Errc code;
  std::function<void(Base&, DevPtr (&ptrs)[4], StaticRegistry&, DeviceLimits&, Entry)> apply;
  std::vector<std::string> says;
};

// Launches the broken call on the simulation and requires the refusal: code, message naming the
// entry point and the argument, no plan, and every buffer byte unchanged.
void expect_refused(Entry e, const Breakage& b, ClassCounter& counter) {
  // The backend is built with the registry and limits the case needs, before its buffers exist:
  // a first application, on scratch arguments, learns them.
  StaticRegistry reg = StaticRegistry::all_present();
  DeviceLimits limits = DeviceLimits::h200();
  {
    Base scratch;
    DevPtr none[4] = {};
    b.apply(scratch, none, reg, limits, e);
  }
  // Buffers for the base call; a rule case may describe a larger call, which is never launched.
  const Base base;
  const Problem p = make_problem(Entry::gemm_pipelined_m32_strided, base.m, base.n, base.k, 8, 8, 7);
  device::SimBackend sim(reg, limits);
  const std::vector<std::uint8_t> wd = device_weight(e, p);
  auto a = sim.allocate(p.a.size() * 2), w = sim.allocate(wd.size()), s = sim.allocate(p.s.size() * 4);
  const std::vector<std::uint16_t> poison(std::size_t{8} * 64, kPoison16);
  auto c = sim.allocate(poison.size() * 2);
  ASSERT_TRUE(a && w && s && c);
  ASSERT_TRUE(a->upload(p.a.data(), p.a.size() * 2).ok() && w->upload(wd.data(), wd.size()).ok() &&
              s->upload(p.s.data(), p.s.size() * 4).ok() && c->upload(poison.data(), poison.size() * 2).ok());
  Base call;
  DevPtr real[4] = {a->address(), w->address(), s->address(), c->address()};
  b.apply(call, real, reg, limits, e);

  device::Launcher api(sim);
  const device::Status st = call_named(api, e, handles_for(e, sim.registry()), real[0], real[1], real[2], real[3],
                                       call.m, call.n, call.k, call.lda, call.ldc);
  const std::string prefix = std::string("w8a16_") + device::entry_name(e) + ": ";
  EXPECT_EQ(st.code, b.code) << device::errc_name(st.code) << ": " << st.message;
  EXPECT_EQ(st.message.rfind(prefix, 0), 0u) << st.message;
  for (const std::string& text : b.says)
    EXPECT_NE(st.message.find(text), std::string::npos) << "no '" << text << "' in: " << st.message;
  EXPECT_TRUE(sim.plans().empty()) << "a refused call reached the backend";
  std::vector<std::uint16_t> c_after(poison.size());
  ASSERT_TRUE(c->download(c_after.data(), c_after.size() * 2).ok());
  EXPECT_EQ(c_after, poison) << "the output buffer changed";
  std::vector<std::uint16_t> a_after(p.a.size());
  ASSERT_TRUE(a->download(a_after.data(), a_after.size() * 2).ok());
  EXPECT_EQ(a_after, p.a) << "A changed";
  counter.add();
}

bool strided(Entry e) { return !device::entry_is_contiguous(e); }

TEST(HostileValidation, EveryRuleThroughEveryEntryPointItAppliesTo) {
  ClassCounter counter("validation rule x entry point");
  using Ptrs = DevPtr[4];
  const char* const names[4] = {"input", "weight", "block_scale", "output"};
  const DevPtr misalign[4] = {8, 4, 2, 1};
  const char* const align_rule[4] = {"16-byte aligned", "16-byte aligned", "4-byte aligned", "2-byte aligned"};
  int not_applicable = 0;
  for (Entry e : kEntries) {
    SCOPED_TRACE(device::entry_name(e));
    {  // The base call is valid, or every refusal below would prove nothing.
      device::RecordingBackend rec;
      device::Launcher api(rec);
      const Base b;
      const device::Status ok = call_named(api, e, handles_for(e, rec.registry()), 0x10000000000ull, 0x20000000000ull,
                                           0x30000000000ull, 0x40000000000ull, b.m, b.n, b.k, b.lda, b.ldc);
      ASSERT_TRUE(ok.ok()) << ok.message;
      ASSERT_EQ(rec.plans().size(), 1u);
    }
    std::vector<Breakage> rules = {
        {Errc::m_zero,
         [](Base& b, Ptrs&, StaticRegistry&, DeviceLimits&, Entry) { b.m = 0; },
         {"m=0: must be at least 1"}},
        {Errc::k_not_block_multiple,
         [](Base& b, Ptrs&, StaticRegistry&, DeviceLimits&, Entry) { b.k = 200; },
         {"k=200: must be a positive multiple of 128"}},
        {Errc::n_zero,
         [](Base& b, Ptrs&, StaticRegistry&, DeviceLimits&, Entry) { b.n = 0; },
         {"n=0: must be at least 1"}},
        // n * k = 2^24 * 256 = 2^32: one past the 32-bit element offsets (the pitch of C grows along).
        {Errc::index_overflow,
         [](Base& b, Ptrs&, StaticRegistry&, DeviceLimits&, Entry) {
           b.n = 1u << 24;
           b.ldc = 1u << 24;
         },
         {"n * k=4294967296: must be below 2^32"}},
        {Errc::output_overlaps_input,
         [](Base&, Ptrs& p, StaticRegistry&, DeviceLimits&, Entry) { p[3] = p[0] + 64; },
         {"output=0x", "overlap input"}},
        {Errc::kernel_missing,
         [](Base&, Ptrs&, StaticRegistry& r, DeviceLimits&, Entry) { r = StaticRegistry::none_present(); },
         {"zero handle"}},
        // n = 300 needs at least 2 CTAs along x in every body (the strips are at most 64 wide, the
        // packed bodies' units 128: three units, a persistent CTA each).
        {Errc::grid_too_large,
         [](Base& b, Ptrs&, StaticRegistry&, DeviceLimits& l, Entry) { b.n = 300, b.ldc = 304, l.max_grid_x = 1; },
         {"grid.x=", "must be at most the device limit 1"}},
    };
    if (strided(e)) {
      rules.push_back({Errc::a_pitch_short,
                       [](Base& b, Ptrs&, StaticRegistry&, DeviceLimits&, Entry) { b.lda = 248; },
                       {"a_row_stride=248: must be at least k=256"}});
      rules.push_back({Errc::c_pitch_short,
                       [](Base& b, Ptrs&, StaticRegistry&, DeviceLimits&, Entry) { b.ldc = 39; },
                       {"c_row_stride=39: must be at least n=40"}});
      rules.push_back({Errc::a_pitch_misaligned,
                       [](Base& b, Ptrs&, StaticRegistry&, DeviceLimits&, Entry) { b.lda = 260; },
                       {"a_row_stride=260: must be a multiple of 8"}});
    } else {
      not_applicable += 3;  // contiguous entry points take no pitches: the three pitch rules cannot fire
    }
    if (is_gemv(e)) {
      const std::uint32_t over = max_rows(e) + 1;
      rules.push_back({Errc::gemv_too_many_rows,
                       [over](Base& b, Ptrs&, StaticRegistry&, DeviceLimits&, Entry) { b.m = over; },
                       {"m=" + std::to_string(over) + ": must be at most " + std::to_string(over - 1)}});
      not_applicable += 1;  // the GEMVs declare no dynamic shared memory: smem_too_large cannot fire
    } else {
      not_applicable += 1;  // gemv_too_many_rows is the GEMVs' rule
      // The limit one byte below the dispatched body's need (m64 entries: K = 5248 sends 3 rows to
      // the row-tile kernel, the one body of theirs that uses dynamic shared memory).
      const bool m64 = e == Entry::gemm_pipelined_m64 || e == Entry::gemm_pipelined_m64_strided;
      // K = 5248 stretches A and W past the buffers allocated for K = 256, so C moves to an address
      // clear of every operand (the heap may have placed C right after them): the one refusal left
      // is the shared-memory limit. The call is refused before any byte is touched.
      rules.push_back({Errc::smem_too_large,
                       [m64](Base& b, Ptrs& p, StaticRegistry& r, DeviceLimits& l, Entry en) {
                         if (m64) b.k = 5248, b.lda = 5248, p[3] = 0x40000000000ull;
                         device::Call c;
                         c.entry = en;
                         const Handles h = handles_for(en, r);
                         c.kernel = h.own, c.m32_kernel = h.m32, c.m64_kernel = h.m64;
                         c.args = device::Args{0x10000000000ull,
                                               0x20000000000ull,
                                               0x30000000000ull,
                                               0x40000000000ull,
                                               b.m,
                                               b.n,
                                               b.k,
                                               b.lda,
                                               b.ldc,
                                               0};
                         const device::Planned ok = device::plan_launch(c, r, device::DeviceLimits::h200());
                         l.max_dynamic_smem_per_block = ok.plan.dynamic_smem - 1;
                       },
                       {"dynamic_smem=", "opt-in limit"}});
    }
    for (int i = 0; i < 4; ++i) {
      rules.push_back({Errc::null_pointer,
                       [i](Base&, Ptrs& p, StaticRegistry&, DeviceLimits&, Entry) { p[i] = 0; },
                       {std::string(names[i]) + "=null: must point to the operand"}});
      const DevPtr off = misalign[i];
      rules.push_back({Errc::misaligned_pointer,
                       [i, off](Base&, Ptrs& p, StaticRegistry&, DeviceLimits&, Entry) {
                         if (p[i]) p[i] += off;
                       },
                       {std::string(names[i]) + "=0x", std::string("must be ") + align_rule[i]}});
    }
    // The K rule with K = 65536 + 64 (large, not a block multiple) as well as 200.
    rules.push_back({Errc::k_not_block_multiple,
                     [](Base& b, Ptrs&, StaticRegistry&, DeviceLimits&, Entry) {
                       b.k = 65600;
                       b.lda = 65600;
                     },
                     {"k=65600: must be a positive multiple of 128"}});
    for (const Breakage& b : rules) {
      SCOPED_TRACE(device::errc_name(b.code));
      expect_refused(e, b, counter);
    }
  }
  std::printf(
      "[catalogue] validation rule x entry point: %d combinations not applicable (contiguous entries take no "
      "pitches; only GEMVs have a row limit; GEMVs use no dynamic shared memory)\n",
      not_applicable);
}

}  // namespace
}  // namespace w8a16::hostile
