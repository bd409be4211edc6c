// SPDX-License-Identifier: MIT OR Apache-2.0
// `w8a16check run-operands --backend sim|cuda --entry ENTRY --in BUNDLE --out FILE`: runs operands
// given as raw bits (not drawn from a case line) through one entry point of the launch layer and
// writes C's bits and the kernel body the plan chose. It exists for the reduction-order probes of
// reports/python/w8a16check/order.py (golden/order/README.md): crafted A rows that no case
// distribution draws, run on the GPU machine where no Python is available.
//
// --without-hopper-tier plans as a module without the wgmma symbols would (KERNEL_ABI.md): the
// probes of the seed's tile bodies need it, because the Hopper tier goes before them in the plan.
//
// Operand bundle, version 1 (all integers little-endian u32):
//   0   magic "W8A16OPB" (8 bytes)       8   version = 1
//   12  entry, ASCII, NUL-padded to 32 bytes (e.g. "gemm_pipelined_m32"; a "w8a16_" prefix is accepted)
//   44  m (rows per launch)  48 n  52 k  56 a_row_stride  60 c_row_stride
//   64  launches: consecutive launches of this one shape; launch i reads rows [i*m, i*m + m) of A
//       and writes the same rows of C (every launch shares W and S)
//   68  a_encoding: 0 = dense, 1 = base row + patches     72 patches_per_row (0 when dense)   76 reserved = 0
//   80  A: dense: uint16 [launches*m][a_row_stride]
//          patched: uint16 base[a_row_stride], then per row patches_per_row x (u32 column, u16 bits, u16 0):
//          the row is the base row with those elements replaced (a probe row differs from the base in 2)
//       W: uint8 [n][k] (E4M3 codes)     S: float32 [ceil(n/128)][k/128]     then end of file
// Output, version 1:
//   0   magic "W8A16OPC"   8 version = 1   12 entry[32]   44 kernel[48] (the plan's kernel name)
//   92  body[32] (plan.hpp body_name)   124 contract (0 canonical, NUMERICS.md 2.1; 1 gemv, 2.2)
//   128 m   132 n   136 c_row_stride   140 launches   144 backend[16] ("cuda" or "sim")
//   160 C: uint16 [launches*m][c_row_stride] (C starts filled with 0xFFFF: an element no launch
//       wrote reads as that NaN pattern, never as a plausible value)
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli_cases.hpp"
#include "command.hpp"
#include "gpu_identity.hpp"
#include "options.hpp"
#include "progress.hpp"
#include "report_files.hpp"
#include "w8a16/golden/files.hpp"
#include "w8a16/device/api.hpp"
#include "w8a16/device/kernels.hpp"
#include "w8a16/device/plan.hpp"
#include "w8a16/golden/case.hpp"
#include "w8a16/properties/case_runner.hpp"

