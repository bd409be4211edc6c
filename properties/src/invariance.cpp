// SPDX-License-Identifier: MIT OR Apache-2.0
// The invariance sweep (invariance.hpp): a needle row among seeded filler rows at every M, its
// bytes compared device against device, raw bits, and once against the emulator.
#include "w8a16/properties/invariance.hpp"

#include "w8a16/properties/identify.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include "w8a16/device/bodies.hpp"
#include "w8a16/device/packed.hpp"
#include "w8a16/golden/case_rng.hpp"
#include "w8a16/golden/operands.hpp"
#include "w8a16/properties/launcher.hpp"
#include "w8a16/properties/work_limits.hpp"

namespace w8a16::props {
namespace {

std::string hex4(std::uint16_t v) {
  char b[8];
  std::snprintf(b, sizeof b, "0x%04x", v);
  return b;
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::string entry_short(golden::EntryPoint e) {
  const std::string_view full = golden::entry_point_name(e);
  return std::string(full.substr(full.rfind("w8a16_", 0) == 0 ? 6 : 0));
}

// A call of the sweep as text: its shape, pitches and `without=`, and the needle's data. Not a case
// line: the rows are the sweep's (needle and filler), which no case's seed regenerates.
std::string call_text(const golden::Case& c, const std::string& needle) {
  std::string t = std::string(golden::entry_point_name(c.entry)) + " m=" + std::to_string(c.m) +
                  " n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) +
                  " a_row_stride=" + std::to_string(c.a_row_stride) + " c_row_stride=" + std::to_string(c.c_row_stride);
  if (c.without != 0) t += " without=" + golden::without_text(c.without);
  return t + " needle=" + needle;
}

constexpr std::uint64_t mix(std::uint64_t x) { return golden::splitmix64(x); }

}  // namespace

// ---- launching ---------------------------------------------------------------------------------

BackendInvarianceLauncher::BackendInvarianceLauncher(CaseLauncher& cases, device::Backend& backend)
    : cases_(cases), backend_(backend) {
  device::Status st;
  stream_ = backend_.concurrent_stream(&st);
  has_stream_ = st.ok();
  no_stream_ = st.message;
}

BackendInvarianceLauncher::~BackendInvarianceLauncher() = default;

Launched BackendInvarianceLauncher::launch(const golden::Case& c, const golden::CaseInputs& in,
                                           const ViewOffsets& offsets) {
  if (offsets.none()) return cases_.launch(c, in);
  return in_process(c, in, offsets, "views at A+" + std::to_string(offsets.a) + ", C+" + std::to_string(offsets.c));
}

// In this process, under the same deadline as the case launchers' (a hang ends the process through
// the hang handler, which reports it).
Launched BackendInvarianceLauncher::in_process(const golden::Case& c, const golden::CaseInputs& in,
                                               const ViewOffsets& offsets, const std::string& what,
                                               const std::function<void(const device::Plan&)>& before) {
  std::unique_ptr<DeadlineGuard> guard;
  return launch_case(
      backend_, c, in,
      [&](const device::Plan& p) {
        if (before) before(p);
        const double deadline = cases_.deadlines().seconds(c, backend_.kind());
        guard = std::make_unique<DeadlineGuard>(HangReport{
            c, p, deadline, "HANG: " + golden::format_case(c) + " (" + what + ")\n  " + launch_text(p)});
      },
      offsets);
}

std::string BackendInvarianceLauncher::busy_stream_text() const {
  if (!has_stream_) return "";
  return std::to_string(kLoadLaunches) +
         " launches of the same entry point at the same M over N = K = " + std::to_string(kLoadExtent) +
         " queued on a second stream right before the call";
}

device::Status BackendInvarianceLauncher::queue_load(const golden::Case& c) {
  golden::Case load = c;
  load.n = load.k = kLoadExtent;
  load.a_row_stride = load.k;
  load.c_row_stride = load.n;
  const bool packed = c.entry == golden::EntryPoint::gemm_packed_strided;
  const std::size_t bytes[4] = {std::size_t{load.m} * load.k * 2,
                                packed ? device::packed_weight_bytes(load.n, load.k) : std::size_t{load.n} * load.k,
                                std::size_t{(load.n + 127) / 128} * (load.k / 128) * 4,
                                std::size_t{load.m} * load.n * 2};
  device::Status st;
  for (int i = 0; i < 4; ++i)
    if (!load_[i] || load_[i]->size() < bytes[i])
      if (!(load_[i] = backend_.allocate(bytes[i], &st))) return st;
  const CaseRegistry registry(backend_.registry(), load.without);
  device::Call call = case_call(load, registry, load_[0]->address(), load_[1]->address(), load_[2]->address(),
                                load_[3]->address());
  call.args.stream = stream_;
  const device::Planned planned = device::plan_launch(call, registry, backend_.limits());
  if (!planned.ok()) return planned.status;
  for (int i = 0; i < kLoadLaunches; ++i)
    if (!(st = backend_.execute(planned.plan)).ok()) return st;
  return device::Status::success();
}

Launched BackendInvarianceLauncher::launch_beside_load(const golden::Case& c, const golden::CaseInputs& in) {
  if (!has_stream_) {
    Launched l;
    l.status = device::Status::error(device::Errc::backend_error, "no second stream: " + no_stream_);
    return l;
  }
  // Once alone first, in this process: the call's own first-use costs (its workspace on stream 0,
  // the kernel's shared-memory opt-in) are paid before the load is queued, so nothing the call does
  // at launch waits for the load to drain.
  Launched warm = in_process(c, in, {}, "alone, in this process");
  if (!warm.status.ok()) return warm;
  device::Status load_status;
  Launched l = in_process(c, in, {}, "beside a load on a second stream",
                          [&](const device::Plan&) { load_status = queue_load(c); });
  if (l.status.ok() && !load_status.ok()) {
    l.status = load_status;
    l.status.message = "the load on the second stream: " + load_status.message;
  }
  return l;
}

// ---- dispatch ----------------------------------------------------------------------------------

std::string Dispatched::label() const {
  return ok ? std::string(device::body_name(body)) + " (" + config + ")" : "refused";
}

Dispatched dispatch_of(golden::EntryPoint e, std::uint32_t m, std::uint32_t n, std::uint32_t k, std::uint32_t without,
                       const device::KernelRegistry& registry, const device::DeviceLimits& limits) {
  Dispatched d;
  golden::Case c = golden::CaseSpec{}.entry(e).shape(m, n, k).without(without);
  if (!golden::case_problem(c).empty()) return d;
  const device::Planned p = plan_case(c, registry, limits);
  if (!p.ok()) return d;
  d.ok = true;
  d.body = p.plan.body;
  d.config = device::body_info(p.plan.body).config(p.plan);
  d.kernel = p.plan.kernel_name;
  return d;
}

std::vector<std::uint32_t> forcing_masks(golden::EntryPoint e) {
  const device::Entry de = to_device_entry(e);
  std::set<std::uint32_t> masks;
  const std::uint32_t twins = device::kernel_bit(device::KernelId::gemm_pipelined_m32) |
                              device::kernel_bit(device::KernelId::gemm_pipelined_m64);
  for (device::Body b : device::kAllBodies) {
    if ((device::body_info(b).entries & device::entry_bit(de)) == 0) continue;
    for (std::uint32_t kb : device::kernels_before(b)) {
      masks.insert(kb);
      if (e == golden::EntryPoint::gemm_pipelined_by_m)
        for (std::uint32_t extra : {device::kernel_bit(device::KernelId::gemm_pipelined_m32),
                                    device::kernel_bit(device::KernelId::gemm_pipelined_m64), twins})
          masks.insert(kb | extra);
    }
  }
  std::vector<std::uint32_t> out;
  for (std::uint32_t m : masks)
    if ((m & golden::entry_point_own_mask(e)) == 0) out.push_back(m);
  std::stable_sort(out.begin(), out.end(), [](std::uint32_t x, std::uint32_t y) {
    return __builtin_popcount(x) != __builtin_popcount(y) ? __builtin_popcount(x) < __builtin_popcount(y) : x < y;
  });
  return out;
}

std::vector<ForcedBody> bodies_at(golden::EntryPoint e, std::uint32_t m, std::uint32_t n, std::uint32_t k,
                                  const device::KernelRegistry& registry, const device::DeviceLimits& limits) {
  std::vector<ForcedBody> out;
  for (std::uint32_t mask : forcing_masks(e)) {
    const Dispatched d = dispatch_of(e, m, n, k, mask, registry, limits);
    if (!d.ok) continue;
    bool seen = false;
    for (const ForcedBody& f : out) seen = seen || f.body == d.body;
    if (!seen) out.push_back({d.body, mask, d.label()});
  }
  return out;
}

DispatchMap dispatch_map(golden::EntryPoint e, std::uint32_t n, std::uint32_t k, std::uint32_t m_max,
                         const device::KernelRegistry& registry, const device::DeviceLimits& limits) {
  DispatchMap map;
  const std::uint32_t cap = golden::entry_point_max_rows(e);
  if (cap != 0) m_max = std::min(m_max, cap);
  std::string forced_before;
  for (std::uint32_t m = 1; m <= m_max; ++m) {
    const std::string label = dispatch_of(e, m, n, k, 0, registry, limits).label();
    if (map.spans.empty() || map.spans.back().label != label) {
      if (!map.spans.empty()) map.edges.push_back(m);
      map.spans.push_back({m, m, label});
    } else {
      map.spans.back().last = m;
    }
    std::vector<std::string> names, labels;
    const std::vector<ForcedBody> forced_bodies = bodies_at(e, m, n, k, registry, limits);
    for (std::size_t i = 0; i < forced_bodies.size(); ++i) {
      names.push_back(device::body_name(forced_bodies[i].body));
      if (i > 0)
        labels.push_back(forced_bodies[i].label + " without=" + golden::without_text(forced_bodies[i].without));
    }
    const std::string forced = join(names, ",");
    if (m > 1 && forced != forced_before) map.forced_edges.push_back(m);
    forced_before = forced;
    const std::string forced_label = labels.empty() ? "none" : join(labels, "; ");
    if (map.forced_spans.empty() || map.forced_spans.back().label != forced_label)
      map.forced_spans.push_back({m, m, forced_label});
    else map.forced_spans.back().last = m;
  }
  return map;
}

namespace {

std::vector<std::uint32_t> all_edges(const std::vector<DispatchMap>& maps) {
  std::set<std::uint32_t> e;
  for (const DispatchMap& m : maps) {
    e.insert(m.edges.begin(), m.edges.end());
    e.insert(m.forced_edges.begin(), m.forced_edges.end());
  }
  return {e.begin(), e.end()};
}

}  // namespace

std::vector<std::uint32_t> default_ms(const std::vector<DispatchMap>& maps) {
  const std::vector<std::uint32_t> edges = all_edges(maps);
  // Every M up to past the 128-row tile; an edge close above stretches the range, one far above
  // (past twice the bound) adds its neighbours only.
  std::uint32_t bound = kDefaultMBound;
  for (std::uint32_t e : edges)
    if (e + 1 <= 2 * kDefaultMBound) bound = std::max(bound, e + 1);
  std::set<std::uint32_t> ms;
  for (std::uint32_t m = 1; m <= bound; ++m) ms.insert(m);
  for (std::uint32_t e : edges)
    for (std::uint32_t m : {e - 1, e, e + 1})
      if (m >= 1) ms.insert(m);
  return {ms.begin(), ms.end()};
}

std::vector<std::uint32_t> edge_ms(const std::vector<DispatchMap>& maps) {
  std::set<std::uint32_t> ms{1};
  for (std::uint32_t e : all_edges(maps))
    for (std::uint32_t m : {e - 1, e, e + 1})
      if (m >= 1) ms.insert(m);
  return {ms.begin(), ms.end()};
}

const char* invariance_kind_name(InvarianceKind k) {
  switch (k) {
    case InvarianceKind::run_to_run: return "run-to-run";
    case InvarianceKind::batch: return "batch";
    case InvarianceKind::tier: return "tier";
    case InvarianceKind::contract: return "contract";
  }
  return "unknown";
}

const char* batch_position_name(BatchPosition p) {
  switch (p) {
    case BatchPosition::front: return "front";
    case BatchPosition::back: return "back";
    case BatchPosition::seeded: return "seeded";
    case BatchPosition::every_row: return "every-row";
    case BatchPosition::reversed: return "reversed";
    case BatchPosition::interleaved: return "interleaved";
    case BatchPosition::views: return "views";
  }
  return "unknown";
}

bool parse_batch_position(const std::string& name, BatchPosition* out) {
  for (BatchPosition p : kAllBatchPositions)
    if (name == batch_position_name(p)) {
      *out = p;
      return true;
    }
  return false;
}

const std::vector<golden::Distribution>& default_needles() {
  using D = golden::Distribution;
  static const std::vector<D> d{D::fold_ties, D::cancelling_steps, D::wide_exponents, D::nan_codes};
  return d;
}

bool InvarianceReport::pass(InvarianceKind k) const {
  if (hung) return false;
  bool any = false;
  for (const ShapeInvariance& s : shapes)
    for (const EntryInvariance& e : s.entries) {
      const InvarianceVerdict& v = e.verdicts[static_cast<int>(k)];
      if (!v.asked || !v.applicable()) continue;
      if (v.failures != 0) return false;
      any = any || v.comparisons > 0;
    }
  // Asked and applicable somewhere but compared nothing anywhere: a FAIL (a sweep that compared
  // nothing proves nothing). A tier verdict that applies nowhere (every entry point one body, no
  // twin) is n/a, not a pass of anything: its line says so.
  bool applies = false;
  for (const ShapeInvariance& s : shapes)
    for (const EntryInvariance& e : s.entries) {
      const InvarianceVerdict& v = e.verdicts[static_cast<int>(k)];
      applies = applies || (v.asked && v.applicable());
    }
  return !applies || any;
}

bool InvarianceReport::pass() const {
  if (hung || shapes.empty()) return false;
  for (InvarianceKind k : kAllInvarianceKinds)
    if (!pass(k)) return false;
  return true;
}

golden::CaseInputs pair_order_inputs(const golden::Case& shape, std::uint64_t seed) {
  const std::uint32_t n = shape.n, k = shape.k, nb = (n + 127) / 128, kb = k / 128;
  golden::Xoshiro256ss rng(seed);
  std::vector<int> r(nb), c(kb);
  for (int& x : r) x = static_cast<int>(rng.in_range(-2, 2));
  for (int& x : c) x = static_cast<int>(rng.in_range(-2, 2));
  golden::CaseInputs in;
  in.s_f32.resize(std::size_t{nb} * kb);
  for (std::uint32_t i = 0; i < nb; ++i)
    for (std::uint32_t j = 0; j < kb; ++j) in.s_f32[std::size_t{i} * kb + j] = std::ldexp(1.0f, r[i] + c[j]);
  // W: finite normal codes (exponent field 4..11), either sign.
  in.w_e4m3.resize(std::size_t{n} * k);
  for (std::uint8_t& w : in.w_e4m3)
    w = static_cast<std::uint8_t>((rng.below(2) << 7) | ((4 + rng.below(8)) << 3) | rng.below(8));
  std::vector<std::uint32_t> perm(k);
  for (std::uint32_t i = 0; i < k; ++i) perm[i] = i;
  for (std::uint32_t i = k - 1; i > 0; --i) std::swap(perm[i], perm[rng.below(i + 1)]);
  const std::uint32_t pairs = k / 4;
  // BF16 bits of sign * (1 + q / 128) * 2^e: exact, 8 significant bits.
  auto bf16 = [](bool negative, std::uint32_t q, int e) {
    return static_cast<std::uint16_t>((negative ? 0x8000u : 0u) | (static_cast<std::uint32_t>(e + 127) << 7) | q);
  };
  in.a_bits.assign(std::size_t{shape.m} * shape.a_row_stride, golden::kAPaddingBits);
  std::vector<std::uint16_t> row(k);
  for (std::uint32_t p = 0; p < pairs; ++p) {
    const std::uint32_t i = perm[p], j = perm[pairs + p];
    for (std::uint32_t col = 0; col < n; ++col)
      in.w_e4m3[std::size_t{col} * k + j] = in.w_e4m3[std::size_t{col} * k + i];
    const bool negative = rng.below(2) != 0;
    const std::uint32_t q = static_cast<std::uint32_t>(rng.below(128));
    const int e = static_cast<int>(rng.in_range(8, 16));
    row[i] = bf16(negative, q, e);
    // a[j] s[j] = -a[i] s[i] in every column block: the scales' column factors differ by c[i] - c[j].
    row[j] = bf16(!negative, q, e + c[i / 128] - c[j / 128]);
  }
  for (std::uint32_t p = 2 * pairs; p < k; ++p)
    row[perm[p]] = bf16(rng.below(2) != 0, static_cast<std::uint32_t>(rng.below(128)),
                        static_cast<int>(rng.in_range(-2, 2)));
  for (std::uint32_t m = 0; m < shape.m; ++m)
    std::copy(row.begin(), row.end(), in.a_bits.begin() + std::size_t{m} * shape.a_row_stride);
  return in;
}

// ---- the sweep ---------------------------------------------------------------------------------
namespace {

// One call of the sweep: its case (shape, pitches, without), operands, view offsets, and where the
// needle's copies are.
struct Call {
  golden::Case c;
  const golden::CaseInputs* in = nullptr;
  ViewOffsets offsets;
  std::string position;  // what the call varies
  // Per row of the call: -1 the needle, j >= 0 the filler pool's row j.
  std::vector<int> source;
  // The needle's rows whose batch comparison is asked (by the positions).
  std::vector<std::uint32_t> needle_rows;
};

// A filler row: seeded random finite BF16 (exponents 2^-8..2^8), an ordinary activation.
std::vector<std::uint16_t> filler_row(std::uint64_t seed, std::uint32_t k) {
  golden::Xoshiro256ss r(seed);
  std::vector<std::uint16_t> row(k);
  for (std::uint32_t i = 0; i < k; ++i) {
    const std::uint64_t b = r.next();
    row[i] = static_cast<std::uint16_t>((b & 0x807F) | ((119 + (b >> 16) % 17) << 7));
  }
  return row;
}

// The bodies a sweep holds at one M of an entry point: dispatch's (bodies_at) for a module, the
// subject and its tiers for a callable.
using BodiesAt = std::function<std::vector<ForcedBody>(golden::EntryPoint, std::uint32_t, std::uint32_t,
                                                       std::uint32_t)>;

struct Sweep {
  InvarianceLauncher& launcher;
  const InvarianceOptions& opt;
  BodiesAt bodies_of;
  InvarianceReport& report;
  const std::function<void(const std::string&)>& progress;
  // Callable sweeps: the names of `which` (0 the subject), each failure's call kept, the contract
  // row from `reference` where set; a module sweep leaves these empty.
  std::vector<std::string> callable_names;
  ReferenceRow reference;

