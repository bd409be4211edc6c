// SPDX-License-Identifier: MIT OR Apache-2.0
// The GPU session (timer.hpp): context, stream, events, graph timing and the copy bandwidth, over
// the one driver table.
#include <algorithm>
#include <optional>
#include <vector>

#include "cuda_driver.hpp"
#include "w8a16/bench/timer.hpp"

namespace w8a16::bench {

struct GpuSession::State {
  const device::cuda::Driver* d = nullptr;
  device::cuda::PrimaryContext ctx;
  std::optional<device::cuda::PrimaryContext::Current> current;  // for the session's life
  CUstream stream = nullptr;
  CUevent e0 = nullptr, e1 = nullptr;
  std::string text(CUresult r) const { return device::cuda::result_text(*d, r); }
  ~State() {
    if (e0) d->cuEventDestroy(e0);
    if (e1) d->cuEventDestroy(e1);
    if (stream) d->cuStreamDestroy(stream);
  }  // then current pops the context and ctx releases it
};

GpuSession::GpuSession(std::unique_ptr<State> s) : s_(std::move(s)) {}
GpuSession::~GpuSession() = default;

std::unique_ptr<GpuSession> GpuSession::open(int ordinal, std::string* why) {
  auto s = std::make_unique<State>();
  s->d = device::cuda::timing_driver(why);
  if (!s->d) return nullptr;
  const auto& d = *s->d;
  const std::string gpu = "GPU " + std::to_string(ordinal);
  std::string failed;
  CUresult r = s->ctx.retain(d, ordinal, &failed);
  if (r == CUDA_SUCCESS) {
    s->current.emplace(s->ctx);
    r = s->current->result();
    failed = "cuCtxPushCurrent";
  }
  if (r != CUDA_SUCCESS) {
    *why = "cannot make " + gpu + "'s primary context current: " + failed + ": " + s->text(r);
    return nullptr;
  }
  r = d.cuStreamCreate(&s->stream, CU_STREAM_NON_BLOCKING);
  if (r == CUDA_SUCCESS) r = d.cuEventCreate(&s->e0, CU_EVENT_DEFAULT);
  if (r == CUDA_SUCCESS) r = d.cuEventCreate(&s->e1, CU_EVENT_DEFAULT);
  if (r != CUDA_SUCCESS) {
    *why = "cannot create a stream and events: " + s->text(r);
    return nullptr;
  }
  std::unique_ptr<GpuSession> out(new GpuSession(std::move(s)));
  const CUdevice dev = out->s_->ctx.device();
  DeviceProps& p = out->props_;
  char name[256] = {};
  d.cuDeviceGetName(name, sizeof name - 1, dev);
  p.name = name;
  d.cuDeviceGetAttribute(&p.sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
  d.cuDeviceGetAttribute(&p.l2_bytes, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev);
  d.cuDeviceGetAttribute(&p.cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  d.cuDeviceGetAttribute(&p.cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  d.cuDriverGetVersion(&p.driver_version);
  return out;
}

device::Stream GpuSession::stream() const { return reinterpret_cast<device::Stream>(s_->stream); }

Timing GpuSession::time(int reps, int batches, bool try_graph, const Launch& launch) {
  const auto& d = *s_->d;
  const CUstream stream = s_->stream;
  const device::Stream dstream = this->stream();
  CUgraphExec exec = nullptr;
  if (try_graph) {
    CUgraph graph = nullptr;
    std::string launch_error;
    if (d.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_RELAXED) == CUDA_SUCCESS) {
      for (int i = 0; i < reps && launch_error.empty(); ++i) launch_error = launch(i, dstream);
      const CUresult end = d.cuStreamEndCapture(stream, &graph);
      if (end == CUDA_SUCCESS && launch_error.empty() && graph && d.cuGraphInstantiate(&exec, graph, 0) != CUDA_SUCCESS)
        exec = nullptr;
      if (graph) d.cuGraphDestroy(graph);
    }
    // A failed capture can leave an error behind on the stream's context: start clean.
    d.cuCtxSynchronize();
  }
  std::vector<float> per_launch;
  auto run_batch = [&](int b) -> std::string {
    if (exec) {
      if (CUresult r = d.cuGraphLaunch(exec, stream); r != CUDA_SUCCESS) return "cuGraphLaunch: " + s_->text(r);
      return "";
    }
    for (int i = 0; i < reps; ++i)
      if (std::string e = launch(b * reps + i, dstream); !e.empty()) return e;
    return "";
  };
  std::string err = run_batch(0);  // warm-up (and the first graph replay)
  if (err.empty())
    if (CUresult r = d.cuCtxSynchronize(); r != CUDA_SUCCESS) err = "warm-up: " + s_->text(r);
  for (int b = 0; b < batches && err.empty(); ++b) {
    if (CUresult r = d.cuEventRecord(s_->e0, stream); r != CUDA_SUCCESS) err = "cuEventRecord: " + s_->text(r);
    if (err.empty()) err = run_batch(b + 1);
    if (err.empty())
      if (CUresult r = d.cuEventRecord(s_->e1, stream); r != CUDA_SUCCESS) err = "cuEventRecord: " + s_->text(r);
    if (err.empty())
      if (CUresult r = d.cuEventSynchronize(s_->e1); r != CUDA_SUCCESS) err = "cuEventSynchronize: " + s_->text(r);
    float ms = 0;
    if (err.empty())
      if (CUresult r = d.cuEventElapsedTime(&ms, s_->e0, s_->e1); r != CUDA_SUCCESS)
        err = "cuEventElapsedTime: " + s_->text(r);
    if (err.empty()) per_launch.push_back(ms * 1000.0f / static_cast<float>(reps));
  }
  if (err.empty())
    if (CUresult r = d.cuCtxSynchronize(); r != CUDA_SUCCESS) err = "after timing: " + s_->text(r);
  const bool graph = exec != nullptr;
  if (exec) d.cuGraphExecDestroy(exec);
  if (!err.empty()) {
    Timing t;
    t.graph = graph;
    t.error = err;
    return t;
  }
  return summarize(std::move(per_launch), graph);
}

bool GpuSession::measure_copy_bandwidth(double* bytes_per_s, std::string* why, std::size_t bytes, int batches) {
  const auto& d = *s_->d;
  CUdeviceptr src = 0, dst = 0;
  CUresult r = d.cuMemAlloc(&src, bytes);
  if (r == CUDA_SUCCESS) r = d.cuMemAlloc(&dst, bytes);
  if (r == CUDA_SUCCESS) r = d.cuMemsetD8(src, 0x5A, bytes);
  if (r == CUDA_SUCCESS) r = d.cuCtxSynchronize();
  if (r != CUDA_SUCCESS) {
    *why = "copy-bandwidth buffers: " + s_->text(r);
  } else {
    const Timing t = time(1, batches, false, [&](int, device::Stream s) -> std::string {
      const CUresult c = d.cuMemcpyDtoDAsync(dst, src, bytes, reinterpret_cast<CUstream>(s));
      return c == CUDA_SUCCESS ? "" : "cuMemcpyDtoDAsync: " + s_->text(c);
    });
    if (!t.ok) *why = "copy bandwidth: " + t.error;
    else *bytes_per_s = copy_bandwidth(bytes, t.median_us);
    r = t.ok ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN;
  }
  if (src) d.cuMemFree(src);
  if (dst) d.cuMemFree(dst);
  return r == CUDA_SUCCESS;
}

}  // namespace w8a16::bench
