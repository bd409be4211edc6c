// SPDX-License-Identifier: MIT OR Apache-2.0
// `w8a16check run-operands --backend sim|cuda --entry ENTRY --in BUNDLE --out FILE [--check]`: runs
// operands given as raw bits (not drawn from a case line) through one entry point of the launch layer
// and writes C's bits and the kernel body the plan chose. It exists for the reduction-order probes of
// reports/python/w8a16check/order.py (golden/order/README.md): crafted A rows that no case
// distribution draws, run on the GPU machine where no Python is available; and, with --check, to
// replay the operands of a mismatch w8a16check.compare found (reports/README.md), on any machine.
//
// --without-hopper-tier plans as a module without the wgmma symbols would (KERNEL_ABI.md): the
// probes of the seed's tile bodies need it, because the Hopper tier goes before them in the plan.
//
// --columns LIST keeps only those columns of C in the output: the two-CTA Hopper symbol is planned
// only for N above two units per SM (plan.hpp wgmma_choice: 33,792 columns on an H200), and a probe
// needs one column of each row, not gigabytes. C then lives on the device for one launch at a time.
//
// The bundle and output formats are specified, read and written in golden/ (operands.hpp); this
// command adds the work limits and the launches. A bundle holds W as N x K codes; for
// gemm_packed_strided, which reads W in the packed layout (NUMERICS.md 2.3), the launch layer packs
// it here (pack_weights, as every other run of that entry point does) and the output says so.
#include "run_operands.hpp"

#include "exit_status.hpp"

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "backends.hpp"
#include "gpu_identity.hpp"
#include "progress.hpp"
#include "report_files.hpp"
#include "w8a16/golden/files.hpp"
#include "w8a16/device/api.hpp"
#include "w8a16/device/bodies.hpp"
#include "w8a16/device/kernels.hpp"
#include "w8a16/device/packed.hpp"
#include "w8a16/device/plan.hpp"
#include "w8a16/golden/case.hpp"
#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/golden/operands.hpp"
#include "w8a16/properties/case_runner.hpp"
#include "w8a16/properties/explain.hpp"
#include "w8a16/reference/contract.hpp"
#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/properties/launcher.hpp"

