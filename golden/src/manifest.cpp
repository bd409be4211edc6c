// SPDX-License-Identifier: MIT OR Apache-2.0
// Evidence manifests (manifest.hpp): the format, what a file's own bytes say, checking a tree of
// folders against their manifests and writing them.
#include "w8a16/golden/manifest.hpp"

#include <algorithm>
#include <filesystem>
#include <map>

#include "w8a16/golden/files.hpp"
#include "w8a16/golden/mmav.hpp"
#include "w8a16/golden/operands.hpp"
#include "w8a16/golden/recording.hpp"
#include "w8a16/golden/sha256.hpp"

namespace w8a16::golden {
namespace {
namespace fs = std::filesystem;

constexpr const char* kHeader =
    "# SPDX-License-Identifier: MIT OR Apache-2.0\n"
    "# Written by `w8a16check manifest --write` (format: golden/include/w8a16/golden/manifest.hpp).\n";

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// The kinds of file whose bytes were recorded on a device: each needs a known provenance.
bool is_recorded_kind(std::string_view name) {
  return ends_with(name, ".mmav") || ends_with(name, ".rec") || ends_with(name, ".out");
}

// The one provenance a file's kind may have (manifest.hpp): recorded bytes come from hardware (or,
// named as such and never counted, the simulation); saved case lines are input; every other file
// is none. Any other pairing is a manifest that claims what the file cannot be.
bool provenance_fits(std::string_view name, Provenance p) {
  if (is_recorded_kind(name)) return p == Provenance::hardware || p == Provenance::simulation;
  if (ends_with(name, ".case")) return p == Provenance::input;
  return p == Provenance::none;
}

const char* provenance_wanted(std::string_view name) {
  if (is_recorded_kind(name)) return "hardware (or simulation, never counted)";
  if (ends_with(name, ".case")) return "input";
  return "none";
}

bool valid_name(std::string_view name) {
  if (name.empty() || name == "." || name == "..") return false;
  for (char ch : name)
    if (ch <= ' ' || ch > '~' || ch == '/') return false;
  return true;
}

// `from` text on one line of printable ASCII.
std::string one_line(std::string_view text) {
  std::string s;
  for (char ch : text) s += (ch >= ' ' && ch <= '~') ? ch : '?';
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s.empty() ? "-" : s;
}

bool parse_u64(std::string_view s, std::uint64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  std::uint64_t v = 0;
  for (char ch : s) {
    if (ch < '0' || ch > '9') return false;
    const std::uint64_t d = static_cast<std::uint64_t>(ch - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

bool is_hex64(std::string_view s) {
  return s.size() == 64 &&
         std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::string identity_from(std::string_view gpu, std::string_view cc, std::string_view driver, std::string_view cuda,
                          std::string_view commit, std::string_view where) {
  return one_line(std::string(gpu) + ", compute capability " + std::string(cc) + ", driver " + std::string(driver) +
                  ", CUDA " + std::string(cuda) + ", commit " + std::string(commit) + " (" + std::string(where) + ")");
}

// The lines of a text file ("" entries for blank lines), or false when it cannot be read.
bool read_lines(const fs::path& path, std::vector<std::string>* lines) {
  std::string text, why;
  if (!read_regular_file(path.string(), kMaxInputFileBytes, &text, &why)) return false;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines->push_back(std::move(line));
    start = end + 1;
  }
  return true;
}

// What tools/gpu-order's run.log says of the GPU and the binaries: "NVIDIA H200, 580.159.04" (the
// line after "GPU 0: ...") and "binaries built at commit: <hash>"; "" when it says neither.
std::string run_log_identity(const fs::path& dir) {
  std::vector<std::string> lines;
  if (!read_lines(dir / "run.log", &lines)) return "";
  std::string gpu, commit;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("GPU 0:", 0) == 0 && i + 1 < lines.size()) gpu = lines[i + 1];
    const std::string key = "binaries built at commit: ";
    if (lines[i].rfind(key, 0) == 0) commit = lines[i].substr(key.size());
  }
  if (gpu.empty() && commit.empty()) return "";
  return one_line((gpu.empty() ? std::string("unknown GPU") : "GPU and driver " + gpu) + ", binaries of commit " +
                  (commit.empty() ? std::string("unknown") : commit) + " (run.log)");
}

struct Listing {
  std::vector<std::string> files, folders, others;  // sorted; the manifest itself is not listed
};

Listing list_folder(const fs::path& dir, std::string* error) {
  Listing l;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code e2;
    const fs::file_status st = it->symlink_status(e2);
    // The manifest itself, and documentation (a regular file *.md), which is not evidence and
    // changes with the prose. Only a regular file: a folder or a link named *.md is listed like any
    // other, since the readers go inside it.
    if (name == kManifestFileName || (ends_with(name, ".md") && fs::is_regular_file(st))) continue;
    if (fs::is_directory(st)) l.folders.push_back(name);
    else if (fs::is_regular_file(st)) l.files.push_back(name);
    else l.others.push_back(name);
  }
  if (ec && error) *error = shown(dir.string()) + ": cannot list: " + ec.message();
  for (auto* v : {&l.files, &l.folders, &l.others}) std::sort(v->begin(), v->end());
  return l;
}

// Whether a file is the simulation's by what it says itself or beside it (its format's provenance,
// or a probe manifest listing it); *why says which.
bool says_simulation(const fs::path& dir, const std::string& name, std::string_view bytes, std::string* why) {
  FileFacts f;
  std::string error;
  if (file_facts(name, bytes, &f, &error) && f.says_source && f.source == Provenance::simulation) {
    *why = "its own header: " + f.from;
    return true;
  }
  Provenance p;
  std::string from;
  if (ends_with(name, ".mmav") && probe_manifest_provenance(dir.string(), name, &p, &from) &&
      p == Provenance::simulation) {
    *why = "its probe manifest: " + from;
    return true;
  }
  return false;
}

// Every file under `dir`, whatever its name: not to be read as evidence (its manifest does not read).
void fail_everything_under(const fs::path& dir, TreeCheck* out) {
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename() != kManifestFileName) out->failed.push_back(it->path().string());
}

void check_unlisted(const fs::path& dir, const std::string& name, TreeCheck* out) {
  const fs::path path = dir / name;
  std::string bytes, why;
  if (!read_regular_file(path.string(), kMaxInputFileBytes, &bytes, &why)) return;
  if (says_simulation(dir, name, bytes, &why)) {
    out->problems.push_back(shown(path.string()) + ": made by the simulation (" + why + "): not hardware evidence");
    out->simulated.push_back(path.string());
  }
  FileFacts f;
  if (ends_with(name, ".rec") && file_facts(name, bytes, &f, &why) && !f.length_verified) {
    out->failed.push_back(path.string());
    out->problems.push_back(shown(path.string()) +
                            ": a version-1 recording (no trailer) that no manifest lists: nothing "
                            "verifies its length (" +
                            std::to_string(f.count) +
                            " cases read; a copy cut after any case "
                            "reads as complete). `w8a16check upgrade-recording --cases N` rewrites it with a trailer");
  }
}

// `listed`: a chain of checked manifests from the first folder checked lists this one. A file under
// a folder that is not so listed (no manifest where one is required, or a folder its parent's
// manifest does not name) is not evidence: it fails, so that no reader counts it.
void check_folder(const fs::path& dir, bool require, bool listed, TreeCheck* out) {
  ++out->folders;
  std::string error;
  const Listing l = list_folder(dir, &error);
  if (!error.empty()) {
    out->problems.push_back(error);
    return;
  }
  for (const std::string& o : l.others) {
    out->problems.push_back(shown((dir / o).string()) + ": is " + path_kind((dir / o).string()) +
                            ", not a regular file or folder");
    out->failed.push_back((dir / o).string());
  }
  const fs::path mpath = dir / std::string(kManifestFileName);
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(mpath, ec))) {
    if (require)
      out->problems.push_back(
          shown(dir.string()) + ": no " + std::string(kManifestFileName) +
          ": its files cannot be checked (`w8a16check manifest --write` writes one; golden/README.md)");
    for (const std::string& f : l.files) {
      if (require || !listed) out->failed.push_back((dir / f).string());
      check_unlisted(dir, f, out);
    }
    for (const std::string& d : l.folders) check_folder(dir / d, require, listed && !require, out);
    return;
  }
  std::string text;
  Manifest m;
  if (!read_regular_file(mpath.string(), kMaxInputFileBytes, &text, &error) ||
      !parse_manifest(text, shown(mpath.string()), &m, &error)) {
    out->problems.push_back(error.rfind(shown(mpath.string()), 0) == 0 ? error : shown(mpath.string()) + ": " + error);
    fail_everything_under(dir, out);
    return;
  }
  ++out->manifests;
  const std::string listed_in = " (listed in " + shown(mpath.string()) + ")";
  for (const ManifestEntry& e : m.entries) {
    const fs::path path = dir / e.name;
    const std::string p = shown(path.string());
    const bool is_folder = std::binary_search(l.folders.begin(), l.folders.end(), e.name);
    const bool is_file = std::binary_search(l.files.begin(), l.files.end(), e.name);
    if (e.folder) {
      if (is_folder) check_folder(path, true, listed, out);
      else
        out->problems.push_back(p + ": " + (is_file ? "a file where a folder is" : "missing: the folder is") +
                                listed_in);
      continue;
    }
    if (!is_file) {
      out->problems.push_back(p + ": " + (is_folder ? "a folder where a file is" : "missing: the file is") + listed_in);
      continue;
    }
    ++out->files;
    const std::size_t before = out->problems.size();
    struct Mark {  // every problem below, up to `end` (the provenance checks), is about this file's bytes
      TreeCheck* out;
      std::size_t before;
      std::string path;
      std::size_t end = SIZE_MAX;
      ~Mark() {
        if (std::min(end, out->problems.size()) != before) out->failed.push_back(path);
      }
    } mark{out, before, path.string()};
    if (!listed) out->failed.push_back(path.string());
    std::string bytes, why;
    if (!read_regular_file(path.string(), kMaxInputFileBytes, &bytes, &why)) {
      out->problems.push_back(p + ": " + why);
      continue;
    }
    FileFacts f;
    const bool facts_ok = file_facts(e.name, bytes, &f, &why);
    if (!e.unit.empty() && facts_ok && f.unit == e.unit && f.count != e.count)
      out->problems.push_back(p + ": holds " + std::to_string(f.count) + " " + e.unit + ", its manifest says " +
                              std::to_string(e.count) + (f.count < e.count ? " (cut?)" : "") +
                              (f.length_verified
                                   ? ""
                                   : " (a version-1 recording: no trailer, so only the manifest knows its length)"));
    if (bytes.size() != e.bytes)
      out->problems.push_back(p + ": " + std::to_string(bytes.size()) + " bytes, its manifest says " +
                              std::to_string(e.bytes) + (bytes.size() < e.bytes ? " (cut)" : " (changed)"));
    else if (sha256_hex(bytes) != e.sha256)
      out->problems.push_back(p + ": SHA-256 differs from its manifest's (changed)");
    if (!facts_ok && !e.unit.empty()) out->problems.push_back(p + ": " + why);
    // The provenance is one of the closed list, and the one this kind of file may have: a recorded
    // file listed as input or none is no evidence of anything.
    if (!provenance_fits(e.name, e.source))
      out->problems.push_back(p + ": its manifest says source=" + provenance_name(e.source) + ", which " +
                              (is_recorded_kind(e.name) ? "recorded evidence" : "this kind of file") +
                              " cannot have (expected " + provenance_wanted(e.name) + ")");
    mark.end = out->problems.size();
    std::string sim_why;
    if (e.source == Provenance::simulation) {
      out->problems.push_back(p + ": made by the simulation (its manifest: source=simulation, from " + e.from +
                              "): not hardware evidence");
      out->simulated.push_back(path.string());
    } else if (says_simulation(dir, e.name, bytes, &sim_why)) {
      out->problems.push_back(p + ": made by the simulation (" + sim_why + "): not hardware evidence");
      out->simulated.push_back(path.string());
    }
  }
  for (const std::string& f : l.files)
    if (!m.find(f)) {
      out->problems.push_back(
          shown((dir / f).string()) + ": not listed in " + shown(mpath.string()) +
          " (added to the evidence; after a real recording `w8a16check manifest --write` lists it)");
      out->failed.push_back((dir / f).string());
      check_unlisted(dir, f, out);
    }
  for (const std::string& d : l.folders)
    if (!m.find(d)) {
      out->problems.push_back(shown((dir / d).string()) + ": a folder not listed in " + shown(mpath.string()) +
                              " (added to the evidence: nothing under it is counted)");
      check_folder(dir / d, true, false, out);
    }
}

