// SPDX-License-Identifier: MIT OR Apache-2.0
// Replaying recordings (.rec) against the emulator and, when present, the device.
#include "w8a16/properties/recordings.hpp"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>

#include "w8a16/properties/case_files.hpp"
#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/golden/files.hpp"
#include "w8a16/golden/recording.hpp"
#include "w8a16/properties/case_pipeline.hpp"
#include "w8a16/properties/case_runner.hpp"

namespace w8a16::props {
namespace {
namespace fs = std::filesystem;

// "" when `got` is what was recorded, else what differs (recording.hpp recorded_verdict).
std::string differs(const golden::RecordedOutput& want, const std::vector<std::uint16_t>& got) {
  return golden::recorded_verdict_text(want, &got, golden::recorded_verdict(want, &got));
}

RecordingsResult input_error(const std::string& why, bool unreadable = false) {
  RecordingsResult r;
  r.status = 2;
  r.error = why;
  r.unreadable = unreadable;
  return r;
}

}  // namespace

RecordingsResult replay_recordings(const std::vector<std::string>& paths, const RecordingsOptions& opt) {
  const std::string repro = "w8a16check repro --backend cuda" +
                            (opt.module.empty() ? "" : " --module " + golden::shown(opt.module));
  std::vector<std::string> files;
  for (const std::string& p : paths) {
    std::error_code ec;
    const fs::file_status st = fs::status(p, ec);
    if (fs::is_directory(st)) {
      std::vector<std::string> errors;
      const std::vector<std::string> found = files_under(p, ".rec", &errors);
      if (!errors.empty()) {
        std::string all;
        for (const std::string& e : errors) all += (all.empty() ? "" : "\n") + e;
        return input_error(all, true);
      }
      if (found.empty()) return input_error(golden::shown(p) + ": no .rec file in this folder: nothing to check");
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::exists(st)) {
      files.push_back(p);  // a regular file, or read_recording_file says what it is
    } else {
      return input_error("--recordings " + golden::shown(p) + ": no such file or folder");
    }
  }
  // Every file is read (and its GPU and its cases' cost checked) before anything runs.
  std::vector<golden::Recording> recs(files.size());
  std::vector<golden::Case> all_cases;
  std::vector<std::string> all_sources;
  RecordingsResult res;
  for (std::size_t f = 0; f < files.size(); ++f) {
    std::string error;
    if (!golden::read_recording_file(files[f], &recs[f], &error)) return input_error(error, true);
    if (!opt.gpu.empty() && !golden::recording_is_from_gpu(recs[f], opt.gpu, &error))
      return input_error(golden::shown(files[f]) + ": " + golden::escaped(error) + " (--gpu " + golden::quote(opt.gpu) +
                         ")");
    if (recs[f].outputs.empty())
      return input_error(golden::shown(files[f]) + ": the recording holds no case: nothing to check", true);
    if (!recs[f].length_verified)
      res.notes.push_back(golden::shown(files[f]) + ": recording version " + std::to_string(recs[f].header.version) +
                          ": unverifiable length (it has no trailer, so a copy cut after any case line would read "
                          "as complete); `w8a16check upgrade-recording` rewrites it as version " +
                          std::to_string(golden::kRecordingVersion) + " with the same bytes");
    for (std::size_t i = 0; i < recs[f].outputs.size(); ++i) {
      all_cases.push_back(recs[f].outputs[i].c);
      all_sources.push_back(golden::shown(files[f]) + " case " + std::to_string(i + 1));
    }
  }
  const std::string over = over_limits(all_cases, all_sources, opt.limits);
  if (!over.empty()) return input_error(over + "\nnothing was run");

  const std::uint32_t count = opt.shard_count == 0 ? 1 : opt.shard_count;
  std::size_t planned = 0;
  for (std::size_t i = 0; i < all_cases.size(); ++i) planned += i % count == opt.shard_index;
  RecordingsListener none;
  RecordingsListener& tell = opt.listener ? *opt.listener : none;
  std::atomic<std::size_t> done{0};
  tell.replay_started(planned, done, res.notes);
  // This shard's cases, in file order; each file is told as its cases come back.
  struct Item {
    std::size_t file, pos;  // the recording and the case's position in it
  };
  std::vector<Item> items;
  {
    std::size_t index = 0;
    for (std::size_t f = 0; f < files.size(); ++f)
      for (std::size_t i = 0; i < recs[f].outputs.size(); ++i)
        if (index++ % count == opt.shard_index) items.push_back({f, i});
  }
  std::size_t started = 0;  // files told so far
  RecordingFileTally tally;
  auto finish_file = [&] {
    tell.file_finished(tally);
    res.emulator_differ += tally.emulator_differ;
    res.device_differ += tally.device_differ;
    res.cases += tally.run;
    tally = RecordingFileTally{};
  };
  // Files before f are finished, and f is started.
  auto reach = [&](std::size_t f) {
    while (started <= f) {
      if (started > 0) finish_file();
      tell.file_started({golden::shown(files[started]), recs[started].header, recs[started].outputs.size(),
                         recs[started].length_verified});
      ++started;
    }
  };
  auto failed = [&](RecordedCaseFailure::Kind kind, const std::string& line, const std::string& what) {
    RecordedCaseFailure f;
    f.kind = kind, f.case_line = line, f.what = what;
    return f;
  };

  auto on_device_entry = [&](golden::EntryPoint e) {
    return opt.device_entries.empty() ||
           std::find(opt.device_entries.begin(), opt.device_entries.end(), e) != opt.device_entries.end();
  };
  // The device launches only the cases of the entry points it verifies (device_entries).
  class EntryFiltered : public CaseLauncher {
   public:
    EntryFiltered(CaseLauncher& inner, std::function<bool(golden::EntryPoint)> wanted)
        : CaseLauncher(inner.deadlines()), inner_(inner), wanted_(std::move(wanted)) {}
    const char* name() const override { return inner_.name(); }
    Launched launch(const golden::Case& c, const golden::CaseInputs& in) override {
      if (wanted_(c.entry)) return inner_.launch(c, in);
      Launched none;
      none.status = device::Status::error(device::Errc::kernel_missing, "not an entry point verified here (--entry)");
      return none;
    }
    bool usable() const override { return inner_.usable(); }
    std::uint64_t restarts() const override { return inner_.restarts(); }

   private:
    CaseLauncher& inner_;
    std::function<bool(golden::EntryPoint)> wanted_;
  };
  std::unique_ptr<EntryFiltered> filtered;
  if (opt.device && !opt.device_entries.empty())
    filtered = std::make_unique<EntryFiltered>(*opt.device, on_device_entry);
  CaseLauncher* device_launcher = filtered ? filtered.get() : opt.device;

  props::PipelineSteps steps;
  steps.done = [&](std::size_t j, props::CaseWork& w) {
    const std::size_t f = items[j].file;
    const golden::RecordedOutput& o = recs[f].outputs[items[j].pos];
    reach(f);
    ++tally.run;
    ++done;
    const std::string line = golden::format_case(o.c);
    if (!w.input_error.empty()) {
      tell.case_failed(failed(RecordedCaseFailure::Kind::inputs, line, w.input_error));
      res.failures.push_back(golden::shown(files[f]) + ": inputs: " + w.input_error + "\n  " + line);
      ++tally.emulator_differ;
      return true;
    }
    // Under a contract other than canonical the recording is still the evidence for the emulator's
    // pieces: it holds what this project's canonical kernels gave, and the emulator under canonical
    // must give it. The device is then held to the emulator under the contract, on the same operands.
    const ref::Conventions& held = opt.contract.for_entry(o.c.entry);
    const bool canonical = held.same_numerics(ref::canonical_conventions());
    const bool device_runs = opt.device && on_device_entry(o.c.entry);
    if (opt.device && !device_runs) ++res.device_not_run, ++tally.device_skipped;
    if (!w.contract_problem.empty() && (canonical || device_runs)) {
      // Nothing to hold the device to: a failure saying why.
      tell.case_failed(failed(RecordedCaseFailure::Kind::undefined, line, w.contract_problem));
      res.failures.push_back(golden::shown(files[f]) + ": " + w.contract_problem + "\n  " + line);
      ++res.undefined;
      if (canonical) ++tally.emulator_differ;
      else ++tally.device_differ;
      if (canonical) return true;
    }
    const std::vector<std::uint16_t> emulated = golden::used_outputs(o.c,
                                                                     canonical ? w.expected : w.canonical_expected);
    const std::string emu = differs(o, emulated);
    const std::vector<std::uint16_t> held_bytes = canonical || !w.contract_problem.empty()
                                                      ? emulated
                                                      : golden::used_outputs(o.c, w.expected);
    std::vector<std::uint16_t> on_device;
    std::string dev;
    if (w.launched && device_runs) {
      const props::Launched& got = w.got;
      const std::string where = got.planned ? "\n  " + props::launch_text(got.plan) : "";
      if (got.status.ok()) {
        on_device = golden::used_outputs(o.c, got.c_bits);
        if (canonical) {
          dev = differs(o, on_device);
        } else {
          for (std::size_t i = 0; i < on_device.size() && i < held_bytes.size() && dev.empty(); ++i)
            if (on_device[i] != held_bytes[i]) {
              char buf[96];
              std::snprintf(buf, sizeof buf, "output element %zu is 0x%04x, the contract gives 0x%04x", i,
                            static_cast<unsigned>(on_device[i]), static_cast<unsigned>(held_bytes[i]));
              dev = buf;
            }
          if (dev.empty() && on_device.size() != held_bytes.size()) dev = "the output's size differs";
        }
      } else if (got.status.code == device::Errc::launch_timeout) {
        // Every later launch could hang as long: the replay stops at the case that hung (the
        // pipeline launches nothing after it).
        res.hang = golden::shown(files[f]) + " case " + std::to_string(items[j].pos + 1) + ": " + line +
                   "\n  HANG: " + got.status.message + where;
        tell.case_failed(failed(RecordedCaseFailure::Kind::hang, line, res.hang));
        res.failures.push_back(res.hang);
        ++tally.device_differ;
        return false;
      } else if (got.status.code == device::Errc::context_lost) {
        ++res.faulted;
        dev = "FAULT: " + got.status.message + where;
      } else {
        dev = "launch failed: " + got.status.message;
      }
    }
    if (!emu.empty()) {
      ++tally.emulator_differ;
      // repro compares a backend with this same emulator: it reproduces nothing here unless the
      // device ran and its bytes differ from the emulator's.
      RecordedCaseFailure x = failed(RecordedCaseFailure::Kind::emulator, line, emu);
      if (canonical && opt.device && !on_device.empty() && on_device != emulated) x.explain = repro;
      x.device_agrees = canonical && opt.device && !on_device.empty() && on_device == emulated;
      tell.case_failed(x);
      res.failures.push_back(golden::shown(files[f]) + ": emulator vs recording: " + emu + "\n  " + line);
    }
    if (device_runs && !dev.empty()) {
      ++tally.device_differ;
      RecordedCaseFailure x = failed(RecordedCaseFailure::Kind::device, line, dev);
      if (!canonical) x.contract = held.name;
      // repro reproduces it under the contract's name where that name resolves (a library value);
      // a file's own name does not, so no line is offered then.
      const bool named = canonical || ref::find_conventions(held.name) != nullptr;
      if (named && !on_device.empty() && on_device != held_bytes)
        x.explain = repro + (canonical ? "" : " --contract " + held.name);
      tell.case_failed(x);
      res.failures.push_back(golden::shown(files[f]) + ": device (" + opt.device->name() + ") vs " +
                             (canonical ? std::string("recording")
                                        : "the emulator under contract " + held.name + " on the recorded operands") +
                             ": " + dev + "\n  " + line);
    }
    return true;
  };
  props::PipelineOptions po;
  po.contract = opt.contract;
  po.also_canonical = true;
  props::run_case_pipeline(
      items.size(), [&](std::size_t j) { return recs[items[j].file].outputs[items[j].pos].c; }, device_launcher, steps,
      po);
  // Every file is named, those with no case in this shard too; after a hang, none past its file.
  if (res.hang.empty() && !files.empty()) reach(files.size() - 1);
  if (started > 0) finish_file();
  res.files = files.size();
  res.status = res.emulator_differ == 0 && res.device_differ == 0 ? 0 : 1;
  tell.replay_finished(res);
  return res;
}

}  // namespace w8a16::props
