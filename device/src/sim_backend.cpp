// SPDX-License-Identifier: MIT OR Apache-2.0
// The simulation backend: a plan's CTAs on the CPU. The expected output is computed once with the
// emulator's whole-output driver for the kernel's contract (NUMERICS.md 2.1 / 2.2); each CTA then
// copies the outputs its tile map gives it, and every write is classified against the call's
// output extent. Values come from reference/, placement is the plan's: what is checked is geometry.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <map>
#include <string>
#include <thread>

#include "sim_internal.hpp"
#include "w8a16/device/recording_backend.hpp"
#include "w8a16/reference/contract.hpp"
#include "w8a16/reference/packed.hpp"

namespace w8a16::device {

struct SimBackend::Memory {
  std::map<DevPtr, std::size_t> regions;  // start address -> size
  std::string poisoned;                   // an injected fault's sticky error; "" while healthy
  Status lost() const { return Status::error(Errc::context_lost, poisoned); }
  // The host bytes of [addr, addr + bytes) when one allocation holds all of it, else nullptr.
  std::uint8_t* locate(DevPtr addr, std::uint64_t bytes) const {
    auto it = regions.upper_bound(addr);
    if (it == regions.begin()) return nullptr;
    --it;
    const std::uint64_t off = addr - it->first;
    if (off > it->second || bytes > it->second - off) return nullptr;
    return reinterpret_cast<std::uint8_t*>(addr);
  }
};

namespace {

std::string rc(std::uint64_t r, std::uint64_t c) { return "C[" + std::to_string(r) + "][" + std::to_string(c) + "]"; }
std::string cta(std::uint32_t x, std::uint32_t y, std::uint32_t z) {
  return "CTA (" + std::to_string(x) + ", " + std::to_string(y) + ", " + std::to_string(z) + ")";
}

}  // namespace

namespace sim {

void FindingLog::add(FindingKind kind, std::string message) {
  const auto k = static_cast<std::size_t>(kind);
  if (counts_[k]++ < kKeepPerKind) out_.push_back(Finding{kind, std::move(message)});
}

void FindingLog::finish() {
  for (std::size_t k = 0; k < 32; ++k)
    if (counts_[k] > kKeepPerKind)
      out_.push_back(Finding{static_cast<FindingKind>(k),
                             "... and " + std::to_string(counts_[k] - kKeepPerKind) + " more of this kind"});
}

}  // namespace sim

const char* finding_kind_name(FindingKind k) {
  switch (k) {
    case FindingKind::written_twice: return "written_twice";
    case FindingKind::never_written: return "never_written";
    case FindingKind::write_outside: return "write_outside";
    case FindingKind::write_into_padding: return "write_into_padding";
    case FindingKind::read_outside: return "read_outside";
    case FindingKind::misaligned_row: return "misaligned_row";
    case FindingKind::smem_mismatch: return "smem_mismatch";
    case FindingKind::smem_over_limit: return "smem_over_limit";
    case FindingKind::grid_over_limit: return "grid_over_limit";
    case FindingKind::block_mismatch: return "block_mismatch";
    case FindingKind::body_mismatch: return "body_mismatch";
    case FindingKind::tile_map_mismatch: return "tile_map_mismatch";
    case FindingKind::unknown_pointer: return "unknown_pointer";
    case FindingKind::step_coverage: return "step_coverage";
    case FindingKind::workspace_chain: return "workspace_chain";
    case FindingKind::workspace_mismatch: return "workspace_mismatch";
    case FindingKind::packed_weight_invalid: return "packed_weight_invalid";
  }
  return "unknown";
}

SimBackend::SimBackend(StaticRegistry registry, DeviceLimits limits)
    : registry_(registry), limits_(limits), memory_(std::make_shared<Memory>()) {}

SimBackend::~SimBackend() = default;

bool SimBackend::has_finding(FindingKind k) const {
  return std::any_of(findings_.begin(), findings_.end(), [k](const Finding& f) { return f.kind == k; });
}

std::unique_ptr<Buffer> SimBackend::allocate(std::size_t bytes, Status* status) {
  // The buffer removes its region when it dies; the weak pointer lets it outlive the backend.
  class Registered final : public Buffer {
   public:
    Registered(std::unique_ptr<Buffer> host, std::weak_ptr<Memory> mem)
        : host_(std::move(host)), mem_(std::move(mem)) {}
    ~Registered() override {
      if (auto m = mem_.lock()) m->regions.erase(host_->address());
    }
    DevPtr address() const override { return host_->address(); }
    std::size_t size() const override { return host_->size(); }
    Status upload(const void* s, std::size_t b, std::size_t o) override {
      if (auto m = mem_.lock(); m && !m->poisoned.empty()) return m->lost();
      return host_->upload(s, b, o);
    }
    Status download(void* d, std::size_t b, std::size_t o) const override {
      if (auto m = mem_.lock(); m && !m->poisoned.empty()) return m->lost();
      return host_->download(d, b, o);
    }
    Status fill(std::uint8_t byte) override {
      if (auto m = mem_.lock(); m && !m->poisoned.empty()) return m->lost();
      return host_->fill(byte);
    }

   private:
    std::unique_ptr<Buffer> host_;
    std::weak_ptr<Memory> mem_;
  };
  if (!memory_->poisoned.empty()) {
    if (status) *status = memory_->lost();
    return nullptr;
  }
  auto host = allocate_host_buffer(bytes, status);
  if (!host) return nullptr;
  memory_->regions[host->address()] = bytes;
  return std::make_unique<Registered>(std::move(host), memory_);
}

Status SimBackend::synchronize() { return memory_->poisoned.empty() ? Status::success() : memory_->lost(); }

bool parse_injections(const std::string& text, std::vector<Injection>* out, std::string* error) {
  out->clear();
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find(',', pos);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(pos, end - pos);
    pos = end + 1;
    if (item.empty()) continue;
    Injection inj;
    const std::size_t c1 = item.find(':');
    const std::string kind = item.substr(0, c1);
    if (kind == "hang") inj.kind = InjectedFault::hang;
    else if (kind == "fault") inj.kind = InjectedFault::fault;
    else if (kind == "crash") inj.kind = InjectedFault::crash;
    else {
      *error = "'" + item + "': the kind must be hang, fault or crash (KIND:SYMBOL[:m=N])";
      return false;
    }
    if (c1 == std::string::npos || c1 + 1 >= item.size()) {
      *error = "'" + item + "': no kernel symbol (KIND:SYMBOL[:m=N])";
      return false;
    }
    const std::size_t c2 = item.find(':', c1 + 1);
    inj.kernel = item.substr(c1 + 1, c2 == std::string::npos ? std::string::npos : c2 - c1 - 1);
    if (c2 != std::string::npos) {
      const std::string m = item.substr(c2 + 1);
      if (m.size() < 3 || m.size() > 12 || m.compare(0, 2, "m=") != 0 ||
          m.find_first_not_of("0123456789", 2) != std::string::npos || std::stoull(m.substr(2)) == 0 ||
          std::stoull(m.substr(2)) > 0xFFFFFFFFull) {
        *error = "'" + item + "': the third field must be m=N with N >= 1";
        return false;
      }
      inj.m = static_cast<std::uint32_t>(std::stoull(m.substr(2)));
    }
    // A symbol no plan can name would inject nothing, and the run would pass as if it had been
    // tested against the fault: only the family's kernel symbols (kernels.hpp) are taken.
    KernelId id;
    if (!kernel_from_name(inj.kernel, &id)) {
      *error = "'" + item + "': '" + inj.kernel +
               "' is not a kernel symbol of the family (device/include/w8a16/device/kernels.hpp lists them, e.g. " +
               kernel_name(KernelId::gemv_batch4_strided) + "): it would inject nothing";
      return false;
    }
    out->push_back(std::move(inj));
    if (end == text.size()) break;
  }
  return true;
}