  bool stop = false;
  std::string needle_name;          // the needle of the calls running now, for reports
  bool needle_built = false;        // its operands are built, not a distribution's: replays are bundles
  bool needle_all_entries = false;  // a built needle for every entry point (else the GEMVs' alone)

  bool callable() const { return !callable_names.empty(); }

  // A body's name in a verdict: "m32_strided on m32_skinny (...)", or a callable's own name.
  std::string who(const EntryInvariance& ei, const std::string& body) const {
    return callable() ? body : entry_short(ei.entry) + " on " + body;
  }
  std::string call_text(const golden::Case& c) const {
    if (!callable()) return props::call_text(c, needle_name);
    const std::string name = c.without < callable_names.size() ? callable_names[c.without] : "?";
    return name + " m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) +
           " a_row_stride=" + std::to_string(c.a_row_stride) + " needle=" + needle_name;
  }

  // Keeps the failure with the least M (the first in sweep order among equals) and saves what
  // replays it.
  void fail(EntryInvariance& ei, InvarianceKind kind, InvarianceFailure f, const Call* call,
            const std::vector<std::uint16_t>* want_row = nullptr) {
    InvarianceVerdict& v = ei.verdicts[static_cast<int>(kind)];
    ++v.failures;
    if (std::find(v.failing_ms.begin(), v.failing_ms.end(), f.m) == v.failing_ms.end()) {
      v.failing_ms.push_back(f.m);
      std::sort(v.failing_ms.begin(), v.failing_ms.end());
    }
    if (v.has_failure && v.first.m <= f.m) return;
    if (call && callable()) {
      auto kept = std::make_shared<FailingCall>();
      kept->c = call->c, kept->in = *call->in, kept->offsets = call->offsets;
      if (want_row) kept->want = *want_row;
      f.call = std::move(kept);
    } else if (call) {
      save(ei, kind, *call, &f);
    }
    v.has_failure = true;
    v.first = std::move(f);
  }

