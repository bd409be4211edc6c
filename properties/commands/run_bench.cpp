// SPDX-License-Identifier: MIT OR Apache-2.0
// `w8a16check bench`: times the dispatched entry points on the GPU against the memory floor and cuBLAS.
//
// For each (N, K) and M: the output of one launch is compared with the emulator (all of it for small
// cases, else a subsample of rows and 128-column scale blocks), then the launch is timed: a CUDA
// graph of --reps launches back to back, replayed --batches times, the median replay divided by
// --reps. Every launch reads the next of several copies of W and S whose total passes --rotate-mib
// (default 512 MiB, ~8x the H200's 60 MB L2), so each launch streams its weights from HBM. The floor
// is the bytes moved once over the copy bandwidth measured at the start of the same run; cuBLAS is
// cublasLt's BF16 GEMM on W*S dequantized to BF16, timed the same way. How all of that is done is
// device/bench/ (README.md there); this file holds the arguments, the rows and the JSON. Speed is
// reported, never asserted; the exit code is 1 only when an output differs from the emulator (or
// cuBLAS's from a float64 reference), 2 when nothing ran.
#include "run_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends.hpp"
#include "w8a16/device/packed.hpp"
#include "gpu_identity.hpp"
#include "report_files.hpp"
#include "w8a16/golden/files.hpp"
#include "w8a16/bench/method.hpp"

#if W8A16_HAVE_CUDA
#include "w8a16/bench/check.hpp"
#include "w8a16/bench/cublas.hpp"
#include "w8a16/bench/inputs.hpp"
#include "w8a16/bench/measure.hpp"
#include "w8a16/golden/case.hpp"
#include "w8a16/properties/case_runner.hpp"
#include "w8a16/properties/launcher.hpp"
#include "w8a16/bench/timer.hpp"
#include "w8a16/device/api.hpp"
#include "w8a16/device/bodies.hpp"
#include "w8a16/device/cuda_backend.hpp"
#include "w8a16/device/module_abi.hpp"
#endif

