// SPDX-License-Identifier: MIT OR Apache-2.0
// The noted failing case and its file under golden/regressions/.
#include "w8a16/properties/regression.hpp"

#include <cstdlib>
#include <filesystem>
#include <mutex>

#include "w8a16/golden/case.hpp"

namespace w8a16::props {
namespace {

std::mutex g_mutex;
std::optional<NotedFailure> g_noted;

// A file name from a test name: letters, digits, '.', '_' and '-' kept, anything else '_'.
std::string file_stem(const std::string& name) {
  std::string out = name;
  for (char& ch : out)
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' ||
          ch == '-'))
      ch = '_';
  return out;
}

}  // namespace

void note_failing_case(const golden::Case& c, const std::string& why) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_noted = NotedFailure{c, why};
}

std::optional<NotedFailure> take_noted_failure() {
  std::lock_guard<std::mutex> lock(g_mutex);
  std::optional<NotedFailure> out = std::move(g_noted);
  g_noted.reset();
  return out;
}

std::string regressions_dir(const std::string& default_dir) {
  if (const char* env = std::getenv("W8A16_REGRESSIONS_DIR"); env && *env) return env;
  return default_dir;
}

std::string save_regression(const NotedFailure& f, const std::string& test_name, const std::string& default_dir,
                            std::string* error) {
  namespace fs = std::filesystem;
  const fs::path dir = regressions_dir(default_dir);
  std::error_code ec;
  fs::create_directories(dir, ec);
  std::string path = (dir / (file_stem(test_name) + ".case")).string();  // not const: returned, so moved
  const std::string comment = "failed " + test_name + ": " + f.why + "\nreplay: w8a16check repro '" +
                              golden::format_case(f.c) + "'";
  if (!golden::append_case_file(path, f.c, comment, error)) return {};
  return path;
}

}  // namespace w8a16::props
