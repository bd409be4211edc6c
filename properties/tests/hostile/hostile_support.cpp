// SPDX-License-Identifier: MIT OR Apache-2.0
// The hostile catalogue's harness (hostile_support.hpp): operands, named-entry launches on the
// simulation backend, the emulator's expected C, and the byte-for-byte comparison.
#include "hostile_support.hpp"

#include <cmath>
#include <cstring>

#include "w8a16/device/packed.hpp"
#include "w8a16/golden/case_rng.hpp"
#include "w8a16/reference/contract.hpp"

namespace w8a16::hostile {

using device::KernelId;
using device::Status;

std::map<std::string, int>& catalogue() {
  static std::map<std::string, int> counts;
  return counts;
}

Problem make_problem(Entry e, std::uint32_t m, std::uint32_t n, std::uint32_t k, std::uint32_t lda_pad,
                     std::uint32_t ldc_pad, std::uint64_t seed) {
  Problem p;
  const bool contiguous = device::entry_is_contiguous(e);
  p.m = m;
  p.n = n;
  p.k = k;
  p.lda = contiguous ? k : k + lda_pad;
  p.ldc = contiguous ? n : n + ldc_pad;
  golden::Xoshiro256ss rng(golden::derive_seed(seed, std::uint64_t{m} << 40 ^ std::uint64_t{n} << 20 ^ k));
  p.a.assign(std::size_t{m} * p.lda, kAPadding);
  for (std::uint32_t r = 0; r < m; ++r)
    for (std::uint32_t c = 0; c < k; ++c) {
      const auto sign = static_cast<std::uint16_t>(rng.below(2) << 15);
      const auto exp = static_cast<std::uint16_t>(120 + rng.below(15));
      p.a_at(r, c) = static_cast<std::uint16_t>(sign | exp << 7 | rng.below(128));
    }
  p.w.resize(std::size_t{n} * k);
  for (auto& b : p.w) {
    b = static_cast<std::uint8_t>(rng.below(256));
    if ((b & 0x7F) == 0x7F) b ^= 1;  // finite codes only: 0x7F / 0xFF are E4M3's NaNs
  }
  p.s.resize(std::size_t{(n + 127) / 128} * (k / 128));
  for (auto& f : p.s)
    f = std::ldexp(1.0f + static_cast<float>(rng.below(256)) / 256.0f, -4 + static_cast<int>(rng.below(5)));
  return p;
}

std::vector<std::uint8_t> device_weight(Entry e, const Problem& p) {
  return e == Entry::gemm_packed_strided ? device::pack_weights(p.w.data(), p.n, p.k) : p.w;
}

Handles handles_for(Entry e, const device::KernelRegistry& reg) {
  return Handles{reg.resolve(entry_own_kernel(e)), reg.resolve(KernelId::gemm_pipelined_m32),
                 reg.resolve(KernelId::gemm_pipelined_m64)};
}

Status call_named(device::Launcher& api, Entry e, const Handles& h, DevPtr a, DevPtr w, DevPtr s, DevPtr c,
                  std::uint32_t m, std::uint32_t n, std::uint32_t k, std::uint32_t lda, std::uint32_t ldc) {
  switch (e) {
    case Entry::gemm_pipelined: return api.gemm_pipelined(h.own, a, w, s, c, m, n, k);
    case Entry::gemm_pipelined_m32: return api.gemm_pipelined_m32(h.own, a, w, s, c, m, n, k);
    case Entry::gemm_pipelined_m32_strided: return api.gemm_pipelined_m32_strided(h.own, a, w, s, c, m, n, k, lda, ldc);
    case Entry::gemm_pipelined_m64: return api.gemm_pipelined_m64(h.own, a, w, s, c, m, n, k);
    case Entry::gemm_pipelined_m64_strided: return api.gemm_pipelined_m64_strided(h.own, a, w, s, c, m, n, k, lda, ldc);
    case Entry::gemm_pipelined_by_m: return api.gemm_pipelined_by_m(h.own, h.m32, h.m64, a, w, s, c, m, n, k);
    case Entry::gemv_batch4_strided: return api.gemv_batch4_strided(h.own, a, w, s, c, m, n, k, lda, ldc);
    case Entry::gemv_batch16_strided: return api.gemv_batch16_strided(h.own, a, w, s, c, m, n, k, lda, ldc);
    case Entry::gemm_packed_strided: return api.gemm_packed_strided(a, w, s, c, m, n, k, lda, ldc);
  }
  return Status::error(device::Errc::backend_error, "unknown entry");
}

namespace {

template <class T>
bool holds(const device::Buffer& b, const std::vector<T>& want) {
  std::vector<T> got(want.size());
  return b.download(got.data(), got.size() * sizeof(T)).ok() &&
         std::memcmp(got.data(), want.data(), want.size() * sizeof(T)) == 0;
}

}  // namespace

Outcome run_sim(Entry e, const Problem& p, device::StaticRegistry reg, device::DeviceLimits limits) {
  Outcome out;
  device::SimBackend sim(reg, limits);
  const std::vector<std::uint8_t> wd = device_weight(e, p);
  auto a = sim.allocate(p.a.size() * 2), w = sim.allocate(wd.size()), s = sim.allocate(p.s.size() * 4);
  const std::size_t c_elems = std::size_t{p.m + kRowsPastM} * p.ldc;
  auto c = sim.allocate(c_elems * 2);
  const std::vector<std::uint16_t> poison(c_elems, kPoison16);
  if (!a || !w || !s || !c || !a->upload(p.a.data(), p.a.size() * 2).ok() || !w->upload(wd.data(), wd.size()).ok() ||
      !s->upload(p.s.data(), p.s.size() * 4).ok() || !c->upload(poison.data(), c_elems * 2).ok()) {
    out.status = Status::error(device::Errc::backend_error, "test setup: allocation or upload failed");
    return out;
  }
  device::Launcher api(sim);
  out.status = call_named(api, e, handles_for(e, sim.registry()), a->address(), w->address(), s->address(),
                          c->address(), p.m, p.n, p.k, p.lda, p.ldc);
  out.plans = sim.plans().size();
  if (out.plans) out.plan = sim.plans().front();
  for (const auto& f : sim.findings())
    out.findings.push_back(std::string(device::finding_kind_name(f.kind)) + ": " + f.message);
  out.c.assign(c_elems, 0);
  if (!c->download(out.c.data(), c_elems * 2).ok()) out.c.clear();
  out.inputs_unchanged = holds(*a, p.a) && holds(*w, wd) && holds(*s, p.s);
  return out;
}

std::vector<std::uint16_t> expected_c(Entry e, const Problem& p) {
  std::vector<std::uint16_t> c(std::size_t{p.m + kRowsPastM} * p.ldc, kPoison16);
  const ref::GemmView v = ref::gemm_view(p.a.data(), p.lda, p.w.data(), p.s.data(), p.m, p.n, p.k);
  if (is_gemv(e)) ref::gemm_gemv(v, c.data(), p.ldc, 1);
  else ref::gemm_canonical(v, ref::Arch::sm90, c.data(), p.ldc, 1);
  return c;
}

std::vector<std::uint16_t> expect_emulator_bytes(Entry e, const Problem& p, const std::string& what) {
  SCOPED_TRACE(std::string(device::entry_name(e)) + " " + what + ": m=" + std::to_string(p.m) +
               " n=" + std::to_string(p.n) + " k=" + std::to_string(p.k) + " lda=" + std::to_string(p.lda) +
               " ldc=" + std::to_string(p.ldc));
  const Outcome o = run_sim(e, p);
  EXPECT_TRUE(o.status.ok()) << device::errc_name(o.status.code) << ": " << o.status.message;
  for (const std::string& f : o.findings) ADD_FAILURE() << f;
  EXPECT_EQ(o.plans, 1u);
  EXPECT_TRUE(o.inputs_unchanged) << "the launch changed A, W or S";
  if (!o.status.ok() || o.c.empty()) return {};
  const std::vector<std::uint16_t> want = expected_c(e, p);
  if (o.c != want) {
    for (std::size_t i = 0; i < want.size(); ++i)
      if (o.c[i] != want[i]) {
        ADD_FAILURE() << "first difference at C[" << i / p.ldc << "][" << i % p.ldc << "]: produced 0x" << std::hex
                      << o.c[i] << ", emulator 0x" << want[i];
        break;
      }
    return {};
  }
  return o.c;
}

}  // namespace w8a16::hostile
