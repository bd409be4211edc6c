// SPDX-License-Identifier: MIT OR Apache-2.0
// Replaying recordings (.rec) against the emulator and, when present, the device.
#include "w8a16/properties/recordings.hpp"

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>

#include "w8a16/properties/case_files.hpp"
#include "w8a16/properties/progress.hpp"
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
  const std::string& cmd = opt.command;
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
  std::atomic<std::size_t> done{0};
  Heartbeat beat(cmd + ": recordings", [&] {
    return std::to_string(done.load()) + " of " + std::to_string(planned) + " recorded cases replayed";
  });
  for (const std::string& n : res.notes) std::printf("note: %s\n", n.c_str());
  // This shard's cases, in file order; each file's lines are printed as its cases come back.
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
  std::size_t printed = 0;  // files whose header line is out
  std::size_t file_emu_bad = 0, file_dev_bad = 0, file_run = 0, file_dev_skipped = 0;
  auto header = [&](std::size_t f) {
    const golden::RecordingHeader& h = recs[f].header;
    std::printf("recording %s: %s (compute capability %s, driver %s, CUDA %s, commit %s), %zu cases%s\n",
                golden::shown(files[f]).c_str(), golden::escaped(h.gpu).c_str(),
                golden::escaped(h.compute_capability).c_str(), golden::escaped(h.driver).c_str(),
                golden::escaped(h.cuda).c_str(), golden::escaped(h.commit).c_str(), recs[f].outputs.size(),
                recs[f].length_verified ? ", length verified by its trailer" : ", UNVERIFIABLE length (version 1)");
  };
  auto summary = [&] {
    std::printf("  emulator: %zu of %zu cases differ from the recording\n", file_emu_bad, file_run);
    if (opt.device && file_dev_skipped != 0)
      std::printf(
          "  device (%s): %zu of %zu cases differ from the recording (%zu of other entry points not run: --entry)\n",
          opt.device->name(), file_dev_bad, file_run - file_dev_skipped, file_dev_skipped);
    else if (opt.device)
      std::printf("  device (%s): %zu of %zu cases differ from the recording\n", opt.device->name(), file_dev_bad,
                  file_run);
    else std::printf("  device: not run (no GPU backend)\n");
    res.emulator_differ += file_emu_bad;
    res.device_differ += file_dev_bad;
    res.cases += file_run;
    file_emu_bad = file_dev_bad = file_run = file_dev_skipped = 0;
  };
  // Files before f are finished (their summaries printed), and f's header is out.
  auto reach = [&](std::size_t f) {
    while (printed <= f) {
      if (printed > 0) summary();
      header(printed++);
    }
  };

  auto on_device_entry = [&](golden::EntryPoint e) {
    return opt.device_entries.empty() ||
           std::find(opt.device_entries.begin(), opt.device_entries.end(), e) != opt.device_entries.end();
  };
  // The device launches only the cases of the entry points it verifies (device_entries).
  class EntryFiltered : public CaseLauncher {
   public:
    EntryFiltered(CaseLauncher& inner, std::function<bool(golden::EntryPoint)> wanted)
        : inner_(inner), wanted_(std::move(wanted)) {}
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
    ++file_run;
    ++done;
    const std::string line = golden::format_case(o.c);
    if (!w.input_error.empty()) {
      std::printf("FAIL %s\n  inputs: %s\n", line.c_str(), w.input_error.c_str());
      res.failures.push_back(golden::shown(files[f]) + ": inputs: " + w.input_error + "\n  " + line);
      ++file_emu_bad;
      return true;
    }
    if (!w.contract_problem.empty()) {  // nothing to compare the recording with: a failure saying why
      std::printf("FAIL %s\n  %s\n", line.c_str(), w.contract_problem.c_str());
      res.failures.push_back(golden::shown(files[f]) + ": " + w.contract_problem + "\n  " + line);
      ++file_emu_bad, ++res.undefined;
      return true;
    }
    const std::vector<std::uint16_t> emulated = golden::used_outputs(o.c, w.expected);
    const std::string emu = differs(o, emulated);
    std::vector<std::uint16_t> on_device;
    std::string dev;
    const bool device_runs = opt.device && on_device_entry(o.c.entry);
    if (opt.device && !device_runs) ++res.device_not_run, ++file_dev_skipped;
    if (w.launched && device_runs) {
      const props::Launched& got = w.got;
      const std::string where = got.planned ? "\n  " + props::launch_text(got.plan) : "";
      if (got.status.ok()) {
        on_device = golden::used_outputs(o.c, got.c_bits);
        dev = differs(o, on_device);
      } else if (got.status.code == device::Errc::launch_timeout) {
        // Every later launch could hang as long: the replay stops at the case that hung (the
        // pipeline launches nothing after it).
        res.hang = golden::shown(files[f]) + " case " + std::to_string(items[j].pos + 1) + ": " + line +
                   "\n  HANG: " + got.status.message + where;
        std::printf("HANG %s\n", res.hang.c_str());
        res.failures.push_back(res.hang);
        ++file_dev_bad;
        return false;
      } else if (got.status.code == device::Errc::context_lost) {
        ++res.faulted;
        dev = "FAULT: " + got.status.message + where;
      } else {
        dev = "launch failed: " + got.status.message;
      }
    }
    if (!emu.empty()) {
      ++file_emu_bad;
      // repro compares a backend with this same emulator: it reproduces nothing here unless the
      // device ran and its bytes differ from the emulator's.
      // Under another contract the device's canonical bytes differ from this emulator by design:
      // repro without that contract would show nothing, so no explain line is offered then.
      const ref::Conventions& held = opt.contract.for_entry(o.c.entry);
      const bool canonical = held.same_numerics(ref::canonical_conventions());
      const bool repro_shows = canonical && opt.device && !on_device.empty() && on_device != emulated;
      std::printf("FAIL emulator%s vs recording: %s\n  %s\n",
                  canonical ? "" : (" (contract " + held.name + ")").c_str(), emu.c_str(), line.c_str());
      if (!canonical)
        std::printf(
            "  (the recording holds what kernels keeping the canonical contract produced: under the contract %s "
            "the emulator differs wherever the two contracts do)\n",
            held.name.c_str());
      if (repro_shows) std::printf("  explain: %s '%s'\n", repro.c_str(), line.c_str());
      else if (canonical)
        std::printf(
            "  (the emulator differs from the recording: the model or the recording is wrong%s; repro would show "
            "no difference, as it compares a backend with this same emulator)\n",
            opt.device ? ", and this device agrees with the emulator" : "");
      res.failures.push_back(golden::shown(files[f]) + ": emulator" +
                             (canonical ? "" : " (contract " + held.name + ")") + " vs recording: " + emu + "\n  " +
                             line);
    }
    if (device_runs && !dev.empty()) {
      ++file_dev_bad;
      const bool repro_shows = !on_device.empty() && on_device != emulated;
      std::printf("FAIL device (%s) vs recording: %s\n  %s\n", opt.device->name(), dev.c_str(), line.c_str());
      if (repro_shows) std::printf("  explain: %s '%s'\n", repro.c_str(), line.c_str());
      res.failures.push_back(golden::shown(files[f]) + ": device (" + opt.device->name() + ") vs recording: " + dev +
                             "\n  " + line);
    }
    return true;
  };
  props::PipelineOptions po;
  po.contract = opt.contract;
  props::run_case_pipeline(
      items.size(), [&](std::size_t j) { return recs[items[j].file].outputs[items[j].pos].c; }, device_launcher, steps,
      po);
  // Every file is named, those with no case in this shard too; after a hang, none past its file.
  if (res.hang.empty() && !files.empty()) reach(files.size() - 1);
  if (printed > 0) summary();
  res.files = files.size();
  std::printf("%zu recorded cases: emulator %zu differ, device %s\n", res.cases, res.emulator_differ,
              opt.device ? (std::to_string(res.device_differ) + " differ").c_str() : "not run");
  if (!opt.contract.is_canonical())
    std::printf("  (the emulator held to the contract %s; the recordings hold canonical kernels' outputs)\n",
                opt.contract.describe().c_str());
  res.status = res.emulator_differ == 0 && res.device_differ == 0 ? 0 : 1;
  return res;
}

}  // namespace w8a16::props