bool build_one(const fs::path& dir, const ManifestSource& fallback, Manifest* out, std::vector<fs::path>* subfolders,
               std::string* error) {
  const Listing l = list_folder(dir, error);
  if (!error->empty()) return false;
  if (!l.others.empty()) {
    *error = shown((dir / l.others[0]).string()) + ": is " + path_kind((dir / l.others[0]).string()) +
             ", not a regular file or folder";
    return false;
  }
  Manifest old;
  {
    std::string text, why;
    const fs::path mpath = dir / std::string(kManifestFileName);
    if (read_regular_file(mpath.string(), kMaxInputFileBytes, &text, &why) &&
        !parse_manifest(text, shown(mpath.string()), &old, &why)) {
      *error = why + " (fix or remove it first: nothing was written)";
      return false;
    }
  }
  const std::string log_identity = run_log_identity(dir);
  Manifest m;
  for (const std::string& d : l.folders) {
    if (!valid_name(d)) {
      *error = shown((dir / d).string()) + ": a name a manifest cannot hold (printable ASCII without spaces)";
      return false;
    }
    ManifestEntry e;
    e.folder = true;
    e.name = d;
    m.entries.push_back(e);
    subfolders->push_back(dir / d);
  }
  for (const std::string& name : l.files) {
    const fs::path path = dir / name;
    if (!valid_name(name)) {
      *error = shown(path.string()) + ": a name a manifest cannot hold (printable ASCII without spaces)";
      return false;
    }
    std::string bytes, why;
    if (!read_regular_file(path.string(), kMaxInputFileBytes, &bytes, &why)) {
      *error = shown(path.string()) + ": " + why;
      return false;
    }
    FileFacts f;
    if (!file_facts(name, bytes, &f, &why)) {
      *error = shown(path.string()) + ": " + why;
      return false;
    }
    ManifestEntry e;
    e.name = name;
    e.bytes = bytes.size();
    e.sha256 = sha256_hex(bytes);
    e.unit = f.unit;
    e.count = f.count;
    Provenance p;
    std::string from;
    const ManifestEntry* before = old.find(name);
    const bool unchanged = before && !before->folder && before->sha256 == e.sha256;
    // A version-1 recording has no trailer: only its manifest entry knows how many cases it held, so
    // an entry is never made from the file itself (a cut copy would be listed with its smaller count).
    if (!f.length_verified && !unchanged) {
      *error = shown(path.string()) + ": a version-1 recording (no trailer) that its folder's manifest does not list " +
               (before ? "with these bytes (it says " + std::to_string(before->count) + " cases; this file holds " +
                             std::to_string(f.count) + ")"
                       : "at all") +
               ": nothing verifies its length, so it cannot be listed; `w8a16check upgrade-recording --cases N` "
               "rewrites it with a trailer (nothing was written)";
      return false;
    }
    if (f.says_source) {
      e.source = f.source;
      e.from = f.from;
      if (ends_with(name, ".out") && !log_identity.empty()) e.from = one_line(log_identity + "; " + f.from);
    } else if (ends_with(name, ".mmav") && probe_manifest_provenance(dir.string(), name, &p, &from)) {
      e.source = p;
      e.from = from;
    } else if (unchanged && provenance_fits(name, before->source)) {
      e.source = before->source;
      e.from = before->from;
    } else if (ends_with(name, ".case")) {
      e.source = Provenance::input;
      e.from = "saved case lines (golden/README.md, The case line)";
    } else if (!is_recorded_kind(name)) {
      e.source = Provenance::none;
      e.from = "-";
    } else if (fallback.has_fallback) {
      e.source = fallback.source;
      e.from = one_line(fallback.from);
    } else {
      *error =
          shown(path.string()) +
          ": where it came from is unknown (its format does not say, no probe MANIFEST*.txt beside it lists it, and "
          "the folder's manifest has no entry with its SHA-256): pass --source hardware|simulation --from TEXT";
      return false;
    }
    m.entries.push_back(std::move(e));
  }
  std::sort(m.entries.begin(), m.entries.end(),
            [](const ManifestEntry& a, const ManifestEntry& b) { return a.name < b.name; });
  *out = std::move(m);
  return true;
}

}  // namespace

