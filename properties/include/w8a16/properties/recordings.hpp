// SPDX-License-Identifier: MIT OR Apache-2.0
// Replaying recordings (.rec): the emulator (and the device, when one is given) against outputs
// recorded on hardware. `replay --recordings` and `verify` both use it.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "w8a16/device/backend.hpp"
#include "w8a16/golden/recording.hpp"
#include "w8a16/properties/contract_choice.hpp"
#include "w8a16/properties/launcher.hpp"
#include "w8a16/properties/work_limits.hpp"

namespace w8a16::props {

class RecordingsListener;

struct RecordingsOptions {
  std::string command = "replay";  // names the messages
  std::string gpu;                 // non-empty: every recording must be from this GPU (recording_is_from_gpu)
  CaseLauncher* device = nullptr;  // also run each case here and compare with the recording
  std::string module;              // the --module the device loaded ("" for the embedded one)
  WorkLimits limits;               // every recorded case must fit before anything runs
  std::uint32_t shard_index = 0, shard_count = 1;  // replay the recorded cases i with i % count == index
  // Non-empty: only recorded cases of these entry points run on `device` (verify --entry); the
  // others are compared on the emulator alone. A module given with --module need hold only the
  // kernels of the entry points verified (docs/KERNEL_ABI.md 1), so a case of another entry point
  // would be a launch the module cannot make, not a finding about it.
  std::vector<golden::EntryPoint> device_entries;
  // The contract the emulator's side is computed under (NUMERICS.md 2.4). The recordings hold what
  // this project's kernels, which keep `canonical`, produced: under another contract the emulator
  // differs from them wherever the two contracts do, and each such case is reported as a difference
  // under that contract, named. The device's side is compared with the recording as it stands.
  ContractChoice contract;
  RecordingsListener* listener = nullptr;  // hears the replay as it goes (none: the result alone)
};

struct RecordingsResult {
  int status = 0;           // 0 all equal, 1 some output differs, 2 an input error (nothing ran)
  std::string error;        // for status 2: why, one message per line
  bool unreadable = false;  // status 2 because a recording could not be read as one
  std::size_t files = 0, cases = 0, emulator_differ = 0, device_differ = 0;
  std::size_t device_not_run = 0;     // cases of entry points outside device_entries (emulator only)
  std::vector<std::string> failures;  // one per differing case: what differs and the case line
  std::vector<std::string> notes;     // e.g. a version-1 file's unverifiable length
  std::size_t faulted = 0;            // device launches that lost the context (each a differing case)
  std::size_t undefined = 0;          // cases the contract does not define (counted in emulator_differ)
  std::string hang;                   // non-empty: a launch did not complete; nothing after it ran
};

// What a replay tells as it goes, from the replay's thread, in file order: the text output is one
// listener (commands/recordings_text.hpp), as the JSON and JUnit writers read the result.
struct RecordingFileStart {
  std::string path;  // as shown to a user (golden::shown)
  golden::RecordingHeader header;
  std::size_t cases = 0;
  bool length_verified = false;
};
struct RecordingFileTally {  // one file's cases of this shard, once all came back
  std::size_t run = 0, emulator_differ = 0, device_differ = 0;
  std::size_t device_skipped = 0;  // of entry points outside device_entries: emulator only
};
struct RecordedCaseFailure {
  enum class Kind { inputs, undefined, emulator, device, hang };
  Kind kind = Kind::emulator;
  std::string case_line;
  std::string what;            // what differs, or why nothing could be compared
  std::string contract;        // emulator: the contract it held when that is not canonical ("" otherwise)
  std::string explain;         // non-empty: the command that shows the difference (w8a16check repro ...)
  bool device_agrees = false;  // emulator, canonical: the device ran and gave the emulator's bytes
};
class RecordingsListener {
 public:
  virtual ~RecordingsListener() = default;
  // `done` counts the cases come back until replay_finished; read it from any thread.
  virtual void replay_started(std::size_t planned, const std::atomic<std::size_t>& done,
                              const std::vector<std::string>& notes) {
    (void)planned, (void)done, (void)notes;
  }
  virtual void file_started(const RecordingFileStart& f) { (void)f; }
  virtual void case_failed(const RecordedCaseFailure& f) { (void)f; }
  virtual void file_finished(const RecordingFileTally& t) { (void)t; }
  virtual void replay_finished(const RecordingsResult& r) { (void)r; }
};

// Every .rec file under `paths` (files or folders, sorted), each read in full (and its GPU checked)
// before anything runs. For each recorded case: the emulator's output (NUMERICS.md 2.1 / 2.2) and,
// with a device, the device's, each against the recorded digest (and the full bytes when stored).
// Tells opt.listener of each file and each difference; status 2 for a path missing or not a regular file or
// folder, a recording unreadable, cut or from another GPU, a case over the limits, or nothing to check.
RecordingsResult replay_recordings(const std::vector<std::string>& paths, const RecordingsOptions& opt);

}  // namespace w8a16::props
