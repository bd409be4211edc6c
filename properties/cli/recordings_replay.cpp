// SPDX-License-Identifier: MIT OR Apache-2.0
// Replaying recordings (.rec) against the emulator and, when present, the device.
#include "recordings_replay.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <filesystem>

#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/golden/recording.hpp"
#include "w8a16/properties/case_runner.hpp"

namespace w8a16::cli {
namespace {
namespace fs = std::filesystem;

// "" when `got` is what was recorded, else what differs (the first differing output when the
// recording holds the full bytes).
std::string differs(const golden::RecordedOutput& want, const std::vector<std::uint16_t>& got) {
  const std::uint64_t d = golden::outputs_digest(got);
  if (d == want.digest && got.size() == want.outputs) return "";
  char buf[160];
  std::snprintf(buf, sizeof buf, "digest 0x%016" PRIx64 ", recorded 0x%016" PRIx64, d, want.digest);
  std::string s = buf;
  if (!want.bits.empty() && got.size() == want.bits.size()) {
    std::size_t count = 0, first = got.size();
    for (std::size_t i = 0; i < got.size(); ++i)
      if (got[i] != want.bits[i]) {
        if (first == got.size()) first = i;
        ++count;
      }
    const std::uint32_t n = want.c.n;
    std::snprintf(buf, sizeof buf, "; %zu outputs differ, first C[%zu][%zu] = 0x%04X, recorded 0x%04X", count,
                  first / n, first % n, got[first], want.bits[first]);
    s += buf;
  }
  return s;
}

}  // namespace

int replay_recordings(const std::vector<std::string>& paths, const std::string& gpu, device::Backend* device) {
  std::vector<std::string> files;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) {
      files.push_back(p);
    } else if (fs::is_directory(p, ec)) {
      std::vector<std::string> found;
      for (const auto& e : fs::recursive_directory_iterator(p, ec))
        if (e.is_regular_file() && e.path().extension() == ".rec") found.push_back(e.path().string());
      std::sort(found.begin(), found.end());
      if (found.empty()) {
        std::fprintf(stderr, "replay: %s: no .rec file in this folder: nothing to check\n", p.c_str());
        return 2;
      }
      files.insert(files.end(), found.begin(), found.end());
    } else {
      std::fprintf(stderr, "replay: --recordings %s: no such file or folder\n", p.c_str());
      return 2;
    }
  }
  // Every file is read (and its GPU checked) before anything runs.
  std::vector<golden::Recording> recs(files.size());
  for (std::size_t f = 0; f < files.size(); ++f) {
    std::string error;
    if (!golden::read_recording_file(files[f], &recs[f], &error)) {
      std::fprintf(stderr, "replay: %s\n", error.c_str());
      return 2;
    }
    if (!gpu.empty() && !golden::recording_is_from_gpu(recs[f], gpu, &error)) {
      std::fprintf(stderr, "replay: %s: %s (--gpu %s)\n", files[f].c_str(), error.c_str(), gpu.c_str());
      return 2;
    }
    if (recs[f].outputs.empty()) {
      std::fprintf(stderr, "replay: %s: the recording holds no case: nothing to check\n", files[f].c_str());
      return 2;
    }
  }
  std::size_t emu_bad = 0, dev_bad = 0, total = 0;
  for (std::size_t f = 0; f < files.size(); ++f) {
    const golden::RecordingHeader& h = recs[f].header;
    std::printf("recording %s: %s (compute capability %s, driver %s, CUDA %s, commit %s), %zu cases\n",
                files[f].c_str(), h.gpu.c_str(), h.compute_capability.c_str(), h.driver.c_str(), h.cuda.c_str(),
                h.commit.c_str(), recs[f].outputs.size());
    std::size_t file_emu_bad = 0, file_dev_bad = 0;
    for (const golden::RecordedOutput& o : recs[f].outputs) {
      ++total;
      golden::CaseInputs in;
      std::string why;
      if (!golden::regenerate_inputs(o.c, &in, &why)) {
        std::printf("FAIL %s\n  inputs: %s\n", golden::format_case(o.c).c_str(), why.c_str());
        ++file_emu_bad;
        continue;
      }
      const std::string emu = differs(o, golden::used_outputs(o.c, props::expected_output(o.c, in)));
      if (!emu.empty()) {
        ++file_emu_bad;
        std::printf("FAIL emulator vs recording: %s\n  %s\n  explain: w8a16check repro '%s'\n", emu.c_str(),
                    golden::format_case(o.c).c_str(), golden::format_case(o.c).c_str());
      }
      if (device) {
        const props::Launched got = props::launch_case(*device, o.c, in);
        const std::string dev = got.status.ok() ? differs(o, golden::used_outputs(o.c, got.c_bits))
                                                : "launch failed: " + got.status.message;
        if (!dev.empty()) {
          ++file_dev_bad;
          std::printf("FAIL device (%s) vs recording: %s\n  %s\n", device->name(), dev.c_str(),
                      golden::format_case(o.c).c_str());
        }
      }
    }
    std::printf("  emulator: %zu of %zu cases differ from the recording\n", file_emu_bad, recs[f].outputs.size());
    if (device)
      std::printf("  device (%s): %zu of %zu cases differ from the recording\n", device->name(), file_dev_bad,
                  recs[f].outputs.size());
    else
      std::printf("  device: not run (no GPU backend)\n");
    emu_bad += file_emu_bad;
    dev_bad += file_dev_bad;
  }
  std::printf("%zu recorded cases: emulator %zu differ, device %s\n", total, emu_bad,
              device ? (std::to_string(dev_bad) + " differ").c_str() : "not run");
  return emu_bad == 0 && dev_bad == 0 ? 0 : 1;
}

}  // namespace w8a16::cli
