// SPDX-License-Identifier: MIT OR Apache-2.0
// `w8a16check upgrade-recording IN.rec --out OUT.rec`: rewrites a version-1 recording as the current
// version (golden/include/w8a16/golden/recording.hpp): every recorded byte as it was, the trailer
// added, so that its length is verified from then on. Nothing is recorded or recomputed.
#include <cstdio>
#include <string>

#include "command.hpp"
#include "options.hpp"
#include "report_files.hpp"
#include "w8a16/golden/files.hpp"
#include "w8a16/golden/recording.hpp"

namespace w8a16::cli {
namespace {

struct UpgradeArgs {
  std::string in, out;
  bool overwrite = false;
};

int usage(const std::string& message) { return usage_error("upgrade-recording", message); }

int run_upgrade(const UpgradeArgs& a) {
  std::string text, why;
  if (!golden::read_regular_file(a.in, golden::kMaxInputFileBytes, &text, &why))
    return usage(golden::shown(a.in) + ": " + why);
  const std::string kind = golden::path_kind(a.out);
  if (kind != "does not exist" && kind != "") return usage("--out " + golden::shown(a.out) + ": is " + kind + ", not a file");
  if (kind == "" && !a.overwrite) return usage(golden::shown(a.out) + " exists; pass --overwrite to replace it");
  std::string upgraded;
  if (!golden::upgrade_recording(text, golden::shown(a.in), &upgraded, &why)) return usage(why + " (nothing was written)");
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

void add_upgrade_recording(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "upgrade-recording",
      "Rewrite a recording (.rec) of an older version as the current one, the recorded bytes unchanged and the "
      "trailer added (exit 0: written, 2: usage or input error, nothing written)");
  auto a = std::make_shared<UpgradeArgs>();
  cmd->add_option("IN", a->in, "the recording to read")->required();
  cmd->add_option("--out", a->out, "the recording to write (may be IN itself, with --overwrite)")->required();
  cmd->add_flag("--overwrite", a->overwrite, "replace an existing --out file");
  cmd->callback([a, exit_code] { *exit_code = run_upgrade(*a); });
}

W8A16_COMMAND(add_upgrade_recording);

}  // namespace
}  // namespace w8a16::cli