namespace w8a16::cli {
namespace cmd_bench {

using bench::Shape;

const char* const kDefaultShapes[] = {"12288x2048", "2048x4096", "10240x5120", "51200x5120", "5120x25600"};
const std::uint32_t kDefaultMs[] = {1, 2, 4, 8, 16, 32, 48, 64, 128, 512};

// Checks every option before anything touches a GPU, so a typo costs no device time.
bool resolve_args(BenchArgs* a, std::vector<Shape>* shapes, std::string* why) {
  if (a->shapes.empty()) a->shapes.assign(std::begin(kDefaultShapes), std::end(kDefaultShapes));
  if (a->ms.empty()) a->ms.assign(std::begin(kDefaultMs), std::end(kDefaultMs));
  for (const std::string& s : a->shapes) {
    Shape sh;
    if (!bench::parse_shape(s, &sh, why)) return false;
    shapes->push_back(sh);
  }
  for (std::uint32_t m : a->ms)
    if (!bench::check_row_count(m, why)) return false;
  for (const Shape& sh : *shapes)
    for (std::uint32_t m : a->ms)
      if (!bench::check_rows(m, sh, why)) return false;
  if (a->reps < 1 || a->reps > 10000) {
    *why = "--reps must be in 1..10000";
    return false;
  }
  if (a->batches < 1 || a->batches > 10000) {
    *why = "--batches must be in 1..10000";
    return false;
  }
  if (!(a->rotate_mib >= 0 && a->rotate_mib <= 65536)) {
    *why = "--rotate-mib must be in 0..65536";
    return false;
  }
  if (a->device < 0) {
    *why = "--device must be >= 0";
    return false;
  }
  // Host memory of the largest shape at the largest M: A, W and S, W dequantized to BF16 for cuBLAS,
  // C downloaded twice for ours and once for cuBLAS, and the emulator's sampled expected C.
  const std::uint32_t max_m = *std::max_element(a->ms.begin(), a->ms.end());
  for (const Shape& sh : *shapes) {
    CaseCost cost;
    const std::uint64_t w = std::uint64_t{sh.n} * sh.k, c = std::uint64_t{max_m} * sh.n;
    // S's elements in 64 bits, like every other term: in 32 bits (n / 128) * (k / 128) * 4 wraps from
    // n = k = 2^22 on (harmless only because W's 3 * n * k bytes are then over any limit anyway).
    const std::uint64_t scales = std::uint64_t{(sh.n + 127) / 128} * (sh.k / 128);
    cost.host_bytes = 2 * std::uint64_t{max_m} * sh.k + 3 * w + 4 * scales + 8 * c + (std::uint64_t{64} << 20);
    const std::string over = over_limits("--shapes " + std::to_string(sh.n) + "x" + std::to_string(sh.k) +
                                             " at M=" + std::to_string(max_m),
                                         cost, a->limits);
    if (!over.empty()) {
      *why = over.substr(0, over.size() - 1) + "; nothing was run";
      return false;
    }
  }
  return true;
}

#if W8A16_HAVE_CUDA
using bench::Check;
using bench::Timing;

// ---- one row of the table --------------------------------------------------------------
struct Row {
  Shape sh;
  std::uint32_t m = 0;
  std::string entry, kernel, body;
  Timing ours, cublas;
  double bytes = 0, floor_us = 0;
  Check check;
  bool launched = false;
  bool stable = false;     // C after timing == C that was checked
  bool dispatched = true;  // the entry point as it dispatches (false: some kernels taken away)
  std::string error;
  double cublas_rel_err = -1;
  bool cublas_ok = false;
  std::string cublas_error;
};

std::string fmt_us(const Timing& t) {
  if (!t.ok) return "-";
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", t.median_us);
  return b;
}

std::string check_text(const Row& r) {
  if (!r.launched) return "NOT RUN";
  if (r.check.mismatches) return "MISMATCH " + std::to_string(r.check.mismatches);
  if (!r.stable) return "UNSTABLE";
  return r.check.full ? "ok (all)" : "ok (" + std::to_string(r.check.compared) + ")";
}

void print_header() {
  std::printf("%6s %6s %4s  %-11s %-13s %9s %9s %9s %7s %7s %7s  %s\n", "N", "K", "M", "entry", "body", "ours us",
              "cuBLAS us", "floor us", "fl/ours", "cB/ours", "TFLOP/s", "check (elements)");
}

void print_row(const Row& r) {
  char fl[16] = "-", sp[16] = "-", tf[16] = "-";
  if (r.ours.ok) {
    std::snprintf(fl, sizeof fl, "%.3f", r.floor_us / r.ours.median_us);
    std::snprintf(tf, sizeof tf, "%.1f", 2.0 * r.m * r.sh.n * r.sh.k / (r.ours.median_us * 1e-6) * 1e-12);
    if (r.cublas.ok) std::snprintf(sp, sizeof sp, "%.2f", r.cublas.median_us / r.ours.median_us);
  }
  // Short entry names keep a row near 110 characters: the default run's table fits a 12,000-character log tail.
  const std::string entry = r.entry.rfind("gemm_pipelined_", 0) == 0 ? r.entry.substr(15) : r.entry;
  std::string note;  // timed without a graph (capture failed, or --no-graph): host launch gaps may count
  if (r.ours.ok && !r.ours.graph) note += " [ours: launches]";
  if (r.cublas.ok && !r.cublas.graph) note += " [cuBLAS: launches]";
  if (!r.error.empty()) note += "  " + r.error;
  std::printf("%6u %6u %4u  %-11s %-13s %9s %9s %9.2f %7s %7s %7s  %s%s\n", r.sh.n, r.sh.k, r.m, entry.c_str(),
              r.body.c_str(), fmt_us(r.ours).c_str(), fmt_us(r.cublas).c_str(), r.floor_us, fl, sp, tf,
              check_text(r).c_str(), note.c_str());
  std::fflush(stdout);
}

nlohmann::json timing_json(const Timing& t) {
  nlohmann::json j;
  j["ok"] = t.ok;
  if (!t.ok) {
    j["error"] = t.error;
    return j;
  }
  j["median_us"] = t.median_us;
  j["min_us"] = t.min_us;
  j["max_us"] = t.max_us;
  j["method"] = t.graph ? "graph" : "launches";
  return j;
}

// Whether each entry point picked the fastest body it could have: at each (shape, M), its row as it
// dispatches against its rows timed with kernels taken away (the same entry, the same bytes,
// another body; PERF_NOTES.md "Dispatch rules"). `ratio` = the dispatched row's time / the fastest
// row's (1: the rule picked the fastest timed body).
struct DispatchCheck {
  Shape sh;
  std::uint32_t m = 0;
  std::string entry, dispatched_body, fastest_body;
  double ratio = 1;
  int alternatives = 0;  // rows timed against it
};
std::vector<DispatchCheck> dispatch_checks(const std::vector<Row>& rows) {
  std::vector<DispatchCheck> out;
  for (const Row& d : rows) {
    if (!d.dispatched || !d.ours.ok) continue;
    DispatchCheck c{d.sh, d.m, d.entry, d.body, d.body, 1};
    double best = d.ours.median_us;
    for (const Row& r : rows) {
      if (r.entry != d.entry || r.dispatched || !r.ours.ok || r.sh.n != d.sh.n || r.sh.k != d.sh.k || r.m != d.m)
        continue;
      ++c.alternatives;
      if (r.ours.median_us < best) {
        best = r.ours.median_us;
        c.fastest_body = r.body;
      }
    }
    c.ratio = d.ours.median_us / best;
    if (c.alternatives > 0) out.push_back(c);  // nothing to compare with: no verdict
  }
  return out;
}

// Every number of the run, one object per row (the schema of device/kernels/bench-h200*.json).
std::string json_text(const RunIdentity& id, const bench::DeviceProps& p, double copy_bw, const BenchArgs& a,
                      const std::string& cublas_note, bool pass, const std::vector<Row>& rows,
                      const std::vector<DispatchCheck>& checks) {
  nlohmann::json j;
  add_identity_json(&j, id);
  j["device"] = {{"name", p.name},
                 {"sm", std::to_string(p.cc_major) + std::to_string(p.cc_minor)},
                 {"sms", p.sms},
                 {"l2_bytes", p.l2_bytes},
                 {"driver_version", p.driver_version}};
  j["copy_bandwidth_bytes_per_s"] = copy_bw;
  j["method"] = {{"reps", a.reps},
                 {"batches", a.batches},
                 {"rotate_mib", a.rotate_mib},
                 {"graph", !a.no_graph},
                 {"check_macs", a.check_macs},
                 {"seed", a.seed},
                 {"floor", bench::kFloorFormula}};
  j["cublas"] = cublas_note;
  j["pass"] = pass;
  j["rows"] = nlohmann::json::array();
  for (const Row& r : rows) {
    nlohmann::json x;
    x["n"] = r.sh.n;
    x["k"] = r.sh.k;
    x["m"] = r.m;
    x["entry"] = r.entry;
    x["dispatched"] = r.dispatched;  // false: a body timed against the dispatched one (kernels taken away)
    x["kernel"] = r.kernel;
    x["body"] = r.body;
    x["bytes"] = r.bytes;
    x["floor_us"] = r.floor_us;
    x["ours"] = timing_json(r.ours);
    x["cublas"] = timing_json(r.cublas);
    if (r.cublas_rel_err >= 0) x["cublas_rel_err_vs_float64"] = r.cublas_rel_err;
    if (r.ours.ok) {
      x["floor_fraction"] = r.floor_us / r.ours.median_us;
      x["tflops"] = 2.0 * r.m * r.sh.n * r.sh.k / (r.ours.median_us * 1e-6) * 1e-12;
      if (r.cublas.ok) x["speedup_vs_cublas"] = r.cublas.median_us / r.ours.median_us;
    }
    x["check"] = {{"launched", r.launched},          {"full", r.check.full},
                  {"compared", r.check.compared},    {"mismatches", r.check.mismatches},
                  {"first_mismatch", r.check.first}, {"timed_output_equals_checked", r.stable}};
    if (!r.error.empty()) x["error"] = r.error;
    x["status"] = check_text(r);
    j["rows"].push_back(x);
  }
  j["dispatch"] = nlohmann::json::array();
  for (const DispatchCheck& c : checks)
    j["dispatch"].push_back({{"n", c.sh.n},
                             {"k", c.sh.k},
                             {"m", c.m},
                             {"entry", c.entry},
                             {"dispatched_body", c.dispatched_body},
                             {"fastest_body", c.fastest_body},
                             {"alternatives_timed", c.alternatives},
                             {"dispatched_over_fastest", c.ratio}});
  j["verdict"] = pass ? "PASS" : "FAIL";
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

// The calls timed at one (shape, M): by_m as it dispatches; on a module with the tier every
// tensor-core entry point tries first (bodies.def's tier column: the Hopper tier), the same call
// again with each of that tier's symbols alone and with the tier taken away (the tiers below it);
// else, at M <= 16, the strided 32-row twin (tc_rows where it takes the shape, else the skinny
// body); and on a module with the packed symbols, gemm_packed_strided over the same W repacked
// (`packed`: its calls read `packed_ops`), as it dispatches and with its rule's first choice taken
// away where the rule weighed another body. `absent` is what the registry each call plans with
// takes away (kernel_bit()s); a call whose plan repeats an earlier one's is not timed again.
struct TimedCall {
  device::Call call;
  std::uint32_t absent = 0;
  bool packed = false;
};
std::vector<TimedCall> timed_calls(const device::KernelRegistry& reg, const bench::DeviceOperands& ops,
                                   const bench::DeviceOperands& packed_ops, Shape sh, std::uint32_t m,
                                   std::uint32_t sms) {
  using device::KernelId;
  device::Call c;
  c.entry = device::Entry::gemm_pipelined_by_m;
  c.kernel = reg.resolve(KernelId::gemm_pipelined);
  c.m32_kernel = reg.resolve(KernelId::gemm_pipelined_m32);
  c.m64_kernel = reg.resolve(KernelId::gemm_pipelined_m64);
  c.args = device::Args{
      ops.a->address(), ops.w[0]->address(), ops.s[0]->address(), ops.c->address(), m, sh.n, sh.k, sh.k, sh.n, 0};
  std::vector<TimedCall> calls = {{c, 0}};
  const std::uint32_t tier = device::tier_kernels(device::Tier::first);
  std::uint32_t tier_present = 0;
  for (KernelId k : device::kAllKernels)
    if ((tier & device::kernel_bit(k)) && reg.resolve(k)) tier_present |= device::kernel_bit(k);
  if (tier_present) {
    for (KernelId k : device::kAllKernels)
      if (tier_present & device::kernel_bit(k)) calls.push_back({c, tier & ~device::kernel_bit(k)});
    calls.push_back({c, tier});
  } else if (m <= 16) {
    device::Call s = c;
    s.entry = device::Entry::gemm_pipelined_m32_strided;
    s.kernel = c.m32_kernel;
    s.m32_kernel = s.m64_kernel = device::KernelHandle{};
    calls.push_back({s, 0});
  }
  if (!packed_ops.w.empty()) {
    device::Call p;
    p.entry = device::Entry::gemm_packed_strided;
    p.args = device::Args{packed_ops.a->address(),
                          packed_ops.w[0]->address(),
                          packed_ops.s[0]->address(),
                          packed_ops.c->address(),
                          m,
                          sh.n,
                          sh.k,
                          sh.k,
                          sh.n,
                          0};
    calls.push_back({p, 0, true});
    // The same with its rule's first choice taken away, where the rule weighed another body
    // (plan.hpp packed_bodies: up to 16 rows).
    const device::PackedBodies weighed = device::packed_bodies(m, sh.n, sms);
    if (weighed.count > 1)
      calls.push_back({p, device::kernel_bit(device::body_launch(weighed.body[0], m, sh.n, sh.k, sms).kernel), true});
  }
  return calls;
}

int run_bench_cuda(BenchArgs& a, const std::vector<Shape>& shapes) {
  const auto started = std::chrono::steady_clock::now();
  device::Status st;
  auto backend = a.module.empty() ? device::CudaBackend::create(a.device, &st)
                                  : device::CudaBackend::create_from_file(a.device, a.module, &st);
  if (!backend) {
    if (st.code == device::Errc::no_device) return backend_refused("bench", st.message, true);
    std::fprintf(stderr, "bench: no usable CUDA device (GPU %d): %s\n", a.device, st.message.c_str());
    return 2;
  }
  std::string why;  // the entry points timed below
  if (!check_module(*backend, {device::Entry::gemm_pipelined_by_m, device::Entry::gemm_pipelined_m32_strided}, &why)) {
    std::fprintf(stderr, "bench: %s\n", why.c_str());
    return 2;
  }
  const RunIdentity id = run_identity(*backend);
  std::fputs(identity_text(id).c_str(), stdout);
  // The session keeps the GPU's primary context current for the whole run: the backend and
  // cuBLASLt share it. The floor's copy bandwidth is measured first, in this run.
  auto session = bench::GpuSession::open(a.device, &why);
  double copy_bw = 0;
  if (!session || !session->measure_copy_bandwidth(&copy_bw, &why)) {
    std::fprintf(stderr, "bench: %s\n", why.c_str());
    return 2;
  }
  const bench::CublasSetup cublas = bench::open_cublas(*backend, !a.no_cublas);
  const bench::DeviceProps& p = session->props();
  std::printf("bench: %s (sm_%d%d, %d SMs, L2 %.0f MB), driver %d; copy bandwidth %.0f GB/s (read + write)\n",
              p.name.c_str(), p.cc_major, p.cc_minor, p.sms, p.l2_bytes / 1e6, p.driver_version, copy_bw * 1e-9);
  std::printf(
      "bench: timing = median over %d %s of %d launches back to back, weights rotating over >= %.0f MiB; "
      "cuBLAS: %s\n",
      a.batches, a.no_graph ? "batches" : "graph replays", a.reps, a.rotate_mib, cublas.note.c_str());
  std::printf(
      "bench: floor = bytes moved once (W, S, A read; C written) / copy bandwidth; fl/ours = floor / ours "
      "(1 = at the floor); cB/ours = cuBLAS time / ours (> 1: ours faster)\n");
  print_header();

  using device::KernelId;
  const device::KernelRegistry& reg = backend->registry();
  const std::uint32_t max_m = *std::max_element(a.ms.begin(), a.ms.end());
  const bench::MeasureOptions opt{a.reps, a.batches, !a.no_graph};

  std::vector<Row> rows;
  bool any_mismatch = false;
  for (const Shape sh : shapes) {
    const bench::HostInputs in = bench::make_host_inputs(max_m, sh, bench::inputs_seed(a.seed, sh));
    bench::DeviceOperands ops;
    bench::CublasOperands cb_ops;
    if (!bench::upload_operands(*backend, in, sh, max_m, bench::rotation_copies(bench::weight_bytes(sh), a.rotate_mib),
                                &ops, &why) ||
        (cublas.runner && !bench::upload_cublas_operands(*backend, in, sh, max_m, a.rotate_mib, &cb_ops, &why))) {
      std::fprintf(stderr, "bench: N=%u K=%u: device buffers: %s\n", sh.n, sh.k, why.c_str());
      return 2;
    }
    // The packed layout's copies of the same W (NUMERICS.md 2.3), where the module can run it.
    bench::DeviceOperands packed_ops;
    const std::vector<KernelId> packed_kernels = device::required_kernels(device::Entry::gemm_packed_strided);
    if (std::all_of(packed_kernels.begin(), packed_kernels.end(), [&](KernelId k) { return bool(reg.resolve(k)); })) {
      bench::HostInputs packed_in = in;
      packed_in.w = device::pack_weights(in.w.data(), sh.n, sh.k);
      if (!bench::upload_operands(*backend, packed_in, sh, max_m,
                                  bench::rotation_copies(bench::weight_bytes(sh), a.rotate_mib), &packed_ops, &why)) {
        std::fprintf(stderr, "bench: N=%u K=%u: device buffers (packed W): %s\n", sh.n, sh.k, why.c_str());
        return 2;
      }
    }
    for (const std::uint32_t m : a.ms) {
      // The emulator's bytes, computed once per (shape, M) for every call that plans this contract.
      bench::Expected expected(in, sh, bench::choose_sample(m, sh, a.check_macs));
      const std::vector<TimedCall> calls = timed_calls(reg, ops, packed_ops, sh, m, backend->limits().multiprocessors);
      std::vector<std::string> planned_here;  // entry, symbol and configuration of each call timed
      for (const TimedCall& tc : calls) {
        Row r;
        r.sh = sh;
        r.m = m;
        r.entry = device::entry_name(tc.call.entry);
        r.bytes = bench::floor_bytes(sh, m);
        r.floor_us = bench::floor_us(r.bytes, copy_bw);
        r.dispatched = tc.absent == 0;
        const props::CaseRegistry registry(reg, tc.absent);
        const device::Planned planned = device::plan_launch(tc.call, registry, backend->limits());
        if (planned.ok()) {
          const std::string key = r.entry + " " + planned.plan.kernel_name + " " +
                                  device::body_info(planned.plan.body).config(planned.plan);
          if (std::find(planned_here.begin(), planned_here.end(), key) != planned_here.end()) continue;
          planned_here.push_back(key);
          r.kernel = planned.plan.kernel_name;
          r.body = device::body_name(planned.plan.body);
          // One deadline for the row's launches (the check launch, the warm-up, reps x batches timed
          // and the stability launch), each held to a case of this shape's (launcher.hpp): they are
          // queued together and waited on once, so the row's is their sum, held to the range.
          const golden::Case shape_case = golden::CaseSpec{}.shape(m, sh.n, sh.k);
          const double deadline = props::LaunchDeadline::clamped(a.deadlines.seconds(shape_case, backend->kind()) *
                                                                 (4.0 + static_cast<double>(a.reps) * (a.batches + 1)))
                                      .seconds();
          const props::DeadlineGuard guard(props::HangReport{
              shape_case, planned.plan, deadline,
              "HANG: bench: m=" + std::to_string(m) + " n=" + std::to_string(sh.n) + " k=" + std::to_string(sh.k) +
                  "\n  " + props::launch_text(planned.plan) + "\n  the row's launches did not complete within " +
                  std::to_string(static_cast<long long>(deadline)) + " s"});
          const bench::Measurement meas = bench::measure_plan(*backend, *session, planned.plan,
                                                              tc.packed ? packed_ops : ops, expected, opt);
          r.launched = meas.launched;
          r.check = meas.check;
          r.ours = meas.timing;
          r.stable = meas.stable;
          r.error = meas.error;
        } else {
          r.error = planned.status.message;
        }
        if (!r.launched) {
          print_row(r);
          rows.push_back(r);
          any_mismatch = true;
          continue;
        }
        if (r.check.mismatches || !r.stable) any_mismatch = true;
        if (cublas.runner && &tc == &calls.front()) {  // cuBLAS once per (shape, M), on the first row
          const bench::CublasMeasurement cm = bench::measure_cublas(*cublas.runner, *backend, *session, cb_ops, *ops.a,
                                                                    in, sh, m, expected.sample(), opt);
          r.cublas = cm.timing;
          r.cublas_rel_err = cm.rel_err;
          r.cublas_ok = cm.ok;
          r.cublas_error = cm.error;
          if (cm.differs) any_mismatch = true;
          if (!r.cublas_error.empty()) r.error += (r.error.empty() ? "" : "; ") + ("cuBLAS: " + r.cublas_error);
        } else if (cublas.runner && !rows.empty() && rows.back().sh.n == sh.n && rows.back().sh.k == sh.k &&
                   rows.back().m == m) {
          r.cublas = rows.back().cublas;  // the same cuBLAS call: repeated for the ratio
          r.cublas_rel_err = rows.back().cublas_rel_err;
          r.cublas_ok = rows.back().cublas_ok;
        }
        print_row(r);
        rows.push_back(r);
      }
    }
  }

  const std::vector<DispatchCheck> checks = dispatch_checks(rows);
  std::size_t fastest = 0;
  std::string slower;
  for (const DispatchCheck& c : checks) {
    if (c.ratio <= 1) {
      ++fastest;
      continue;
    }
    char b[224];
    std::snprintf(b, sizeof b, "\n  %s N=%u K=%u M=%u: %s %.1f%% faster than the dispatched %s", c.entry.c_str(),
                  c.sh.n, c.sh.k, c.m, c.fastest_body.c_str(), 100.0 * (c.ratio - 1.0), c.dispatched_body.c_str());
    slower += b;
  }
  if (!checks.empty())
    std::printf("bench: dispatch: the dispatched body is the fastest timed at %zu of %zu (entry, shape, M)%s\n",
                fastest, checks.size(), slower.c_str());
  std::printf("bench: %zu rows in %.0f s; %s\n", rows.size(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(),
              any_mismatch ? "SOME OUTPUT DIFFERS FROM THE EMULATOR OR A LAUNCH FAILED (see check column)"
                           : "every checked output equals the emulator's bytes");
  if (!a.json_report->path.empty()) {
    std::string error;
    if (!finish_report(a.json_report.get(), json_text(id, p, copy_bw, a, cublas.note, !any_mismatch, rows, checks),
                       &error)) {
      std::fprintf(stderr, "%s\n", error.c_str());
      return 2;
    }
    std::printf("bench: wrote %s\n", golden::shown(a.json_report->path).c_str());
  }
  return any_mismatch ? 1 : 0;
}

#endif  // W8A16_HAVE_CUDA

int run_bench(BenchArgs& a) {
  std::vector<Shape> shapes;
  std::string why;
  if (!resolve_args(&a, &shapes, &why) || !begin_report(a.json_report.get(), &why)) {
    std::fprintf(stderr, "bench: %s\n", why.c_str());
    note_error(why);
    return 2;
  }
#if W8A16_HAVE_CUDA
  return run_bench_cuda(a, shapes);
#else
  std::fprintf(stderr, "bench: needs a GPU, and this build has no CUDA backend (configure with the cuda preset)\n");
  return 2;
#endif
}

}  // namespace cmd_bench
}  // namespace w8a16::cli
