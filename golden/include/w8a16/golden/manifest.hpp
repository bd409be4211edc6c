// SPDX-License-Identifier: MIT OR Apache-2.0
// Evidence manifests: one per folder of recorded or saved evidence (golden/mma/..., recordings/,
// cases/, order/...), listing every file with its size, SHA-256, what it holds and where it came
// from, so that a file missing, added, cut or changed, or made by the simulation, is named before
// it is counted as evidence (`w8a16check verify`, `w8a16check manifest --check`).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace w8a16::golden {

// The file, version 1 ('\n' endings; '#' lines and blank lines are ignored):
//
//   # SPDX-License-Identifier: MIT OR Apache-2.0      (the writer's two comment lines)
//   # Written by `w8a16check manifest --write` ...
//   w8a16check-manifest 1
//   folder <name>
//   file <name> bytes=<n> sha256=<64 hex> [<unit>=<n>] source=<provenance> from=<text>
//
// One line per entry of the folder (the manifest itself and documentation, a regular file *.md,
// excepted; a folder or link named *.md is an entry like any other), sorted by name, each name once:
// `folder` for a subfolder (which has its own manifest), `file` for a regular file. A name is
// printable ASCII without spaces or '/'. `bytes` and `sha256` are the file's (the sum `sha256sum`
// prints). The unit is what the file holds, by its extension: `dot_products` for a .mmav (128 per
// MMA, golden/mma/README.md), `cases` for a .rec (out lines, recording.hpp) and a .case (case lines,
// case.hpp), `outputs` for a run-operands .out (launches x m x c_row_stride, operands.hpp); a file
// of another kind has none. `source` is one of
//   hardware    recorded on a GPU (from: the GPU, compute capability, driver, CUDA, binaries' commit)
//   simulation  made by the CPU simulation or the emulator: never hardware evidence
//   input       inputs written by hand or by a generator (saved cases)
//   none        not evidence itself (a README, a probe's MANIFEST.txt, a log)
// and `from` is the rest of the line, printable ASCII ("-" when there is nothing to say). Each kind
// of file has its one provenance: a .mmav, .rec or .out is hardware (or simulation, never counted),
// a .case input, any other file none; an entry with another is a problem, and its file no evidence.
// A version-1 recording (no trailer) is listed only while its bytes are the ones listed before:
// nothing else knows its length.
inline constexpr std::string_view kManifestFileName = "evidence-manifest.txt";
inline constexpr std::string_view kManifestMagic = "w8a16check-manifest";
inline constexpr std::uint32_t kManifestVersion = 1;

enum class Provenance { hardware, simulation, input, none };
const char* provenance_name(Provenance p);
bool parse_provenance(std::string_view text, Provenance* out);

struct ManifestEntry {
  bool folder = false;
  std::string name;
  std::uint64_t bytes = 0;
  std::string sha256;  // 64 lower-case hex digits
  std::string unit;    // "dot_products", "cases", "outputs", or "" (the file holds no counted items)
  std::uint64_t count = 0;
  Provenance source = Provenance::none;
  std::string from = "-";
};

struct Manifest {
  std::vector<ManifestEntry> entries;  // sorted by name
  const ManifestEntry* find(std::string_view name) const;
};

std::string format_manifest(const Manifest& m);
// False with "source:line: why" for a corrupt line, an unknown version, key, unit or source, a
// name listed twice or out of order, a sum that is not 64 hex digits.
bool parse_manifest(std::string_view text, const std::string& source_name, Manifest* out, std::string* error);

// What a file's own bytes say, by its name's extension (see the units above): what it holds and,
// where its format records it, where it came from (a .rec's header; a .out's backend field). False
// with *error when the file does not read as its format.
struct FileFacts {
  std::string unit;  // as ManifestEntry::unit
  std::uint64_t count = 0;
  bool says_source = false;  // the format itself records the provenance
  Provenance source = Provenance::none;
  std::string from = "-";
  bool length_verified = true;  // false for a version-1 recording (no trailer: recording.hpp)
};
bool file_facts(std::string_view name, std::string_view bytes, FileFacts* out, std::string* error);

// True for the identity the simulation writes into a recording's header or a probe's manifest
// (`record --source sim`, `probe --source sim`): a GPU name starting "simulation" or "emulator", or
// compute capability "none".
bool is_simulation_identity(std::string_view gpu, std::string_view compute_capability);

// A probe manifest (MANIFEST*.txt in `dir`, written by `w8a16check probe`) that lists `name` on a
// `file:` line: its `hardware:` line gives the provenance, its identity lines `from`. False when
// no probe manifest there lists it.
bool probe_manifest_provenance(const std::string& dir, const std::string& name, Provenance* source, std::string* from);

// A folder, and every folder below it, checked against their manifests. Each problem
// is one line starting with the path it is about: a folder without a manifest (when required), an
// unreadable or corrupt manifest, an entry missing or of the wrong kind, a file or folder that is
// not listed, a size, SHA-256 or count that differs from the manifest, a file the manifest or its
// own format says the simulation made.
struct TreeCheck {
  std::vector<std::string> problems;
  std::vector<std::string> simulated;  // paths of files made by the simulation (also in problems)
  // Paths of the files whose bytes are not what their manifest says (missing, cut, changed, not
  // listed, under a folder no checked manifest lists, a provenance their kind cannot have) or whose
  // length nothing verifies: not to be read as evidence at all.
  std::vector<std::string> failed;
  std::uint64_t folders = 0, manifests = 0, files = 0;
};
// require_manifest: a folder without one is a problem (the data folder's evidence); otherwise such
// a folder is left unchecked (its subfolders are still visited) and counted in `folders` only.
void check_tree(const std::string& dir, bool require_manifest, TreeCheck* out);
// One file that no manifest lists, checked for what it says itself: made by the simulation (its
// header, or a probe manifest beside it), or a version-1 recording, whose length nothing verifies.
void check_unlisted_file(const std::string& path, TreeCheck* out);

// The manifest of `dir` as it is now: every entry with its size and SHA-256, its count, and its
// provenance taken, first that applies, from the file's own format, a probe manifest beside it, the
// folder's current manifest when the file is unchanged (same SHA-256), or `fallback` (when
// has_fallback). A recorded file (.mmav, .rec, .out) with none of these is an error naming it.
struct ManifestSource {
  bool has_fallback = false;
  Provenance source = Provenance::none;
  std::string from = "-";
};
bool build_manifest(const std::string& dir, const ManifestSource& fallback, Manifest* out, std::string* error);
// build_manifest for `dir` and every folder below it, each written (atomically) as its
// kManifestFileName; `written` gets each manifest's path. Nothing is written when any folder fails.
bool write_manifest_tree(const std::string& dir, const ManifestSource& fallback, std::vector<std::string>* written,
                         std::string* error);

}  // namespace w8a16::golden
