// SPDX-License-Identifier: MIT OR Apache-2.0
// The launchers: deadlines on every launch, and the worker processes that keep a kernel's hang,
// fault or crash out of the process that writes the verdict.
#include "w8a16/properties/launcher.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "w8a16/golden/case.hpp"
#include "w8a16/golden/files.hpp"
#include "w8a16/properties/work_limits.hpp"

extern char** environ;

namespace w8a16::props {
namespace {

using Clock = std::chrono::steady_clock;

// One watchdog for the in-process launches: armed before a plan executes, disarmed when the
// launch returns; on expiry it runs the hang handler and ends the process.
class Watchdog {
 public:
  static Watchdog& get() {
    static Watchdog* w = new Watchdog();  // never destroyed: its thread may outlive main's statics
    return *w;
  }
  void set_handler(std::function<void(const HangReport&)> h) {
    std::lock_guard<std::mutex> lock(mutex_);
    handler_ = std::move(h);
  }
  void arm(HangReport report) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!thread_started_) {
      std::thread([this] { loop(); }).detach();
      thread_started_ = true;
    }
    // A guard over several launches may pass a product: it is held to the range here, so that no
    // deadline overflows the clock into an instant, false HANG.
    until_ = Clock::now() + std::chrono::milliseconds(LaunchDeadline::clamped(report.deadline_s).milliseconds());
    report_ = std::move(report);
    armed_ = true;
    cv_.notify_all();
  }
  void disarm() {
    std::lock_guard<std::mutex> lock(mutex_);
    armed_ = false;
    cv_.notify_all();
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      if (!armed_) {
        cv_.wait(lock);
        continue;
      }
      if (cv_.wait_until(lock, until_) == std::cv_status::timeout && armed_ && Clock::now() >= until_) {
        const HangReport r = report_;
        auto handler = handler_;
        lock.unlock();
        std::fflush(stdout);
        if (handler) {
          handler(r);
        } else {
          // No listener: the process still ends saying why. Straight to descriptor 2 (write(2),
          // POSIX): no stdio buffer to flush and no stream lock that another thread may hold.
          const std::string line = r.text + "\n";
          for (std::size_t at = 0; at < line.size();) {
            const ssize_t n = ::write(STDERR_FILENO, line.data() + at, line.size() - at);
            if (n <= 0) break;
            at += static_cast<std::size_t>(n);
          }
        }
        std::fflush(stdout);
        std::fflush(stderr);
        std::_Exit(1);  // the hung launch holds the device: no destructor may wait on it
      }
    }
  }
  std::mutex mutex_;
  std::condition_variable cv_;
  std::function<void(const HangReport&)> handler_;
  HangReport report_;
  Clock::time_point until_;
  bool armed_ = false, thread_started_ = false;
};

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", s);
  return buf;
}

std::string hang_text(const golden::Case& c, const device::Plan* plan, double deadline) {
  return "HANG: " + golden::format_case(c) + "\n  " + (plan ? launch_text(*plan) : std::string("not planned")) +
         "\n  no completion within " + seconds_text(deadline) +
         " s of the launch (--launch-deadline, W8A16_LAUNCH_DEADLINE)";
}

// ---- the pipe protocol between the launcher and its worker ----------------------------------
// launcher -> worker: per case "case <A bytes> <W bytes> <S bytes> <case line>\n", with A, W and S
// (in that order, host order: both ends are this binary) already written at offset 0 of the
// inputs file, a memfd the worker holds as kInputsFd: the operands are regenerated once, by the
// launcher, and cross no pipe. worker -> launcher: "ready\n"; per case "launching\n" (the plan is
// about to execute), then "result <errc> <planned 0|1> <elements> <message bytes>\n", the
// message, the elements of C (uint16).
constexpr int kInputsFd = 3;

bool pwrite_all(int fd, const void* data, std::size_t n, off_t offset) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::pwrite(fd, p, n, offset);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
    offset += w;
  }
  return true;
}