const char* provenance_name(Provenance p) {
  switch (p) {
    case Provenance::hardware: return "hardware";
    case Provenance::simulation: return "simulation";
    case Provenance::input: return "input";
    case Provenance::none: return "none";
  }
  return "none";
}

bool parse_provenance(std::string_view text, Provenance* out) {
  for (Provenance p : {Provenance::hardware, Provenance::simulation, Provenance::input, Provenance::none})
    if (text == provenance_name(p)) {
      *out = p;
      return true;
    }
  return false;
}

const ManifestEntry* Manifest::find(std::string_view name) const {
  for (const ManifestEntry& e : entries)
    if (e.name == name) return &e;
  return nullptr;
}

std::string format_manifest(const Manifest& m) {
  std::string s = std::string(kHeader) + std::string(kManifestMagic) + " " + std::to_string(kManifestVersion) + "\n";
  for (const ManifestEntry& e : m.entries) {
    if (e.folder) {
      s += "folder " + e.name + "\n";
      continue;
    }
    s += "file " + e.name + " bytes=" + std::to_string(e.bytes) + " sha256=" + e.sha256;
    if (!e.unit.empty()) s += " " + e.unit + "=" + std::to_string(e.count);
    s += std::string(" source=") + provenance_name(e.source) + " from=" + one_line(e.from) + "\n";
  }
  return s;
}

