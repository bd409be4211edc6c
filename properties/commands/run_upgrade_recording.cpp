// SPDX-License-Identifier: MIT OR Apache-2.0
// `w8a16check upgrade-recording IN.rec --out OUT.rec`: rewrites a version-1 recording as the current
// version (golden/include/w8a16/golden/recording.hpp): every recorded byte as it was, the trailer
// added, so that its length is verified from then on. Nothing is recorded or recomputed. A
// version-1 file does not know its own length, so the count comes from its evidence manifest
// (manifest.hpp) or --cases, and a file that holds fewer cases (cut) is refused.
#include "run_upgrade_recording.hpp"

#include "exit_status.hpp"

#include <cstdio>
#include <filesystem>
#include <string>

#include "report_files.hpp"
#include "w8a16/golden/files.hpp"
#include "w8a16/golden/manifest.hpp"
#include "w8a16/golden/sha256.hpp"
#include "w8a16/golden/recording.hpp"

namespace w8a16::cli {
namespace cmd_upgrade_recording {

int usage(const std::string& message) { return usage_error("upgrade-recording", message); }

int run_upgrade(const UpgradeArgs& a) {
  std::string text, why;
  if (!golden::read_regular_file(a.in, golden::kMaxInputFileBytes, &text, &why))
    return usage(golden::shown(a.in) + ": " + why);
  const std::string kind = golden::path_kind(a.out);
  if (kind != "does not exist" && kind != "")
    return usage("--out " + golden::shown(a.out) + ": is " + kind + ", not a file");
  if (kind == "" && !a.overwrite) return usage(golden::shown(a.out) + " exists; pass --overwrite to replace it");
  // The length a version-1 file must have: its manifest entry's count and --cases, whichever are
  // given, must agree with each other and with the cases it holds.
  {
    golden::Recording before;
    if (!golden::parse_recording(text, golden::shown(a.in), &before, &why))
      return usage(why + " (nothing was written)");
    if (!before.length_verified) {
      const std::filesystem::path in(a.in);
      const std::string folder = in.parent_path().empty() ? "." : in.parent_path().string();
      const std::string mpath = (std::filesystem::path(folder) / std::string(golden::kManifestFileName)).string();
      std::string mtext;
      golden::Manifest m;
      const golden::ManifestEntry* entry = nullptr;
      if (golden::read_regular_file(mpath, golden::kMaxInputFileBytes, &mtext, &why)) {
        if (!golden::parse_manifest(mtext, golden::shown(mpath), &m, &why))
          return usage(why + " (nothing was written)");
        entry = m.find(in.filename().string());
      }
      const std::size_t held = before.outputs.size();
      if (!entry && a.cases == 0)
        return usage(golden::shown(a.in) + ": a version-1 recording (no trailer) holds " + std::to_string(held) +
                     " cases, and nothing says it should hold that many (a copy cut after any case reads as complete): "
                     "pass --cases N, the number it was recorded with, or keep it beside the " +
                     std::string(golden::kManifestFileName) + " that lists it (nothing was written)");
      if (entry && (entry->unit != "cases" || entry->count != held || entry->sha256 != golden::sha256_hex(text)))
        return usage(golden::shown(a.in) + ": holds " + std::to_string(held) + " cases, " + golden::shown(mpath) +
                     " says " + std::to_string(entry->count) +
                     (entry->count == held ? " but its SHA-256 differs (changed since)" : " (cut?)") +
                     " (nothing was written)");
      if (a.cases != 0 && a.cases != held)
        return usage(golden::shown(a.in) + ": holds " + std::to_string(held) + " cases, --cases says " +
                     std::to_string(a.cases) + (held < a.cases ? " (cut?)" : "") + " (nothing was written)");
    } else if (a.cases != 0 && a.cases != before.outputs.size()) {
      return usage(golden::shown(a.in) + ": holds " + std::to_string(before.outputs.size()) +
                   " cases (its trailer "
                   "verifies that), --cases says " +
                   std::to_string(a.cases) + " (nothing was written)");
    }
  }
  std::string upgraded;
  if (!golden::upgrade_recording(text, golden::shown(a.in), &upgraded, &why))
    return usage(why + " (nothing was written)");
  golden::Recording r;
  if (!golden::parse_recording(upgraded, golden::shown(a.out), &r, &why)) return usage(why + " (nothing was written)");
  if (!golden::write_file_atomic(a.out, upgraded, &why))
    return usage("--out " + golden::shown(a.out) + ": " + why + " (nothing was written)");
  const bool same = upgraded == text;
  std::printf("upgrade-recording: %s -> %s: %zu cases, version %u%s\n", golden::shown(a.in).c_str(),
              golden::shown(a.out).c_str(), r.outputs.size(), r.header.version,
              same ? " (it was already: written unchanged)"
                   : ", every header and out line byte for byte as it was, the trailer added");
  return kExitPass;
}

}  // namespace cmd_upgrade_recording
}  // namespace w8a16::cli