namespace w8a16::cli {
namespace {

constexpr char kBundleMagic[8] = {'W', '8', 'A', '1', '6', 'O', 'P', 'B'};
constexpr char kOutputMagic[8] = {'W', '8', 'A', '1', '6', 'O', 'P', 'C'};
constexpr std::size_t kHeaderBytes = 80, kOutHeaderBytes = 160;
// Bounds that keep every size below well inside size_t and a GPU's memory; the probes use far less.
constexpr std::uint64_t kMaxAElements = std::uint64_t{1} << 31;

std::uint32_t get_u32(const std::vector<unsigned char>& b, std::size_t at) {
  return std::uint32_t{b[at]} | std::uint32_t{b[at + 1]} << 8 | std::uint32_t{b[at + 2]} << 16 |
         std::uint32_t{b[at + 3]} << 24;
}
void put_u32(std::vector<unsigned char>* b, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) (*b)[at + i] = static_cast<unsigned char>(v >> (8 * i));
}
void put_text(std::vector<unsigned char>* b, std::size_t at, std::size_t width, const std::string& s) {
  std::memcpy(b->data() + at, s.data(), std::min(s.size(), width - 1));  // always NUL-terminated
}

struct Bundle {
  golden::Case shape;  // entry, m, n, k and pitches; the distribution fields are unused
  std::string entry;
  std::uint32_t launches = 0;
  std::vector<std::uint16_t> a;  // [launches*m][a_row_stride]
  std::vector<std::uint8_t> w;
  std::vector<float> s;
};

// Reads and checks a bundle; false with *error naming the field and the rule. The file and what it
// expands to must fit the limits: the bytes are read only when the file fits --max-bytes, the
// operands are expanded only when the whole run does.
bool read_bundle(const std::string& path, const WorkLimits& limits, Bundle* out, std::string* error) {
  std::string text, why;
  if (!golden::read_regular_file(path, limits.max_bytes, &text, &why)) {
    *error = golden::shown(path) + ": " + why + (why.find("more than") != std::string::npos ? " (--max-bytes)" : "");
    return false;
  }
  const std::vector<unsigned char> b(text.begin(), text.end());
  text = std::string();
  auto fail = [&](const std::string& why) {
    *error = golden::shown(path) + ": " + why;
    return false;
  };
  if (b.size() < kHeaderBytes) return fail("shorter than the 80-byte header (" + std::to_string(b.size()) + " bytes)");
  if (std::memcmp(b.data(), kBundleMagic, 8) != 0) return fail("not an operand bundle (magic is not W8A16OPB)");
  if (get_u32(b, 8) != 1) return fail("version " + std::to_string(get_u32(b, 8)) + ": only version 1 is read");
  std::string entry;
  for (std::size_t i = 12; i < 44 && b[i] != 0; ++i) {
    if (b[i] < 0x21 || b[i] > 0x7E) return fail("entry name holds a byte that is not printable ASCII");
    entry.push_back(static_cast<char>(b[i]));
  }
  for (std::size_t i = 12 + entry.size(); i < 44; ++i)
    if (b[i] != 0) return fail("entry name is not NUL-padded");
  if (entry.rfind("w8a16_", 0) == 0) entry = entry.substr(6);
  golden::Case& c = out->shape;
  if (!golden::parse_entry_point("w8a16_" + entry, &c.entry)) return fail("unknown entry point " + golden::quote(entry));
  c.m = get_u32(b, 44);
  c.n = get_u32(b, 48);
  c.k = get_u32(b, 52);
  c.a_row_stride = get_u32(b, 56);
  c.c_row_stride = get_u32(b, 60);
  const std::uint32_t launches = get_u32(b, 64), encoding = get_u32(b, 68), patches = get_u32(b, 72);
  if (get_u32(b, 76) != 0) return fail("reserved header field at byte 76 must be 0");
  if (c.m == 0 || c.n == 0 || c.k == 0) return fail("m, n and k must be at least 1");
  if (c.a_row_stride < c.k) return fail("a_row_stride < k");
  if (c.c_row_stride < c.n) return fail("c_row_stride < n");
  if (launches == 0) return fail("launches must be at least 1");
  if (golden::entry_point_is_contiguous(c.entry) && (c.a_row_stride != c.k || c.c_row_stride != c.n))
    return fail(entry + " is contiguous: a_row_stride must be k and c_row_stride must be n");
  if (encoding > 1) return fail("a_encoding " + std::to_string(encoding) + ": must be 0 (dense) or 1 (patched)");
  if (encoding == 0 && patches != 0) return fail("patches_per_row must be 0 for dense A");
  if (encoding == 1 && (patches == 0 || patches > 64)) return fail("patches_per_row must be 1..64 for patched A");
  const std::uint64_t rows = std::uint64_t{launches} * c.m;
  if (rows > kMaxAElements) return fail("launches * m larger than 2^31 rows");  // before any product can wrap
  const std::uint64_t a_elems = rows * c.a_row_stride, w_bytes = std::uint64_t{c.n} * c.k;
  const std::uint64_t s_elems = (std::uint64_t{c.n} + 127) / 128 * (c.k / 128);
  if (a_elems > kMaxAElements || w_bytes > kMaxAElements || rows * c.c_row_stride > kMaxAElements)
    return fail("operands larger than 2^31 elements");
  if (c.k % 128 != 0) return fail("k=" + std::to_string(c.k) + ": must be a multiple of 128 (one scale per 128-K block)");
  const std::uint64_t a_bytes = encoding == 0 ? 2 * a_elems : 2 * std::uint64_t{c.a_row_stride} + 8 * rows * patches;
  const std::uint64_t want = kHeaderBytes + a_bytes + w_bytes + 4 * s_elems;
  if (b.size() != want)
    return fail("size " + std::to_string(b.size()) + " bytes, the header implies " + std::to_string(want) +
                " (truncated, or trailing bytes)");
  // The bytes read, A expanded, the backend's copies of A, W, S and C, the output file, and the
  // simulation's bookkeeping per launch (3 bytes per output).
  CaseCost cost;
  cost.macs = rows * c.n * c.k;
  cost.host_bytes = b.size() + 2 * (2 * a_elems + w_bytes + 4 * s_elems) + 2 * (2 * rows * c.c_row_stride) +
                    3 * std::uint64_t{c.m} * c.n + (std::uint64_t{64} << 20);
  const std::string over = over_limits(std::to_string(launches) + " launches of m=" + std::to_string(c.m) + " n=" +
                                           std::to_string(c.n) + " k=" + std::to_string(c.k),
                                       cost, limits);
  if (!over.empty()) return fail(over.substr(0, over.size() - 1) + "; nothing was run");
  out->entry = entry;
  out->launches = launches;
  std::size_t at = kHeaderBytes;
  out->a.assign(a_elems, 0);
  if (encoding == 0) {
    std::memcpy(out->a.data(), b.data() + at, 2 * a_elems);
    at += 2 * a_elems;
  } else {
    std::vector<std::uint16_t> base(c.a_row_stride);
    std::memcpy(base.data(), b.data() + at, 2 * base.size());
    at += 2 * base.size();
    for (std::uint64_t r = 0; r < rows; ++r) {
      std::uint16_t* row = out->a.data() + r * c.a_row_stride;
      std::memcpy(row, base.data(), 2 * base.size());
      for (std::uint32_t p = 0; p < patches; ++p, at += 8) {
        const std::uint32_t col = get_u32(b, at);
        if (col >= c.a_row_stride || b[at + 6] != 0 || b[at + 7] != 0)
          return fail("row " + std::to_string(r) + " patch " + std::to_string(p) + ": column " + std::to_string(col) +
                      " is outside the row, or its padding is not 0");
        row[col] = static_cast<std::uint16_t>(b[at + 4] | b[at + 5] << 8);
      }
    }
  }
  out->w.assign(b.begin() + at, b.begin() + at + w_bytes);
  at += w_bytes;
  out->s.assign(s_elems, 0.0f);
  std::memcpy(out->s.data(), b.data() + at, 4 * s_elems);  // little-endian host (x86-64 and aarch64)
  return true;
}

void add_run_operands(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("run-operands",
                                 "Run an operand bundle (raw A, W, S bits) through one entry point; write C's bits");
  auto backend_kind = std::make_shared<std::string>();
  auto entry = std::make_shared<std::string>();
  auto in = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  cmd->add_option("--backend", *backend_kind, "sim or cuda (no auto: the caller says which it measures)")->required();
  cmd->add_option("--entry", *entry, "the entry point; must be the one the bundle names")->required();
  cmd->add_option("--in", *in, "operand bundle (format: properties/cli/cmd_run_operands.cpp)")->required();
  cmd->add_option("--out", *out, "output file: header and C's bits")->required();
  auto module = std::make_shared<std::string>();
  add_module_option(cmd, module.get());
  auto without_hopper = std::make_shared<bool>(false);
  cmd->add_flag("--without-hopper-tier", *without_hopper,
                "plan as if the module lacked the Hopper tier's symbols (the seed's bodies and the row-tile kernel)");
  auto limits = std::make_shared<WorkLimits>();
  add_limit_options(cmd, limits.get());
  cmd->callback([=] {
    *exit_code = kExitUsage;
    auto usage = [](const std::string& message) { usage_error("run-operands", message); };
    if (*backend_kind != "sim" && *backend_kind != "cuda")
      return usage("--backend " + golden::quote(*backend_kind) + " must be sim or cuda");
    std::string error, note;
    if (!golden::check_writable(*out, &error)) return usage("--out " + golden::shown(*out) + ": " + error);
    Bundle bundle;
    if (!read_bundle(*in, *limits, &bundle, &error)) return usage(error);
    const std::string want = entry->rfind("w8a16_", 0) == 0 ? entry->substr(6) : *entry;
    if (want != bundle.entry)
      return usage("--entry " + golden::quote(*entry) + ", but " + golden::shown(*in) + " is a bundle for " + bundle.entry);
    auto backend = make_backend(*backend_kind, &note, &error, *module);
    if (!backend) return usage(error);
    if (!check_module(*backend, {props::to_device_entry(bundle.shape.entry)}, &error)) return usage(error);
    const golden::Case& c = bundle.shape;
    const std::size_t rows_per = std::size_t{c.m}, launches = bundle.launches;
    const std::size_t a_launch = 2 * rows_per * c.a_row_stride, c_launch = 2 * rows_per * c.c_row_stride;
    device::Status st;
    auto a = backend->allocate(a_launch * launches, &st);
    auto w = a ? backend->allocate(bundle.w.size(), &st) : nullptr;
    auto s = w ? backend->allocate(4 * bundle.s.size(), &st) : nullptr;
    auto o = s ? backend->allocate(c_launch * launches, &st) : nullptr;
    if (o) st = a->upload(bundle.a.data(), a_launch * launches);
    if (st.ok() && o) st = w->upload(bundle.w.data(), bundle.w.size());
    if (st.ok() && o) st = s->upload(bundle.s.data(), 4 * bundle.s.size());
    if (st.ok() && o) st = o->fill(0xFF);
    if (!o || !st.ok()) return usage("device memory: " + st.message + " (nothing was run)");
    const device::MaskedRegistry no_hopper(
        backend->registry(), {device::KernelId::wgmma_rows, device::KernelId::wgmma_rows_n128,
                              device::KernelId::wgmma_rows_n128_x2});
    const device::KernelRegistry& registry =
        *without_hopper ? static_cast<const device::KernelRegistry&>(no_hopper) : backend->registry();
    // The plan of the first launch names the body; every launch has the same shape, hence the same plan.
    const device::Call first = props::case_call(c, registry, a->address(), w->address(), s->address(),
                                                o->address());
    const device::Planned plan = device::plan_launch(first, registry, backend->limits());
    if (!plan.ok())
      return usage(bundle.entry + " refuses m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) + " k=" +
                   std::to_string(c.k) + " a_row_stride=" + std::to_string(c.a_row_stride) + " c_row_stride=" +
                   std::to_string(c.c_row_stride) + ": " + device::errc_name(plan.status.code) + ": " +
                   plan.status.message + " (nothing was run)");
    std::atomic<std::size_t> launched{0};
    Heartbeat beat("run-operands", [&] { return std::to_string(launched.load()) + " of " + std::to_string(launches) + " launches"; });
    for (std::size_t i = 0; i < launches; ++i, ++launched) {
      const device::Call call = props::case_call(c, registry, a->address() + i * a_launch, w->address(),
                                                 s->address(), o->address() + i * c_launch);
      const device::Planned planned = device::plan_launch(call, registry, backend->limits());
      st = planned.ok() ? backend->execute(planned.plan) : planned.status;
      if (!st.ok()) {
        std::fprintf(stderr, "run-operands: launch %zu of %zu: %s: %s\n", i, launches, device::errc_name(st.code),
                     st.message.c_str());
        *exit_code = 1;
        return;
      }
    }
    st = backend->synchronize();
    std::vector<unsigned char> file(kOutHeaderBytes + c_launch * launches, 0);
    if (st.ok()) st = o->download(file.data() + kOutHeaderBytes, c_launch * launches);
    if (!st.ok()) {
      std::fprintf(stderr, "run-operands: after %zu launches: %s\n", launches, st.message.c_str());
      *exit_code = 1;
      return;
    }
    std::memcpy(file.data(), kOutputMagic, 8);
    put_u32(&file, 8, 1);
    put_text(&file, 12, 32, bundle.entry);
    put_text(&file, 44, 48, plan.plan.kernel_name);
    put_text(&file, 92, 32, device::body_name(plan.plan.body));
    put_u32(&file, 124, plan.plan.contract == device::Contract::gemv ? 1 : 0);
    put_u32(&file, 128, c.m);
    put_u32(&file, 132, c.n);
    put_u32(&file, 136, c.c_row_stride);
    put_u32(&file, 140, static_cast<std::uint32_t>(launches));
    put_text(&file, 144, 16, backend->name());
    if (!golden::write_file_atomic(*out, std::string_view(reinterpret_cast<const char*>(file.data()), file.size()), &error))
      return usage("--out " + golden::shown(*out) + ": cannot write: " + error);
    std::fputs(identity_text(run_identity(*backend)).c_str(), stdout);
    std::printf("run-operands: %s on %s: kernel %s, body %s, %zu launches of m=%u n=%u k=%u -> %s\n",
                bundle.entry.c_str(), note.c_str(), plan.plan.kernel_name, device::body_name(plan.plan.body), launches,
                c.m, c.n, c.k, golden::shown(*out).c_str());
    *exit_code = 0;
  });
}

W8A16_COMMAND(add_run_operands);

}  // namespace
}  // namespace w8a16::cli
