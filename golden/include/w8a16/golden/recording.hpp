// SPDX-License-Identifier: MIT OR Apache-2.0
// Recordings (.rec): what a GPU's kernels produced for saved cases, as digests (and full bytes when
// small), in a versioned text format that replays anywhere. Errors are values, never crashes.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "w8a16/golden/case.hpp"

namespace w8a16::golden {

// The file, version 1 (one item per line, '\n' endings; '#' lines and blank lines are ignored):
//
//   # SPDX-License-Identifier: MIT OR Apache-2.0      (the writer's two comment lines)
//   # Recorded by `w8a16check record` ...
//   w8a16check-recording 1
//   gpu: NVIDIA H200
//   compute_capability: 9.0
//   driver: 580.159
//   cuda: 13.0
//   commit: 2fe6d9a0c1d2
//   digest: fnv1a64-bf16le-rows
//   out 0x<16 hex digest> <outputs> <hex bytes or -> case/1 <the rest of the case line>
//
// The header keys come in this order, each once. `digest` names the one digest this version knows:
// FNV-1a 64 (offset 0xcbf29ce484222325, prime 0x100000001b3) over C's first n BF16 outputs of each
// row, rows 0..m-1 in order, each output as 2 bytes little-endian (the pitch padding is not
// included). `outputs` is m * n. The full bytes follow, as 4 hex digits per output (the BF16 bits,
// most significant digit first, in the same order as the digest), exactly when outputs <=
// kRecordingFullOutputsMax; otherwise '-'.
inline constexpr std::string_view kRecordingMagic = "w8a16check-recording";
inline constexpr std::uint32_t kRecordingVersion = 1;
inline constexpr std::string_view kRecordingDigestName = "fnv1a64-bf16le-rows";
inline constexpr std::uint64_t kRecordingFullOutputsMax = 4096;

struct RecordingHeader {
  std::uint32_t version = kRecordingVersion;
  std::string gpu;                 // the device name the driver reports
  std::string compute_capability;  // "9.0"
  std::string driver;              // the kernel driver's version, e.g. "580.159", or "unknown"
  std::string cuda;                // the CUDA version the driver supports, e.g. "13.0"
  std::string commit;              // w8a16/version.hpp kGitCommit of the recording binary
};

struct RecordedOutput {
  Case c;
  std::uint64_t digest = 0;
  std::uint64_t outputs = 0;        // m * n
  std::vector<std::uint16_t> bits;  // the m * n outputs when outputs <= kRecordingFullOutputsMax, else empty
};

struct Recording {
  RecordingHeader header;
  std::vector<RecordedOutput> outputs;
};

// C's first n of each row (C is [m][c_row_stride] BF16 bits, as launch_case returns it).
std::vector<std::uint16_t> used_outputs(const Case& c, const std::vector<std::uint16_t>& c_bits);
// The digest above over used outputs (m * n values in row order).
std::uint64_t outputs_digest(const std::vector<std::uint16_t>& used);
// A record of one case from its used outputs (keeps the bits when small).
RecordedOutput make_recorded_output(const Case& c, const std::vector<std::uint16_t>& used);

std::string format_recording(const Recording& r);
// On failure returns false, leaves *out unchanged and says "source:line: why" in *error: a corrupt
// line, an unknown version, a header key missing or out of order, a digest name this version does
// not know, a case line that is not valid, an output count other than m * n, full bytes that are
// missing, extra or not hex, full bytes whose digest is not the recorded one, a case recorded twice.
bool parse_recording(std::string_view text, const std::string& source_name, Recording* out, std::string* error);
bool read_recording_file(const std::string& path, Recording* out, std::string* error);
// Writes to a temporary file beside `path` and renames it, so a failure leaves no half file.
bool write_recording_file(const std::string& path, const Recording& r, std::string* error);

// A short folder-safe name for a GPU: lower case, "NVIDIA " dropped, other than [a-z0-9] -> '-'
// ("NVIDIA H200" -> "h200", "NVIDIA H100 80GB HBM3" -> "h100-80gb-hbm3").
std::string gpu_slug(std::string_view device_name);
// True when the recording was made on `gpu` (compared as gpu_slug of both, so "h200" and
// "NVIDIA H200" name the same GPU); otherwise false with a message naming both.
bool recording_is_from_gpu(const Recording& r, std::string_view gpu, std::string* error);

}  // namespace w8a16::golden
