// SPDX-License-Identifier: MIT OR Apache-2.0
// The recordings' replay as text on stdout (a listener of props::replay_recordings): a line per
// file with its hardware, each failing case with its line and what shows it, a tally per file and
// one for the run; the progress line on stderr while it runs (progress.hpp).
#pragma once
#include <memory>

#include "progress.hpp"
#include "w8a16/properties/recordings.hpp"

namespace w8a16::cli {

class RecordingsText final : public props::RecordingsListener {
 public:
  // opt: the replay's options (the command that names the progress line, the device, the contract);
  // it must outlive the replay.
  explicit RecordingsText(const props::RecordingsOptions& opt) : opt_(opt) {}
  void replay_started(std::size_t planned, const std::atomic<std::size_t>& done,
                      const std::vector<std::string>& notes) override;
  void file_started(const props::RecordingFileStart& f) override;
  void case_failed(const props::RecordedCaseFailure& f) override;
  void file_finished(const props::RecordingFileTally& t) override;
  void replay_finished(const props::RecordingsResult& r) override;

 private:
  const props::RecordingsOptions& opt_;
  std::unique_ptr<props::Heartbeat> beat_;
};

}  // namespace w8a16::cli