bool parse_manifest(std::string_view text, const std::string& source_name, Manifest* out, std::string* error) {
  Manifest m;
  bool magic = false;
  std::size_t line_no = 0, start = 0;
  auto fail = [&](const std::string& why) {
    *error = source_name + ":" + std::to_string(line_no) + ": " + why;
    return false;
  };
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    if (!magic) {
      const std::string want = std::string(kManifestMagic) + " ";
      if (line.substr(0, want.size()) != want)
        return fail("not an evidence manifest (no '" + std::string(kManifestMagic) + " 1' line)");
      if (line.substr(want.size()) != std::to_string(kManifestVersion))
        return fail("manifest version " + quote(line.substr(want.size())) + " is not one this build reads (1)");
      magic = true;
      continue;
    }
    ManifestEntry e;
    std::string_view rest;
    if (line.substr(0, 7) == "folder ") {
      e.folder = true;
      e.name = std::string(line.substr(7));
    } else if (line.substr(0, 5) == "file ") {
      rest = line.substr(5);
      const std::size_t sp = rest.find(' ');
      if (sp == std::string_view::npos) return fail("a file line without its fields");
      e.name = std::string(rest.substr(0, sp));
      rest = rest.substr(sp + 1);
      auto field = [&](std::string_view key, std::string_view* value) {
        if (rest.substr(0, key.size()) != key) return false;
        const std::size_t s2 = rest.find(' ');
        *value = rest.substr(key.size(), (s2 == std::string_view::npos ? rest.size() : s2) - key.size());
        rest = s2 == std::string_view::npos ? std::string_view() : rest.substr(s2 + 1);
        return true;
      };
      std::string_view v;
      if (!field("bytes=", &v) || !parse_u64(v, &e.bytes)) return fail("bytes=<number> expected");
      if (!field("sha256=", &v) || !is_hex64(v)) return fail("sha256=<64 lower-case hex digits> expected");
      e.sha256 = std::string(v);
      for (const char* unit : {"dot_products", "cases", "outputs"})
        if (field(std::string(unit) + "=", &v)) {
          if (!parse_u64(v, &e.count)) return fail(std::string(unit) + "=<number> expected");
          e.unit = unit;
          break;
        }
      if (!field("source=", &v) || !parse_provenance(v, &e.source))
        return fail("source=hardware|simulation|input|none expected");
      if (rest.substr(0, 5) != "from=" || rest.size() == 5) return fail("from=<text> expected last");
      e.from = std::string(rest.substr(5));
      for (char ch : e.from)
        if (ch < ' ' || ch > '~') return fail("from= holds a byte that is not printable ASCII");
      // The writer never ends the text with a space (one_line): read it the same way, so that
      // what is read writes back as the same line.
      while (!e.from.empty() && e.from.back() == ' ') e.from.pop_back();
      if (e.from.empty()) return fail("from=<text> expected last");
    } else {
      return fail("unknown line " + quote(line, 60) + " (file or folder expected)");
    }
    if (!valid_name(e.name)) return fail("name " + quote(e.name) + " is not printable ASCII without spaces or '/'");
    if (!m.entries.empty() && !(m.entries.back().name < e.name))
      return fail(quote(e.name) +
                  (m.entries.back().name == e.name ? " is listed twice" : " is out of order (names are sorted)"));
    m.entries.push_back(std::move(e));
  }
  if (!magic) return fail("empty: not an evidence manifest");
  *out = std::move(m);
  return true;
}

