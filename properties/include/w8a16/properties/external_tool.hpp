// SPDX-License-Identifier: MIT OR Apache-2.0
// The CUDA toolkit's programs the gate runs beside the kernels (cuobjdump for the protocol check,
// compute-sanitizer for the sanitizer stage): where one is found, and one run of it with its
// output read and a deadline.
#pragma once
#include <string>
#include <vector>

namespace w8a16::props {

// The first executable `name` on PATH, under $CUDA_HOME/bin, in /usr/local/cuda/bin or under
// `also` (folders), in that order; "" when none is, with *looked (when given) saying where it looked.
std::string find_cuda_tool(const std::string& name, const std::vector<std::string>& also = {},
                           std::string* looked = nullptr);

struct ToolRun {
  bool started = false;    // the program could be run
  bool timed_out = false;  // it passed the deadline and was killed with its process group
  int exit_code = -1;      // its exit status when it exited
  int signal = 0;          // the signal that ended it, when one did
  std::string output;      // its standard output, and its standard error where merged
  std::string error;       // why it could not be started
};

// Runs argv[0] with argv (no shell) in a process group of its own, standard input /dev/null,
// reading its standard output (and standard error with merge_stderr; else it is discarded) until
// it exits; after timeout_s seconds (0: none) the group is killed. At most max_output bytes are
// kept (the rest is read and dropped).
ToolRun run_tool(const std::vector<std::string>& argv, double timeout_s, bool merge_stderr,
                 std::size_t max_output = std::size_t{64} << 20);

}  // namespace w8a16::props
