// SPDX-License-Identifier: MIT OR Apache-2.0
// Properties 3 and 5 on the simulation backend: every launch writes each output exactly once with
// the emulator's bits and nothing else, and the tiers give the same bytes wherever they overlap.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "property_support.hpp"
#include "w8a16/device/sim_backend.hpp"

namespace {

namespace golden = w8a16::golden;
namespace device = w8a16::device;
namespace props = w8a16::props;
using golden::EntryPoint;

std::string findings_text(const device::SimBackend& sim) {
  std::string s;
  for (const device::Finding& f : sim.findings())
    s += std::string("; ") + device::finding_kind_name(f.kind) + ": " + f.message;
  return s;
}

// A registry with the row-tile kernel and the twins each present or not, so the same entry point
// reaches each of its bodies (the strided twins try the row-tile kernel first; by_m needs the twins).
device::StaticRegistry gen_registry() {
  device::StaticRegistry reg = device::StaticRegistry::all_present();
  reg.set_present(device::KernelId::tc_rows, *rc::gen::arbitrary<bool>());
  reg.set_present(device::KernelId::tc_rows_m64, *rc::gen::arbitrary<bool>());
  reg.set_present(device::KernelId::gemm_pipelined_m32, *rc::gen::weightedElement<bool>({{3, true}, {1, false}}));
  reg.set_present(device::KernelId::gemm_pipelined_m64, *rc::gen::weightedElement<bool>({{3, true}, {1, false}}));
  return reg;
}

// The sim backend's own findings (coverage, double writes, writes into the pitch padding, reads
// outside A, W, S) and the bytes: the first n of each row the emulator's contract for the entry
// point, computed here independently of the backend's plan; the padding untouched.
RC_GTEST_PROP(SimBackend, CoversEveryOutputExactlyOnceWithTheEmulatorsValuesForEveryEntryPoint, ()) {
  props::DrawOptions opt;
  opt.max_macs = std::uint64_t{1} << 22;  // about 0.1 s of emulation at most on one core
  const golden::Case c = *props::gen_case(opt);
  const golden::CaseInputs in = props::test::inputs_for(c);
  device::StaticRegistry reg = gen_registry();
  // The entry's own kernel stays present: a missing kernel is property 2's subject.
  if (c.entry == EntryPoint::gemm_pipelined_m32 || c.entry == EntryPoint::gemm_pipelined_m32_strided)
    reg.set_present(device::KernelId::gemm_pipelined_m32, true);
  if (c.entry == EntryPoint::gemm_pipelined_m64 || c.entry == EntryPoint::gemm_pipelined_m64_strided)
    reg.set_present(device::KernelId::gemm_pipelined_m64, true);
  device::SimBackend sim(reg);
  const props::Launched got = props::launch_case(sim, c, in);
  props::test::require(got.status.ok(), c, "simulation: " + got.status.message + findings_text(sim));
  props::test::require(sim.plans().size() == 1, c, "expected exactly one plan");
  RC_TAG(std::string("body=") + device::body_name(sim.plans().front().body));
  props::test::require_bits_equal(c, props::compare_output(c, props::expected_output(c, in), got.c_bits),
                                  "simulation vs emulator");
}

constexpr EntryPoint kTensorCoreEntries[] = {
    EntryPoint::gemm_pipelined,     EntryPoint::gemm_pipelined_m32,         EntryPoint::gemm_pipelined_m32_strided,
    EntryPoint::gemm_pipelined_m64, EntryPoint::gemm_pipelined_m64_strided, EntryPoint::gemm_pipelined_by_m};

// NUMERICS.md 2.1: every tensor-core tier gives the canonical fold's bytes, so all six entry points,
// through whichever body each picks, agree on a shape they all take (contiguous pitches); the two
// GEMVs agree with each other on up to 4 rows (2.2). On this backend the values are the
// emulator's, so what can differ is the contract and geometry each plan applies; on a GPU the same
// comparison is the kernels' own (properties_gpu_tests).
RC_GTEST_PROP(Tiers, AgreeByteForByteOnEveryShapeTheyShare, ()) {
  props::DrawOptions opt;
  opt.max_macs = std::uint64_t{1} << 20;  // each case runs up to eight launches
  golden::Case base = *props::gen_case(opt);
  base.a_row_stride = base.k;
  base.c_row_stride = base.n;
  const golden::CaseInputs in = props::test::inputs_for(base);

  std::vector<std::vector<EntryPoint>> groups = {{std::begin(kTensorCoreEntries), std::end(kTensorCoreEntries)}};
  if (base.m <= 4) groups.push_back({EntryPoint::gemv_batch4_strided, EntryPoint::gemv_batch16_strided});
  RC_TAG(base.m <= 4 ? "tensor-core tiers and the GEMV pair" : "tensor-core tiers");
  for (const std::vector<EntryPoint>& group : groups) {
    std::vector<std::uint16_t> first;
    std::string first_desc;
    for (EntryPoint e : group) {
      golden::Case c = base;
      c.entry = e;
      device::SimBackend sim(gen_registry());
      const props::Launched got = props::launch_case(sim, c, in);
      if (got.status.code == device::Errc::kernel_missing) continue;  // that registry left the entry no kernel
      props::test::require(got.status.ok(), c, "simulation: " + got.status.message + findings_text(sim));
      const std::string desc = std::string(golden::entry_point_name(e)) + " (" +
                               device::body_name(sim.plans().front().body) + ")";
      if (first.empty()) {
        first = got.c_bits;
        first_desc = desc;
        continue;
      }
      props::test::require_bits_equal(c, props::compare_output(c, first, got.c_bits), desc + " vs " + first_desc);
    }
  }
}

}  // namespace
