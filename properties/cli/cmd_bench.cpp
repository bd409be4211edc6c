// SPDX-License-Identifier: MIT OR Apache-2.0
// `w8a16check bench`: times the dispatched entry points on the GPU against the memory floor and cuBLAS (issue 9).
//
// For each (N, K) and M: the output of one launch is compared with the emulator (all of it for small
// cases, else a subsample of rows and 128-column scale blocks), then the launch is timed with CUDA
// events: a CUDA graph of --reps launches back to back (so host launch gaps do not count), replayed
// --batches times, the median replay divided by --reps. Every launch reads the next of several
// copies of W and S whose total passes --rotate-mib (default 512 MiB, ~8x the H200's 60 MB L2): each
// launch streams its weights from HBM, as a real layer does. The memory floor is the bytes moved
// once (W, S, A read; C written) over the device-to-device copy bandwidth measured at the start of
// the same run; cuBLAS is cublasLt's BF16 GEMM (top heuristic) on W*S dequantized to BF16, with its
// own rotated copies, timed the same way. Speed is reported, never asserted; the exit code is 1 only
// when an output differs from the emulator (or cuBLAS's from a float64 reference), 2 when nothing ran.
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_cases.hpp"
#include "command.hpp"
#include "gpu_identity.hpp"
#include "options.hpp"
#include "report_files.hpp"
#include "w8a16/golden/files.hpp"

#if W8A16_HAVE_CUDA
#include <cublasLt.h>
#include <cuda.h>
#include <dlfcn.h>

#include "w8a16/device/api.hpp"
#include "w8a16/device/cuda_backend.hpp"
#include "w8a16/reference/bf16.hpp"
#include "w8a16/reference/contract.hpp"
#include "w8a16/reference/e4m3fn.hpp"
#include "w8a16/reference/parallel.hpp"
#endif

namespace w8a16::cli {
namespace {

struct BenchArgs {
  std::vector<std::string> shapes;  // "NxK"
  std::vector<std::uint32_t> ms;
  int reps = 20;      // launches per timed graph (back to back)
  int batches = 15;   // timed replays; the median is reported
  double rotate_mib = 512;
  std::uint64_t check_macs = 1ull << 31;  // M*N*K above which the emulator check subsamples
  int device = 0;
  std::uint64_t seed = 0x9BE7C4;
  bool no_cublas = false;
  bool no_graph = false;
  std::string module;  // --module
  std::shared_ptr<Report> json_report = std::make_shared<Report>();  // --json (path in json_report->path)
  WorkLimits limits;   // --max-bytes: the host buffers of the largest shape
};

struct Shape {
  std::uint32_t n = 0, k = 0;
};

const char* const kDefaultShapes[] = {"12288x2048", "2048x4096", "10240x5120", "51200x5120", "5120x25600"};
const std::uint32_t kDefaultMs[] = {1, 2, 4, 8, 16, 32, 48, 64, 128, 512};

// "NxK": N >= 1, K a positive multiple of 128 (one scale block per K-step), N*K < 2^32
// (the kernels' 32-bit offsets).
bool parse_shape(const std::string& text, Shape* out, std::string* why) {
  const std::size_t sep = text.find('x');
  char* end = nullptr;
  if (sep == std::string::npos || sep == 0 || sep + 1 == text.size()) {
    *why = "'" + text + "' is not NxK (e.g. 12288x2048)";
    return false;
  }
  const std::string ns = text.substr(0, sep), ks = text.substr(sep + 1);
  if (ns.find_first_not_of("0123456789") != std::string::npos || ks.find_first_not_of("0123456789") != std::string::npos ||
      ns.size() > 9 || ks.size() > 9) {
    *why = "'" + text + "' is not NxK with decimal N and K";
    return false;
  }
  const unsigned long n = std::strtoul(ns.c_str(), &end, 10), k = std::strtoul(ks.c_str(), &end, 10);
  if (n == 0 || k == 0 || k % 128 != 0) {
    *why = "'" + text + "': N must be >= 1 and K a positive multiple of 128";
    return false;
  }
  if (static_cast<std::uint64_t>(n) * k > 0xFFFFFFFFull) {
    *why = "'" + text + "': N*K must stay below 2^32 (the kernels' 32-bit offsets)";
    return false;
  }
  *out = Shape{static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(k)};
  return true;
}

// Checks every option before anything touches a GPU, so a typo costs no device time.
bool resolve_args(BenchArgs* a, std::vector<Shape>* shapes, std::string* why) {
  if (a->shapes.empty()) a->shapes.assign(std::begin(kDefaultShapes), std::end(kDefaultShapes));
  if (a->ms.empty()) a->ms.assign(std::begin(kDefaultMs), std::end(kDefaultMs));
  for (const std::string& s : a->shapes) {
    Shape sh;
    if (!parse_shape(s, &sh, why)) return false;
    shapes->push_back(sh);
  }
  for (std::uint32_t m : a->ms)
    if (m == 0 || m > 65536) {
      *why = "--m " + std::to_string(m) + ": must be in 1..65536";
      return false;
    }
  for (const Shape& sh : *shapes)
    for (std::uint32_t m : a->ms)
      if (static_cast<std::uint64_t>(m) * sh.k > 0xFFFFFFFFull || static_cast<std::uint64_t>(m) * sh.n > 0xFFFFFFFFull) {
        *why = "M=" + std::to_string(m) + " with N=" + std::to_string(sh.n) + ", K=" + std::to_string(sh.k) +
               ": M*K and M*N must stay below 2^32";
        return false;
      }
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
    cost.host_bytes = 2 * std::uint64_t{max_m} * sh.k + 3 * w + 4 * ((sh.n + 127) / 128) * (sh.k / 128) + 8 * c +
                      (std::uint64_t{64} << 20);
    const std::string over = over_limits("--shapes " + std::to_string(sh.n) + "x" + std::to_string(sh.k) + " at M=" +
                                             std::to_string(max_m),
                                         cost, a->limits);
    if (!over.empty()) {
      *why = over.substr(0, over.size() - 1) + "; nothing was run";
      return false;
    }
  }
  return true;
}

#if W8A16_HAVE_CUDA

#define W8A16_BENCH_STR2(x) #x
#define W8A16_BENCH_STR(x) W8A16_BENCH_STR2(x)  // expands cuda.h's versioned names (cuEventElapsedTime_v2, ...)

// The driver calls the bench needs beyond the backend's (events, streams, graphs, a device copy),
// loaded the same way as the backend's table (device/src/cuda_driver.hpp): dlopen, so the binary
// starts on machines without a driver. The backend has already loaded and initialised it.
#define W8A16_BENCH_DRIVER_FUNCTIONS(X)                                                                     \
  X(cuGetErrorName) X(cuDeviceGet) X(cuDeviceGetName) X(cuDeviceGetAttribute) X(cuDriverGetVersion)         \
  X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) X(cuCtxPushCurrent) X(cuCtxPopCurrent)           \
  X(cuCtxSynchronize) X(cuStreamCreate) X(cuStreamDestroy) X(cuEventCreate) X(cuEventDestroy)               \
  X(cuEventRecord) X(cuEventSynchronize) X(cuEventElapsedTime) X(cuMemcpyDtoDAsync) X(cuStreamBeginCapture) \
  X(cuStreamEndCapture) X(cuGraphInstantiate) X(cuGraphLaunch) X(cuGraphExecDestroy) X(cuGraphDestroy)