  void save(const EntryInvariance& ei, InvarianceKind kind, const Call& call, InvarianceFailure* f) {
    if (kind == InvarianceKind::contract && !needle_built) {
      f->replay_kind = "case";
      f->replay = golden::format_case(call.c);
      if (!opt.save_dir.empty()) {
        std::string error;
        golden::append_case_file((std::filesystem::path(opt.save_dir) / "invariance.case").string(), call.c,
                                 "invariance: contract verdict, " + entry_short(ei.entry), &error);
      }
      return;
    }
    f->replay_kind = "bundle";
    if (opt.save_dir.empty()) {
      f->replay = "(not saved: no save folder)";
      return;
    }
    golden::BundleSource src;
    src.entry = entry_short(call.c.entry);
    src.m = call.c.m, src.n = call.c.n, src.k = call.c.k;
    src.a_row_stride = call.c.a_row_stride, src.c_row_stride = call.c.c_row_stride;
    src.launches = 1;
    src.a_dense = call.in->a_bits;
    src.w = call.in->w_e4m3;
    src.s = call.in->s_f32;
    std::error_code ec;
    std::filesystem::create_directories(opt.save_dir, ec);
    const std::string path = (std::filesystem::path(opt.save_dir) /
                              ("invariance-n" + std::to_string(call.c.n) + "-k" + std::to_string(call.c.k) + "-" +
                               src.entry + "-" + invariance_kind_name(kind) + ".opb"))
                                 .string();
    std::string error;
    if (!golden::write_bundle_file(path, src, nullptr, &error)) {
      f->replay = "(not saved: " + error + ")";
      return;
    }
    f->replay = "w8a16check run-operands --backend " + opt.backend_name + " --entry " + src.entry + " --in " + path +
                " --out OUT";
    if (call.c.without == device::tier_kernels(device::Tier::first)) f->replay += " --without-hopper-tier";
    else if (call.c.without != 0) f->replay += " (plan with without=" + golden::without_text(call.c.without) + ")";
    if (!call.offsets.none())
      f->replay += " (the failing views started at A+" + std::to_string(call.offsets.a) + ", C+" +
                   std::to_string(call.offsets.c) + " elements; the bundle runs them at 0)";
    f->replay += "; compare row " + std::to_string(f->row) + " with that row launched alone (M = 1)";
  }

