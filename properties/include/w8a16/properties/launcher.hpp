// SPDX-License-Identifier: MIT OR Apache-2.0
// Launching cases so that the kernel under test cannot take the gate down with it: every launch
// has a deadline, and a launch that hangs or faults becomes that case's failure
// (properties/README.md, "When a kernel hangs or faults").
//
//   InProcessLauncher  launch_case on a backend of this process; a launch past its deadline ends
//                      the process through the hang handler (it writes the reports first), and
//                      after a sticky error the launcher runs nothing more (the context is lost).
//   IsolatedLauncher   each case in a worker process (`w8a16check launch-worker`), the same
//                      launch_case there over the operands regenerated here; a hang is timed here and the worker killed, a sticky
//                      error or a crash ends that worker and the next case starts a fresh one, so
//                      only the culprit fails.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "w8a16/device/backend.hpp"
#include "w8a16/golden/case.hpp"
#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/properties/case_runner.hpp"

namespace w8a16::props {

// How long one launch may run before it is a hang: always one launch's (a run of many launches
// holds each to it, never their sum), in whole milliseconds from kMinSeconds to kMaxSeconds, so
// that no use of it (a clock's time point, a product) can overflow. The minimum is above what a
// loaded machine's scheduling can take from a healthy launch, so that no verdict depends on timing
// noise; the maximum is 11.6 days. The default is derived from the case's work and is far above
// what a healthy kernel needs: 20 s, plus 1 ns a multiply-add on a GPU (an H200 does over 10^13 a
// second) or 1 us a multiply-add on the simulation (the emulator under the sanitizers), plus 10 ns
// a byte of C for its copy back, at most kMaxSeconds.
class LaunchDeadline {
 public:
  static constexpr double kMinSeconds = 1, kMaxSeconds = 1e6;
  // A decimal number of seconds in [kMinSeconds, kMaxSeconds] (rounded to whole milliseconds);
  // false with *error otherwise (not a number, NaN, out of range).
  static bool parse(const std::string& text, LaunchDeadline* out, std::string* error);
  // `seconds` brought into the range (NaN: the maximum).
  static LaunchDeadline clamped(double seconds);
  double seconds() const { return static_cast<double>(ms_) / 1000.0; }
  std::uint64_t milliseconds() const { return ms_; }

 private:
  std::uint64_t ms_ = 1000 * 1000 * 1000;  // kMaxSeconds
};

// A command's deadlines, parsed once where its options are (the CLI: --launch-deadline, else
// W8A16_LAUNCH_DEADLINE, read only by the commands that launch, so that a bad value fails those and
// never `--version`), and handed to its launchers: no launcher reads a process global.
struct DeadlinePolicy {
  std::uint64_t fixed_ms = 0;  // > 0: every launch's; 0: derived from each case's work
  LaunchDeadline deadline(const golden::Case& c, device::BackendKind backend) const;
  double seconds(const golden::Case& c, device::BackendKind backend) const { return deadline(c, backend).seconds(); }
  // Every launch's deadline from text (LaunchDeadline::parse); false with *error, unchanged.
  bool set_fixed(const std::string& text, std::string* error);
  // W8A16_LAUNCH_DEADLINE when set (set_fixed on it); true and unchanged when it is not set.
  bool from_environment(std::string* error);
};

// "entry point X, body Y, kernel Z, grid (x, y, z), block (x, y, z), N bytes of shared memory":
// what a HANG or FAULT line names.
std::string launch_text(const device::Plan& plan);

class CaseLauncher {
 public:
  virtual ~CaseLauncher() = default;
  virtual const char* name() const = 0;  // the backend's name ("cuda", "simulation")
  // The case on the backend. status is Errc::launch_timeout for a hang, Errc::context_lost for a
  // sticky error or a worker that died; the plan is filled in whenever the call was planned.
  virtual Launched launch(const golden::Case& c, const golden::CaseInputs& in) = 0;
  // False once this launcher can run no further case (a lost context it cannot replace).
  virtual bool usable() const { return true; }
  // Worker processes started so far (0 in process).
  virtual std::uint64_t restarts() const { return 0; }
  // The deadlines this launcher holds each launch to (a caller launching beside it uses the same).
  const DeadlinePolicy& deadlines() const { return deadlines_; }

