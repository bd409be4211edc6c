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

// The file, version 2 (one item per line, '\n' endings; '#' lines and blank lines before the
// trailer are ignored):
//
//   # SPDX-License-Identifier: MIT OR Apache-2.0      (the writer's two comment lines)
//   # Recorded by `w8a16check record` ...
//   w8a16check-recording 2
//   gpu: NVIDIA H200
//   compute_capability: 9.0
//   driver: 580.159
//   cuda: 13.0
//   commit: 2fe6d9a0c1d2
//   digest: fnv1a64-bf16le-rows
//   out 0x<16 hex digest> <outputs> <hex bytes or -> case/1 <the rest of the case line>
//   ...
//   end cases=<number of out lines> body=fnv1a64:0x<16 hex>
//
// The header keys come in this order, each once. `digest` names the one digest this version knows:
// FNV-1a 64 (offset 0xcbf29ce484222325, prime 0x100000001b3) over C's first n BF16 outputs of each
// row, rows 0..m-1 in order, each output as 2 bytes little-endian (the pitch padding is not
// included). `outputs` is m * n. The full bytes follow, as 4 hex digits per output (the BF16 bits,
// most significant digit first, in the same order as the digest), exactly when outputs <=
// kRecordingFullOutputsMax; otherwise '-'.
//
// The trailer is the last line (only its '\n' may follow): the count of `out` lines and the FNV-1a 64
// (same constants) of every line before it, comments included, each as its bytes without its line
// ending and then one '\n' (so a copy with "\r\n" endings checks the same). A file cut anywhere, at
// a line boundary too, lacks it or disagrees with it, and is refused.
//
// Version 1 is the same without the trailer. It is still read, but its length cannot be verified:
// a version-1 file cut after any `out` line reads as a complete, shorter recording. Recording's
// length_verified says which; the writer writes version 2 only, and upgrade_recording() rewrites a
// version-1 text as version 2 without changing one byte of its header or out lines.
inline constexpr std::string_view kRecordingMagic = "w8a16check-recording";
inline constexpr std::uint32_t kRecordingVersion = 2;
inline constexpr std::uint32_t kRecordingOldestVersion = 1;
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
  RecordingHeader header;  // header.version: the version the text was read in
  std::vector<RecordedOutput> outputs;
  // True when the trailer confirmed the case count and the body (version 2); false for version 1,
  // whose length nothing confirms ("unverifiable length").
  bool length_verified = true;
};

// C's first n of each row (C is [m][c_row_stride] BF16 bits, as launch_case returns it).
std::vector<std::uint16_t> used_outputs(const Case& c, const std::vector<std::uint16_t>& c_bits);
// The digest above over used outputs (m * n values in row order).
std::uint64_t outputs_digest(const std::vector<std::uint16_t>& used);
// A record of one case from its used outputs (keeps the bits when small).
RecordedOutput make_recorded_output(const Case& c, const std::vector<std::uint16_t>& used);

// The verdict on one recorded case, the one rule `replay --recordings`, the tests and the Python
// audit all apply. With the full bytes recorded, C's used outputs are compared element by element
// (bit for bit: a recorded value is raw BF16 bits); with the digest only, the digest of the outputs
// is compared with the recorded one, and which outputs differ is not known. A case whose outputs
// were not computed (the caller chose not to emulate it) is `not_replayed`, never equal.
struct RecordedVerdict {
  enum class Kind { equal, differs, not_replayed };
  Kind kind = Kind::not_replayed;
  bool digest_only = false;             // the recording holds the digest only
  std::uint64_t digest = 0;             // of the outputs given (0 when not replayed)
  std::uint64_t outputs_compared = 0;   // elements compared: m * n with the full bytes, else 0
  std::uint64_t outputs_differing = 0;  // of those, the ones whose bits differ
  std::uint64_t first_differing = 0;    // index (row * n + column) of the first, when any
  bool size_differs = false;            // the outputs given are not m * n values
  bool agrees() const { return kind == Kind::equal; }
};
// `used`: C's used outputs (used_outputs()) from the emulator or a device, or nullptr when not
// computed.
RecordedVerdict recorded_verdict(const RecordedOutput& recorded, const std::vector<std::uint16_t>* used);
// "" when the verdict is equal; otherwise what differs, as the CLI prints it: the digests, then the
// count and the first differing output when the full bytes are recorded.
std::string recorded_verdict_text(const RecordedOutput& recorded, const std::vector<std::uint16_t>* used,
                                  const RecordedVerdict& v);

// The text of `r` in version kRecordingVersion, trailer included (r.header.version is not consulted).
std::string format_recording(const Recording& r);
// On failure returns false, leaves *out unchanged and says "source:line: why" in *error: a corrupt
// line, an unknown version, a header key missing or out of order, a digest name this version does
// not know, a case line that is not valid, an output count other than m * n, full bytes that are
// missing, extra or not hex, full bytes whose digest is not the recorded one, a case recorded twice;
// in version 2 a missing trailer (a cut file), a trailer whose count or body digest disagrees with
// the file, and anything after the trailer.
bool parse_recording(std::string_view text, const std::string& source_name, Recording* out, std::string* error);
// A regular file of at most kMaxInputFileBytes (files.hpp), parsed; errors start with the path.
bool read_recording_file(const std::string& path, Recording* out, std::string* error);
// Writes format_recording(r) atomically (files.hpp write_file_atomic): a failure leaves `path` as it was.
// The text is parsed first, and what parse_recording() refuses (a case recorded twice, an empty or
// control-byte header value) is an error and nothing is written.
bool write_recording_file(const std::string& path, const Recording& r, std::string* error);
// A version-1 text as version 2: every byte as it was except the version on the magic line, with the
// trailer appended (and a final '\n' before it if the text lacked one); the result is parsed again
// and must hold the same header and outputs, so an upgrade never changes a recorded value. A text
// already in version 2 comes back unchanged. False with "source:line: why" when the text does not
// parse.
bool upgrade_recording(std::string_view text, const std::string& source_name, std::string* upgraded,
                       std::string* error);

// A short folder-safe name for a GPU: lower case, "NVIDIA " dropped, other than [a-z0-9] -> '-'
// ("NVIDIA H200" -> "h200", "NVIDIA H100 80GB HBM3" -> "h100-80gb-hbm3").
std::string gpu_slug(std::string_view device_name);
// True when the recording was made on `gpu` (compared as gpu_slug of both, so "h200" and
// "NVIDIA H200" name the same GPU); otherwise false with a message naming both.
bool recording_is_from_gpu(const Recording& r, std::string_view gpu, std::string* error);

}  // namespace w8a16::golden
