// SPDX-License-Identifier: MIT OR Apache-2.0
// The case pipeline: the pool prepares and emulates cases ahead, the calling thread launches them
// in order and hands them back in order.
#include "w8a16/properties/case_pipeline.hpp"

#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>

#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/properties/work_limits.hpp"

namespace w8a16::props {
namespace {

struct Slot {
  golden::Case c;
  std::uint64_t bytes = 0;
  golden::CaseInputs in;
  CaseWork work;
  bool inputs_ready = false, expected_ready = false;
  std::exception_ptr error;
};

// Up to 2^27 multiply-adds (about a tenth of a second of emulation on one core) a case takes one
// thread and the pool's other threads work on other cases; a larger case takes one thread per
// 2^27, up to the pool's size, so that a model-sized case ahead of small ones does not hold
// their hand-back up for seconds.
unsigned emulation_threads(const golden::Case& c, unsigned pool) {
  const double macs = double(c.m) * double(c.n) * double(c.k);
  return static_cast<unsigned>(std::clamp(macs / double(1u << 27), 1.0, double(std::max(pool, 1u))));
}

std::uint64_t default_budget() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  const std::uint64_t memory = pages > 0 && page > 0 ? std::uint64_t(pages) * std::uint64_t(page) : 8ull << 30;
  return std::min<std::uint64_t>(memory / 4, 8ull << 30);
}

}  // namespace

PipelineResult run_case_pipeline(std::size_t count, const std::function<golden::Case(std::size_t)>& case_at,
                                 CaseLauncher* launcher, const PipelineSteps& steps, const PipelineOptions& opt) {
  const unsigned hw = std::thread::hardware_concurrency();
  const unsigned pool_size = opt.threads ? opt.threads : hw == 0 ? 1 : hw;
  const std::uint64_t budget = opt.max_bytes_ahead ? opt.max_bytes_ahead : default_budget();
  const std::size_t max_ahead = 4 * std::size_t{pool_size} + 4;

  std::mutex mutex;
  std::condition_variable cv;
  std::map<std::size_t, std::unique_ptr<Slot>> slots;
  std::size_t head = 0, next = 0;  // head: the next case to hand back; next: the next to claim
  std::uint64_t bytes_ahead = 0;
  bool quit = false;

  // Claims the next case when there is room (the head case always fits); nullptr otherwise.
  auto claim = [&](std::size_t* index) -> Slot* {
    if (quit || next >= count) return nullptr;
    if (next != head && (next - head >= max_ahead || bytes_ahead >= budget)) return nullptr;
    *index = next++;
    auto slot = std::make_unique<Slot>();
    Slot* s = slot.get();
    slots[*index] = std::move(slot);
    return s;
  };
  // Runs with the lock released; takes it to publish each stage.
  auto prepare = [&](std::unique_lock<std::mutex>& lock, std::size_t i, Slot* s) {
    lock.unlock();
    try {
      s->c = case_at(i);
      const std::uint64_t b = case_cost(s->c).host_bytes;  // what it holds while in flight
      lock.lock();
      s->bytes = b;
      bytes_ahead += b;
      lock.unlock();
      std::string error;
      if (!golden::regenerate_inputs(s->c, &s->in, &error)) s->work.input_error = error;
      else {
        s->work.specials = golden::special_classes(s->c, s->in);
        s->work.lone = golden::find_lone_special(s->c, s->in);
      }
      // A case the contract leaves undefined has no expected bytes: it is never compared, and
      // never launched either (NUMERICS.md 2.4: a failure that says so, never a comparison).
      if (s->work.input_error.empty()) s->work.contract_problem = contract_case_problem(s->c, s->in, opt.contract);
      lock.lock();
      s->inputs_ready = true;
      cv.notify_all();
      lock.unlock();
      // The launch reads the operands meanwhile: both only read them.
      if (s->work.input_error.empty() && s->work.contract_problem.empty())
        s->work.expected = expected_output(s->c, s->in, emulation_threads(s->c, pool_size), opt.contract);
      if (s->work.input_error.empty() && opt.also_canonical &&
          !opt.contract.for_entry(s->c.entry).same_numerics(ref::canonical_conventions()))
        s->work.canonical_expected = expected_output(s->c, s->in, emulation_threads(s->c, pool_size));
    } catch (...) {
      if (!lock.owns_lock()) lock.lock();
      s->error = std::current_exception();
      lock.unlock();
    }
    if (!lock.owns_lock()) lock.lock();
    s->inputs_ready = true;  // also after an exception: the calling thread rethrows it
    s->expected_ready = true;
    cv.notify_all();
  };
  auto pool_loop = [&] {
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      if (quit || next >= count) return;
      std::size_t i = 0;
      if (Slot* s = claim(&i)) prepare(lock, i, s);
      else cv.wait(lock);
    }
  };

  std::vector<std::thread> pool;
  // A thread the system refuses leaves the work to those already running (reference/parallel.hpp
  // does the same); with none, the calling thread prepares each case itself.
  try {
    for (unsigned t = 0; t < pool_size && t < count; ++t) pool.emplace_back(pool_loop);
  } catch (const std::system_error&) {}
  struct Joiner {
    std::mutex& mutex;
    std::condition_variable& cv;
    bool& quit;
    std::vector<std::thread>& pool;
    ~Joiner() {
      {
        std::lock_guard<std::mutex> lock(mutex);
        quit = true;
      }
      cv.notify_all();
      for (std::thread& t : pool) t.join();
    }
  } joiner{mutex, cv, quit, pool};

  PipelineResult r;
  for (std::size_t i = 0; i < count; ++i) {
    if (steps.before && !steps.before(i)) {
      r.end = PipelineEnd::stopped;
      break;
    }
    Slot* s = nullptr;
    {
      std::unique_lock<std::mutex> lock(mutex);
      if (pool.empty()) {
        std::size_t claimed = 0;
        Slot* own = claim(&claimed);
        prepare(lock, claimed, own);
      }
      cv.wait(lock, [&] { return slots.count(i) && slots[i]->inputs_ready; });
      s = slots[i].get();
    }
    if (s->error) std::rethrow_exception(s->error);
    if (launcher && s->work.input_error.empty() && s->work.contract_problem.empty()) {
      s->work.got = launcher->launch(s->c, s->in);
      s->work.launched = true;
    }
    CaseWork work;
    {
      std::unique_lock<std::mutex> lock(mutex);
      cv.wait(lock, [&] { return s->expected_ready; });
      if (s->error) std::rethrow_exception(s->error);
      work = std::move(s->work);
      work.c = s->c;
      bytes_ahead -= s->bytes;
      slots.erase(i);
      head = i + 1;
    }
    cv.notify_all();
    ++r.handed;
    const bool hang = work.launched && work.got.status.code == device::Errc::launch_timeout;
    const bool go = !steps.done || steps.done(i, work);
    if (hang) {
      r.end = PipelineEnd::hang;
      break;
    }
    if (!go) {
      r.end = PipelineEnd::stopped;
      break;
    }
  }
  return r;
}

}  // namespace w8a16::props