Status SimBackend::execute(const Plan& p) {
  if (!memory_->poisoned.empty()) return memory_->lost();
  for (const Injection& inj : injections_) {
    if (inj.kernel != p.kernel_name || (inj.m != 0 && inj.m != p.params.m)) continue;
    const std::string what = std::string(p.kernel_name) + " (injected " +
                             (inj.kind == InjectedFault::hang    ? "hang"
                              : inj.kind == InjectedFault::fault ? "fault"
                                                                 : "crash") +
                             ", W8A16_SIM_INJECT)";
    switch (inj.kind) {
      case InjectedFault::hang:
        for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
      case InjectedFault::fault:
        // As the driver reports a fault: at the next synchronising call, and on every call after.
        memory_->poisoned =
            "cuCtxSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS (700): an illegal memory access was "
            "encountered (simulated: " +
            what + ")";
        plans_.push_back(p);
        return Status::success();
      case InjectedFault::crash:
        // The default action, not a sanitizer's handler (which would exit with a status instead):
        // the process dies of the signal, as it does when a driver crashes outside any handler.
        std::signal(SIGSEGV, SIG_DFL);
        std::raise(SIGSEGV);
        return Status::error(Errc::context_lost, what);
    }
  }
  findings_.clear();
  plans_.push_back(p);
  sim::FindingLog log(findings_);
  sim::check_launch_shape(p, limits_, log);

  const KernelParams& q = p.params;
  const OutputExtent& ext = p.extent;

  // Reads: A, W and S as the parameters describe them must lie in simulation buffers, with the
  // row starts the kernels' vector loads need (16 bytes for A and W).
  const bool shape_ok = q.m >= 1 && q.n >= 1 && q.k >= kKBlock && q.k % kKBlock == 0 && q.a_row_stride >= q.k;
  const std::uint8_t* a = nullptr;
  const std::uint8_t* w = nullptr;
  const std::uint8_t* s = nullptr;
  if (shape_ok) {
    const std::uint64_t a_bytes = 2 * ((std::uint64_t{q.m} - 1) * q.a_row_stride + q.k);
    const std::uint64_t w_bytes = reads_packed_weight(p.body) ? packed_weight_bytes(q.n, q.k)
                                                              : std::uint64_t{q.n} * q.k;
    const std::uint64_t s_bytes = 4 * std::uint64_t{(q.n + kScaleRowsPerBlock - 1) / kScaleRowsPerBlock} *
                                  (q.k / kKBlock);
    a = memory_->locate(q.input, a_bytes);
    w = memory_->locate(q.weight, w_bytes);
    s = memory_->locate(q.block_scale, s_bytes);
    if (!a)
      log.add(FindingKind::read_outside, "A: " + std::to_string(a_bytes) + " bytes from input leave every buffer");
    if (!w)
      log.add(FindingKind::read_outside, "W: " + std::to_string(w_bytes) + " bytes from weight leave every buffer");
    if (!s)
      log.add(FindingKind::read_outside,
              "S: " + std::to_string(s_bytes) + " bytes from block_scale leave every buffer");
    for (std::uint64_t r = 0; r < q.m; ++r) {
      if ((q.input + 2 * r * q.a_row_stride) % 16 != 0) {
        log.add(FindingKind::misaligned_row,
                "A row " + std::to_string(r) + " starts off a 16-byte boundary (cp.async)");
        break;
      }
    }
    if (q.weight % 16 != 0 || q.k % 16 != 0)
      log.add(FindingKind::misaligned_row, "W rows start off a 16-byte boundary (16-byte weight loads)");
  } else {
    log.add(FindingKind::read_outside, "the parameters (m, n, k, a_row_stride) describe no valid operand");
  }
  for (std::uint64_t r = 0; r < q.m; ++r) {
    if ((q.output + 2 * r * q.c_row_stride) % 2 != 0) {
      log.add(FindingKind::misaligned_row,
              "C row " + std::to_string(r) + " starts off a 2-byte boundary (BF16 stores)");
      break;
    }
  }

  // The expected output, once, in the kernel's contract.
  // A packed W goes through the emulator's own reader of the layout (NUMERICS.md 2.3), which
  // refuses a NaN table the kernels' probe-free decode would misread.
  std::vector<std::uint16_t> expected;
  ref::UnpackedWeights unpacked;
  if (a && w && reads_packed_weight(p.body)) {
    unpacked = ref::unpack_weights(w, packed_weight_bytes(q.n, q.k), q.n, q.k);
    if (unpacked.ok) w = unpacked.w.data();
    else log.add(FindingKind::packed_weight_invalid, "W: " + unpacked.error);
  }
  if (a && w && s && (!reads_packed_weight(p.body) || unpacked.ok)) {
    const ref::GemmView v = ref::gemm_view(reinterpret_cast<const std::uint16_t*>(a), q.a_row_stride, w,
                                           reinterpret_cast<const float*>(s), q.m, q.n, q.k);
    expected = sim::expected_output(v, p.contract);
    for (const BodyStandIn& si : stand_ins_) {
      if (si.body != p.body) continue;
      std::string why;
      expected = sim::stand_in_output(v, p.contract, si, plans_.size(), &why);
      if (expected.empty())
        return Status::error(Errc::simulation_finding,
                             std::string(p.kernel_name) + ": stand-in " + si.text + ": " + why);
    }
  }

  // The CTAs. Each owns its tile map's rectangle clipped to the kernel's m and n (as the kernels
  // clip); where each write lands is judged by its address against the call's extent.
  std::vector<std::uint8_t> count(std::size_t{ext.m} * ext.n, 0);
  if (ext.c_row_stride == 0 || ext.c_row_stride < ext.n) {
    log.add(FindingKind::write_outside, "the output extent has c_row_stride=" + std::to_string(ext.c_row_stride) +
                                            " < n=" + std::to_string(ext.n) + ": no write can be placed");
    log.finish();
    return Status::error(Errc::simulation_finding, std::string(p.kernel_name) + ": invalid output extent");
  }
  // One output rectangle a CTA writes: rows [r0, r1), columns [c0, c1), already clipped.
  struct Rect {
    std::uint64_t r0, r1, c0, c1;
  };
  auto write_rect = [&](std::uint32_t x, std::uint32_t y, std::uint32_t z, const Rect& rect) {
    for (std::uint64_t r = rect.r0; r < rect.r1; ++r)
      for (std::uint64_t c = rect.c0; c < rect.c1; ++c) {
        const std::uint64_t addr = q.output + 2 * (r * q.c_row_stride + c);
        // Spelled out only for a finding: a launch writes millions of outputs, nearly all of them right.
        auto who = [&] { return cta(x, y, z) + " writes " + rc(r, c); };
        if (addr < ext.output || (addr - ext.output) % 2 != 0) {
          log.add(FindingKind::write_outside, who() + ": before C's first element");
          continue;
        }
        const std::uint64_t idx = (addr - ext.output) / 2;
        const std::uint64_t row = idx / ext.c_row_stride, col = idx % ext.c_row_stride;
        if (row >= ext.m) {
          log.add(FindingKind::write_outside,
                  who() + ": lands in row " + std::to_string(row) + " >= M=" + std::to_string(ext.m));
          continue;
        }
        if (col >= ext.n) {
          log.add(FindingKind::write_into_padding, who() + ": lands in column " + std::to_string(col) +
                                                       " >= N=" + std::to_string(ext.n) + " (pitch padding)");
          continue;
        }
        std::uint8_t& n_writes = count[row * ext.n + col];
        if (++n_writes == 2) log.add(FindingKind::written_twice, who() + ": already written by another CTA");
        if (n_writes > 2) n_writes = 2;
        std::uint8_t* dst = memory_->locate(addr, 2);
        if (!dst) {
          log.add(FindingKind::unknown_pointer, who() + ": the address is in no simulation buffer");
          continue;
        }
        if (!expected.empty()) std::memcpy(dst, &expected[r * q.n + c], 2);
      }
  };
  const std::uint64_t ctas = std::uint64_t{p.grid.x} * p.grid.y * p.grid.z;
  if (ctas > (std::uint64_t{1} << 28)) {
    log.add(FindingKind::grid_over_limit, "grid of " + std::to_string(ctas) + " CTAs: too large to simulate");
  } else if (p.tile.kind == TileKind::stream_units) {
    sim::run_stream_units(p, log,
                          [&](std::uint32_t x, std::uint64_t r0, std::uint64_t r1, std::uint64_t c0, std::uint64_t c1) {
                            write_rect(x, 0, 0, Rect{r0, r1, c0, c1});
                          });
  } else {
    for (std::uint32_t z = 0; z < p.grid.z; ++z)
      for (std::uint32_t y = 0; y < p.grid.y; ++y)
        for (std::uint32_t x = 0; x < p.grid.x; ++x) {
          std::uint64_t r0 = p.tile.row_origin, r1 = q.m;
          if (p.tile.kind == TileKind::tile) {
            r0 = p.tile.row_origin + std::uint64_t{p.tile.rows} * y;
            r1 = std::min<std::uint64_t>(r0 + p.tile.rows, q.m);
          }
          const std::uint64_t c0 = std::uint64_t{p.tile.cols} * x;
          write_rect(x, y, z, Rect{r0, r1, c0, std::min<std::uint64_t>(c0 + p.tile.cols, q.n)});
        }
  }
  for (std::uint64_t r = 0; r < ext.m; ++r)
    for (std::uint64_t c = 0; c < ext.n; ++c)
      if (count[r * ext.n + c] == 0) log.add(FindingKind::never_written, rc(r, c) + ": no CTA writes it");
  log.finish();

  if (findings_.empty()) return Status::success();
  std::string msg = std::string(p.kernel_name) + ": " + std::to_string(findings_.size()) +
                    " simulation finding(s); first: " + finding_kind_name(findings_.front().kind) + ": " +
                    findings_.front().message;
  return Status::error(Errc::simulation_finding, msg);
}

}  // namespace w8a16::device