struct Drv {
#define W8A16_BENCH_MEMBER(name) decltype(&::name) name = nullptr;
  W8A16_BENCH_DRIVER_FUNCTIONS(W8A16_BENCH_MEMBER)
#undef W8A16_BENCH_MEMBER
};

bool load_driver(Drv* d, std::string* why) {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    *why = "dlopen(libcuda.so.1) failed";
    return false;
  }
#define W8A16_BENCH_LOAD(name)                                                         \
  d->name = reinterpret_cast<decltype(&::name)>(dlsym(lib, W8A16_BENCH_STR(name)));    \
  if (!d->name) {                                                                      \
    *why = std::string("the CUDA driver lacks ") + W8A16_BENCH_STR(name);              \
    return false;                                                                      \
  }
  W8A16_BENCH_DRIVER_FUNCTIONS(W8A16_BENCH_LOAD)
#undef W8A16_BENCH_LOAD
  return true;
}

std::string cu_text(const Drv& d, CUresult r) {
  const char* name = nullptr;
  d.cuGetErrorName(r, &name);
  return std::string(name ? name : "CUDA error") + " (" + std::to_string(static_cast<int>(r)) + ")";
}

// cuBLASLt, loaded at run time for the same reason as the driver: the GPU machine has the toolkit's
// libraries in /usr/local/cuda/lib64 but maybe not on the loader's path, and this machine none to run.
#define W8A16_BENCH_LT_FUNCTIONS(X)                                                                   \
  X(cublasLtCreate) X(cublasLtDestroy) X(cublasLtGetVersion) X(cublasLtGetStatusString)              \
  X(cublasLtMatmulDescCreate) X(cublasLtMatmulDescDestroy) X(cublasLtMatmulDescSetAttribute)         \
  X(cublasLtMatrixLayoutCreate) X(cublasLtMatrixLayoutDestroy) X(cublasLtMatmulPreferenceCreate)     \
  X(cublasLtMatmulPreferenceDestroy) X(cublasLtMatmulPreferenceSetAttribute)                         \
  X(cublasLtMatmulAlgoGetHeuristic) X(cublasLtMatmul)

struct Lt {
#define W8A16_BENCH_MEMBER(name) decltype(&::name) name = nullptr;
  W8A16_BENCH_LT_FUNCTIONS(W8A16_BENCH_MEMBER)
#undef W8A16_BENCH_MEMBER
  std::string path;
};

bool load_cublaslt(Lt* lt, std::string* why) {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("W8A16_CUBLASLT")) candidates.push_back(env);
  for (const char* c : {"libcublasLt.so.13", "/usr/local/cuda/lib64/libcublasLt.so.13", "libcublasLt.so",
                        "/usr/local/cuda/lib64/libcublasLt.so"})
    candidates.push_back(c);
  void* lib = nullptr;
  std::string tried;
  for (const std::string& c : candidates) {
    lib = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib) {
      lt->path = c;
      break;
    }
    const char* e = dlerror();
    tried += (tried.empty() ? "" : "; ") + std::string(e ? e : c.c_str());
  }
  if (!lib) {
    *why = "cuBLASLt could not be loaded (set W8A16_CUBLASLT to its path): " + tried;
    return false;
  }
