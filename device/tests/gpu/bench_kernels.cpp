// SPDX-License-Identifier: MIT OR Apache-2.0
// A first timing of every kernel body at M = 1, 16, 64 (W8A16_BENCH_M) on (N, K) = (12288, 2048), against the memory floor.
//
// Each body is launched directly from a hand-made plan (so tc_rows can be timed at a K its launch
// predicate declines), with CUDA events on the default stream: after 10 warm-up launches, "single"
// is the median over 100 launches timed one by one (launch latency included), "b2b" the median over
// 30 batches of 10 back-to-back launches, per launch (closer to the kernel's own time). The weights
// rotate over 8 copies (8 x |W| beyond the 50 MB L2 at the default shape) so each launch streams W
// from HBM, as a real layer would. Floor = bytes moved once (A, W, S read, C written) / 4.27 TB/s;
// "x floor" uses b2b. Not a test: speed is reported, never asserted. Usage: device_gpu_bench [N K].
#include <cuda.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "w8a16/golden/case.hpp"
#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/device/cuda_backend.hpp"
#include "w8a16/device/geometry.hpp"

namespace {
using namespace w8a16;
using device::Body;
using device::KernelId;

constexpr double kFloorBytesPerSecond = 4.27e12;

#define CHECK_CU(expr)                                                                 \
  do {                                                                                 \
    CUresult r_ = (expr);                                                              \
    if (r_ != CUDA_SUCCESS) {                                                          \
      const char* s_ = nullptr;                                                        \
      cuGetErrorName(r_, &s_);                                                         \
      std::fprintf(stderr, "%s failed: %s\n", #expr, s_ ? s_ : "?");                   \
      std::exit(2);                                                                    \
    }                                                                                  \
  } while (0)

struct Variant {
  const char* label;
  KernelId kernel;
  Body body;
  std::uint32_t min_m, max_m;  // the rows at which the kernel runs this body (it picks the body from m, k)
  std::uint32_t max_k;
};

std::uint32_t div_up(std::uint32_t a, std::uint32_t b) { return (a + b - 1) / b; }

device::Plan make_plan(const device::KernelRegistry& reg, const Variant& v, std::uint32_t m, std::uint32_t n,
                       std::uint32_t k) {
  device::Plan p;
  p.kernel = v.kernel;
  p.kernel_name = device::kernel_name(v.kernel);
  p.handle = reg.resolve(v.kernel);
  p.body = v.body;
  p.block = {device::kThreadsPerCta, 1, 1};
  switch (v.body) {
    case Body::gemm128_tile:
      p.grid = {div_up(n, device::kGemm128TileCols), div_up(m, device::kGemm128TileRows), 1};
      p.dynamic_smem = device::kGemm128SmemBytes;
      break;
    case Body::m32_tile:
      p.grid = {div_up(n, device::kM32TileCols), div_up(m, device::kM32TileRows), 1};
      p.dynamic_smem = device::kM32SmemBytes;
      break;
    case Body::m32_skinny:
      p.grid = {div_up(n, device::kSkinnyTileCols), 1, 1};
      p.dynamic_smem = device::skinny_smem_bytes(k);
      break;
    case Body::m64_tile:
      p.grid = {div_up(n, device::kM64TileCols), div_up(m, device::kM64TileRows), 1};
      p.dynamic_smem = 0;
      break;
    case Body::tc_rows_strip:
      p.grid = {div_up(n, device::tc_rows_cols(m, n)), 1, 1};
      p.dynamic_smem = device::tc_rows_smem_bytes(m, n);
      break;
    case Body::gemv_strip:
      p.grid = {div_up(n, device::kGemvColsPerCta), 1, 1};
      p.dynamic_smem = 0;
      break;
    case Body::wgmma_units:  // needs its workspace and tensor maps: `w8a16check bench` times it
      break;
  }
  p.params.m = m;
  p.params.n = n;
  p.params.k = k;
  p.params.a_row_stride = k;
  p.params.c_row_stride = n;
  return p;
}
}  // namespace

int main(int argc, char** argv) {
  const std::uint32_t n = argc > 1 ? std::atoi(argv[1]) : 12288, k = argc > 2 ? std::atoi(argv[2]) : 2048;
  device::Status st;
  auto backend = device::CudaBackend::create(0, &st);
  if (!backend) {
    std::printf("bench skipped: no usable CUDA device: %s\n", st.message.c_str());
    return 0;
  }
  CUdevice dev;
  CUcontext ctx;
  CHECK_CU(cuDeviceGet(&dev, 0));
  CHECK_CU(cuDevicePrimaryCtxRetain(&ctx, dev));
  CHECK_CU(cuCtxPushCurrent(ctx));

  // The m32 kernel runs its skinny body at m <= 16 and k <= 5120 and its tile body otherwise: its
  // tile body is timed at m = 64 only (grid.y 2), its skinny body only at k <= 5120.
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
  // W8A16_BENCH_REPS / W8A16_BENCH_WARMUP shrink the run, e.g. under a profiler.
  const char* reps_env = std::getenv("W8A16_BENCH_REPS");
  const char* warm_env = std::getenv("W8A16_BENCH_WARMUP");
  const int kCopies = 8, kWarmup = warm_env ? std::atoi(warm_env) : 10, kReps = reps_env ? std::max(1, std::atoi(reps_env)) : 100;
  const int kBatch = 10, kBatches = reps_env ? 1 : 30;
  // W8A16_BENCH_M: the rows to time, comma-separated (default 1,16,64), e.g. one row count under ncu.
  std::vector<std::uint32_t> ms = {1, 16, 64};
  if (const char* m_env = std::getenv("W8A16_BENCH_M")) {
    ms.clear();
    for (const char* q = m_env; *q;) {
      char* end = nullptr;
      const unsigned long v = std::strtoul(q, &end, 10);
      if (end == q || v == 0 || v > 4096) {
        std::printf("bench: W8A16_BENCH_M=%s: want positive row counts up to 4096, comma-separated\n", m_env);
        return 2;
      }
      ms.push_back(static_cast<std::uint32_t>(v));
      q = *end == ',' ? end + 1 : end;
    }
  }
  const std::uint32_t max_m = *std::max_element(ms.begin(), ms.end());

  golden::Case c;
  c.entry = golden::EntryPoint::gemm_pipelined;
  c.m = max_m;
  c.n = n;
  c.k = k;
  c.a_row_stride = k;
  c.c_row_stride = n;
  c.dist = golden::Distribution::activation_like;
  c.seed = 0xBE7C4;
  golden::CaseInputs in;
  std::string gen_error;
  if (!golden::regenerate_inputs(c, &in, &gen_error)) {
    std::printf("bench: inputs: %s\n", gen_error.c_str());
    return 2;
  }
  auto a = backend->allocate(in.a_bits.size() * 2, &st);
  auto s = backend->allocate(in.s_f32.size() * 4, &st);
  auto out = backend->allocate(static_cast<std::size_t>(max_m) * n * 2, &st);
  std::vector<std::unique_ptr<device::Buffer>> w;
  for (int i = 0; i < kCopies; ++i) {
    w.push_back(backend->allocate(in.w_e4m3.size(), &st));
    if (!w.back() || !w.back()->upload(in.w_e4m3.data(), in.w_e4m3.size()).ok()) {
      std::printf("bench: weight buffer %d: %s\n", i, st.message.c_str());
      return 2;
    }
  }
  if (!a || !s || !out || !a->upload(in.a_bits.data(), in.a_bits.size() * 2).ok() || !s->upload(in.s_f32.data(), in.s_f32.size() * 4).ok()) {
    std::printf("bench: allocation or upload failed: %s\n", st.message.c_str());
    return 2;
  }
  CUevent ev0, ev1;
  CHECK_CU(cuEventCreate(&ev0, CU_EVENT_DEFAULT));
  CHECK_CU(cuEventCreate(&ev1, CU_EVENT_DEFAULT));

  std::printf("timing: N=%u K=%u; single: median of %d launches after %d warm-up; b2b: median of %d batches of %d; "
              "W rotating over %d copies\n", n, k, kReps, kWarmup, kBatches, kBatch, kCopies);
  std::printf("%-36s %4s %10s %10s %10s %10s %8s\n", "kernel (body)", "M", "single us", "b2b us", "floor us", "GB/s",
              "x floor");
  for (const Variant& v : variants) {
    for (std::uint32_t m : ms) {
      if (m < v.min_m || m > v.max_m || k > v.max_k) continue;
      device::Plan p = make_plan(backend->registry(), v, m, n, k);
      if (!p.handle) {
        std::printf("%-36s %4u  kernel missing from the module\n", v.label, m);
        continue;
      }
      p.params.input = a->address();
      p.params.block_scale = s->address();
      p.params.output = out->address();
      // One by one: events around each launch.
      std::vector<float> single, batched;
      for (int it = 0; it < kWarmup + kReps; ++it) {
        p.params.weight = w[it % kCopies]->address();
        CHECK_CU(cuEventRecord(ev0, nullptr));
        const device::Status ls = backend->execute(p);
        CHECK_CU(cuEventRecord(ev1, nullptr));
        if (!ls.ok()) {
          std::printf("%s: launch failed: %s\n", v.label, ls.message.c_str());
          return 2;
        }
        CHECK_CU(cuEventSynchronize(ev1));
        float t = 0;
        CHECK_CU(cuEventElapsedTime(&t, ev0, ev1));
        if (it >= kWarmup) single.push_back(t);
      }
      // Back to back: kBatch launches between two events.
      for (int b = 0; b < kBatches; ++b) {
        CHECK_CU(cuEventRecord(ev0, nullptr));
        for (int i = 0; i < kBatch; ++i) {
          p.params.weight = w[(b * kBatch + i) % kCopies]->address();
          if (const device::Status ls = backend->execute(p); !ls.ok()) {
            std::printf("%s: launch failed: %s\n", v.label, ls.message.c_str());
            return 2;
          }
        }
        CHECK_CU(cuEventRecord(ev1, nullptr));
        CHECK_CU(cuEventSynchronize(ev1));
        float t = 0;
        CHECK_CU(cuEventElapsedTime(&t, ev0, ev1));
        batched.push_back(t / kBatch);
      }
      CHECK_CU(cuCtxSynchronize());
      std::sort(single.begin(), single.end());
      std::sort(batched.begin(), batched.end());
      const double single_s = single[single.size() / 2] * 1e-3;
      const double median_s = batched[batched.size() / 2] * 1e-3;
      const double bytes = static_cast<double>(n) * k + static_cast<double>(div_up(n, 128)) * (k / 128) * 4 +
                           static_cast<double>(m) * k * 2 + static_cast<double>(m) * n * 2;
      const double floor_s = bytes / kFloorBytesPerSecond;
      std::printf("%-36s %4u %10.2f %10.2f %10.2f %10.1f %8.2f\n", v.label, m, single_s * 1e6, median_s * 1e6,
                  floor_s * 1e6, bytes / median_s * 1e-9, median_s / floor_s);
    }
  }
  cuEventDestroy(ev0);
  cuEventDestroy(ev1);
  CUcontext ignored;
  cuCtxPopCurrent(&ignored);
  cuDevicePrimaryCtxRelease(dev);
  return 0;
}