 protected:
  explicit CaseLauncher(DeadlinePolicy deadlines) : deadlines_(deadlines) {}

 private:
  DeadlinePolicy deadlines_;
};

// What the in-process hang handler is told: the case and the plan that did not complete.
struct HangReport {
  golden::Case c;
  device::Plan plan;
  double deadline_s = 0;
  std::string text;  // "HANG: ... no completion within D s"
};
// Called on the watchdog's thread when an in-process launch passes its deadline; the process then
// exits with status 1 (a hung kernel cannot be cancelled in its own process). The handler writes
// what must survive (the reports, the regression). Without one, the HANG line is printed alone.
void set_hang_handler(std::function<void(const HangReport&)> handler);

// The same watchdog around launches that do not go through a launcher (run-operands, bench): armed
// for the guard's life.
class DeadlineGuard {
 public:
  explicit DeadlineGuard(HangReport report);
  ~DeadlineGuard();
  DeadlineGuard(const DeadlineGuard&) = delete;
  DeadlineGuard& operator=(const DeadlineGuard&) = delete;
};

class InProcessLauncher final : public CaseLauncher {
 public:
  explicit InProcessLauncher(device::Backend& backend, DeadlinePolicy deadlines = {})
      : CaseLauncher(deadlines), backend_(backend) {}
  const char* name() const override { return backend_.name(); }
  Launched launch(const golden::Case& c, const golden::CaseInputs& in) override;
  bool usable() const override { return !lost_; }

 private:
  device::Backend& backend_;
  bool lost_ = false;
};

// The worker's command line and the backend it stands for.
struct WorkerSpec {
  std::vector<std::string> argv;  // argv[0]: the executable (the CLI's own, /proc/self/exe)
  std::string backend_name;       // what name() says: "cuda" or "simulation"
  device::BackendKind backend_kind = device::BackendKind::simulation;  // what the deadlines derive from
};

// Its workers never outlive this process: each is killed and reaped when the launcher is done with
// it, and on SIGTERM, SIGINT, SIGHUP or SIGQUIT (handlers installed with the first worker, over a
// default action only, which kill and reap every live worker and then re-raise the signal) and at
// exit; after a SIGKILL the worker's lifeline (serve_cases) ends it.
class IsolatedLauncher final : public CaseLauncher {
 public:
  // registry and limits: the same module's, for planning here what the worker runs (plan_case),
  // so that a case whose worker died still names its kernel and grid.
  IsolatedLauncher(WorkerSpec spec, const device::KernelRegistry& registry, device::DeviceLimits limits,
                   DeadlinePolicy deadlines = {});
  ~IsolatedLauncher() override;
  IsolatedLauncher(const IsolatedLauncher&) = delete;
  IsolatedLauncher& operator=(const IsolatedLauncher&) = delete;
  const char* name() const override { return spec_.backend_name.c_str(); }
  Launched launch(const golden::Case& c, const golden::CaseInputs& in) override;
  bool usable() const override { return !broken_; }
  std::uint64_t restarts() const override { return started_; }

 private:
  bool start(std::string* why);
  void stop(bool kill_first);
  std::string exit_text();  // how the worker ended, after stop

  WorkerSpec spec_;
  const device::KernelRegistry& registry_;
  device::DeviceLimits limits_;
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
  int wait_status_ = 0;
  bool reaped_ = false;
  std::string buffer_;  // bytes read from the worker and not yet consumed
  std::uint64_t started_ = 0;
  unsigned failed_starts_ = 0;
  int inputs_fd_ = -1;  // the memfd the case's operands are written to; every worker holds it
  std::uint64_t inputs_size_ = 0;
  bool broken_ = false;
};

// The worker's loop (`w8a16check launch-worker`): "ready", then for every case line read from
// in_fd, with its operands read from inputs_fd (the launcher's memfd), "launching" right before
// the kernel runs and the result (status, whether it was planned, C). After a sticky error it
// returns (its context is lost): the caller exits. Returns 0 at the end of input. When in_fd's
// writer closes (the launcher's process ended, however it ended), the process exits at once, even
// with a launch hung: a worker never outlives its launcher.
int serve_cases(device::Backend& backend, int in_fd, int out_fd, int inputs_fd);

}  // namespace w8a16::props
