// SPDX-License-Identifier: MIT OR Apache-2.0
// Finding and running the CUDA toolkit's programs (external_tool.hpp).
#include "w8a16/properties/external_tool.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sstream>

extern char** environ;

namespace w8a16::props {

std::string find_cuda_tool(const std::string& name, const std::vector<std::string>& also, std::string* looked) {
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("PATH")) {
    std::istringstream in(path);
    for (std::string d; std::getline(in, d, ':');)
      if (!d.empty()) dirs.push_back(d);
  }
  if (const char* home = std::getenv("CUDA_HOME")) dirs.push_back(std::string(home) + "/bin");
  dirs.push_back("/usr/local/cuda/bin");
  dirs.insert(dirs.end(), also.begin(), also.end());
  for (const std::string& d : dirs) {
    const std::string c = d + "/" + name;
    if (::access(c.c_str(), X_OK) == 0) return c;
  }
  if (looked) {
    *looked = "no " + name + " on PATH, under $CUDA_HOME/bin or in /usr/local/cuda/bin";
    for (const std::string& d : also) *looked += ", " + d;
  }
  return "";
}

ToolRun run_tool(const std::vector<std::string>& args, double timeout_s, bool merge_stderr, std::size_t max_output) {
  ToolRun r;
  if (args.empty()) {
    r.error = "no program";
    return r;
  }
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) {
    r.error = std::string("pipe: ") + std::strerror(errno);
    return r;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
  if (merge_stderr) posix_spawn_file_actions_adddup2(&fa, out[1], STDERR_FILENO);
  else posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  // A group of its own: a deadline kills the tool and what it started (compute-sanitizer's target).
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, copy[0].c_str(), &fa, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  ::close(out[1]);
  if (rc != 0) {
    ::close(out[0]);
    r.error = "cannot run " + args[0] + ": " + std::strerror(rc);
    return r;
  }
  r.started = true;
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  char buf[1 << 16];
  for (;;) {
    int wait_ms = -1;
    if (timeout_s > 0) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) {
        r.timed_out = true;
        ::kill(-pid, SIGKILL);
        break;
      }
      wait_ms = static_cast<int>(std::min<long long>(left, 1000));
    }
    pollfd p{out[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    const ssize_t got = ::read(out[0], buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    if (r.output.size() < max_output)
      r.output.append(buf, std::min<std::size_t>(static_cast<std::size_t>(got), max_output - r.output.size()));
  }
  ::close(out[0]);
  // A program that closed its output and goes on running is still held to the deadline.
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, timeout_s > 0 && !r.timed_out ? WNOHANG : 0);
    if (done == pid) break;
    if (done < 0 && errno == EINTR) continue;
    if (done < 0) break;
    if (Clock::now() >= deadline) {
      r.timed_out = true;
      ::kill(-pid, SIGKILL);
      continue;
    }
    ::usleep(10'000);
  }
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

}  // namespace w8a16::props