bool write_all(int fd, const void* data, std::size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

enum class ReadEnd { ok, eof, timeout };

// Appends at least one byte to *buffer unless the deadline passes or the pipe closes.
ReadEnd fill(int fd, std::string* buffer, Clock::time_point deadline) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return ReadEnd::timeout;
    pollfd p{fd, POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    char buf[1 << 16];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return ReadEnd::eof;
    buffer->append(buf, static_cast<std::size_t>(n));
    return ReadEnd::ok;
  }
}

ReadEnd read_line(int fd, std::string* buffer, Clock::time_point deadline, std::string* line) {
  for (;;) {
    const std::size_t eol = buffer->find('\n');
    if (eol != std::string::npos) {
      *line = buffer->substr(0, eol);
      buffer->erase(0, eol + 1);
      return ReadEnd::ok;
    }
    if (buffer->size() > 4096) return ReadEnd::eof;  // no line of the protocol is this long
    if (const ReadEnd e = fill(fd, buffer, deadline); e != ReadEnd::ok) return e;
  }
}

ReadEnd read_bytes(int fd, std::string* buffer, Clock::time_point deadline, std::size_t n, std::string* out) {
  while (buffer->size() < n)
    if (const ReadEnd e = fill(fd, buffer, deadline); e != ReadEnd::ok) return e;
  *out = buffer->substr(0, n);
  buffer->erase(0, n);
  return ReadEnd::ok;
}

Clock::time_point after(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

// Worker startup (driver, context, module load) and a case's preparation (its operands
// regenerated and uploaded) have bounds of their own, far above their cost.
constexpr double kStartSeconds = 120, kPrepareSeconds = 300;

}  // namespace

bool LaunchDeadline::parse(const std::string& text, LaunchDeadline* out, std::string* error) {
  char* end = nullptr;
  const double v = text.empty() ? 0 : std::strtod(text.c_str(), &end);
  if (text.empty() || !end || *end != '\0' || !std::isfinite(v) || v < kMinSeconds || v > kMaxSeconds) {
    *error = "launch deadline " + golden::quote(text) + " must be a number of seconds from 1 to 1000000 (one launch's)";
    return false;
  }
  *out = clamped(v);
  return true;
}

LaunchDeadline LaunchDeadline::clamped(double seconds) {
  LaunchDeadline d;
  if (std::isnan(seconds)) return d;
  const double s = std::min(std::max(seconds, kMinSeconds), kMaxSeconds);
  d.ms_ = static_cast<std::uint64_t>(std::llround(s * 1000.0));
  return d;
}

LaunchDeadline DeadlinePolicy::deadline(const golden::Case& c, device::BackendKind backend) const {
  if (fixed_ms > 0) return LaunchDeadline::clamped(static_cast<double>(fixed_ms) / 1000.0);
  const double macs = double(c.m) * double(c.n) * double(c.k);
  const double c_bytes = 2.0 * (double(c.m) + golden::kOutputGuardRows) * double(c.c_row_stride);
  return LaunchDeadline::clamped(20.0 + macs * (backend == device::BackendKind::cuda ? 1e-9 : 1e-6) + c_bytes * 1e-8);
}

bool DeadlinePolicy::set_fixed(const std::string& text, std::string* error) {
  LaunchDeadline d;
  if (!LaunchDeadline::parse(text, &d, error)) return false;
  fixed_ms = d.milliseconds();
  return true;
}

bool DeadlinePolicy::from_environment(std::string* error) {
  const char* env = std::getenv("W8A16_LAUNCH_DEADLINE");
  if (!env || !*env) return true;
  if (set_fixed(env, error)) return true;
  *error = "W8A16_LAUNCH_DEADLINE: " + *error;
  return false;
}

std::string launch_text(const device::Plan& p) {
  char buf[320];
  std::snprintf(
      buf, sizeof buf,
      "entry point %s, body %s, kernel %s, grid (%u, %u, %u), block (%u, %u, %u), %u bytes of dynamic shared memory",
      device::entry_name(p.entry), device::body_name(p.body), p.kernel_name, p.grid.x, p.grid.y, p.grid.z, p.block.x,
      p.block.y, p.block.z, p.dynamic_smem);
  return buf;
}

