// SPDX-License-Identifier: MIT OR Apache-2.0
// The peer a timing is compared with: cublasLt's BF16 GEMM (FP32 compute, top heuristic) on W*S
// dequantized to BF16, with its own rotated weight copies, timed the same way (timer.hpp) and
// checked against float64 sums. cuBLASLt is loaded at run time (dlopen), like the driver: the
// GPU machine has it in /usr/local/cuda/lib64 but maybe not on the loader's path, and a binary must
// start, and say so, where it is absent. Only in builds with CUDA; no CUDA header here.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "w8a16/bench/check.hpp"
#include "w8a16/bench/measure.hpp"
#include "w8a16/bench/timer.hpp"
#include "w8a16/device/backend.hpp"

namespace w8a16::bench {

// The loaded library: its path (the candidate that loaded) and cublasLtGetVersion().
class CublasLt {
 public:
  // Where it is looked for, in order: $W8A16_CUBLASLT when set, then libcublasLt.so.13 and
  // libcublasLt.so by the loader's path and in /usr/local/cuda/lib64.
  static std::vector<std::string> default_candidates();
  // The first candidate that loads and has every function used here; nullptr with *why naming
  // each candidate's failure ("cuBLASLt could not be loaded (set W8A16_CUBLASLT to its path): ...").
  static std::unique_ptr<CublasLt> load(const std::vector<std::string>& candidates, std::string* why);
  ~CublasLt();

  const std::string& path() const { return path_; }
  std::size_t version() const;

  struct Functions;
  const Functions& fn() const { return *fn_; }

 private:
  CublasLt() = default;
  std::string path_;
  std::unique_ptr<Functions> fn_;
};

// A cuBLASLt handle and a 32 MiB workspace on `backend`, and for one (M, shape) at a time its
// matmul descriptor, layouts and algorithm.
class CublasRunner {
 public:
  // nullptr with *why when cublasLtCreate or the workspace fails.
  static std::unique_ptr<CublasRunner> create(const CublasLt& lt, device::Backend& backend, std::string* why);
  ~CublasRunner();
  // C[M][N] = A[M][K] * Wdq[N][K]^T: in cuBLAS's column-major terms D (N x M, ld N) = op(W) op(A)
  // with W stored K x N column-major and transposed, A K x M (the "TN" case). "" or the error.
  std::string prepare(std::uint32_t m, Shape sh);
  std::string run(device::DevPtr wdq, device::DevPtr a, device::DevPtr c, device::Stream stream);

 private:
  struct State;
  explicit CublasRunner(std::unique_ptr<State> s);
  std::unique_ptr<State> s_;
};

// The cuBLAS comparison of a run, set up once: the runner, or why there is none, as the report's
// cuBLAS line says it: "<path> version <v>, BF16 in/out, FP32 compute, top heuristic", "not run
// (--no-cublas)", "not available: <why it did not load>" or "not run: <why it did not start>".
struct CublasSetup {
  std::unique_ptr<CublasLt> lt;
  std::unique_ptr<CublasRunner> runner;
  std::string note;
};
CublasSetup open_cublas(device::Backend& backend, bool wanted,
                        const std::vector<std::string>& candidates = CublasLt::default_candidates());

// A shape's dequantized weights on the device, `copies` of them, and cuBLAS's own C.
struct CublasOperands {
  std::vector<std::uint16_t> host;  // dequantize_bf16 of the shape's inputs
  std::vector<std::unique_ptr<device::Buffer>> wdq;
  std::unique_ptr<device::Buffer> c;
};
bool upload_cublas_operands(device::Backend& backend, const HostInputs& in, Shape sh, std::uint32_t max_m,
                            double rotate_mib, CublasOperands* out, std::string* why);

struct CublasMeasurement {
  Timing timing;
  double rel_err = -1;   // against float64 over the sample; -1 when it did not run
  bool ok = false;       // rel_err <= kCublasMaxRelError
  bool differs = false;  // it ran and its output is not the GEMM's (a failure of the run)
  std::string error;
};
// Prepare, run once on copy 0 into a poisoned C, compare with float64, then time rotating over the
// copies (max(reps, copies) launches per batch) on the timer's stream.
CublasMeasurement measure_cublas(CublasRunner& runner, device::Backend& backend, Timer& timer,
                                 const CublasOperands& ops, const device::Buffer& a, const HostInputs& in, Shape sh,
                                 std::uint32_t m, const Sample& smp, const MeasureOptions& opt);

}  // namespace w8a16::bench
