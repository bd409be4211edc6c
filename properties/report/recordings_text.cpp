// SPDX-License-Identifier: MIT OR Apache-2.0
// The recordings' replay as text (recordings_text.hpp).
#include "recordings_text.hpp"

#include <cstdio>

#include "w8a16/golden/files.hpp"

namespace w8a16::cli {

void RecordingsText::replay_started(std::size_t planned, const std::atomic<std::size_t>& done,
                                    const std::vector<std::string>& notes) {
  beat_ = std::make_unique<props::Heartbeat>(opt_.command + ": recordings", [&done, planned] {
    return std::to_string(done.load()) + " of " + std::to_string(planned) + " recorded cases replayed";
  });
  for (const std::string& n : notes) std::printf("note: %s\n", n.c_str());
}

void RecordingsText::file_started(const props::RecordingFileStart& f) {
  const golden::RecordingHeader& h = f.header;
  std::printf("recording %s: %s (compute capability %s, driver %s, CUDA %s, commit %s), %zu cases%s\n", f.path.c_str(),
              golden::escaped(h.gpu).c_str(), golden::escaped(h.compute_capability).c_str(),
              golden::escaped(h.driver).c_str(), golden::escaped(h.cuda).c_str(), golden::escaped(h.commit).c_str(),
              f.cases, f.length_verified ? ", length verified by its trailer" : ", UNVERIFIABLE length (version 1)");
}

void RecordingsText::case_failed(const props::RecordedCaseFailure& f) {
  using Kind = props::RecordedCaseFailure::Kind;
  const char* line = f.case_line.c_str();
  switch (f.kind) {
    case Kind::inputs: std::printf("FAIL %s\n  inputs: %s\n", line, f.what.c_str()); return;
    case Kind::undefined: std::printf("FAIL %s\n  %s\n", line, f.what.c_str()); return;
    case Kind::hang: std::printf("HANG %s\n", f.what.c_str()); return;
    case Kind::device:
      if (f.contract.empty())
        std::printf("FAIL device (%s) vs recording: %s\n  %s\n", opt_.device ? opt_.device->name() : "none",
                    f.what.c_str(), line);
      else
        std::printf("FAIL device (%s) vs the emulator under contract %s on the recorded operands: %s\n  %s\n",
                    opt_.device ? opt_.device->name() : "none", f.contract.c_str(), f.what.c_str(), line);
      break;
    case Kind::emulator:
      std::printf("FAIL emulator vs recording: %s\n  %s\n", f.what.c_str(), line);
      if (f.explain.empty())
        std::printf(
            "  (the emulator differs from the recording: the model or the recording is wrong%s; repro would show "
            "no difference, as it compares a backend with this same emulator)\n",
            opt_.device ? ", and this device agrees with the emulator" : "");
      break;
  }
  if (!f.explain.empty()) std::printf("  explain: %s '%s'\n", f.explain.c_str(), line);
}

void RecordingsText::file_finished(const props::RecordingFileTally& t) {
  std::printf("  emulator: %zu of %zu cases differ from the recording\n", t.emulator_differ, t.run);
  // Under another contract the device is held to the emulator under it, on the recorded operands.
  const char* against = opt_.contract.is_canonical() ? "the recording" : "the contract's bytes";
  if (opt_.device && t.device_skipped != 0)
    std::printf("  device (%s): %zu of %zu cases differ from %s (%zu of other entry points not run: --entry)\n",
                opt_.device->name(), t.device_differ, t.run - t.device_skipped, against, t.device_skipped);
  else if (opt_.device)
    std::printf("  device (%s): %zu of %zu cases differ from %s\n", opt_.device->name(), t.device_differ, t.run,
                against);
  else std::printf("  device: not run (no GPU backend)\n");
}

void RecordingsText::replay_finished(const props::RecordingsResult& r) {
  beat_.reset();
  std::printf("%zu recorded cases: emulator %zu differ, device %s\n", r.cases, r.emulator_differ,
              opt_.device ? (std::to_string(r.device_differ) + " differ").c_str() : "not run");
  if (!opt_.contract.is_canonical())
    std::printf(
        "  (the recordings hold canonical kernels' outputs: they check the emulator under canonical, the hardware "
        "evidence for its pieces; the device is held to the emulator under the contract %s on the recorded "
        "operands)\n",
        opt_.contract.describe().c_str());
}

}  // namespace w8a16::cli