  // The launch of a call; false (and the failure recorded under `kind`) when it gave no bytes.
  bool run(EntryInvariance& ei, InvarianceKind kind, const Call& call, Launched* out) {
    ++report.launches;
    *out = launcher.launch(call.c, *call.in, call.offsets);
    if (out->status.ok()) return true;
    InvarianceFailure f;
    f.m = call.c.m;
    f.position = call.position;
    f.what = call_text(call.c);
    const bool hang = out->status.code == device::Errc::launch_timeout;
    f.error = std::string(hang                                             ? "HANG: "
                          : out->status.code == device::Errc::context_lost ? "FAULT: "
                                                                           : "") +
              out->status.message;
    if (hang) {
      report.hung = true;
      report.hang = f.error + " (" + f.what + ")";
      stop = true;
    }
    if (launcher.stopped()) {
      report.hang = f.error + " (" + f.what + ")";
      stop = true;
    }
    fail(ei, kind, std::move(f), &call);
    return false;
  }

  std::vector<std::uint16_t> row_of(const Launched& l, const golden::Case& c, std::uint32_t r) const {
    const auto begin = l.c_bits.begin() + std::size_t{r} * c.c_row_stride;
    return std::vector<std::uint16_t>(begin, begin + c.n);
  }
  // All of C, [m][n].
  std::vector<std::uint16_t> rows_of(const Launched& l, const golden::Case& c) const {
    std::vector<std::uint16_t> out;
    out.reserve(std::size_t{c.m} * c.n);
    for (std::uint32_t r = 0; r < c.m; ++r) {
      const auto begin = l.c_bits.begin() + std::size_t{r} * c.c_row_stride;
      out.insert(out.end(), begin, begin + c.n);
    }
    return out;
  }

  // Compares `got` ([rows][n], first row `row0`) with `want`; a failure under `kind` at the first
  // differing element.
  // `what` names the call in the failure (default: call_text).
  void compare_bytes(EntryInvariance& ei, InvarianceKind kind, const Call& call, const std::vector<std::uint16_t>& got,
                     std::uint32_t row0, const std::vector<std::uint16_t>& want, const std::string& against,
                     const std::vector<std::uint16_t>* want_row = nullptr, const std::string& what = "") {
    InvarianceVerdict& v = ei.verdicts[static_cast<int>(kind)];
    ++v.comparisons;
    const std::uint32_t n = call.c.n;
    for (std::size_t i = 0; i < got.size() && i < want.size(); ++i)
      if (got[i] != want[i]) {
        InvarianceFailure f;
        f.m = call.c.m, f.position = call.position;
        f.row = row0 + static_cast<std::uint32_t>(i / n), f.column = static_cast<std::uint32_t>(i % n);
        f.got = got[i], f.want = want[i];
        f.against = against;
        f.what = what.empty() ? call_text(call.c) : what;
        fail(ei, kind, std::move(f), &call, want_row);
        return;
      }
  }

  // The M = 1 bytes each row of a call is held to: the needle's, and each filler pool row's.
  struct Refs {
    std::vector<std::uint16_t> needle;
    std::vector<std::vector<std::uint16_t>> filler;  // empty where its launch failed
  };

  // Every row of a launch against its own M = 1 bytes (batch): the asked needle rows first (named
  // by `row_name`), then every filler row.
  void compare_rows(EntryInvariance& ei, const Call& call, const Launched& l, const Refs& refs,
                    const std::function<std::string(std::uint32_t)>& row_name) {
    for (std::uint32_t row : call.needle_rows) {
      Call named = call;
      named.position = row_name(row);
      compare_bytes(ei, InvarianceKind::batch, named, row_of(l, call.c, row), row, refs.needle, "its M = 1 bytes");
    }
    for (std::uint32_t row = 0; row < call.c.m; ++row) {
      const int src = call.source[row];
      if (src < 0 || refs.filler[src].empty()) continue;
      Call named = call;
      named.position = call.position + " (filler)";
      compare_bytes(ei, InvarianceKind::batch, named, row_of(l, call.c, row), row, refs.filler[src],
                    "filler row " + std::to_string(src) + " of the pool's M = 1 bytes");
    }
  }

  void sweep_shape(ShapeInvariance& si) {
    const std::uint32_t n = si.shape.n, k = si.shape.k;
    for (std::size_t di = 0; di < opt.needles.size() && !stop; ++di) {
      const golden::Distribution d = opt.needles[di];
      const golden::Case needle_case = golden::CaseSpec{}
                                           .entry(golden::EntryPoint::gemm_pipelined)
                                           .shape(1, n, k)
                                           .dist(d)
                                           .seed(mix(opt.seed ^ (0x100u + static_cast<unsigned>(d))));
      golden::CaseInputs needle;
      std::string why;
      if (!golden::regenerate_inputs(needle_case, &needle, &why)) {
        report.hang = "needle " + golden::format_case(needle_case) + ": " + why;
        stop = true;
        return;
      }
      needle_name = golden::distribution_name(d), needle_built = false;
      sweep_needle(si, needle_case, needle);
    }
    if (opt.pair_order_needle && !stop) {
      golden::Case needle_case = golden::CaseSpec{}
                                     .entry(golden::EntryPoint::gemm_pipelined)
                                     .shape(1, n, k)
                                     .seed(mix(opt.seed ^ 0x7061u));
      const golden::CaseInputs needle = pair_order_inputs(needle_case, needle_case.seed);
      char name[64];
      std::snprintf(name, sizeof name, "pair_order(seed=0x%016llx)", static_cast<unsigned long long>(needle_case.seed));
      needle_name = name, needle_built = true, needle_all_entries = true;
      sweep_needle(si, needle_case, needle);
      needle_built = false, needle_all_entries = false;
    }
    // The GEMV order needle: the golden distributions are built for the tensor-core tiers' 128-K
    // steps, and on a GEMV's lanes and chunks they often round alike; identify's split operands
    // (gemv_split_inputs: spikes that cancel, inexact scales, NaN codes) make another lane
    // partition, chunk width, scale placement or multiply-add show in BF16.
    bool any_gemv = false;
    for (const EntryInvariance& ei : si.entries) any_gemv = any_gemv || golden::entry_point_is_gemv(ei.entry);
    if (opt.gemv_order_needle && any_gemv && !stop) {
      // K of at least 2048: every lane of 32 (and of 64) then takes several chunks of 16, so that
      // fma and mul-add, and the lanes' partition, round differently (one chunk a lane meets
      // acc = +0, where the two coincide).
      golden::Case needle_case = golden::CaseSpec{}
                                     .entry(golden::EntryPoint::gemm_pipelined)
                                     .shape(1, n, std::max<std::uint32_t>(k, kGemvNeedleMinK))
                                     .seed(mix(opt.seed ^ 0x6765u));
      const golden::CaseInputs needle = gemv_split_inputs(needle_case, needle_case.seed);
      char name[64];
      std::snprintf(name, sizeof name, "gemv_order(seed=0x%016llx)", static_cast<unsigned long long>(needle_case.seed));
      needle_name = name, needle_built = true;
      sweep_needle(si, needle_case, needle);
      needle_built = false;
    }
  }

  // The GEMV order needle runs on the GEMV entry points alone; the pair-order needle on every one.
  bool skips(const EntryInvariance& ei) const {
    return needle_built && !needle_all_entries && !golden::entry_point_is_gemv(ei.entry);
  }