#define W8A16_BENCH_LOAD(name)                                              \
  lt->name = reinterpret_cast<decltype(&::name)>(dlsym(lib, #name));        \
  if (!lt->name) {                                                          \
    *why = lt->path + " lacks " #name;                                      \
    return false;                                                           \
  }
  W8A16_BENCH_LT_FUNCTIONS(W8A16_BENCH_LOAD)
#undef W8A16_BENCH_LOAD
  return true;
}

// ---- inputs ----------------------------------------------------------------------------
std::uint64_t splitmix(std::uint64_t* s) {
  std::uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Random, never all zero (zeros can run faster than real data and hide unwritten outputs): A uniform
// in (-2, 2) as BF16; W every finite E4M3 code (NaN codes moved to the largest finite ones); S
// positive in [2^-8, 2^-4). Chunks draw from their own seeds, so the bytes do not depend on threads.
struct HostInputs {
  std::vector<std::uint16_t> a;  // [max_m][k]
  std::vector<std::uint8_t> w;   // [n][k]
  std::vector<float> s;          // [ceil(n/128)][k/128]
};

HostInputs make_host_inputs(std::uint32_t max_m, Shape sh, std::uint64_t seed) {
  HostInputs in;
  in.a.resize(static_cast<std::size_t>(max_m) * sh.k);
  in.w.resize(static_cast<std::size_t>(sh.n) * sh.k);
  in.s.resize(static_cast<std::size_t>((sh.n + 127) / 128) * (sh.k / 128));
  constexpr std::size_t kChunk = 1u << 20;
  const auto chunks = [](std::size_t size) { return static_cast<std::uint32_t>((size + kChunk - 1) / kChunk); };
  ref::parallel_for(chunks(in.w.size()), 0, [&](std::uint32_t c) {
    std::uint64_t st = seed ^ (0x57ull << 56) ^ (static_cast<std::uint64_t>(c) * 0xD1B54A32D192ED03ull);
    const std::size_t end = std::min(in.w.size(), (c + 1) * kChunk);
    for (std::size_t i = c * kChunk; i < end; i += 8) {
      std::uint64_t r = splitmix(&st);
      for (std::size_t j = i; j < std::min(end, i + 8); ++j, r >>= 8) {
        std::uint8_t code = static_cast<std::uint8_t>(r);
        if (ref::e4m3fn_is_nan(code)) code = static_cast<std::uint8_t>(code - 1);  // 0x7F -> 0x7E (448)
        in.w[j] = code;
      }
    }
  });
  ref::parallel_for(chunks(in.a.size()), 0, [&](std::uint32_t c) {
    std::uint64_t st = seed ^ (0xA1ull << 56) ^ (static_cast<std::uint64_t>(c) * 0xD1B54A32D192ED03ull);
    const std::size_t end = std::min(in.a.size(), (c + 1) * kChunk);
    for (std::size_t i = c * kChunk; i < end; ++i) {
      const float v = static_cast<float>(static_cast<double>(splitmix(&st) >> 11) * 0x1.0p-53 * 4.0 - 2.0);
      std::uint32_t bits;
      std::memcpy(&bits, &v, sizeof bits);
      in.a[i] = ref::f32_bits_to_bf16_rne(bits);
    }
  });
  std::uint64_t st = seed ^ (0x5Cull << 56);
  for (float& x : in.s) x = static_cast<float>(std::ldexp(1.0 + static_cast<double>(splitmix(&st) >> 11) * 0x1.0p-53, -8 + static_cast<int>(splitmix(&st) % 4)));
  return in;
}

// W * S rounded to BF16 [n][k]: the same weights in the form cuBLAS takes.
std::vector<std::uint16_t> dequantize(const HostInputs& in, Shape sh) {
  std::vector<std::uint16_t> out(static_cast<std::size_t>(sh.n) * sh.k);
  const std::uint32_t steps = sh.k / 128;
  ref::parallel_for(sh.n, 0, [&](std::uint32_t n) {
    for (std::uint32_t k = 0; k < sh.k; ++k) {
      const float v = ref::e4m3fn_to_f32(in.w[static_cast<std::size_t>(n) * sh.k + k]) *
                      in.s[static_cast<std::size_t>(n / 128) * steps + k / 128];
      std::uint32_t bits;
      std::memcpy(&bits, &v, sizeof bits);
      out[static_cast<std::size_t>(n) * sh.k + k] = ref::f32_bits_to_bf16_rne(bits);
    }
  });
  return out;
}

// ---- which outputs are checked ---------------------------------------------------------
struct Range {
  std::uint32_t begin = 0, end = 0;
};

// Up to three ranges of about `width` (first, middle, last), `align`-aligned starts, merged when they
// touch. The last one always ends at `extent` (a partial last block is covered too).
std::vector<Range> sample_ranges(std::uint32_t extent, std::uint32_t width, std::uint32_t align) {
  std::vector<Range> r;
  auto add = [&](std::uint32_t b, std::uint32_t e) {
    b = b / align * align;
    r.push_back({b, std::min(extent, e == 0 ? b + width : e)});
  };
  add(0, 0);
  add(extent / 2, 0);
  add(extent > width ? extent - width : 0, extent);
  std::sort(r.begin(), r.end(), [](Range x, Range y) { return x.begin < y.begin; });
  std::vector<Range> merged;
  for (Range x : r) {
    if (!merged.empty() && x.begin <= merged.back().end) merged.back().end = std::max(merged.back().end, x.end);
    else merged.push_back(x);
  }
  return merged;
}

// The checked outputs: rows x column blocks. Columns start at multiples of 128, so a block's view of
// S starts at a row of scales and the emulator sees exactly the operands the kernel reads.
struct Sample {
  std::vector<Range> rows, cols;
  bool full = false;
  std::uint64_t elements() const {
    std::uint64_t r = 0, c = 0;
    for (Range x : rows) r += x.end - x.begin;
    for (Range x : cols) c += x.end - x.begin;
    return r * c;
  }
};

Sample choose_sample(std::uint32_t m, Shape sh, std::uint64_t check_macs) {
  Sample s;
  if (static_cast<std::uint64_t>(m) * sh.n * sh.k <= check_macs) {
    s.full = true;
    s.rows = {{0, m}};
    s.cols = {{0, sh.n}};
    return s;
  }
  // 8 rows at the top, middle and bottom (the first and last row tiles of every body), 128 columns
  // (one scale row) at the left, middle and right.
  s.rows = sample_ranges(m, 8, 1);
  s.cols = sample_ranges(sh.n, 128, 128);
  return s;
}

// The emulator's C over the sample, row-major over (sampled rows) x (sampled columns). A full check
// is one call (the emulator spreads N over the cores); a subsample is split into (row range, 16
// columns) pieces run one per core, since one 128-column block alone would keep only 8 cores busy.
// A piece never crosses a 128-column boundary, so its view of S starts at its own row of scales.
std::vector<std::uint16_t> expected_sample(const HostInputs& in, Shape sh, const Sample& smp, device::Contract contract) {
  std::uint32_t cols = 0;
  for (Range c : smp.cols) cols += c.end - c.begin;
  std::uint32_t rows = 0;
  for (Range r : smp.rows) rows += r.end - r.begin;
  std::vector<std::uint16_t> out(static_cast<std::size_t>(rows) * cols);
  const std::uint32_t steps = sh.k / 128;
  struct Piece {
    std::uint32_t r0, rows, c0, cols, out_row, out_col;
  };
  std::vector<Piece> pieces;
  const std::uint32_t piece_cols = smp.full ? sh.n : 16;
  std::uint32_t out_row = 0;
  for (Range r : smp.rows) {
    std::uint32_t out_col = 0;
    for (Range c : smp.cols)
      for (std::uint32_t c0 = c.begin; c0 < c.end; c0 += piece_cols) {
        const std::uint32_t w = std::min(piece_cols, c.end - c0);
        pieces.push_back({r.begin, r.end - r.begin, c0, w, out_row, out_col});
        out_col += w;
      }
    out_row += r.end - r.begin;
  }
  auto run = [&](const Piece& p, unsigned threads) {
    ref::GemmView v;
    v.a = in.a.data() + static_cast<std::size_t>(p.r0) * sh.k;
    v.a_row_stride = sh.k;
    v.w = in.w.data() + static_cast<std::size_t>(p.c0) * sh.k;
    v.s = in.s.data() + static_cast<std::size_t>(p.c0 / 128) * steps;
    v.m = p.rows;
    v.n = p.cols;
    v.k = sh.k;
    std::uint16_t* dst = out.data() + static_cast<std::size_t>(p.out_row) * cols + p.out_col;
    if (contract == device::Contract::gemv) ref::gemm_gemv(v, dst, cols, threads);
    else ref::gemm_canonical(v, ref::Arch::sm90, dst, cols, threads);
  };
  if (smp.full) {
    run(pieces.front(), 0);
  } else {
    ref::parallel_for(static_cast<std::uint32_t>(pieces.size()), 0, [&](std::uint32_t i) { run(pieces[i], 1); });
  }
  return out;
}

struct Check {
  std::uint64_t compared = 0, mismatches = 0;
  std::string first;  // "C[r][c] = 0x.... (emulator 0x....)"
  bool full = false;
};

Check compare_sample(const std::vector<std::uint16_t>& got, std::uint32_t n, const Sample& smp,
                     const std::vector<std::uint16_t>& want) {
  Check ck;
  ck.full = smp.full;
  std::size_t i = 0;
  for (Range r : smp.rows)
    for (std::uint32_t row = r.begin; row < r.end; ++row)
      for (Range c : smp.cols)
        for (std::uint32_t col = c.begin; col < c.end; ++col, ++i) {
          const std::uint16_t g = got[static_cast<std::size_t>(row) * n + col];
          ++ck.compared;
          if (g != want[i]) {
            if (ck.mismatches++ == 0) {
              char buf[96];
              std::snprintf(buf, sizeof buf, "C[%u][%u] = 0x%04x (emulator 0x%04x)", row, col, g, want[i]);
              ck.first = buf;
            }
          }
        }
  return ck;
}

// cuBLAS's output over the same sample against float64 sums of the BF16 operands it was given:
// ||out - ref|| / ||ref||, which BF16 output rounding puts near 2^-9; any NaN fails.
double cublas_rel_error(const std::vector<std::uint16_t>& got, const HostInputs& in,
                        const std::vector<std::uint16_t>& wdq, Shape sh, const Sample& smp) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> idx;
  for (Range r : smp.rows)
    for (std::uint32_t row = r.begin; row < r.end; ++row)
      for (Range c : smp.cols)
        for (std::uint32_t col = c.begin; col < c.end; ++col) idx.push_back({row, col});
  std::vector<double> err2(idx.size()), ref2(idx.size());
  const auto bf = [](std::uint16_t b) {
    const std::uint32_t bits = ref::bf16_bits_to_f32_bits(b);
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return static_cast<double>(f);
  };
  ref::parallel_for(static_cast<std::uint32_t>(idx.size()), 0, [&](std::uint32_t i) {
    const auto [row, col] = idx[i];
    const std::uint16_t* a = in.a.data() + static_cast<std::size_t>(row) * sh.k;
    const std::uint16_t* w = wdq.data() + static_cast<std::size_t>(col) * sh.k;
    double acc = 0;
    for (std::uint32_t k = 0; k < sh.k; ++k) acc += bf(a[k]) * bf(w[k]);
    const double g = bf(got[static_cast<std::size_t>(row) * sh.n + col]);
    err2[i] = std::isnan(g) ? INFINITY : (g - acc) * (g - acc);
    ref2[i] = acc * acc;
  });
  double e = 0, r = 0;
  for (std::size_t i = 0; i < idx.size(); ++i) {
    e += err2[i];
    r += ref2[i];
  }
  return r > 0 ? std::sqrt(e / r) : (e > 0 ? INFINITY : 0);
}

// ---- timing ----------------------------------------------------------------------------
struct Timing {
  bool ok = false;
  std::string error;
  double median_us = 0, min_us = 0, max_us = 0;
  bool graph = false;  // replays of a captured graph (else launches issued one by one from the host)
};

// `launch(i, stream)` issues launch i (copy i % copies) on `stream` and returns "" or the error.
// Graph: `reps` launches captured once, replayed once to warm up, then `batches` timed replays.
// Direct (when capture fails or --no-graph): `reps` launches per timed batch, after one warm-up batch.
template <class Launch>
Timing time_launches(const Drv& d, CUstream stream, CUevent e0, CUevent e1, int reps, int batches, bool try_graph,
                     Launch&& launch) {
  Timing t;
  CUgraphExec exec = nullptr;
  if (try_graph) {
    CUgraph graph = nullptr;
    std::string launch_error;
    if (d.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_RELAXED) == CUDA_SUCCESS) {
      for (int i = 0; i < reps && launch_error.empty(); ++i) launch_error = launch(i, stream);
      const CUresult end = d.cuStreamEndCapture(stream, &graph);
      if (end == CUDA_SUCCESS && launch_error.empty() && graph &&
          d.cuGraphInstantiate(&exec, graph, 0) != CUDA_SUCCESS)
        exec = nullptr;
      if (graph) d.cuGraphDestroy(graph);
    }
    // A failed capture can leave an error behind on the stream's context: start clean.
    d.cuCtxSynchronize();
  }
  std::vector<float> per_launch;
  auto run_batch = [&](int b) -> std::string {
    if (exec) {
      if (CUresult r = d.cuGraphLaunch(exec, stream); r != CUDA_SUCCESS) return "cuGraphLaunch: " + cu_text(d, r);
      return "";
    }
    for (int i = 0; i < reps; ++i)
      if (std::string e = launch(b * reps + i, stream); !e.empty()) return e;
    return "";
  };
  std::string err = run_batch(0);  // warm-up (and first graph replay)
  if (err.empty())
    if (CUresult r = d.cuCtxSynchronize(); r != CUDA_SUCCESS) err = "warm-up: " + cu_text(d, r);
  for (int b = 0; b < batches && err.empty(); ++b) {
    if (CUresult r = d.cuEventRecord(e0, stream); r != CUDA_SUCCESS) err = "cuEventRecord: " + cu_text(d, r);
    if (err.empty()) err = run_batch(b + 1);
    if (err.empty())
      if (CUresult r = d.cuEventRecord(e1, stream); r != CUDA_SUCCESS) err = "cuEventRecord: " + cu_text(d, r);
    if (err.empty())
      if (CUresult r = d.cuEventSynchronize(e1); r != CUDA_SUCCESS) err = "cuEventSynchronize: " + cu_text(d, r);
    float ms = 0;
    if (err.empty())
      if (CUresult r = d.cuEventElapsedTime(&ms, e0, e1); r != CUDA_SUCCESS) err = "cuEventElapsedTime: " + cu_text(d, r);
    if (err.empty()) per_launch.push_back(ms * 1000.0f / static_cast<float>(reps));
  }
  if (err.empty())
    if (CUresult r = d.cuCtxSynchronize(); r != CUDA_SUCCESS) err = "after timing: " + cu_text(d, r);
  t.graph = exec != nullptr;
  if (exec) d.cuGraphExecDestroy(exec);
  if (!err.empty()) {
    t.error = err;
    return t;
  }
  std::sort(per_launch.begin(), per_launch.end());
  t.ok = true;
  t.median_us = per_launch[per_launch.size() / 2];
  t.min_us = per_launch.front();
  t.max_us = per_launch.back();
  return t;
}