bool is_simulation_identity(std::string_view gpu, std::string_view compute_capability) {
  return gpu.substr(0, 10) == "simulation" || gpu.substr(0, 8) == "emulator" || compute_capability == "none";
}

bool file_facts(std::string_view name, std::string_view bytes, FileFacts* out, std::string* error) {
  FileFacts f;
  if (ends_with(name, ".mmav")) {
    MmavFile m;
    if (!parse_mmav(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(), &m, error)) return false;
    f.unit = "dot_products";
    f.count = std::uint64_t{128} * m.cases.size();  // 16 x 8 per case, every kind (mmav.hpp)
  } else if (ends_with(name, ".rec")) {
    Recording r;
    if (!parse_recording(bytes, std::string(name), &r, error)) return false;
    f.unit = "cases";
    f.count = r.outputs.size();
    f.length_verified = r.length_verified;
    f.says_source = true;
    const RecordingHeader& h = r.header;
    f.source = is_simulation_identity(h.gpu, h.compute_capability) ? Provenance::simulation : Provenance::hardware;
    f.from = identity_from(h.gpu, h.compute_capability, h.driver, h.cuda, h.commit,
                           "its header, version " + std::to_string(h.version));
  } else if (ends_with(name, ".out")) {
    OperandOutput o;
    if (!parse_operand_output(bytes, &o, error)) return false;
    f.unit = "outputs";
    f.count = o.c.size();
    f.says_source = true;
    f.source = o.backend == "cuda"  ? Provenance::hardware
               : o.backend == "sim" ? Provenance::simulation
                                    : Provenance::none;
    f.from = one_line("run-operands on backend " + o.backend + ": " + o.entry + ", body " + o.body);
  } else if (ends_with(name, ".case")) {
    // Case lines: every line but blank ones and '#' comments (golden/README.md, The case line).
    f.unit = "cases";
    std::size_t start = 0;
    while (start < bytes.size()) {
      std::size_t end = bytes.find('\n', start);
      if (end == std::string_view::npos) end = bytes.size();
      std::string_view line = bytes.substr(start, end - start);
      start = end + 1;
      const std::size_t first = line.find_first_not_of(" \t\r");
      if (first != std::string_view::npos && line[first] != '#') ++f.count;
    }
  }
  *out = std::move(f);
  return true;
}