  void sweep_needle(ShapeInvariance& si, const golden::Case& needle_case, const golden::CaseInputs& needle) {
    const std::uint32_t n = needle_case.n, k = needle_case.k;
    const std::vector<std::uint16_t> needle_row(needle.a_bits.begin(), needle.a_bits.begin() + k);
    // The filler pool of this needle: each row launched alone once per entry point.
    const std::uint64_t pool_seed = mix(needle_case.seed ^ 0xf111u);
    std::vector<std::vector<std::uint16_t>> pool(kFillerPool);
    for (std::uint32_t j = 0; j < kFillerPool; ++j) pool[j] = filler_row(mix(pool_seed + j), k);

    // M = 1: each entry point's reference bytes (the needle's and the pool's), its run-to-run at
    // M = 1, and the contract.
    std::map<golden::EntryPoint, Refs> refs;
    for (EntryInvariance& ei : si.entries) {
      if (stop) return;
      if (skips(ei)) continue;
      if (progress)
        progress(needle_name + " n=" + std::to_string(n) + " k=" + std::to_string(k) + " " +
                 (ei.subject.empty() ? entry_short(ei.entry) : ei.subject) + " m=1");
      Call one;
      one.c = needle_case;
      one.c.entry = ei.entry;
      one.in = &needle;
      one.position = "front (M = 1, the reference)";
      one.source = {-1};
      Launched l;
      if (!run(ei, InvarianceKind::batch, one, &l)) continue;
      Refs& r = refs[ei.entry];
      r.needle = row_of(l, one.c, 0);
      if (opt.asked(InvarianceKind::run_to_run)) repeat(ei, one, l);
      if (opt.asked(InvarianceKind::contract)) contract(ei, one, needle, r.needle);
      r.filler.resize(kFillerPool);
      for (std::uint32_t j = 0; j < kFillerPool && !stop; ++j) {
        golden::CaseInputs in = needle;
        std::copy(pool[j].begin(), pool[j].end(), in.a_bits.begin());
        Call f = one;
        f.in = &in;
        f.position = "filler row " + std::to_string(j) + " alone (M = 1, its reference)";
        f.source = {static_cast<int>(j)};
        Launched fl;
        if (run(ei, InvarianceKind::batch, f, &fl)) r.filler[j] = row_of(fl, f.c, 0);
      }
    }

    std::set<std::uint32_t> all_ms;
    for (const EntryInvariance& ei : si.entries)
      if (!skips(ei)) all_ms.insert(ei.ms.begin(), ei.ms.end());
    for (std::uint32_t m : all_ms) {
      if (stop) return;
      if (progress)
        progress(needle_name + " n=" + std::to_string(n) + " k=" + std::to_string(k) + " m=" + std::to_string(m));
      sweep_m(si, needle_case, needle, needle_row, pool, refs, m, k);
    }
  }

  // The call again, compared with its first run over all of C: repeats - 1 times as it ran, and
  // where the launcher has a second stream once more beside a load there (a GPU that is busy
  // schedules the call's CTAs in another order; a result that follows arrival order changes with it).
  void repeat(EntryInvariance& ei, const Call& call, const Launched& first) {
    for (unsigned i = 1; i < opt.repeats; ++i) {
      Launched again;
      if (!run(ei, InvarianceKind::run_to_run, call, &again)) return;
      if (!same_run(ei, call, first, again, "repeated")) return;
    }
    if (launcher.busy_stream_text().empty() || !call.offsets.none()) return;
    report.launches += 2;  // the call alone in this process, then beside the load
    Launched beside = launcher.launch_beside_load(call.c, *call.in);
    if (!beside.status.ok()) {
      InvarianceFailure f;
      f.m = call.c.m, f.position = call.position + ", repeated beside a load on a second stream";
      f.what = call_text(call.c);
      f.error = beside.status.message;
      fail(ei, InvarianceKind::run_to_run, std::move(f), &call);
      return;
    }
    same_run(ei, call, first, beside, "repeated beside a load on a second stream");
  }
  bool same_run(EntryInvariance& ei, const Call& call, const Launched& first, const Launched& again,
                const std::string& how) {
    InvarianceVerdict& v = ei.verdicts[static_cast<int>(InvarianceKind::run_to_run)];
    ++v.comparisons;
    for (std::size_t i = 0; i < first.c_bits.size() && i < again.c_bits.size(); ++i)
      if (first.c_bits[i] != again.c_bits[i]) {
        InvarianceFailure f;
        f.m = call.c.m, f.position = call.position + ", " + how;
        f.row = static_cast<std::uint32_t>(i / call.c.c_row_stride);
        f.column = static_cast<std::uint32_t>(i % call.c.c_row_stride);
        f.got = again.c_bits[i], f.want = first.c_bits[i];
        f.against = "the first run of the same call";
        f.what = call_text(call.c);
        fail(ei, InvarianceKind::run_to_run, std::move(f), &call);
        return false;
      }
    return true;
  }

  void contract(EntryInvariance& ei, const Call& one, const golden::CaseInputs& in,
                const std::vector<std::uint16_t>& got) {
    std::vector<std::uint16_t> want;
    std::string against;
    if (reference) {
      std::string why;
      if (!reference(one.c, in, &want, &why) || want.size() != one.c.n) {
        InvarianceFailure f;
        f.m = 1, f.position = one.position, f.what = call_text(one.c);
        f.error = "the reference gave no row: " + (why.empty() ? "it returned " + std::to_string(want.size()) +
                                                                     " elements, not N = " + std::to_string(one.c.n)
                                                               : why);
        if (launcher.stopped()) stop = true;
        fail(ei, InvarianceKind::contract, std::move(f), &one);
        return;
      }
      against = "the reference callable";
    } else {
      const std::string problem = contract_case_problem(one.c, in, opt.contract);
      if (!problem.empty()) {
        InvarianceFailure f;
        f.m = 1, f.position = one.position, f.what = golden::format_case(one.c);
        f.error = "the contract does not define this case, so it is not compared: " + problem;
        fail(ei, InvarianceKind::contract, std::move(f), &one);
        return;
      }
      want = expected_output(one.c, in, opt.threads, opt.contract);
      want.resize(one.c.n);
      against = "the emulator under " + opt.contract.describe_for(ei.entry);
    }
    Call named = one;
    named.position = "front (M = 1)";
    // A module's distribution needle is a case: its line names (and replays) the call.
    const bool case_line = !needle_built && !callable();
    compare_bytes(ei, InvarianceKind::contract, named, got, 0, want, against, &want,
                  case_line ? golden::format_case(one.c) : "");
  }