// ---- one row of the table --------------------------------------------------------------
struct Row {
  Shape sh;
  std::uint32_t m = 0;
  std::string entry, kernel, body;
  Timing ours, cublas;
  double bytes = 0, floor_us = 0;
  Check check;
  bool launched = false;
  bool stable = false;  // C after timing == C that was checked
  std::string error;
  double cublas_rel_err = -1;
  bool cublas_ok = false;
  std::string cublas_error;
};

double floor_bytes(Shape sh, std::uint32_t m) {
  return static_cast<double>(sh.n) * sh.k + 4.0 * ((sh.n + 127) / 128) * (sh.k / 128) + 2.0 * m * sh.k +
         2.0 * m * sh.n;
}

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

// Everything device-side for one shape: the rotated copies, A, C, and cuBLAS's copies.
struct DeviceShape {
  std::vector<std::unique_ptr<device::Buffer>> w, s, wdq;
  std::unique_ptr<device::Buffer> a, c, c_cublas;
};

class CublasRunner {
 public:
  CublasRunner(const Lt& lt, device::Backend& backend) : lt_(lt) {
    ok_ = lt_.cublasLtCreate(&handle_) == CUBLAS_STATUS_SUCCESS;
    if (!ok_) {
      error_ = "cublasLtCreate failed";
      return;
    }
    device::Status st;
    workspace_ = backend.allocate(kWorkspaceBytes, &st);
    if (!workspace_) {
      ok_ = false;
      error_ = "workspace: " + st.message;
    }
  }
  ~CublasRunner() {
    release();
    if (handle_) lt_.cublasLtDestroy(handle_);
  }
  bool ok() const { return ok_; }
  const std::string& error() const { return error_; }

