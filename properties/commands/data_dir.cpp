// SPDX-License-Identifier: MIT OR Apache-2.0
// Finding the data folder at run time (data_dir.hpp): the options, the install layout, the build tree.
#include "data_dir.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "w8a16/golden/files.hpp"
#include "w8a16/properties/evidence.hpp"

namespace w8a16::cli {
namespace {
namespace fs = std::filesystem;

// The running binary, links resolved: a symlink such as build/bin/w8a16check leads to its tree.
fs::path executable_path() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : fs::weakly_canonical(p, ec);
}

// w8a16check_SOURCE_DIR from a CMakeCache.txt ("w8a16check_SOURCE_DIR:STATIC=/path"), or "".
std::string source_dir_in_cache(const fs::path& cache) {
  std::ifstream in(cache);
  const std::string key = "w8a16check_SOURCE_DIR:STATIC=";
  for (std::string line; std::getline(in, line);)
    if (line.compare(0, key.size(), key) == 0) return line.substr(key.size());
  return "";
}

DataDir named(const std::string& path, const std::string& how) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return {"", how, how + " " + golden::shown(path) + ": no such folder"};
  return {fs::absolute(path, ec).lexically_normal().string(), how, ""};
}

}  // namespace

DataDir find_data_dir(const std::string& option) {
  if (!option.empty()) return named(option, "--data-dir");
  if (const char* env = std::getenv("W8A16_DATA_DIR"); env && *env) return named(env, "W8A16_DATA_DIR");

  std::error_code ec;
  std::string looked;
  const fs::path exe = executable_path();
  if (!exe.empty()) {
    const fs::path bin = exe.parent_path();
    const fs::path installed = (bin / W8A16_BIN_TO_DATADIR / "w8a16check" / "golden").lexically_normal();
    if (fs::is_directory(installed, ec))
      return {installed.string(), "install prefix " + golden::shown(bin.parent_path().string()), ""};
    looked = golden::shown(installed.string());
    fs::path dir = bin;
    for (int up = 0; up < 4 && !dir.empty(); ++up, dir = dir.parent_path()) {
      const fs::path cache = dir / "CMakeCache.txt";
      if (!fs::is_regular_file(cache, ec)) {
        if (dir == dir.root_path()) break;
        continue;
      }
      const std::string src = source_dir_in_cache(cache);
      const fs::path golden = fs::path(src) / "golden";
      if (!src.empty() && fs::is_directory(golden, ec))
        return {golden.lexically_normal().string(), "source tree of build tree " + golden::shown(dir.string()), ""};
      looked += ", " + (src.empty() ? golden::shown(cache.string()) + " (names no w8a16check source tree)"
                                    : golden::shown(golden.string()));
      break;
    }
  }
  return {"", "",
          "no data folder found (looked at " + (looked.empty() ? std::string("nothing: no executable path") : looked) +
              "); pass --data-dir DIR or set W8A16_DATA_DIR to a w8a16check golden/ folder"};
}

std::string data_dir_line(const DataDir& d) { return "data: " + golden::shown(d.path) + " (" + d.how + ")"; }

std::string simulation_output_refusal(const std::string& out, const std::string& data_dir_option, bool into_data_dir) {
  if (into_data_dir) return "";
  const DataDir data = find_data_dir(data_dir_option);
  if (data.path.empty() || !props::path_inside(out, data.path)) return "";
  return golden::shown(out) + " lies in the data folder " + golden::shown(data.path) + " (" + data.how +
         "): the simulation's files are not hardware evidence and do not go there unless --into-data-dir is given "
         "(verify then fails on them)";
}

}  // namespace w8a16::cli