  void sweep_m(ShapeInvariance& si, const golden::Case& needle_case, const golden::CaseInputs& needle,
               const std::vector<std::uint16_t>& needle_row, const std::vector<std::vector<std::uint16_t>>& pool,
               const std::map<golden::EntryPoint, Refs>& refs, std::uint32_t m, std::uint32_t k) {
    const std::uint32_t n = si.shape.n;
    const golden::Distribution d = needle_case.dist;
    const std::uint64_t mseed = mix(needle_case.seed ^ mix((std::uint64_t{static_cast<unsigned>(d)} << 32) | m));
    golden::Xoshiro256ss rng(mseed);
    // The needle at the front, the back and a seeded position; the pool's rows elsewhere.
    std::set<std::uint32_t> at{0, m - 1};
    if (m > 2) at.insert(1 + static_cast<std::uint32_t>(rng.below(m - 2)));
    golden::Xoshiro256ss pick(mix(mseed ^ 0x9001u));
    std::vector<int> source(m);
    for (std::uint32_t r = 0; r < m; ++r) source[r] = at.count(r) ? -1 : static_cast<int>(pick.below(kFillerPool));
    auto position_of = [&](std::uint32_t original) {
      return original == 0 ? BatchPosition::front : original == m - 1 ? BatchPosition::back : BatchPosition::seeded;
    };
    // A call's inputs: rows[order[r]] at row r, pitch `pitch`; which rows are needles, and which
    // of them the positions ask to compare (`asked(original row)`).
    auto build = [&](const std::vector<int>& src, const std::vector<std::uint32_t>& order, std::uint32_t pitch,
                     const std::function<bool(std::uint32_t)>& asked, golden::CaseInputs* in, Call* call) {
      in->a_bits.assign(std::size_t{m} * pitch, golden::kAPaddingBits);
      call->source.assign(m, -1);
      call->needle_rows.clear();
      for (std::uint32_t r = 0; r < m; ++r) {
        const int s = src[order[r]];
        const std::vector<std::uint16_t>& row = s < 0 ? needle_row : pool[s];
        std::copy(row.begin(), row.end(), in->a_bits.begin() + std::size_t{r} * pitch);
        call->source[r] = s;
        if (s < 0 && asked(order[r])) call->needle_rows.push_back(r);
      }
      in->w_e4m3 = needle.w_e4m3;
      in->s_f32 = needle.s_f32;
      call->in = in;
    };
    auto asked_main = [&](std::uint32_t original) { return opt.has(position_of(original)); };
    auto every = [](std::uint32_t) { return true; };
    std::vector<std::uint32_t> identity(m), reversed(m), interleaved;
    for (std::uint32_t r = 0; r < m; ++r) identity[r] = r, reversed[r] = m - 1 - r;
    const std::uint32_t half = (m + 1) / 2;
    for (std::uint32_t r = 0; r < half; ++r) {
      interleaved.push_back(r);
      if (half + r < m) interleaved.push_back(half + r);
    }
    auto base_case = [&](golden::EntryPoint e) {
      return golden::Case(golden::CaseSpec{}.entry(e).shape(m, n, k).dist(d).seed(needle_case.seed));
    };
    golden::CaseInputs main_in;
    Call main_call;
    build(source, identity, k, asked_main, &main_in, &main_call);
    main_call.position = "front/back/seeded";

    // Every row in turn at small M: the needle at row r, the main call's rows elsewhere.
    std::vector<golden::CaseInputs> each_in;
    std::vector<Call> each_calls;
    if (opt.has(BatchPosition::every_row) && m >= 3 && m <= kEveryRowMaxM) {
      each_in.reserve(m);
      for (std::uint32_t r = 1; r + 1 < m; ++r) {
        if (at.count(r)) continue;
        std::vector<int> src = source;
        src[r] = -1;
        each_in.emplace_back();
        Call c;
        build(
            src, identity, k, [r](std::uint32_t o) { return o == r; }, &each_in.back(), &c);
        c.position = "every row in turn, row " + std::to_string(r);
        each_calls.push_back(std::move(c));
      }
    }
    const std::uint32_t a_pad = 8 * (1 + static_cast<std::uint32_t>(rng.below(4)));
    const std::uint32_t c_pad = 1 + static_cast<std::uint32_t>(rng.below(7));
    const ViewOffsets offsets{8 * (1 + static_cast<std::uint32_t>(rng.below(8))),
                              1 + static_cast<std::uint32_t>(rng.below(7))};
    golden::CaseInputs rev_in, int_in, pitch_in;
    Call rev_call, int_call, pitch_call;
    if (opt.has(BatchPosition::reversed)) build(source, reversed, k, every, &rev_in, &rev_call);
    if (opt.has(BatchPosition::interleaved)) build(source, interleaved, k, every, &int_in, &int_call);
    if (opt.has(BatchPosition::views)) build(source, identity, k + a_pad, every, &pitch_in, &pitch_call);

    // Tier: all of C of the main call on every (entry point, body) at this M, per contract class.
    struct TierRow {
      EntryInvariance* ei;
      std::string who;
      std::vector<std::uint16_t> bytes;
      Call call;
    };
    std::vector<TierRow> tier_rows[2];
    for (EntryInvariance& ei : si.entries) {
      if (stop) return;
      if (skips(ei) || !std::binary_search(ei.ms.begin(), ei.ms.end(), m)) continue;
      auto r = refs.find(ei.entry);
      if (r == refs.end()) continue;  // its M = 1 launch failed (recorded)
      Call main = main_call;
      main.c = base_case(ei.entry);
      Launched l;
      if (!run(ei, InvarianceKind::batch, main, &l)) continue;
      auto main_name = [&](std::uint32_t row) { return std::string(batch_position_name(position_of(row))); };
      if (opt.asked(InvarianceKind::batch)) compare_rows(ei, main, l, r->second, main_name);
      if (opt.asked(InvarianceKind::run_to_run)) repeat(ei, main, l);
      const bool gemv = golden::entry_point_is_gemv(ei.entry);
      const std::vector<ForcedBody> forced = bodies_of(ei.entry, m, n, k);
      if (opt.asked(InvarianceKind::tier) && !forced.empty()) {
        tier_rows[gemv].push_back({&ei, who(ei, forced.front().label), rows_of(l, main.c), main});
        for (std::size_t i = 1; i < forced.size() && !stop; ++i) {
          Call fc = main;
          fc.c.without = forced[i].without;
          fc.position = "forced to " + forced[i].label;
          Launched fl;
          if (!run(ei, InvarianceKind::tier, fc, &fl)) continue;
          if (!callable() && (!fl.planned || fl.plan.body != forced[i].body)) {
            InvarianceFailure f;
            f.m = m, f.position = fc.position, f.what = call_text(fc.c);
            f.error = "planned on " + std::string(fl.planned ? device::body_name(fl.plan.body) : "nothing") +
                      ", not on " + device::body_name(forced[i].body);
            fail(ei, InvarianceKind::tier, std::move(f), &fc);
            continue;
          }
          tier_rows[gemv].push_back({&ei, who(ei, forced[i].label), rows_of(fl, fc.c), fc});
        }
      }
      if (!opt.asked(InvarianceKind::batch)) continue;
      for (const Call& each : each_calls) {
        if (stop) return;
        Call ec = each;
        ec.c = main.c;
        Launched el;
        if (!run(ei, InvarianceKind::batch, ec, &el)) continue;
        compare_rows(ei, ec, el, r->second, [&](std::uint32_t) { return ec.position; });
      }
      const bool contiguous = golden::entry_point_is_contiguous(ei.entry);
      struct Variant {
        const Call* call;
        bool asked;
        std::string position;
        bool pitch;
      };
      const Variant variants[] = {
          {&rev_call, opt.has(BatchPosition::reversed), "reversed", false},
          {&int_call, opt.has(BatchPosition::interleaved), "interleaved", false},
          {contiguous ? &main_call : &pitch_call, opt.has(BatchPosition::views),
           contiguous ? "views at A+" + std::to_string(offsets.a) + ", C+" + std::to_string(offsets.c)
                      : "pitches a=" + std::to_string(k + a_pad) + " c=" + std::to_string(n + c_pad) + ", views at A+" +
                            std::to_string(offsets.a) + ", C+" + std::to_string(offsets.c),
           true},
      };
      for (const Variant& var : variants) {
        if (stop) return;
        if (!var.asked) continue;
        Call vc = *var.call;
        vc.c = main.c;
        vc.position = var.position;
        if (var.pitch) {
          vc.offsets = offsets;
          if (!contiguous) vc.c.a_row_stride = k + a_pad, vc.c.c_row_stride = n + c_pad;
        }
        if (var.call == &main_call) {
          vc.needle_rows.clear();  // every needle row of the main call, whatever the positions ask
          for (std::uint32_t row = 0; row < m; ++row)
            if (vc.source[row] < 0) vc.needle_rows.push_back(row);
        }
        Launched vl;
        if (!run(ei, InvarianceKind::batch, vc, &vl)) continue;
        compare_rows(ei, vc, vl, r->second,
                     [&](std::uint32_t row) { return vc.position + ", row " + std::to_string(row); });
      }
    }
    // Tier: every body's C against the plurality of its class at this M (so that the body that
    // parts from the others is the one named, not whichever ran first).
    for (auto& cls : tier_rows) {
      if (cls.size() < 2) continue;  // one body alone at this M: nothing to compare
      std::map<std::vector<std::uint16_t>, std::size_t> votes;
      for (const TierRow& t : cls) ++votes[t.bytes];
      const std::vector<std::uint16_t>* best = nullptr;
      std::size_t best_n = 0;
      for (const TierRow& t : cls)  // the first of the largest, in sweep order
        if (votes[t.bytes] > best_n) best = &t.bytes, best_n = votes[t.bytes];
      std::size_t with_best_n = 0;
      for (const auto& [bytes, count] : votes) with_best_n += count == best_n ? 1 : 0;
      const bool tied = with_best_n > 1;
      std::string best_who;
      for (const TierRow& t : cls)
        if (t.bytes == *best) {
          best_who = t.who;
          break;
        }
      for (TierRow& t : cls) {
        ++t.ei->verdicts[static_cast<int>(InvarianceKind::tier)].alternatives;
        // A tie has no plurality: the first answer in sweep order stands in, and the report says
        // that it does not know which side parts from the contract (the contract verdict does).
        const std::string against = best_who + (best_n > 1 ? " and " + std::to_string(best_n - 1) + " more" : "") +
                                    (tied ? " (" + std::to_string(votes.size()) + " answers tie among " +
                                                std::to_string(cls.size()) +
                                                " at this M: no plurality, the first in sweep order stands in)"
                                          : " (the plurality of " + std::to_string(cls.size()) + " at this M)");
        Call named = t.call;
        named.position = t.who + ", all of C";
        compare_bytes(*t.ei, InvarianceKind::tier, named, t.bytes, 0, *best, against);
      }
    }
  }
};

}  // namespace

InvarianceReport run_invariance(InvarianceLauncher& launcher, const InvarianceOptions& options,
                                const device::KernelRegistry& registry, const device::DeviceLimits& limits,
                                const std::function<void(const std::string&)>& progress) {
  InvarianceReport report;
  const std::string busy = launcher.busy_stream_text();
  report.run_to_run_how = busy.empty() ? "each call repeated once, alone (this backend runs one launch at a time)"
                                       : "each call repeated alone, then beside a load: " + busy;
  if (options.repeats > 2)
    report.run_to_run_how = "each call repeated " + std::to_string(options.repeats - 1) + " times" +
                            (busy.empty() ? ", alone" : ", then beside a load: " + busy);
  Sweep sweep{launcher,
              options,
              [&](golden::EntryPoint e, std::uint32_t m, std::uint32_t n, std::uint32_t k) {
                return bodies_at(e, m, n, k, registry, limits);
              },
              report,
              progress,
              {},
              {}};
  for (const InvarianceShape& shape : options.shapes) {
    ShapeInvariance si;
    si.shape = shape;
    std::vector<DispatchMap> maps;
    for (golden::EntryPoint e : options.entries) {
      EntryInvariance ei;
      ei.entry = e;
      ei.map = dispatch_map(e, shape.n, shape.k, kEdgeScanMax, registry, limits);
      for (InvarianceKind kind : kAllInvarianceKinds) {
        ei.verdicts[static_cast<int>(kind)].kind = kind;
        ei.verdicts[static_cast<int>(kind)].asked = options.asked(kind);
      }
      maps.push_back(ei.map);
      si.entries.push_back(std::move(ei));
    }
    std::vector<std::uint32_t> ms = options.ms;
    if (ms.empty()) ms = options.edges_only ? edge_ms(maps) : default_ms(maps);
    for (EntryInvariance& ei : si.entries) {
      const std::uint32_t cap = golden::entry_point_max_rows(ei.entry);
      for (std::uint32_t m : ms)
        if (m >= 1 && (cap == 0 || m <= cap)) ei.ms.push_back(m);
      std::sort(ei.ms.begin(), ei.ms.end());
      ei.ms.erase(std::unique(ei.ms.begin(), ei.ms.end()), ei.ms.end());
      std::set<std::uint32_t> edges(ei.map.edges.begin(), ei.map.edges.end());
      edges.insert(ei.map.forced_edges.begin(), ei.map.forced_edges.end());
      for (std::uint32_t e : edges)
        if (std::binary_search(ei.ms.begin(), ei.ms.end(), e) && std::binary_search(ei.ms.begin(), ei.ms.end(), e - 1))
          ei.edges_crossed.push_back(e);
    }
    report.shapes.push_back(std::move(si));
    sweep.sweep_shape(report.shapes.back());
    if (sweep.stop) break;
  }
  return report;
}

// ---- a kernel no module holds ------------------------------------------------------------------
namespace {

class CallableLauncher final : public InvarianceLauncher {
 public:
  explicit CallableLauncher(const CallableLaunch& run) : run_(run) {}
  Launched launch(const golden::Case& c, const golden::CaseInputs& in, const ViewOffsets& offsets) override {
    Launched l;
    std::string why;
    if (run_(c, in, offsets, c.without, &l.c_bits, &why)) return l;
    stopped_ = true;  // a callable that raised is not called again
    l.status = device::Status::error(device::Errc::backend_error, why.empty() ? "the call gave no output" : why);
    return l;
  }
  bool stopped() const override { return stopped_; }