  // C[M][N] = A[M][K] * W[N][K]^T in cuBLAS's column-major terms: D (N x M, ld N) = W^T' ... i.e.
  // op(A) = W (stored K x N column-major, transposed), op(B) = A (K x M column-major): the "TN" case.
  std::string prepare(std::uint32_t m, Shape sh) {
    release();
    auto check = [&](cublasStatus_t s, const char* what) -> std::string {
      return s == CUBLAS_STATUS_SUCCESS ? "" : std::string(what) + ": " + lt_.cublasLtGetStatusString(s);
    };
    std::string e = check(lt_.cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F), "MatmulDescCreate");
    const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    if (e.empty())
      e = check(lt_.cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta), "TRANSA");
    if (e.empty())
      e = check(lt_.cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb), "TRANSB");
    if (e.empty()) e = check(lt_.cublasLtMatrixLayoutCreate(&la_, CUDA_R_16BF, sh.k, sh.n, sh.k), "layout W");
    if (e.empty()) e = check(lt_.cublasLtMatrixLayoutCreate(&lb_, CUDA_R_16BF, sh.k, m, sh.k), "layout A");
    if (e.empty()) e = check(lt_.cublasLtMatrixLayoutCreate(&lc_, CUDA_R_16BF, sh.n, m, sh.n), "layout C");
    if (e.empty()) e = check(lt_.cublasLtMatmulPreferenceCreate(&pref_), "PreferenceCreate");
    const std::uint64_t ws = kWorkspaceBytes;
    if (e.empty())
      e = check(lt_.cublasLtMatmulPreferenceSetAttribute(pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws),
                "MAX_WORKSPACE_BYTES");
    int found = 0;
    if (e.empty())
      e = check(lt_.cublasLtMatmulAlgoGetHeuristic(handle_, desc_, la_, lb_, lc_, lc_, pref_, 1, &heur_, &found),
                "AlgoGetHeuristic");
    if (e.empty() && (found < 1 || heur_.state != CUBLAS_STATUS_SUCCESS)) e = "no cuBLASLt algorithm for this shape";
    return e;
  }

  std::string run(CUdeviceptr w, CUdeviceptr a, CUdeviceptr c, CUstream stream) {
    const float alpha = 1.0f, beta = 0.0f;
    const cublasStatus_t s =
        lt_.cublasLtMatmul(handle_, desc_, &alpha, reinterpret_cast<const void*>(w), la_, reinterpret_cast<const void*>(a),
                           lb_, &beta, reinterpret_cast<const void*>(c), lc_, reinterpret_cast<void*>(c), lc_, &heur_.algo,
                           reinterpret_cast<void*>(workspace_->address()), kWorkspaceBytes,
                           reinterpret_cast<cudaStream_t>(stream));
    return s == CUBLAS_STATUS_SUCCESS ? "" : std::string("cublasLtMatmul: ") + lt_.cublasLtGetStatusString(s);
  }

 private:
  static constexpr std::size_t kWorkspaceBytes = 32u << 20;
  void release() {
    if (pref_) lt_.cublasLtMatmulPreferenceDestroy(pref_);
    if (la_) lt_.cublasLtMatrixLayoutDestroy(la_);
    if (lb_) lt_.cublasLtMatrixLayoutDestroy(lb_);
    if (lc_) lt_.cublasLtMatrixLayoutDestroy(lc_);
    if (desc_) lt_.cublasLtMatmulDescDestroy(desc_);
    pref_ = nullptr;
    la_ = lb_ = lc_ = nullptr;
    desc_ = nullptr;
  }
  const Lt& lt_;
  bool ok_ = false;
  std::string error_;
  cublasLtHandle_t handle_ = nullptr;
  std::unique_ptr<device::Buffer> workspace_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t la_ = nullptr, lb_ = nullptr, lc_ = nullptr;
  cublasLtMatmulPreference_t pref_ = nullptr;
  cublasLtMatmulHeuristicResult_t heur_{};
};

