// SPDX-License-Identifier: MIT OR Apache-2.0
// cuBLASLt loaded at run time and run as the timing's peer (cublas.hpp).
#include "w8a16/bench/cublas.hpp"

#include <cublasLt.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>

namespace w8a16::bench {

// X(name): every cuBLASLt function used here.
// A list of names, one X() a name, laid out by hand: clang-format 14 re-wraps such lists
// differently each time it runs.
// clang-format off
#define W8A16_BENCH_LT_FUNCTIONS(X)                                                              \
  X(cublasLtCreate) X(cublasLtDestroy) X(cublasLtGetVersion) X(cublasLtGetStatusString)          \
  X(cublasLtMatmulDescCreate) X(cublasLtMatmulDescDestroy) X(cublasLtMatmulDescSetAttribute)     \
  X(cublasLtMatrixLayoutCreate) X(cublasLtMatrixLayoutDestroy) X(cublasLtMatmulPreferenceCreate) \
  X(cublasLtMatmulPreferenceDestroy) X(cublasLtMatmulPreferenceSetAttribute)                     \
  X(cublasLtMatmulAlgoGetHeuristic) X(cublasLtMatmul)
// clang-format on

struct CublasLt::Functions {
#define W8A16_BENCH_LT_MEMBER(name) decltype(&::name) name = nullptr;
  W8A16_BENCH_LT_FUNCTIONS(W8A16_BENCH_LT_MEMBER)
#undef W8A16_BENCH_LT_MEMBER
};

std::vector<std::string> CublasLt::default_candidates() {
  std::vector<std::string> c;
  if (const char* env = std::getenv("W8A16_CUBLASLT")) c.push_back(env);
  for (const char* name : {"libcublasLt.so.13", "/usr/local/cuda/lib64/libcublasLt.so.13", "libcublasLt.so",
                           "/usr/local/cuda/lib64/libcublasLt.so"})
    c.push_back(name);
  return c;
}

std::unique_ptr<CublasLt> CublasLt::load(const std::vector<std::string>& candidates, std::string* why) {
  std::string tried;
  for (const std::string& c : candidates) {
    void* lib = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* e = dlerror();
      tried += (tried.empty() ? "" : "; ") + std::string(e ? e : c.c_str());
      continue;
    }
    std::unique_ptr<CublasLt> lt(new CublasLt());
    lt->path_ = c;
    lt->fn_ = std::make_unique<Functions>();
    std::string missing;
#define W8A16_BENCH_LT_LOAD(name)                                         \
  lt->fn_->name = reinterpret_cast<decltype(&::name)>(dlsym(lib, #name)); \
  if (!lt->fn_->name && missing.empty()) missing = #name;
    W8A16_BENCH_LT_FUNCTIONS(W8A16_BENCH_LT_LOAD)
#undef W8A16_BENCH_LT_LOAD
    if (missing.empty()) return lt;
    tried += (tried.empty() ? "" : "; ") + c + " lacks " + missing;
  }
  *why = "cuBLASLt could not be loaded (set W8A16_CUBLASLT to its path): " + (tried.empty() ? "no candidate" : tried);
  return nullptr;
}

// The library stays loaded (no dlclose): cuBLASLt's runtime may keep threads or handlers behind.
CublasLt::~CublasLt() = default;

std::size_t CublasLt::version() const { return fn_->cublasLtGetVersion(); }

struct CublasRunner::State {
  static constexpr std::size_t kWorkspaceBytes = 32u << 20;
  const CublasLt::Functions* lt = nullptr;
  cublasLtHandle_t handle = nullptr;
  std::unique_ptr<device::Buffer> workspace;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  cublasLtMatmulHeuristicResult_t heur{};
  void release() {
    if (pref) lt->cublasLtMatmulPreferenceDestroy(pref);
    if (la) lt->cublasLtMatrixLayoutDestroy(la);
    if (lb) lt->cublasLtMatrixLayoutDestroy(lb);
    if (lc) lt->cublasLtMatrixLayoutDestroy(lc);
    if (desc) lt->cublasLtMatmulDescDestroy(desc);
    pref = nullptr;
    la = lb = lc = nullptr;
    desc = nullptr;
  }
  ~State() {
    release();
    if (handle) lt->cublasLtDestroy(handle);
  }
};

CublasRunner::CublasRunner(std::unique_ptr<State> s) : s_(std::move(s)) {}
CublasRunner::~CublasRunner() = default;

std::unique_ptr<CublasRunner> CublasRunner::create(const CublasLt& lt, device::Backend& backend, std::string* why) {
  auto s = std::make_unique<State>();
  s->lt = &lt.fn();
  if (s->lt->cublasLtCreate(&s->handle) != CUBLAS_STATUS_SUCCESS) {
    s->handle = nullptr;
    *why = "cublasLtCreate failed";
    return nullptr;
  }
  device::Status st;
  s->workspace = backend.allocate(State::kWorkspaceBytes, &st);
  if (!s->workspace) {
    *why = "workspace: " + st.message;
    return nullptr;
  }
  return std::unique_ptr<CublasRunner>(new CublasRunner(std::move(s)));
}

std::string CublasRunner::prepare(std::uint32_t m, Shape sh) {
  State& s = *s_;
  const CublasLt::Functions& lt = *s.lt;
  s.release();
  auto check = [&](cublasStatus_t r, const char* what) -> std::string {
    return r == CUBLAS_STATUS_SUCCESS ? "" : std::string(what) + ": " + lt.cublasLtGetStatusString(r);
  };
  std::string e = check(lt.cublasLtMatmulDescCreate(&s.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "MatmulDescCreate");
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  if (e.empty())
    e = check(lt.cublasLtMatmulDescSetAttribute(s.desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta), "TRANSA");
  if (e.empty())
    e = check(lt.cublasLtMatmulDescSetAttribute(s.desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb), "TRANSB");
  if (e.empty()) e = check(lt.cublasLtMatrixLayoutCreate(&s.la, CUDA_R_16BF, sh.k, sh.n, sh.k), "layout W");
  if (e.empty()) e = check(lt.cublasLtMatrixLayoutCreate(&s.lb, CUDA_R_16BF, sh.k, m, sh.k), "layout A");
  if (e.empty()) e = check(lt.cublasLtMatrixLayoutCreate(&s.lc, CUDA_R_16BF, sh.n, m, sh.n), "layout C");
  if (e.empty()) e = check(lt.cublasLtMatmulPreferenceCreate(&s.pref), "PreferenceCreate");
  const std::uint64_t ws = State::kWorkspaceBytes;
  if (e.empty())
    e = check(lt.cublasLtMatmulPreferenceSetAttribute(s.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws),
              "MAX_WORKSPACE_BYTES");
  int found = 0;
  if (e.empty())
    e = check(lt.cublasLtMatmulAlgoGetHeuristic(s.handle, s.desc, s.la, s.lb, s.lc, s.lc, s.pref, 1, &s.heur, &found),
              "AlgoGetHeuristic");
  if (e.empty() && (found < 1 || s.heur.state != CUBLAS_STATUS_SUCCESS)) e = "no cuBLASLt algorithm for this shape";
  return e;
}

std::string CublasRunner::run(device::DevPtr w, device::DevPtr a, device::DevPtr c, device::Stream stream) {
  State& s = *s_;
  const float alpha = 1.0f, beta = 0.0f;
  const cublasStatus_t r = s.lt->cublasLtMatmul(s.handle, s.desc, &alpha, reinterpret_cast<const void*>(w), s.la,
                                                reinterpret_cast<const void*>(a), s.lb, &beta,
                                                reinterpret_cast<const void*>(c), s.lc, reinterpret_cast<void*>(c),
                                                s.lc, &s.heur.algo, reinterpret_cast<void*>(s.workspace->address()),
                                                State::kWorkspaceBytes, reinterpret_cast<cudaStream_t>(stream));
  return r == CUBLAS_STATUS_SUCCESS ? "" : std::string("cublasLtMatmul: ") + s.lt->cublasLtGetStatusString(r);
}

CublasSetup open_cublas(device::Backend& backend, bool wanted, const std::vector<std::string>& candidates) {
  CublasSetup out;
  std::string why;
  if (!wanted) {
    out.note = "not run (--no-cublas)";
  } else if (!(out.lt = CublasLt::load(candidates, &why))) {
    out.note = "not available: " + why;
  } else if (!(out.runner = CublasRunner::create(*out.lt, backend, &why))) {
    out.note = "not run: " + why;
  } else {
    out.note = out.lt->path() + " version " + std::to_string(out.lt->version()) +
               ", BF16 in/out, FP32 compute, top heuristic";
  }
  return out;
}

bool upload_cublas_operands(device::Backend& backend, const HostInputs& in, Shape sh, std::uint32_t max_m,
                            double rotate_mib, CublasOperands* out, std::string* why) {
  out->host = dequantize_bf16(in, sh);
  const int copies = rotation_copies(out->host.size() * 2.0, rotate_mib);
  device::Status st;
  out->c = backend.allocate(static_cast<std::size_t>(max_m) * sh.n * 2, &st);
  for (int i = 0; out->c && i < copies; ++i) {
    out->wdq.push_back(backend.allocate(out->host.size() * 2, &st));
    if (!out->wdq.back()) break;
    if (st = out->wdq.back()->upload(out->host.data(), out->host.size() * 2); !st.ok()) break;
  }
  if (!st.ok()) *why = st.message;
  return st.ok();
}

CublasMeasurement measure_cublas(CublasRunner& runner, device::Backend& backend, Timer& timer,
                                 const CublasOperands& ops, const device::Buffer& a, const HostInputs& in, Shape sh,
                                 std::uint32_t m, const Sample& smp, const MeasureOptions& opt) {
  CublasMeasurement r;
  r.error = runner.prepare(m, sh);
  std::vector<std::uint16_t> got(static_cast<std::size_t>(m) * sh.n);
  if (r.error.empty()) {
    device::Status cs = ops.c->fill(0xFF);
    if (cs.ok()) cs = backend.synchronize();
    if (cs.ok()) r.error = runner.run(ops.wdq[0]->address(), a.address(), ops.c->address(), timer.stream());
    if (cs.ok() && r.error.empty()) cs = backend.synchronize();
    if (cs.ok() && r.error.empty()) cs = ops.c->download(got.data(), got.size() * 2);
    if (!cs.ok()) r.error = cs.message;
  }
  if (!r.error.empty()) return r;
  r.rel_err = cublas_rel_error(got, in, ops.host, sh, smp);
  r.ok = r.rel_err <= kCublasMaxRelError;
  if (!r.ok) {
    r.error = "cuBLAS output differs from float64: rel err " + std::to_string(r.rel_err);
    r.differs = true;
  }
  const int copies = static_cast<int>(ops.wdq.size());
  r.timing = timer.time(std::max(opt.reps, copies), opt.batches, opt.graph, [&](int i, device::Stream s) {
    return runner.run(ops.wdq[i % copies]->address(), a.address(), ops.c->address(), s);
  });
  if (!r.timing.ok) r.error = r.timing.error;
  return r;
}

}  // namespace w8a16::bench
