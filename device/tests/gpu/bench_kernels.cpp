// SPDX-License-Identifier: MIT OR Apache-2.0
// device_gpu_bench [N K]: every kernel body timed at M = 1, 16, 64 (W8A16_BENCH_M) on (N, K) =
// (12288, 2048) against the memory floor, with the timing of device/bench/ (the one `w8a16check
// bench` uses).
//
// Each body is launched directly from a hand-made plan (so tc_rows can be timed at a K its launch
// predicate declines). Its output is first checked against the emulator's bytes; "b2b" is the median
// over graph replays of launches back to back, per launch (the kernel's own time); "single" the
// median of launches timed one by one (launch latency included). The weights rotate over copies
// that pass 512 MiB, so each launch streams W from HBM. Floor = bytes moved once (A, W, S read, C
// written) / the copy bandwidth measured at the start of this run; "x floor" uses b2b. Not a test:
// speed is reported, never asserted; the exit status is 1 when an output differs from the emulator,
// 2 when nothing could be timed. W8A16_BENCH_REPS shrinks the run (e.g. under a profiler).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "w8a16/bench/check.hpp"
#include "w8a16/bench/inputs.hpp"
#include "w8a16/bench/measure.hpp"
#include "w8a16/bench/method.hpp"
#include "w8a16/bench/timer.hpp"
#include "w8a16/device/bodies.hpp"
#include "w8a16/device/cuda_backend.hpp"
#include "w8a16/device/geometry.hpp"

namespace {
using namespace w8a16;
using device::Body;
using device::KernelId;

struct Variant {
  const char* label;
  KernelId kernel;
  Body body;
  std::uint32_t min_m, max_m;  // the rows at which the kernel runs this body (it picks the body from m, k)
  std::uint32_t max_k;
};

device::Plan make_plan(const device::KernelRegistry& reg, const Variant& v, const bench::DeviceOperands& ops,
                       std::uint32_t m, std::uint32_t n, std::uint32_t k) {
  device::Plan p;
  p.kernel = v.kernel;
  p.kernel_name = device::kernel_name(v.kernel);
  p.handle = reg.resolve(v.kernel);
  p.body = v.body;
  p.contract = device::body_contract(v.body);
  // The body's own launch (bodies.hpp); the Hopper tier's bodies also need their workspace and
  // tensor maps, which `w8a16check bench` provides: this bench times the others.
  const device::BodyLaunch l = device::body_launch(v.body, m, n, k, 1);
  p.block = {l.threads, 1, 1};
  p.grid = l.grid;
  p.dynamic_smem = l.smem;
  p.params = device::KernelParams{
      ops.a->address(), ops.w[0]->address(), ops.s[0]->address(), ops.c->address(), m, n, k, k, n};
  return p;
}

std::string check_text(const bench::Measurement& r) {
  if (!r.launched) return "NOT RUN";
  if (r.check.mismatches) return "MISMATCH " + std::to_string(r.check.mismatches) + ": " + r.check.first;
  if (!r.stable) return "UNSTABLE";
  return r.check.full ? "ok (all)" : "ok (" + std::to_string(r.check.compared) + ")";
}

}  // namespace