void set_hang_handler(std::function<void(const HangReport&)> handler) {
  Watchdog::get().set_handler(std::move(handler));
}

DeadlineGuard::DeadlineGuard(HangReport report) {
  if (report.text.empty()) report.text = "HANG: no completion within " + seconds_text(report.deadline_s) + " s";
  Watchdog::get().arm(std::move(report));
}
DeadlineGuard::~DeadlineGuard() { Watchdog::get().disarm(); }

// ---- in process ---------------------------------------------------------------------------

Launched InProcessLauncher::launch(const golden::Case& c, const golden::CaseInputs& in) {
  if (lost_) {
    Launched r;
    r.status = device::Status::error(device::Errc::context_lost, "not run: the context was lost by an earlier case");
    return r;
  }
  const double deadline = deadlines().seconds(c, backend_.kind());
  bool armed = false;
  Launched r = launch_case(backend_, c, in, [&](const device::Plan& p) {
    Watchdog::get().arm(HangReport{c, p, deadline, hang_text(c, &p, deadline)});
    armed = true;
  });
  if (armed) Watchdog::get().disarm();
  if (r.status.code == device::Errc::context_lost) lost_ = true;
  return r;
}

// ---- workers that never outlive the process that started them ----------------------------
// A worker dies with its launcher's process on every path: the launcher kills and reaps it when it
// is done with it (stop), and on SIGTERM, SIGINT, SIGHUP and SIGQUIT (what `timeout`, a CI cancel
// and a terminal send) and at exit the handlers below kill and reap every live one before the
// process ends; a SIGKILL leaves no handler, and then the worker's own lifeline (serve_cases) sees
// its request pipe close and ends itself. PR_SET_PDEATHSIG is not used: it follows the thread that
// spawned the worker, and a launcher outlives the campaign thread that first started its worker.
constexpr int kMaxWorkers = 256;
std::atomic<pid_t> g_workers[kMaxWorkers];  // 0: a free slot; read by signal handlers (lock-free)
static_assert(std::atomic<pid_t>::is_always_lock_free, "the signal handlers read the worker table");

void register_worker(pid_t pid) {
  for (std::atomic<pid_t>& w : g_workers) {
    pid_t free_slot = 0;
    if (w.compare_exchange_strong(free_slot, pid)) return;
  }
}

void unregister_worker(pid_t pid) {
  for (std::atomic<pid_t>& w : g_workers) {
    pid_t mine = pid;
    if (w.compare_exchange_strong(mine, 0)) return;
  }
}

// Kills and reaps every registered worker; async-signal-safe (kill, waitpid, nanosleep). A worker
// whose kernel is being torn down is waited on for at most 10 s.
void kill_and_reap_workers() {
  for (std::atomic<pid_t>& w : g_workers) {
    const pid_t pid = w.exchange(0);
    if (pid <= 0) continue;
    ::kill(pid, SIGKILL);
    for (int i = 0; i < 1000; ++i) {
      const pid_t r = ::waitpid(pid, nullptr, WNOHANG);
      if (r == pid || (r < 0 && errno != EINTR)) break;
      const timespec ten_ms{0, 10 * 1000 * 1000};
      ::nanosleep(&ten_ms, nullptr);
    }
  }
}

void on_terminating_signal(int sig) {
  const int saved = errno;
  kill_and_reap_workers();
  // Then the signal's own default action: the process ends as the sender meant (its status says so).
  ::signal(sig, SIG_DFL);
  ::raise(sig);
  errno = saved;
}

// Once per process, before the first worker: the handlers (only over a default action: a signal
// the caller ignores or handles stays so) and the exit hook.
void install_worker_reapers() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT}) {
      struct sigaction old {};
      if (::sigaction(sig, nullptr, &old) != 0 || (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL) continue;
      struct sigaction sa {};
      sa.sa_handler = on_terminating_signal;
      sigemptyset(&sa.sa_mask);
      ::sigaction(sig, &sa, nullptr);
    }
    std::atexit(kill_and_reap_workers);
  });
}

