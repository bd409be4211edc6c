// SPDX-License-Identifier: MIT OR Apache-2.0
// Where the CLI finds its data (a golden/ folder: mma/, cases/, regressions/, recordings/) without a
// path of any build tree compiled in, so that a copied or installed binary finds it or says it cannot.
#pragma once
#include <string>

namespace w8a16::cli {

struct DataDir {
  std::string path;   // the folder; empty when none was found (then `error` says where it looked)
  std::string how;    // "--data-dir", "W8A16_DATA_DIR", "install prefix /usr/local", "source tree of build tree /x"
  std::string error;  // set when path is empty
};

// In this order, the first that applies:
//   1. `option` (the command's --data-dir), if non-empty: it must be a folder;
//   2. $W8A16_DATA_DIR, if non-empty: it must be a folder;
//   3. <prefix>/share/w8a16check/golden beside an installed binary (<prefix>/bin/w8a16check; the
//      relative path from the install's bin to its share folder is the one thing compiled in);
//   4. the source tree of the build tree the binary sits in: a CMakeCache.txt in the binary's
//      folder or up to three above it names w8a16check_SOURCE_DIR, read at run time.
// A folder named by 1 or 2 that does not exist is an error, never a fall-through to 3 or 4.
DataDir find_data_dir(const std::string& option);

// "data: <path> (<how>)": the line a command prints before it uses the folder.
std::string data_dir_line(const DataDir& d);

// For `probe` and `record` on the simulation: "" when `out` may be written, else why not (it lies
// in the data folder that verify would find, and --into-data-dir was not given).
std::string simulation_output_refusal(const std::string& out, const std::string& data_dir_option, bool into_data_dir);

}  // namespace w8a16::cli