int run_bench_cuda(BenchArgs& a, const std::vector<Shape>& shapes) {
  const auto started = std::chrono::steady_clock::now();
  device::Status st;
  auto backend = a.module.empty() ? device::CudaBackend::create(a.device, &st)
                                  : device::CudaBackend::create_from_file(a.device, a.module, &st);
  if (!backend) {
    std::fprintf(stderr, "bench: no usable CUDA device (GPU %d): %s\n", a.device, st.message.c_str());
    return 2;
  }
  {
    std::string why;  // the entry points timed below
    if (!check_module(*backend, {device::Entry::gemm_pipelined_by_m, device::Entry::gemm_pipelined_m32_strided}, &why)) {
      std::fprintf(stderr, "bench: %s\n", why.c_str());
      return 2;
    }
  }
  const RunIdentity id = run_identity(*backend);
  std::fputs(identity_text(id).c_str(), stdout);
  Drv d;
  std::string why;
  if (!load_driver(&d, &why)) {
    std::fprintf(stderr, "bench: %s\n", why.c_str());
    return 2;
  }
  CUdevice dev;
  CUcontext ctx;
  if (d.cuDeviceGet(&dev, a.device) != CUDA_SUCCESS || d.cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS ||
      d.cuCtxPushCurrent(ctx) != CUDA_SUCCESS) {
    std::fprintf(stderr, "bench: cannot make GPU %d's primary context current\n", a.device);
    return 2;
  }
  // The backend and cuBLASLt (through its runtime) share this primary context; it stays current on
  // this thread for the whole run so that cuBLASLt never creates another.
  struct CtxGuard {
    const Drv& d;
    CUdevice dev;
    ~CtxGuard() {
      CUcontext ignored;
      d.cuCtxPopCurrent(&ignored);
      d.cuDevicePrimaryCtxRelease(dev);
    }
  } ctx_guard{d, dev};

  char name[256] = {};
  d.cuDeviceGetName(name, sizeof name, dev);
  int sms = 0, l2 = 0, ccmaj = 0, ccmin = 0, drv_version = 0;
  d.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
  d.cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev);
  d.cuDeviceGetAttribute(&ccmaj, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  d.cuDeviceGetAttribute(&ccmin, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  d.cuDriverGetVersion(&drv_version);

  CUstream stream = nullptr;
  CUevent e0 = nullptr, e1 = nullptr;
  if (d.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS ||
      d.cuEventCreate(&e0, CU_EVENT_DEFAULT) != CUDA_SUCCESS || d.cuEventCreate(&e1, CU_EVENT_DEFAULT) != CUDA_SUCCESS) {
    std::fprintf(stderr, "bench: cannot create a stream and events\n");
    return 2;
  }
  struct StreamGuard {
    const Drv& d;
    CUstream s;
    CUevent e0, e1;
    ~StreamGuard() {
      d.cuEventDestroy(e0);
      d.cuEventDestroy(e1);
      d.cuStreamDestroy(s);
    }
  } stream_guard{d, stream, e0, e1};

  // The copy bandwidth: 1 GiB device to device, bytes read + written, median of 12 after one warm-up.
  double copy_bw = 0;
  {
    constexpr std::size_t kCopyBytes = 1ull << 30;
    auto src = backend->allocate(kCopyBytes, &st);
    auto dst = src ? backend->allocate(kCopyBytes, &st) : nullptr;
    if (!src || !dst || !src->fill(0x5A).ok() || !backend->synchronize().ok()) {
      std::fprintf(stderr, "bench: copy-bandwidth buffers: %s\n", st.message.c_str());
      return 2;
    }
    const Timing t = time_launches(d, stream, e0, e1, 1, 12, false, [&](int, CUstream s) -> std::string {
      const CUresult r = d.cuMemcpyDtoDAsync(dst->address(), src->address(), kCopyBytes, s);
      return r == CUDA_SUCCESS ? "" : "cuMemcpyDtoDAsync: " + cu_text(d, r);
    });
    if (!t.ok) {
      std::fprintf(stderr, "bench: copy bandwidth: %s\n", t.error.c_str());
      return 2;
    }
    copy_bw = 2.0 * kCopyBytes / (t.median_us * 1e-6);
  }

  Lt lt;
  std::string cublas_note;
  std::unique_ptr<CublasRunner> cublas;
  if (a.no_cublas) {
    cublas_note = "not run (--no-cublas)";
  } else if (!load_cublaslt(&lt, &why)) {
    cublas_note = "not run: " + why;
  } else {
    cublas = std::make_unique<CublasRunner>(lt, *backend);
    if (!cublas->ok()) {
      cublas_note = "not run: " + cublas->error();
      cublas.reset();
    } else {
      cublas_note = lt.path + " version " + std::to_string(lt.cublasLtGetVersion()) + ", BF16 in/out, FP32 compute, top heuristic";
    }
  }

  std::printf("bench: %s (sm_%d%d, %d SMs, L2 %.0f MB), driver %d; copy bandwidth %.0f GB/s (read + write)\n", name,
              ccmaj, ccmin, sms, l2 / 1e6, drv_version, copy_bw * 1e-9);
  std::printf("bench: timing = median over %d %s of %d launches back to back, weights rotating over >= %.0f MiB; "
              "cuBLAS: %s\n",
              a.batches, a.no_graph ? "batches" : "graph replays", a.reps, a.rotate_mib, cublas_note.c_str());
  std::printf("bench: floor = bytes moved once (W, S, A read; C written) / copy bandwidth; fl/ours = floor / ours "
              "(1 = at the floor); cB/ours = cuBLAS time / ours (> 1: ours faster)\n");
  print_header();

  const device::KernelRegistry& reg = backend->registry();
  const device::KernelHandle h_full = reg.resolve(device::KernelId::gemm_pipelined);
  const device::KernelHandle h_m32 = reg.resolve(device::KernelId::gemm_pipelined_m32);
  const device::KernelHandle h_m64 = reg.resolve(device::KernelId::gemm_pipelined_m64);
  const std::uint32_t max_m = *std::max_element(a.ms.begin(), a.ms.end());

  std::vector<Row> rows;
  bool any_mismatch = false;
  for (const Shape sh : shapes) {
    const HostInputs in = make_host_inputs(max_m, sh, a.seed ^ (static_cast<std::uint64_t>(sh.n) << 32) ^ sh.k);
    const double w_bytes = static_cast<double>(in.w.size()) + 4.0 * in.s.size();
    const int copies = std::max(2, static_cast<int>(std::ceil(a.rotate_mib * 1048576.0 / w_bytes)));
    DeviceShape ds;
    std::string setup_error;
    auto alloc = [&](std::size_t bytes) {
      auto b = backend->allocate(bytes, &st);
      if (!b && setup_error.empty()) setup_error = st.message;
      return b;
    };
    ds.a = alloc(in.a.size() * 2);
    ds.c = alloc(static_cast<std::size_t>(max_m) * sh.n * 2);
    for (int i = 0; i < copies && setup_error.empty(); ++i) {
      ds.w.push_back(alloc(in.w.size()));
      ds.s.push_back(alloc(in.s.size() * 4));
      if (!setup_error.empty()) break;
      if (auto u = ds.w.back()->upload(in.w.data(), in.w.size()); !u.ok()) setup_error = u.message;
      if (auto u = ds.s.back()->upload(in.s.data(), in.s.size() * 4); !u.ok()) setup_error = u.message;
    }
    if (setup_error.empty())
      if (auto u = ds.a->upload(in.a.data(), in.a.size() * 2); !u.ok()) setup_error = u.message;
    std::vector<std::uint16_t> wdq;
    int dq_copies = 0;
    if (cublas && setup_error.empty()) {
      wdq = dequantize(in, sh);
      dq_copies = std::max(2, static_cast<int>(std::ceil(a.rotate_mib * 1048576.0 / (wdq.size() * 2.0))));
      ds.c_cublas = alloc(static_cast<std::size_t>(max_m) * sh.n * 2);
      for (int i = 0; i < dq_copies && setup_error.empty(); ++i) {
        ds.wdq.push_back(alloc(wdq.size() * 2));
        if (setup_error.empty())
          if (auto u = ds.wdq.back()->upload(wdq.data(), wdq.size() * 2); !u.ok()) setup_error = u.message;
      }
    }
    if (!setup_error.empty()) {
      std::fprintf(stderr, "bench: N=%u K=%u: device buffers: %s\n", sh.n, sh.k, setup_error.c_str());
      return 2;
    }

    for (const std::uint32_t m : a.ms) {
      const Sample smp = choose_sample(m, sh, a.check_macs);
      std::vector<std::uint16_t> want;  // the emulator's, computed once per (shape, M) for every entry point
      device::Contract want_contract = device::Contract::canonical;
      std::vector<std::pair<device::Entry, device::Call>> calls;
      {
        device::Call c;
        c.entry = device::Entry::gemm_pipelined_by_m;
        c.kernel = h_full;
        c.m32_kernel = h_m32;
        c.m64_kernel = h_m64;
        c.args = device::Args{ds.a->address(), ds.w[0]->address(), ds.s[0]->address(), ds.c->address(), m, sh.n, sh.k,
                              sh.k, sh.n, 0};
        calls.push_back({c.entry, c});
        if (reg.resolve(device::KernelId::wgmma_rows) || reg.resolve(device::KernelId::wgmma_rows_n128) ||
            reg.resolve(device::KernelId::wgmma_rows_n128_x2)) {
          // The module has the Hopper tier, which every tensor-core entry tries first: the same call
          // again with each of its symbols alone, and with the tier taken away (the tiers below it),
          // timed in the same run.
          for (int variant = 1; variant <= 3; ++variant) calls.push_back({c.entry, c});
        } else if (m <= 16) {  // the strided 32-row twin: tc_rows when it takes the shape, else the skinny body
          device::Call s = c;
          s.entry = device::Entry::gemm_pipelined_m32_strided;
          s.kernel = h_m32;
          s.m32_kernel = s.m64_kernel = device::KernelHandle{};
          calls.push_back({s.entry, s});
        }
      }
      for (std::size_t variant = 0; variant < calls.size(); ++variant) {
        const device::Entry entry = calls[variant].first;
        device::Call& call = calls[variant].second;
        Row r;
        r.sh = sh;
        r.m = m;
        r.entry = device::entry_name(entry);
        r.bytes = floor_bytes(sh, m);
        r.floor_us = r.bytes / copy_bw * 1e6;
        // Rows 2..4 of a by_m call on a Hopper module: its 64-column symbol alone, its 128-column
        // one alone (where the tier's rule takes them), and the tiers below it.
        using device::KernelId;
        const device::MaskedRegistry only64(reg, {KernelId::wgmma_rows_n128, KernelId::wgmma_rows_n128_x2});
        const device::MaskedRegistry only128(reg, {KernelId::wgmma_rows, KernelId::wgmma_rows_n128_x2});
        const device::MaskedRegistry neither(reg, {KernelId::wgmma_rows, KernelId::wgmma_rows_n128, KernelId::wgmma_rows_n128_x2});
        const bool masked = call.entry == calls.front().first && variant > 0;
        const device::KernelRegistry& use = !masked ? reg : variant == 1 ? static_cast<const device::KernelRegistry&>(only64)
                                                        : variant == 2 ? static_cast<const device::KernelRegistry&>(only128)
                                                                       : static_cast<const device::KernelRegistry&>(neither);
        const device::Planned planned = device::plan_launch(call, use, backend->limits());
        if (!planned.ok()) {
          r.error = planned.status.message;
          print_row(r);
          rows.push_back(r);
          any_mismatch = true;
          continue;
        }
        device::Plan plan = planned.plan;
        r.kernel = plan.kernel_name;
        r.body = device::body_name(plan.body);
        // Correct first: poison C (0xFFFF is a NaN no output of these inputs has), launch once on copy
        // 0, compare with the emulator.
        plan.stream = reinterpret_cast<device::Stream>(stream);
        std::vector<std::uint16_t> got(static_cast<std::size_t>(m) * sh.n);
        device::Status ls = ds.c->fill(0xFF);
        if (ls.ok()) ls = backend->synchronize();
        if (ls.ok()) ls = backend->execute(plan);
        if (ls.ok()) ls = backend->synchronize();
        if (ls.ok()) ls = ds.c->download(got.data(), got.size() * 2);
        if (!ls.ok()) {
          r.error = ls.message;
          print_row(r);
          rows.push_back(r);
          any_mismatch = true;
          continue;
        }
        r.launched = true;
        if (want.empty() || want_contract != plan.contract) {
          want = expected_sample(in, sh, smp, plan.contract);
          want_contract = plan.contract;
        }
        r.check = compare_sample(got, sh.n, smp, want);
        r.ours = time_launches(d, stream, e0, e1, std::max(a.reps, copies), a.batches, !a.no_graph, [&](int i, CUstream) -> std::string {
          device::Plan p = plan;
          p.params.weight = ds.w[i % copies]->address();
          p.params.block_scale = ds.s[i % copies]->address();
          const device::Status s = backend->execute(p);
          return s.ok() ? "" : s.message;
        });
        if (!r.ours.ok) r.error = r.ours.error;
        // Every copy holds the same bytes: the timed launches must leave exactly the checked output.
        std::vector<std::uint16_t> after(got.size());
        r.stable = r.ours.ok && backend->synchronize().ok() && ds.c->download(after.data(), after.size() * 2).ok() &&
                   after == got;
        if (r.check.mismatches || !r.stable) any_mismatch = true;

        // cuBLAS once per (shape, M), on the first row.
        if (cublas && &call == &calls.front().second) {
          r.cublas_error = cublas->prepare(m, sh);
          std::vector<std::uint16_t> cb(static_cast<std::size_t>(m) * sh.n);
          if (r.cublas_error.empty()) {
            device::Status cs = ds.c_cublas->fill(0xFF);
            if (cs.ok()) cs = backend->synchronize();
            if (cs.ok()) r.cublas_error = cublas->run(ds.wdq[0]->address(), ds.a->address(), ds.c_cublas->address(), stream);
            if (cs.ok() && r.cublas_error.empty()) cs = backend->synchronize();
            if (cs.ok() && r.cublas_error.empty()) cs = ds.c_cublas->download(cb.data(), cb.size() * 2);
            if (!cs.ok()) r.cublas_error = cs.message;
          }
          if (r.cublas_error.empty()) {
            r.cublas_rel_err = cublas_rel_error(cb, in, wdq, sh, smp);
            r.cublas_ok = r.cublas_rel_err <= 1e-2;
            if (!r.cublas_ok) {
              r.cublas_error = "cuBLAS output differs from float64: rel err " + std::to_string(r.cublas_rel_err);
              any_mismatch = true;
            }
            r.cublas = time_launches(d, stream, e0, e1, std::max(a.reps, dq_copies), a.batches, !a.no_graph, [&](int i, CUstream s) {
              return cublas->run(ds.wdq[i % dq_copies]->address(), ds.a->address(), ds.c_cublas->address(), s);
            });
            if (!r.cublas.ok) r.cublas_error = r.cublas.error;
          }
          if (!r.cublas_error.empty()) r.error += (r.error.empty() ? "" : "; ") + ("cuBLAS: " + r.cublas_error);
        } else if (cublas && !rows.empty() && rows.back().sh.n == sh.n && rows.back().sh.k == sh.k &&
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

  std::printf("bench: %zu rows in %.0f s; %s\n", rows.size(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(),
              any_mismatch ? "SOME OUTPUT DIFFERS FROM THE EMULATOR OR A LAUNCH FAILED (see check column)"
                           : "every checked output equals the emulator's bytes");

  if (!a.json_report->path.empty()) {
    nlohmann::json j;
    add_identity_json(&j, id);
    j["device"] = {{"name", name}, {"sm", std::to_string(ccmaj) + std::to_string(ccmin)}, {"sms", sms},
                   {"l2_bytes", l2}, {"driver_version", drv_version}};
    j["copy_bandwidth_bytes_per_s"] = copy_bw;
    j["method"] = {{"reps", a.reps}, {"batches", a.batches}, {"rotate_mib", a.rotate_mib},
                   {"graph", !a.no_graph}, {"check_macs", a.check_macs}, {"seed", a.seed},
                   {"floor", "bytes (W n*k, S 4*ceil(n/128)*k/128, A 2*m*k, C 2*m*n) / copy bandwidth"}};
    j["cublas"] = cublas_note;
    j["pass"] = !any_mismatch;
    j["rows"] = nlohmann::json::array();
    for (const Row& r : rows) {
      nlohmann::json x;
      x["n"] = r.sh.n;
      x["k"] = r.sh.k;
      x["m"] = r.m;
      x["entry"] = r.entry;
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
      x["check"] = {{"launched", r.launched}, {"full", r.check.full}, {"compared", r.check.compared},
                    {"mismatches", r.check.mismatches}, {"first_mismatch", r.check.first},
                    {"timed_output_equals_checked", r.stable}};
      if (!r.error.empty()) x["error"] = r.error;
      x["status"] = check_text(r);
      j["rows"].push_back(x);
    }
    j["verdict"] = any_mismatch ? "FAIL" : "PASS";
    std::string error;
    if (!finish_report(a.json_report.get(), j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n",
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

void add_bench(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("bench", "Time the dispatched entry points against the memory floor and cuBLAS (GPU)");
  auto a = std::make_shared<BenchArgs>();
  cmd->add_option("--shapes", a->shapes, "NxK shapes (default 12288x2048 2048x4096 10240x5120 51200x5120 5120x25600)")
      ->delimiter(',');
  cmd->add_option("--m", a->ms, "rows M (default 1 2 4 8 16 32 48 64 128 512)")
      ->delimiter(',')
      ->transform(whole_number(1, 65536));
  add_report_option(cmd, "--json", a->json_report, "write every number to this JSON file");
  cmd->add_option("--reps", a->reps, "launches back to back per timed graph replay")
      ->transform(whole_number(1, 10000))
      ->capture_default_str();
  cmd->add_option("--batches", a->batches, "timed replays (the median is reported)")
      ->transform(whole_number(1, 10000))
      ->capture_default_str();
  cmd->add_option("--rotate-mib", a->rotate_mib, "MiB of weight copies to rotate over (> L2, so W comes from HBM)")
      ->check(finite_number(0, 65536))
      ->capture_default_str();
  cmd->add_option("--check-macs", a->check_macs, "M*N*K above which the emulator checks a subsample of C")
      ->transform(whole_number(0, UINT64_MAX))
      ->capture_default_str();
  cmd->add_option("--device", a->device, "GPU ordinal")->transform(whole_number(0, 1023))->capture_default_str();
  cmd->add_option("--seed", a->seed, "input seed (decimal or 0x hex)")
      ->transform(whole_number(0, UINT64_MAX))
      ->capture_default_str();
  cmd->add_flag("--no-cublas", a->no_cublas, "skip the cuBLAS comparison");
  cmd->add_flag("--no-graph", a->no_graph, "time launches issued one by one instead of graph replays");
  add_module_option(cmd, &a->module);
  cmd->add_option("--max-bytes", a->limits.max_bytes, "refuse shapes whose host buffers need more memory than this (bytes)")
      ->transform(whole_number(1, UINT64_MAX))
      ->capture_default_str();
  cmd->callback([a, exit_code] { *exit_code = run_bench(*a); });
}

W8A16_COMMAND(add_bench);

}  // namespace
}  // namespace w8a16::cli
