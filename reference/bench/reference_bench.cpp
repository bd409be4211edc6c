// SPDX-License-Identifier: MIT OR Apache-2.0
// Throughput of the emulator (canonical fold, GEMV order, exact reference, the per-element model)
// next to an FP32 Eigen GEMM of the same shape, in multiply-accumulates per second.
#include <benchmark/benchmark.h>

#include <Eigen/Core>
#include <chrono>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include "w8a16/reference/contract.hpp"
#include "w8a16/reference/e4m3fn.hpp"
#include "w8a16/reference/exact.hpp"

namespace {

namespace ref = w8a16::ref;

// Realistic operands: activations ~ N(0, 1) in BF16, weights spread over the E4M3 codes, scales
// near 2^-8.
struct Operands {
  std::uint32_t m, n, k;
  std::vector<std::uint16_t> a;
  std::vector<std::uint8_t> w;
  std::vector<float> s;
  Operands(std::uint32_t m_, std::uint32_t n_, std::uint32_t k_) : m(m_), n(n_), k(k_) {
    std::mt19937 rng(42);
    std::normal_distribution<float> normal;
    a.resize(static_cast<std::size_t>(m) * k);
    for (auto& x : a) {
      const float f = normal(rng);
      std::uint32_t b;
      std::memcpy(&b, &f, 4);
      x = static_cast<std::uint16_t>(b >> 16);
    }
    w.resize(static_cast<std::size_t>(n) * k);
    for (auto& x : w) {
      std::uint8_t c = static_cast<std::uint8_t>(rng());
      x = (c & 0x7F) == 0x7F ? static_cast<std::uint8_t>(c - 1) : c;
    }
    s.assign(static_cast<std::size_t>((n + 127) / 128) * (k / 128), 0.0f);
    for (auto& x : s) x = std::ldexp(1.0f + static_cast<float>(rng() % 64) / 64.0f, -8);
  }
  ref::GemmView view() const { return ref::gemm_view(a.data(), k, w.data(), s.data(), m, n, k); }
  double macs() const { return static_cast<double>(m) * n * k; }
};

void set_rate(benchmark::State& state, double macs) {
  state.counters["MAC/s"] = benchmark::Counter(macs, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["threads"] = static_cast<double>(std::thread::hardware_concurrency());
}

void BM_Canonical(benchmark::State& state) {
  const Operands op(state.range(0), state.range(1), state.range(2));
  std::vector<std::uint16_t> c(static_cast<std::size_t>(op.m) * op.n);
  for (auto _ : state) ref::gemm_canonical(op.view(), ref::Arch::sm90, c.data(), op.n);
  set_rate(state, op.macs());
}

void BM_CanonicalOneThread(benchmark::State& state) {
  const Operands op(state.range(0), state.range(1), state.range(2));
  std::vector<std::uint16_t> c(static_cast<std::size_t>(op.m) * op.n);
  for (auto _ : state) ref::gemm_canonical(op.view(), ref::Arch::sm90, c.data(), op.n, 1);
  state.counters["MAC/s"] = benchmark::Counter(op.macs(), benchmark::Counter::kIsIterationInvariantRate);
}

// The scalar model, one element at a time on one thread, over the first 64 outputs of row 0.
void BM_CanonicalModelPerElement(benchmark::State& state) {
  const Operands op(1, 64, state.range(0));
  for (auto _ : state)
    for (std::uint32_t n = 0; n < op.n; ++n)
      benchmark::DoNotOptimize(ref::canonical_element_bf16(op.view(), ref::Arch::sm90, 0, n));
  state.counters["MAC/s"] = benchmark::Counter(op.macs(), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Gemv(benchmark::State& state) {
  const Operands op(state.range(0), state.range(1), state.range(2));
  std::vector<std::uint16_t> c(static_cast<std::size_t>(op.m) * op.n);
  for (auto _ : state) ref::gemm_gemv(op.view(), c.data(), op.n);
  set_rate(state, op.macs());
}

void BM_Exact(benchmark::State& state) {
  const Operands op(state.range(0), state.range(1), state.range(2));
  std::vector<ref::ExactOutput> c(static_cast<std::size_t>(op.m) * op.n);
  for (auto _ : state) ref::gemm_exact(op.view(), c.data(), op.n);
  set_rate(state, op.macs());
}

// FP32 GEMM of the same shape with Eigen, single-threaded (no OpenMP in this build), operands
// already in FP32: the cost of the arithmetic alone, for scale.
void BM_EigenFp32SingleThread(benchmark::State& state) {
  const Eigen::Index m = state.range(0), n = state.range(1), k = state.range(2);
  const Eigen::MatrixXf a = Eigen::MatrixXf::Random(m, k), w = Eigen::MatrixXf::Random(k, n);
  Eigen::MatrixXf c(m, n);
  for (auto _ : state) {
    c.noalias() = a * w;
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["MAC/s"] = benchmark::Counter(static_cast<double>(m) * n * k,
                                               benchmark::Counter::kIsIterationInvariantRate);
}

// All four on one shape in one run, with their ratios to Eigen as counters.
void BM_CompareToEigen(benchmark::State& state) {
  const Operands op(state.range(0), state.range(1), state.range(2));
  const Eigen::MatrixXf a = Eigen::MatrixXf::Random(op.m, op.k), w = Eigen::MatrixXf::Random(op.k, op.n);
  Eigen::MatrixXf cf(op.m, op.n);
  std::vector<std::uint16_t> c(static_cast<std::size_t>(op.m) * op.n);
  std::vector<ref::ExactOutput> ce(c.size());
  double t_canonical = 0, t_gemv = 0, t_exact = 0, t_eigen = 0;
  auto timed = [](auto&& f) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  for (auto _ : state) {
    t_canonical += timed([&] { ref::gemm_canonical(op.view(), ref::Arch::sm90, c.data(), op.n); });
    t_gemv += timed([&] { ref::gemm_gemv(op.view(), c.data(), op.n); });
    t_exact += timed([&] { ref::gemm_exact(op.view(), ce.data(), op.n); });
    t_eigen += timed([&] {
      cf.noalias() = a * w;
      benchmark::DoNotOptimize(cf.data());
    });
  }
  const double macs = op.macs() * static_cast<double>(state.iterations());
  state.counters["canonical_GMAC/s"] = macs / t_canonical * 1e-9;
  state.counters["gemv_GMAC/s"] = macs / t_gemv * 1e-9;
  state.counters["exact_GMAC/s"] = macs / t_exact * 1e-9;
  state.counters["eigen1t_GMAC/s"] = macs / t_eigen * 1e-9;
  state.counters["canonical/eigen1t"] = t_eigen / t_canonical;
  state.counters["gemv/eigen1t"] = t_eigen / t_gemv;
  state.counters["exact/eigen1t"] = t_eigen / t_exact;
}

#define W8A16_SHAPES Args({16, 2048, 4096})->Args({64, 1024, 2048})->Args({1, 4096, 4096})
BENCHMARK(BM_Canonical)->W8A16_SHAPES->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CanonicalOneThread)->Args({16, 2048, 4096})->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CanonicalModelPerElement)->Arg(4096)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Gemv)->W8A16_SHAPES->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Exact)
    ->Args({16, 2048, 4096})
    ->Args({64, 1024, 2048})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(2);
BENCHMARK(BM_EigenFp32SingleThread)->W8A16_SHAPES->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CompareToEigen)
    ->Args({16, 2048, 4096})
    ->Args({64, 1024, 2048})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(2);

}  // namespace

BENCHMARK_MAIN();