// ---- in a worker process -----------------------------------------------------------------

IsolatedLauncher::IsolatedLauncher(WorkerSpec spec, const device::KernelRegistry& registry, device::DeviceLimits limits,
                                   DeadlinePolicy deadlines)
    : CaseLauncher(deadlines), spec_(std::move(spec)), registry_(registry), limits_(limits) {}

IsolatedLauncher::~IsolatedLauncher() {
  stop(true);
  if (inputs_fd_ >= 0) ::close(inputs_fd_);
}

bool IsolatedLauncher::start(std::string* why) {
  // A worker that died must not take this process with it when the next request is written.
  ::signal(SIGPIPE, SIG_IGN);
  install_worker_reapers();
  if (inputs_fd_ < 0) {
    inputs_fd_ = ::memfd_create("w8a16-case-inputs", MFD_CLOEXEC);
    if (inputs_fd_ < 0) {
      *why = std::string("memfd_create: ") + std::strerror(errno);
      return false;
    }
    inputs_size_ = 0;
  }
  int to[2], from[2];
  if (::pipe2(to, O_CLOEXEC) != 0) {
    *why = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  if (::pipe2(from, O_CLOEXEC) != 0) {
    *why = std::string("pipe: ") + std::strerror(errno);
    ::close(to[0]);
    ::close(to[1]);
    return false;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, to[0], 0);
  posix_spawn_file_actions_adddup2(&fa, from[1], 1);
  posix_spawn_file_actions_adddup2(&fa, inputs_fd_, kInputsFd);  // dup2 clears close-on-exec
  std::vector<std::string> args = spec_.argv;
  args.insert(args.end(), {"--inputs-fd", std::to_string(kInputsFd)});
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(to[0]);
  ::close(from[1]);
  if (rc != 0) {
    ::close(to[1]);
    ::close(from[0]);
    *why = "cannot start " + spec_.argv[0] + ": " + std::strerror(rc);
    return false;
  }
  register_worker(pid);
  pid_ = pid;
  to_ = to[1];
  from_ = from[0];
  reaped_ = false;
  buffer_.clear();
  ++started_;
  std::string line;
  const ReadEnd e = read_line(from_, &buffer_, after(kStartSeconds), &line);
  if (e == ReadEnd::ok && line == "ready") return true;
  if (e == ReadEnd::ok && line.rfind("error ", 0) == 0) {
    *why = line.substr(6);
    stop(true);
    return false;
  }
  stop(true);
  *why = e == ReadEnd::timeout ? "the launch worker did not start within " + seconds_text(kStartSeconds) + " s"
                               : "the launch worker ended before it was ready (" + exit_text() + ")";
  return false;
}

void IsolatedLauncher::stop(bool kill_first) {
  if (to_ >= 0) ::close(to_);
  if (from_ >= 0) ::close(from_);
  to_ = from_ = -1;
  if (pid_ <= 0) return;
  if (kill_first) ::kill(pid_, SIGKILL);
  // A process whose kernel still runs can take a while to be torn down; it is not waited on forever.
  const auto until = after(kill_first ? 30 : 60);
  for (;;) {
    const pid_t r = ::waitpid(pid_, &wait_status_, WNOHANG);
    if (r == pid_ || (r < 0 && errno != EINTR)) {
      reaped_ = r == pid_;
      break;
    }
    if (Clock::now() >= until) {
      if (!kill_first) {
        ::kill(pid_, SIGKILL);
        kill_first = true;
        continue;
      }
      reaped_ = false;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  unregister_worker(pid_);
  pid_ = -1;
}

std::string IsolatedLauncher::exit_text() {
  if (!reaped_) return "not reaped";
  if (WIFSIGNALED(wait_status_)) {
    const int sig = WTERMSIG(wait_status_);
    return "killed by signal " + std::to_string(sig) + " (" + (strsignal(sig) ? strsignal(sig) : "?") + ")";
  }
  if (WIFEXITED(wait_status_)) return "exit status " + std::to_string(WEXITSTATUS(wait_status_));
  return "ended";
}

Launched IsolatedLauncher::launch(const golden::Case& c, const golden::CaseInputs& in) {
  Launched r;
  const device::Planned planned = plan_case(c, registry_, limits_);
  auto fail = [&](device::Errc code, const std::string& why) {
    r.status = device::Status::error(code, why);
    r.planned = planned.ok();
    if (r.planned) r.plan = planned.plan;
    return r;
  };
  if (broken_) return fail(device::Errc::context_lost, "not run: the launch worker could not be started again");
  if (pid_ <= 0) {
    std::string why;
    if (!start(&why)) {
      // Twice in a row: the device is gone, not this case's kernel.
      if (++failed_starts_ >= 2) broken_ = true;
      return fail(device::Errc::context_lost, "the launch worker could not start: " + why);
    }
  }
  const std::size_t a_bytes = in.a_bits.size() * 2, w_bytes = in.w_e4m3.size(), s_bytes = in.s_f32.size() * 4;
  const std::uint64_t total = a_bytes + w_bytes + s_bytes;
  if (total > inputs_size_) {
    if (::ftruncate(inputs_fd_, static_cast<off_t>(total)) != 0)
      return fail(device::Errc::backend_error, std::string("the inputs file: ftruncate: ") + std::strerror(errno));
    inputs_size_ = total;
  }
  if (!pwrite_all(inputs_fd_, in.a_bits.data(), a_bytes, 0) ||
      !pwrite_all(inputs_fd_, in.w_e4m3.data(), w_bytes, static_cast<off_t>(a_bytes)) ||
      !pwrite_all(inputs_fd_, in.s_f32.data(), s_bytes, static_cast<off_t>(a_bytes + w_bytes)))
    return fail(device::Errc::backend_error, std::string("the inputs file: write: ") + std::strerror(errno));
  const std::string line = "case " + std::to_string(a_bytes) + " " + std::to_string(w_bytes) + " " +
                           std::to_string(s_bytes) + " " + golden::format_case(c) + "\n";
  if (!write_all(to_, line.data(), line.size())) {
    stop(true);
    return fail(device::Errc::context_lost, "the launch worker ended before it took the case (" + exit_text() + ")");
  }
  std::string msg;
  ReadEnd e = read_line(from_, &buffer_, after(kPrepareSeconds), &msg);
  if (e == ReadEnd::ok && msg == "launching") {
    failed_starts_ = 0;
    const double deadline = deadlines().seconds(c, spec_.backend_kind);
    e = read_line(from_, &buffer_, after(deadline), &msg);
    if (e == ReadEnd::timeout) {
      stop(true);
      return fail(device::Errc::launch_timeout,
                  "no completion within " + seconds_text(deadline) +
                      " s of the launch (--launch-deadline, W8A16_LAUNCH_DEADLINE); the launch worker was killed");
    }
  }
  if (e == ReadEnd::timeout) {
    stop(true);
    return fail(device::Errc::context_lost, "the launch worker did not launch the case within " +
                                                seconds_text(kPrepareSeconds) + " s; it was killed");
  }
  unsigned code = 0, was_planned = 0;
  unsigned long long elements = 0, bytes = 0;
  if (e != ReadEnd::ok ||
      std::sscanf(msg.c_str(), "result %u %u %llu %llu", &code, &was_planned, &elements, &bytes) != 4) {
    const bool launched = msg == "launching";
    stop(e == ReadEnd::ok);
    return fail(device::Errc::context_lost, std::string("the launch worker died ") +
                                                (launched ? "during the launch" : "before the launch") + " (" +
                                                exit_text() + ")");
  }
  std::string text, bits;
  const auto body_deadline = after(kPrepareSeconds);
  if (read_bytes(from_, &buffer_, body_deadline, bytes, &text) != ReadEnd::ok ||
      read_bytes(from_, &buffer_, body_deadline, 2 * elements, &bits) != ReadEnd::ok) {
    stop(true);
    return fail(device::Errc::context_lost,
                "the launch worker ended in the middle of its result (" + exit_text() + ")");
  }
  r.status = device::Status{static_cast<device::Errc>(code), text};
  r.planned = was_planned != 0 && planned.ok();
  if (r.planned) r.plan = planned.plan;
  r.c_bits.resize(elements);
  if (elements) std::memcpy(r.c_bits.data(), bits.data(), bits.size());
  // The worker's context is unusable after a sticky error: it ends, and the next case starts a
  // fresh one.
  if (r.status.code == device::Errc::context_lost) stop(false);
  return r;
}

int serve_cases(device::Backend& backend, int in_fd, int out_fd, int inputs_fd) {
  // The lifeline: the request pipe's write end lives only in the launcher's process, so it closes
  // when that process ends, however it ends (a SIGKILL included). A hung launch never reads again,
  // so a thread of its own watches for the close and ends the worker, hung kernel and all.
  std::thread([in_fd] {
    pollfd p{in_fd, 0, 0};  // no events asked: poll returns on POLLHUP or POLLERR alone
    for (;;) {
      const int r = ::poll(&p, 1, -1);
      if (r > 0 || (r < 0 && errno != EINTR)) break;
    }
    std::_Exit(0);
  }).detach();
  auto say = [&](const std::string& s) { return write_all(out_fd, s.data(), s.size()); };
  if (!say("ready\n")) return 1;
  std::string buffer, line;
  const auto forever = Clock::time_point::max() - std::chrono::hours(24 * 365);
  for (;;) {
    if (read_line(in_fd, &buffer, forever, &line) != ReadEnd::ok) return 0;
    golden::Case c;
    std::string error;
    Launched got;
    unsigned long long a_bytes = 0, w_bytes = 0, s_bytes = 0;
    int used = 0;
    void* map = MAP_FAILED;
    std::size_t total = 0;
    if (std::sscanf(line.c_str(), "case %llu %llu %llu %n", &a_bytes, &w_bytes, &s_bytes, &used) != 3 || used <= 0 ||
        !golden::parse_case(line.substr(static_cast<std::size_t>(used)), &c, &error)) {
      got.status = device::Status::error(device::Errc::backend_error,
                                         "launch worker: the case line: " +
                                             (error.empty() ? golden::escaped(line) : error));
    } else if (const CaseCost cost = case_cost(c);
               a_bytes != cost.a_bytes || w_bytes != cost.w_bytes || s_bytes != cost.s_bytes) {
      got.status = device::Status::error(device::Errc::backend_error,
                                         "launch worker: the operand sizes do not match the case line");
    } else {
      total = static_cast<std::size_t>(a_bytes + w_bytes + s_bytes);
      map = ::mmap(nullptr, total, PROT_READ, MAP_SHARED, inputs_fd, 0);
      if (map == MAP_FAILED)
        got.status = device::Status::error(device::Errc::backend_error,
                                           std::string("launch worker: the inputs file: mmap: ") +
                                               std::strerror(errno));
    }
    if (map == MAP_FAILED) {
      if (!say("launching\n")) return 1;
    } else {
      const auto* base = static_cast<const unsigned char*>(map);
      OperandView in;
      in.a = reinterpret_cast<const std::uint16_t*>(base);
      in.a_count = a_bytes / 2;
      in.w = base + a_bytes;
      in.w_count = w_bytes;
      in.s = reinterpret_cast<const float*>(base + a_bytes + w_bytes);
      in.s_count = s_bytes / 4;
      bool said = false;
      got = launch_case(backend, c, in, [&](const device::Plan&) { said = say("launching\n"); });
      ::munmap(map, total);
      if (!said && !say("launching\n")) return 1;
    }
    const std::string head = "result " + std::to_string(static_cast<unsigned>(got.status.code)) + " " +
                             (got.planned ? "1 " : "0 ") + std::to_string(got.c_bits.size()) + " " +
                             std::to_string(got.status.message.size()) + "\n";
    if (!say(head) || !say(got.status.message) ||
        !write_all(out_fd, got.c_bits.data(), got.c_bits.size() * sizeof(std::uint16_t)))
      return 1;
    if (got.status.code == device::Errc::context_lost) return 0;
  }
}

}  // namespace w8a16::props
