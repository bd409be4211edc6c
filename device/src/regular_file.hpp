// SPDX-License-Identifier: MIT OR Apache-2.0
// One file of bounded size read with POSIX calls, refused before any read when it is not a
// regular file: a std::ifstream blocks in open on a FIFO, throws from its first read of a folder
// and never ends on /dev/zero. The launch layer reads kernel modules and the simulation's contract
// files with it (device/ shares no code with golden/'s reader).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace w8a16::device {

// True with *bytes the file's contents. False with *problem one phrase that follows the file's
// name ("no such file", "is a folder, not <what>", "is not a regular file (a FIFO or a device)",
// "is larger than <limit>: not <what>", "cannot be opened: ...", "cannot be read: ..."); `what`
// names what the file should be ("a kernel module"), `limit` the size in words ("1 GiB").
bool read_regular_file(const std::string& path, std::uint64_t max_bytes, const std::string& what,
                       const std::string& limit, std::vector<unsigned char>* bytes, std::string* problem);

}  // namespace w8a16::device