bool probe_manifest_provenance(const std::string& dir, const std::string& name, Provenance* source, std::string* from) {
  std::error_code ec;
  std::vector<fs::path> manifests;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string n = it->path().filename().string();
    if (n.rfind("MANIFEST", 0) == 0 && ends_with(n, ".txt")) manifests.push_back(it->path());
  }
  std::sort(manifests.begin(), manifests.end());
  for (const fs::path& mp : manifests) {
    std::vector<std::string> lines;
    if (!read_lines(mp, &lines)) continue;
    std::map<std::string, std::string> keys;
    bool lists = false;
    for (const std::string& line : lines) {
      const std::string file_key = "file: ";
      if (line.rfind(file_key, 0) == 0) {
        lists |= line.substr(file_key.size(), line.find(' ', file_key.size()) - file_key.size()) == name;
        continue;
      }
      const std::size_t colon = line.find(": ");
      if (line.empty() || line[0] == '#' || colon == std::string::npos) continue;
      keys.emplace(line.substr(0, colon), line.substr(colon + 2));
    }
    if (!lists || !keys.count("hardware")) continue;
    const bool hw = keys["hardware"] == "yes" && !is_simulation_identity(keys["gpu"], keys["compute_capability"]);
    *source = hw ? Provenance::hardware : Provenance::simulation;
    *from = identity_from(keys["gpu"], keys["compute_capability"], keys["driver"], keys["cuda"], keys["commit"],
                          mp.filename().string());
    return true;
  }
  return false;
}

