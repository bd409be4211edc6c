// SPDX-License-Identifier: MIT OR Apache-2.0
// Reading case files (.case: golden/README.md) and listing the files of a folder by extension.
#include "w8a16/properties/case_files.hpp"

#include <algorithm>
#include <filesystem>

#include "w8a16/golden/files.hpp"

namespace w8a16::props {
namespace fs = std::filesystem;

namespace {

void load_text(const std::string& path, const std::string& text, long only_line, LoadedCases* out) {
  long line_no = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    std::string line = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    if (only_line > 0 && line_no != only_line) continue;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') {
      if (only_line > 0) out->errors.push_back(path + ":" + std::to_string(line_no) + ": not a case line");
      continue;
    }
    golden::Case c;
    std::string why;
    if (golden::parse_case(line, &c, &why)) {
      out->cases.push_back(c);
      out->sources.push_back(path + ":" + std::to_string(line_no));
    } else {
      out->errors.push_back(path + ":" + std::to_string(line_no) + ": " + why);
    }
  }
  if (only_line > line_no) out->errors.push_back(path + ": has no line " + std::to_string(only_line));
}

void load_file(const std::string& path, long only_line, LoadedCases* out) {
  std::string text, why;
  if (!golden::read_regular_file(path, golden::kMaxInputFileBytes, &text, &why)) {
    out->errors.push_back(golden::shown(path) + ": " + why);
    return;
  }
  load_text(golden::shown(path), text, only_line, out);
}

}  // namespace

std::vector<std::string> files_under(const std::string& root, const std::string& extension,
                                     std::vector<std::string>* errors) {
  std::vector<std::string> files;
  std::error_code ec;
  fs::recursive_directory_iterator it(root, ec), end;
  if (ec) {
    errors->push_back(golden::shown(root) + ": cannot list the folder: " + ec.message());
    return files;
  }
  for (; it != end; it.increment(ec)) {
    if (ec) {
      errors->push_back(golden::shown(root) + ": cannot list the folder: " + ec.message());
      break;
    }
    const fs::path& p = it->path();
    if (p.extension() != extension) continue;
    std::error_code kind_ec;
    if (it->is_regular_file(kind_ec)) {
      files.push_back(p.string());
    } else if (!it->is_directory(kind_ec)) {
      errors->push_back(golden::shown(p.string()) + ": is " + golden::path_kind(p.string()) + ", not a regular file");
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

LoadedCases load_cases(const std::vector<std::string>& paths) {
  LoadedCases out;
  for (const std::string& root : paths) {
    std::error_code ec;
    const fs::file_status st = fs::status(root, ec);
    if (!fs::exists(st)) continue;
    if (fs::is_directory(st)) {
      for (const std::string& f : files_under(root, ".case", &out.errors)) load_file(f, 0, &out);
    } else {
      load_file(root, 0, &out);  // a regular file, or an error naming what it is
    }
  }
  return out;
}

LoadedCases load_case_argument(const std::string& arg) {
  LoadedCases out;
  if (arg.rfind("case/", 0) == 0) {
    load_text("<argument>", arg, 0, &out);
    return out;
  }
  std::string path = arg;
  long line = 0;
  std::error_code ec;
  const std::size_t colon = arg.rfind(':');
  if (colon != std::string::npos && colon + 1 < arg.size() && arg.size() - colon - 1 <= 9 &&
      arg.find_first_not_of("0123456789", colon + 1) == std::string::npos && !fs::exists(arg, ec)) {
    path = arg.substr(0, colon);
    line = std::stol(arg.substr(colon + 1));
    if (line == 0) {
      out.errors.push_back(golden::shown(arg) + ": line numbers start at 1");
      return out;
    }
  }
  if (!fs::exists(path, ec)) {
    out.errors.push_back(golden::shown(path) + ": no such file (and not a case line starting with 'case/')");
    return out;
  }
  load_file(path, line, &out);
  return out;
}

}  // namespace w8a16::props