namespace w8a16::cli {
namespace cmd_run_operands {

// Reads and checks a bundle; false with *error naming the file, the field and the rule. The file
// and what it expands to must fit the limits: the bytes are read only when the file fits
// --max-bytes, the operands are expanded only when the whole run does.
// `kept_columns` (0: all of C) sets the C the host holds: one launch's whole C, and the kept columns
// of every launch.
bool read_bundle(const std::string& path, const WorkLimits& limits, std::size_t kept_columns,
                 golden::OperandBundle* out, std::string* error) {
  std::string b, why;
  if (!golden::read_regular_file(path, limits.max_bytes, &b, &why)) {
    *error = golden::shown(path) + ": " + why + (why.find("more than") != std::string::npos ? " (--max-bytes)" : "");
    return false;
  }
  auto fail = [&](const std::string& why) {
    *error = golden::shown(path) + ": " + why;
    return false;
  };
  golden::BundleHeader h;
  if (!golden::parse_bundle_header(b, &h, &why)) return fail(why);
  const golden::Case& c = h.shape;
  const std::uint64_t rows = h.rows(), a_elems = h.a_elements(), w_bytes = h.w_bytes(), s_elems = h.s_elements();
  // The bytes read, A expanded, the backend's copies of A, W, S and C, the output file, and the
  // simulation's bookkeeping per launch (3 bytes per output).
  CaseCost cost;
  cost.macs = rows * c.n * c.k;
  const std::uint64_t c_elems = kept_columns == 0 ? rows * c.c_row_stride
                                                  : std::uint64_t{c.m} * c.c_row_stride + rows * kept_columns;
  cost.host_bytes = b.size() + 2 * (2 * a_elems + w_bytes + 4 * s_elems) + 2 * (2 * c_elems) +
                    3 * std::uint64_t{c.m} * c.n + (std::uint64_t{64} << 20);
  const std::string over = over_limits(std::to_string(h.launches) + " launches of m=" + std::to_string(c.m) +
                                           " n=" + std::to_string(c.n) + " k=" + std::to_string(c.k),
                                       cost, limits);
  if (!over.empty()) return fail(over.substr(0, over.size() - 1) + "; nothing was run");
  if (!golden::expand_bundle(b, h, out, &why)) return fail(why);
  return true;
}

int usage(const std::string& message) { return usage_error("run-operands", message); }

// The bundle's buffers on the device: A with one slab per launch; C filled with 0xFF, one slab per
// launch, or with --columns one slab that every launch reuses.
struct DeviceOperands {
  std::unique_ptr<device::Buffer> a, w, s, o;
  std::size_t a_launch = 0, c_launch = 0;  // bytes of one launch's A and C
  bool c_reused = false;                   // one C slab, read back after each launch
};

// W as the entry point reads it: the bundle's N x K codes, or for gemm_packed_strided those codes
// packed by the launch layer (NUMERICS.md 2.3). False with *why for a shape with no packed form.
bool weights_for_entry(const golden::OperandBundle& bundle, std::vector<std::uint8_t>* w, std::string* why) {
  const golden::Case& c = bundle.header.shape;
  if (c.entry != golden::EntryPoint::gemm_packed_strided) {
    *w = bundle.w;
    return true;
  }
  *w = device::pack_weights(bundle.w.data(), c.n, c.k);
  if (w->empty()) {
    *why = "gemm_packed_strided reads W packed (NUMERICS.md 2.3), and n=" + std::to_string(c.n) +
           " k=" + std::to_string(c.k) + " has no packed form (nothing was run)";
    return false;
  }
  return true;
}

// Allocates and uploads `w` (weights_for_entry) with the bundle's A and S; "" or what failed.
std::string upload(device::Backend& backend, const golden::OperandBundle& bundle, const std::vector<std::uint8_t>& w,
                   bool one_c_slab, DeviceOperands* d) {
  const golden::Case& c = bundle.header.shape;
  const std::size_t rows_per = std::size_t{c.m}, launches = bundle.header.launches;
  d->a_launch = 2 * rows_per * c.a_row_stride, d->c_launch = 2 * rows_per * c.c_row_stride;
  d->c_reused = one_c_slab;
  device::Status st;
  d->a = backend.allocate(d->a_launch * launches, &st);
  d->w = d->a ? backend.allocate(w.size(), &st) : nullptr;
  d->s = d->w ? backend.allocate(4 * bundle.s.size(), &st) : nullptr;
  d->o = d->s ? backend.allocate(d->c_launch * (one_c_slab ? 1 : launches), &st) : nullptr;
  if (d->o) st = d->a->upload(bundle.a.data(), d->a_launch * launches);
  if (st.ok() && d->o) st = d->w->upload(w.data(), w.size());
  if (st.ok() && d->o) st = d->s->upload(bundle.s.data(), 4 * bundle.s.size());
  if (st.ok() && d->o) st = d->o->fill(0xFF);
  return !d->o || !st.ok() ? st.message : "";
}

// Every launch of the bundle, each planned over `registry`, then the wait and the download of C;
// false after printing which launch failed. With `columns`, *c_bits is [launches*m][columns.size()]:
// each launch is waited for and its C read back before the next one overwrites the slab (refilled
// with 0xFF, so an element a launch did not write still reads 0xFFFF).
bool launch_all(device::Backend& backend, const device::KernelRegistry& registry, const golden::Case& c,
                std::size_t launches, const DeviceOperands& d, const std::vector<std::uint32_t>& columns,
                const props::DeadlinePolicy& deadlines, std::vector<std::uint16_t>* c_bits) {
  // Each launch under its own deadline (launcher.hpp: one launch's, never the bundle's sum), waited
  // on before the next: a hang in the first of 8,160 launches is named within one deadline.
  const props::LaunchDeadline deadline = deadlines.deadline(c, backend.kind());
  std::atomic<std::size_t> launched{0};
  props::Heartbeat beat("run-operands", [&] {
    return std::to_string(launched.load()) + " of " + std::to_string(launches) + " launches";
  });
  device::Status st;
  std::vector<std::uint16_t> slab(d.c_reused ? d.c_launch / 2 : 0);
  if (d.c_reused) c_bits->assign(std::size_t{c.m} * columns.size() * launches, 0);
  for (std::size_t i = 0; i < launches; ++i, ++launched) {
    const std::size_t c_offset = d.c_reused ? 0 : i * d.c_launch;
    const device::Call call = props::case_call(c, registry, d.a->address() + i * d.a_launch, d.w->address(),
                                               d.s->address(), d.o->address() + c_offset);
    const device::Planned planned = device::plan_launch(call, registry, backend.limits());
    {
      const props::DeadlineGuard guard(props::HangReport{
          c, planned.plan, deadline.seconds(),
          "HANG: run-operands: " + golden::format_case(c) + ", launch " + std::to_string(i + 1) + " of " +
              std::to_string(launches) + "\n  " + (planned.ok() ? props::launch_text(planned.plan) : "not planned") +
              "\n  no completion within " + std::to_string(deadline.milliseconds() / 1000) + "." +
              std::to_string(deadline.milliseconds() % 1000 / 100) +
              " s of the launch (--launch-deadline, W8A16_LAUNCH_DEADLINE)"});
      st = planned.ok() ? backend.execute(planned.plan) : planned.status;
      if (st.ok()) st = backend.synchronize();
    }
    if (st.ok() && d.c_reused) {
      if (st.ok()) st = d.o->download(slab.data(), d.c_launch);
      if (st.ok()) st = d.o->fill(0xFF);
      for (std::size_t r = 0; st.ok() && r < c.m; ++r)
        for (std::size_t j = 0; j < columns.size(); ++j)
          (*c_bits)[(i * c.m + r) * columns.size() + j] = slab[r * c.c_row_stride + columns[j]];
    }
    if (!st.ok()) {
      std::fprintf(stderr, "run-operands: launch %zu of %zu: %s: %s\n", i, launches, device::errc_name(st.code),
                   st.message.c_str());
      return false;
    }
  }
  st = backend.synchronize();
  if (d.c_reused) {
    if (!st.ok()) std::fprintf(stderr, "run-operands: after %zu launches: %s\n", launches, st.message.c_str());
    return st.ok();
  }
  c_bits->assign(std::size_t{c.m} * c.c_row_stride * launches, 0);
  if (st.ok()) st = d.o->download(c_bits->data(), d.c_launch * launches);
  if (!st.ok()) {
    std::fprintf(stderr, "run-operands: after %zu launches: %s\n", launches, st.message.c_str());
    return false;
  }
  return true;
}

// --check: every launch's C against the contract the entry must meet (NUMERICS.md 2.1 for the
// tensor-core entries, 2.2 for the GEMVs), raw bits, no tolerance: rows [0, m) and columns [0, n)
// hold the emulator's bytes, the pitch padding keeps the 0xFFFF C was filled with (a kernel writes
// nothing else, docs/KERNEL_ABI.md 1.1). Prints the first differences and explains the first one
// as repro does; true when every byte matches.
bool check_against_emulator(const golden::OperandBundle& bundle, const std::vector<std::uint16_t>& c_bits,
                            const props::ContractChoice& contract) {
  const golden::Case& c = bundle.header.shape;
  const std::size_t launch_a = std::size_t{c.m} * c.a_row_stride, launch_c = std::size_t{c.m} * c.c_row_stride;
  std::uint64_t differ = 0, undefined_launches = 0;
  bool explained = false;
  for (std::size_t l = 0; l < bundle.header.launches; ++l) {
    golden::CaseInputs in;
    in.a_bits.assign(bundle.a.begin() + static_cast<std::ptrdiff_t>(l * launch_a),
                     bundle.a.begin() + static_cast<std::ptrdiff_t>((l + 1) * launch_a));
    in.w_e4m3 = bundle.w;
    in.s_f32 = bundle.s;
    // A launch the contract does not define is a failure that says why, never a comparison.
    const std::string undefined = props::contract_case_problem(c, in, contract);
    if (!undefined.empty()) {
      std::printf("launch %zu: FAIL: %s\n", l, undefined.c_str());
      ++undefined_launches;
      continue;
    }
    std::vector<std::uint16_t> want(launch_c, 0xFFFF);
    const ref::GemmView v = golden::case_view(c, in);
    const ref::Conventions& held = contract.for_entry(c.entry);
    if (golden::entry_point_is_gemv(c.entry)) ref::gemm_conventions(held.gemv, v, want.data(), c.c_row_stride);
    else ref::gemm_conventions(held.tc, v, ref::Arch::sm90, want.data(), c.c_row_stride);
    const std::vector<std::uint16_t> got(c_bits.begin() + static_cast<std::ptrdiff_t>(l * launch_c),
                                         c_bits.begin() + static_cast<std::ptrdiff_t>((l + 1) * launch_c));
    for (std::size_t i = 0; i < launch_c; ++i) {
      if (got[i] == want[i]) continue;
      const std::uint32_t row = static_cast<std::uint32_t>(i / c.c_row_stride),
                          col = static_cast<std::uint32_t>(i % c.c_row_stride);
      if (++differ <= 5)
        std::printf("launch %zu: C[%u][%u]%s = 0x%04x, want 0x%04x\n", l, row, col,
                    col >= c.n ? " (pitch padding)" : "", got[i], want[i]);
      if (!explained && col < c.n) {
        std::fputs((props::explain_element(c, in, want, &got, row, col, contract) + "\n").c_str(), stdout);
        explained = true;
      }
    }
  }
  const ref::Conventions& held = contract.for_entry(c.entry);
  const bool canonical = held.same_numerics(ref::canonical_conventions());
  std::printf("check: %" PRIu64 " of %" PRIu64 " elements of C differ from the %s (all of C, pitch padding included)\n",
              differ, static_cast<std::uint64_t>(c_bits.size()),
              !canonical                             ? ("contract " + contract.describe_for(c.entry)).c_str()
              : golden::entry_point_is_gemv(c.entry) ? "GEMV order (NUMERICS.md 2.2)"
                                                     : "canonical fold (NUMERICS.md 2.1)");
  if (undefined_launches)
    std::printf("check: %" PRIu64 " launches not compared: the contract does not define them\n", undefined_launches);
  return differ == 0 && undefined_launches == 0;
}

int run_operands(const RunOperandsArgs& args) {
  if (args.backend_kind != "sim" && args.backend_kind != "cuda")
    return usage("--backend " + golden::quote(args.backend_kind) + " must be sim or cuda");
  std::string error, note;
  if (!golden::check_writable(args.out, &error)) return usage("--out " + golden::shown(args.out) + ": " + error);
  golden::OperandBundle bundle;
  if (!read_bundle(args.in, args.limits, args.columns.size(), &bundle, &error)) return usage(error);
  for (std::size_t j = 0; j < args.columns.size(); ++j)
    if (args.columns[j] >= bundle.header.shape.n || (j > 0 && args.columns[j] <= args.columns[j - 1]))
      return usage("--columns: " + std::to_string(args.columns[j]) +
                   ": columns must increase and be below n=" + std::to_string(bundle.header.shape.n));
  if (args.check && !args.columns.empty()) return usage("--check compares all of C; it does not go with --columns");
  const props::ContractChoice& contract = args.contract;
  if (!args.check && !contract.given.empty())
    return usage("--contract says what --check holds the entry to; it applies to --check only");
  const std::string& bundle_entry = bundle.header.entry;
  const std::string want = args.entry.rfind("w8a16_", 0) == 0 ? args.entry.substr(6) : args.entry;
  if (want != bundle_entry)
    return usage("--entry " + golden::quote(args.entry) + ", but " + golden::shown(args.in) + " is a bundle for " +
                 bundle_entry);
  bool no_gpu = false;
  auto backend = make_backend(args.backend_kind, &note, &error, args.module, 0, &no_gpu);
  if (!backend) return backend_refused("run-operands", error, no_gpu);
  if (!check_module(*backend, {props::to_device_entry(bundle.header.shape.entry)}, &error)) return usage(error);
  const golden::Case& c = bundle.header.shape;
  const std::size_t launches = bundle.header.launches;
  std::vector<std::uint8_t> w_device;
  if (!weights_for_entry(bundle, &w_device, &error)) return usage(error);
  if (c.entry == golden::EntryPoint::gemm_packed_strided)
    std::printf(
        "run-operands: gemm_packed_strided reads W packed: the bundle's %u x %u codes were packed by the "
        "launch layer (NUMERICS.md 2.3) into %zu bytes\n",
        c.n, c.k, w_device.size());
  DeviceOperands d;
  const std::string failed = upload(*backend, bundle, w_device, !args.columns.empty(), &d);
  if (!failed.empty() || !d.o) return usage("device memory: " + failed + " (nothing was run)");
  const props::CaseRegistry no_hopper(backend->registry(), device::tier_kernels(device::Tier::first));
  const device::KernelRegistry& registry = args.without_hopper ? static_cast<const device::KernelRegistry&>(no_hopper)
                                                               : backend->registry();
  // The plan of the first launch names the body; every launch has the same shape, hence the same plan.
  const device::Call first = props::case_call(c, registry, d.a->address(), d.w->address(), d.s->address(),
                                              d.o->address());
  const device::Planned plan = device::plan_launch(first, registry, backend->limits());
  if (!plan.ok())
    return usage(bundle_entry + " refuses m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) +
                 " k=" + std::to_string(c.k) + " a_row_stride=" + std::to_string(c.a_row_stride) +
                 " c_row_stride=" + std::to_string(c.c_row_stride) + ": " + device::errc_name(plan.status.code) + ": " +
                 plan.status.message + " (nothing was run)");
  golden::OperandOutput result;
  if (!launch_all(*backend, registry, c, launches, d, args.columns, args.deadlines, &result.c)) return kExitFail;
  result.entry = bundle_entry;
  result.kernel = plan.plan.kernel_name;
  result.body = device::body_name(plan.plan.body);
  result.contract = plan.plan.contract == device::Contract::gemv ? 1 : 0;
  result.m = c.m;
  // With --columns the file holds those columns only: its n and pitch are their count (the format's
  // C is [launches*m][c_row_stride]); the command line, in probes.list, says which they are.
  result.n = args.columns.empty() ? c.n : static_cast<std::uint32_t>(args.columns.size());
  result.c_row_stride = args.columns.empty() ? c.c_row_stride : result.n;
  result.launches = static_cast<std::uint32_t>(launches);
  result.backend = backend->name();
  std::string file;
  if (!golden::format_operand_output(result, &file, &error) || !golden::write_file_atomic(args.out, file, &error))
    return usage("--out " + golden::shown(args.out) + ": cannot write: " + error);
  std::fputs(identity_text(run_identity(*backend)).c_str(), stdout);
  std::printf("run-operands: %s on %s: kernel %s, body %s, %zu launches of m=%u n=%u k=%u -> %s%s\n",
              bundle_entry.c_str(), note.c_str(), plan.plan.kernel_name, device::body_name(plan.plan.body), launches,
              c.m, c.n, c.k, golden::shown(args.out).c_str(),
              args.columns.empty() ? "" : (" (" + std::to_string(args.columns.size()) + " columns kept)").c_str());
  if (!args.check) return kExitPass;
  std::fputs(props::contract_report_text(contract).c_str(), stdout);
  const bool equal = check_against_emulator(bundle, result.c, contract);
  std::fputs(verdict_line(equal ? "PASS" : "FAIL").c_str(), stdout);
  return equal ? kExitPass : kExitFail;
}

}  // namespace cmd_run_operands
}  // namespace w8a16::cli