void check_tree(const std::string& dir, bool require_manifest, TreeCheck* out) {
  check_folder(fs::path(dir), require_manifest, true, out);
}

void check_unlisted_file(const std::string& path, TreeCheck* out) {
  const fs::path p(path);
  check_unlisted(p.parent_path().empty() ? fs::path(".") : p.parent_path(), p.filename().string(), out);
}

bool build_manifest(const std::string& dir, const ManifestSource& fallback, Manifest* out, std::string* error) {
  std::vector<fs::path> subfolders;
  error->clear();
  return build_one(fs::path(dir), fallback, out, &subfolders, error);
}

bool write_manifest_tree(const std::string& dir, const ManifestSource& fallback, std::vector<std::string>* written,
                         std::string* error) {
  std::vector<std::pair<fs::path, Manifest>> all;
  std::vector<fs::path> todo{fs::path(dir)};
  while (!todo.empty()) {
    const fs::path d = todo.back();
    todo.pop_back();
    Manifest m;
    std::vector<fs::path> sub;
    error->clear();
    if (!build_one(d, fallback, &m, &sub, error)) return false;
    all.emplace_back(d, std::move(m));
    todo.insert(todo.end(), sub.rbegin(), sub.rend());
  }
  // Every manifest must read back before any is written: a writer never leaves a file its own
  // reader refuses.
  for (const auto& [d, m] : all) {
    Manifest back;
    const fs::path path = d / std::string(kManifestFileName);
    if (!parse_manifest(format_manifest(m), shown(path.string()), &back, error)) {
      *error += " (in what would have been written: nothing was written)";
      return false;
    }
  }
  for (const auto& [d, m] : all) {
    const fs::path path = d / std::string(kManifestFileName);
    if (!write_file_atomic(path.string(), format_manifest(m), error)) {
      *error = shown(path.string()) + ": " + *error;
      return false;
    }
    written->push_back(path.string());
  }
  return true;
}

}  // namespace w8a16::golden