 private:
  const CallableLaunch& run_;
  bool stopped_ = false;
};

}  // namespace

golden::EntryPoint callable_entry(bool gemv) {
  return gemv ? golden::EntryPoint::gemv_batch16_strided : golden::EntryPoint::gemm_pipelined_m64_strided;
}

std::string callable_invariance_problem(const CallableInvarianceOptions& o) {
  if (o.label.empty()) return "the subject's label is empty";
  std::set<std::string> names{o.label};
  for (const std::string& t : o.tiers) {
    if (t.empty()) return "a tier's name is empty";
    if (!names.insert(t).second) return "the name '" + t + "' is taken twice (the subject's label and the tiers')";
  }
  std::uint32_t m_max = kDefaultMBound;
  if (!o.ms.empty()) {
    m_max = 0;
    for (std::uint32_t m : o.ms) {
      if (m == 0) return "M values must be >= 1";
      m_max = std::max(m_max, m);
    }
  }
  if (o.sweep.repeats < 1) return "repeats must be >= 1";
  // The largest call: the largest M at the widest pitch the views take (K + 32), and the GEMV
  // order needle's K.
  golden::Case largest = golden::CaseSpec{}
                             .entry(golden::EntryPoint::gemm_pipelined_m64_strided)
                             .shape(m_max, o.n, o.k)
                             .strides(o.k + 32, o.n + 8);
  std::vector<golden::Case> cases{largest};
  std::vector<std::string> sources{"the sweep's largest call"};
  if (o.gemv && o.sweep.gemv_order_needle) {
    golden::Case g = largest;
    g.k = std::max<std::uint32_t>(o.k, kGemvNeedleMinK);
    g.a_row_stride = g.k + 32;
    cases.push_back(g), sources.push_back("the GEMV order needle's largest call");
  }
  return callable_over_limits(cases, sources);
}

InvarianceReport run_invariance_callable(const CallableLaunch& run, const CallableInvarianceOptions& o,
                                         const std::function<void(const std::string&)>& progress) {
  InvarianceReport report;
  if (const std::string problem = callable_invariance_problem(o); !problem.empty()) {
    report.hang = problem;
    return report;
  }
  CallableLauncher launcher(run);
  InvarianceOptions opt = o.sweep;
  opt.shapes = {{o.n, o.k}};
  opt.entries = {callable_entry(o.gemv)};
  opt.save_dir.clear();
  report.run_to_run_how = opt.repeats <= 1 ? "not asked (one run of each call)"
                          : opt.repeats == 2
                              ? "each call repeated once, alone"
                              : "each call repeated " + std::to_string(opt.repeats - 1) + " times, alone";
  std::vector<ForcedBody> bodies{{device::Body::gemm128_tile, 0, o.label}};
  for (std::size_t i = 0; i < o.tiers.size(); ++i)
    bodies.push_back({device::Body::gemm128_tile, static_cast<std::uint32_t>(i + 1), o.tiers[i]});
  std::vector<std::string> names{o.label};
  names.insert(names.end(), o.tiers.begin(), o.tiers.end());
  Sweep sweep{
      launcher,   opt,      [&](golden::EntryPoint, std::uint32_t, std::uint32_t, std::uint32_t) { return bodies; },
      report,     progress, names,
      o.reference};
  ShapeInvariance si;
  si.shape = opt.shapes.front();
  EntryInvariance ei;
  ei.entry = opt.entries.front();
  ei.subject = o.label;
  for (InvarianceKind kind : kAllInvarianceKinds) {
    ei.verdicts[static_cast<int>(kind)].kind = kind;
    ei.verdicts[static_cast<int>(kind)].asked = opt.asked(kind);
  }
  if (o.ms.empty())
    for (std::uint32_t m = 1; m <= kDefaultMBound; ++m) ei.ms.push_back(m);
  else ei.ms = o.ms;
  std::sort(ei.ms.begin(), ei.ms.end());
  ei.ms.erase(std::unique(ei.ms.begin(), ei.ms.end()), ei.ms.end());
  si.entries.push_back(std::move(ei));
  report.shapes.push_back(std::move(si));
  sweep.sweep_shape(report.shapes.back());
  return report;
}

// ---- the text report ---------------------------------------------------------------------------
namespace {

std::string ms_text(const std::vector<std::uint32_t>& ms) {
  // Runs of consecutive values: "1..130, 255..257".
  std::string t;
  for (std::size_t i = 0; i < ms.size();) {
    std::size_t j = i;
    while (j + 1 < ms.size() && ms[j + 1] == ms[j] + 1) ++j;
    t += (t.empty() ? "" : ", ") + std::to_string(ms[i]) + (j > i ? ".." + std::to_string(ms[j]) : "");
    i = j + 1;
  }
  return t.empty() ? "none" : t;
}

std::string failure_text(const InvarianceFailure& f) {
  std::string t = "M=" + std::to_string(f.m) + " " + f.position;
  if (!f.error.empty()) return t + ": " + f.error + " [" + f.what + "]";
  t += " row " + std::to_string(f.row) + " column " + std::to_string(f.column) + ": got " + hex4(f.got) + ", want " +
       hex4(f.want) + " (" + f.against + ") [" + f.what + "]";
  return t;
}

std::string verdict_line(const InvarianceVerdict& v) {
  char head[32];
  std::snprintf(head, sizeof head, "%-11s ", invariance_kind_name(v.kind));
  std::string t = head;
  if (!v.asked) return t + "not asked";
  if (!v.applicable()) return t + "n/a (one body and no twin entry point at every M: nothing to compare)";
  if (v.comparisons == 0 && v.failures == 0) return t + "FAIL: compared nothing";
  if (v.failures == 0) return t + "PASS (" + std::to_string(v.comparisons) + " compared)";
  std::vector<std::string> ms;
  for (std::size_t i = 0; i < v.failing_ms.size() && i < 12; ++i) ms.push_back(std::to_string(v.failing_ms[i]));
  if (v.failing_ms.size() > 12) ms.push_back("...");
  t += "FAIL (" + std::to_string(v.failures) + " of " + std::to_string(v.comparisons) + " differ; at M " +
       join(ms, ", ") + "): first at " + failure_text(v.first);
  if (!v.first.replay.empty()) t += "\n      replay (" + v.first.replay_kind + "): " + v.first.replay;
  return t;
}

}  // namespace

std::string invariance_text(const InvarianceReport& r, const InvarianceOptions& options) {
  std::string t;
  std::vector<std::string> needles;
  for (golden::Distribution d : options.needles) needles.emplace_back(golden::distribution_name(d));
  for (const ShapeInvariance& s : r.shapes) {
    t += "shape N=" + std::to_string(s.shape.n) + " K=" + std::to_string(s.shape.k) +
         " (needles: " + join(needles, ", ") + ")\n";
    for (const EntryInvariance& e : s.entries) {
      t += "  " + (e.subject.empty() ? std::string(golden::entry_point_name(e.entry)) : e.subject) + ": M " +
           ms_text(e.ms) + "\n";
      for (const DispatchSpan& sp : e.map.spans) {
        if (!e.ms.empty() && sp.first > e.ms.back()) break;
        const std::uint32_t last = e.ms.empty() ? sp.last : std::min(sp.last, e.ms.back());
        t += "    M " + std::to_string(sp.first) + (last > sp.first ? ".." + std::to_string(last) : "") + ": " +
             sp.label + "\n";
      }
      for (const DispatchSpan& sp : e.map.forced_spans) {
        if ((!e.ms.empty() && sp.first > e.ms.back()) || sp.label == "none") continue;
        const std::uint32_t last = e.ms.empty() ? sp.last : std::min(sp.last, e.ms.back());
        t += "    forced for the tier verdict, M " + std::to_string(sp.first) +
             (last > sp.first ? ".." + std::to_string(last) : "") + ": " + sp.label + "\n";
      }
      std::vector<std::string> edges;
      for (std::uint32_t x : e.edges_crossed) edges.push_back(std::to_string(x));
      if (e.subject.empty())
        t += "    edges crossed: " + (edges.empty() ? std::string("none") : join(edges, ", ")) + "\n";
      for (const InvarianceVerdict& v : e.verdicts) t += "    " + verdict_line(v) + "\n";
    }
  }
  if (r.hung) t += "HANG: " + r.hang + " (the sweep stopped there)\n";
  else if (!r.hang.empty()) t += "stopped: " + r.hang + "\n";
  t += "verdicts (launches: " + std::to_string(r.launches) + "):\n";
  for (InvarianceKind k : kAllInvarianceKinds) {
    if (!options.asked(k)) {
      t += std::string("  ") + invariance_kind_name(k) + ": not asked\n";
      continue;
    }
    std::string first;
    std::uint32_t first_m = 0;
    bool applies = false;
    for (const ShapeInvariance& s : r.shapes)
      for (const EntryInvariance& e : s.entries) {
        const InvarianceVerdict& v = e.verdicts[static_cast<int>(k)];
        applies = applies || v.applicable();
        if (v.has_failure && (first.empty() || v.first.m < first_m))
          first_m = v.first.m,
          first = (e.subject.empty() ? std::string(golden::entry_point_name(e.entry)) : e.subject) + " at " +
                  failure_text(v.first);
      }
    if (!applies && !r.hung) {
      t += std::string("  ") + invariance_kind_name(k) +
           ": n/a (every entry point swept has one body and no twin: nothing to compare)\n";
      continue;
    }
    t += std::string("  ") + invariance_kind_name(k) + ": " + (r.pass(k) ? "PASS" : "FAIL");
    if (k == InvarianceKind::contract) t += " (contract: " + options.contract.describe() + ")";
    if (k == InvarianceKind::run_to_run && !r.run_to_run_how.empty()) t += " (" + r.run_to_run_how + ")";
    if (!first.empty()) t += ": first " + first;
    else if (!r.pass(k)) t += r.hung ? ": a launch hung" : ": compared nothing";
    t += "\n";
  }
  return t;
}

}  // namespace w8a16::props