int main(int argc, char** argv) {
  bench::Shape sh{12288, 2048};
  std::string why;
  if (argc == 3) {
    if (!bench::parse_shape(std::string(argv[1]) + "x" + argv[2], &sh, &why)) {
      std::printf("device_gpu_bench: N K: %s\n", why.c_str());
      return 2;
    }
  } else if (argc != 1) {
    std::printf("usage: device_gpu_bench [N K]\n");
    return 2;
  }
  // W8A16_BENCH_M: the rows to time, comma-separated (default 1,16,64), e.g. one row count under ncu.
  std::vector<std::uint32_t> ms = {1, 16, 64};
  if (const char* m_env = std::getenv("W8A16_BENCH_M")) {
    ms.clear();
    for (const char* q = m_env; *q;) {
      char* end = nullptr;
      const unsigned long v = std::strtoul(q, &end, 10);
      if (end == q || v == 0 || v > 4096) {
        std::printf("device_gpu_bench: W8A16_BENCH_M=%s: want positive row counts up to 4096, comma-separated\n",
                    m_env);
        return 2;
      }
      ms.push_back(static_cast<std::uint32_t>(v));
      q = *end == ',' ? end + 1 : end;
    }
  }
  for (std::uint32_t m : ms)
    if (!bench::check_rows(m, sh, &why)) {
      std::printf("device_gpu_bench: %s\n", why.c_str());
      return 2;
    }
  // W8A16_BENCH_REPS: launches per timed replay, and one timed replay (a profiler sees few launches).
  bench::MeasureOptions b2b;  // the defaults of `w8a16check bench`
  int singles = 100;
  if (const char* reps_env = std::getenv("W8A16_BENCH_REPS")) {
    b2b.reps = std::max(1, std::atoi(reps_env));
    b2b.batches = 1;
    singles = b2b.reps;
  }
  constexpr double kRotateMib = 512;

  device::Status st;
  auto backend = device::CudaBackend::create(0, &st);
  if (!backend) {
    std::printf("device_gpu_bench: SKIPPED: no usable CUDA device: %s\n", st.message.c_str());
    return 0;
  }
  auto session = bench::GpuSession::open(0, &why);
  double copy_bw = 0;
  if (!session || !session->measure_copy_bandwidth(&copy_bw, &why)) {
    std::printf("device_gpu_bench: %s\n", why.c_str());
    return 2;
  }

  // The m32 kernel runs its skinny body at m <= 16 and k <= 5120 and its tile body otherwise: its
  // tile body is timed at m >= 17 only, its skinny body only at k <= 5120.
  const Variant variants[] = {
      {"w8a16_gemm_pipelined", KernelId::gemm_pipelined, Body::gemm128_tile, 1, 1u << 30, 1u << 30},
      {"w8a16_gemm_pipelined_m32 (skinny)", KernelId::gemm_pipelined_m32, Body::m32_skinny, 1, 16, device::kSkinnyMaxK},
      {"w8a16_gemm_pipelined_m32 (tile)", KernelId::gemm_pipelined_m32, Body::m32_tile, 17, 1u << 30, 1u << 30},
      {"w8a16_gemm_pipelined_m64", KernelId::gemm_pipelined_m64, Body::m64_tile, 1, 1u << 30, 1u << 30},
      {"w8a16_tc_rows", KernelId::tc_rows, Body::tc_rows_strip, 1, device::kTcRowsSmallMaxRows, 1u << 30},
      {"w8a16_tc_rows_m64", KernelId::tc_rows_m64, Body::tc_rows_strip, device::kTcRowsSmallMaxRows + 1,
       device::kTcRowsMaxRows, 1u << 30},
      {"w8a16_gemv_batch4_strided", KernelId::gemv_batch4_strided, Body::gemv_strip, 1, 4, 1u << 30},
      {"w8a16_gemv_batch16_strided", KernelId::gemv_batch16_strided, Body::gemv_strip, 1, 16, 1u << 30},
  };
  const std::uint32_t max_m = *std::max_element(ms.begin(), ms.end());
  const bench::HostInputs in = bench::make_host_inputs(max_m, sh, bench::inputs_seed(0xBE7C4, sh));
  bench::DeviceOperands ops;
  const int copies = bench::rotation_copies(bench::weight_bytes(sh), kRotateMib);
  if (!bench::upload_operands(*backend, in, sh, max_m, copies, &ops, &why)) {
    std::printf("device_gpu_bench: device buffers: %s\n", why.c_str());
    return 2;
  }
  // The emulator's bytes of each M, computed once for the bodies that share them.
  std::vector<std::unique_ptr<bench::Expected>> expected;
  for (std::uint32_t m : ms)
    expected.push_back(std::make_unique<bench::Expected>(in, sh, bench::choose_sample(m, sh, 1ull << 31)));

  const bench::DeviceProps& p = session->props();
  std::printf(
      "timing: %s, N=%u K=%u; copy bandwidth %.0f GB/s (read + write, this run); b2b: median of %d graph "
      "replays of %d launches back to back (at least one per copy); single: median of %d launches timed one "
      "by one; W and S rotating over %d copies (>= %.0f MiB)\n",
      p.name.c_str(), sh.n, sh.k, copy_bw * 1e-9, b2b.batches, std::max(b2b.reps, copies), singles, copies, kRotateMib);
  std::printf("%-36s %4s %10s %10s %10s %10s %8s  %s\n", "kernel (body)", "M", "single us", "b2b us", "floor us",
              "GB/s", "x floor", "check (elements)");
  bool any_mismatch = false;
  for (const Variant& v : variants) {
    for (std::size_t mi = 0; mi < ms.size(); ++mi) {
      const std::uint32_t m = ms[mi];
      if (m < v.min_m || m > v.max_m || sh.k > v.max_k) continue;
      const device::Plan plan = make_plan(backend->registry(), v, ops, m, sh.n, sh.k);
      if (!plan.handle) {
        std::printf("%-36s %4u  kernel missing from the module\n", v.label, m);
        continue;
      }
      const bench::Measurement r = bench::measure_plan(*backend, *session, plan, ops, *expected[mi], b2b);
      const bench::Timing single = r.launched ? bench::time_plan(*backend, *session, plan, ops,
                                                                 bench::MeasureOptions{1, singles, false})
                                              : bench::Timing{};
      if (!r.bytes_ok()) any_mismatch = true;
      const double bytes = bench::floor_bytes(sh, m), floor = bench::floor_us(bytes, copy_bw);
      if (!r.timing.ok || !single.ok) {
        std::printf("%-36s %4u %10s %10s %10.2f %10s %8s  %s  %s\n", v.label, m, "-", "-", floor, "-", "-",
                    check_text(r).c_str(), (r.error.empty() ? single.error : r.error).c_str());
        continue;
      }
      std::printf("%-36s %4u %10.2f %10.2f %10.2f %10.1f %8.2f  %s\n", v.label, m, single.median_us, r.timing.median_us,
                  floor, bytes / (r.timing.median_us * 1e-6) * 1e-9, r.timing.median_us / floor, check_text(r).c_str());
      std::fflush(stdout);
    }
  }
  std::printf("device_gpu_bench: %s\n", any_mismatch ? "SOME OUTPUT DIFFERS FROM THE EMULATOR OR A LAUNCH FAILED"
                                                     : "every timed output equals the emulator's bytes");
  return any_mismatch ? 1 : 0;
}
