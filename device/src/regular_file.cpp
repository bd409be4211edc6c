// SPDX-License-Identifier: MIT OR Apache-2.0
#include "regular_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace w8a16::device {

bool read_regular_file(const std::string& path, std::uint64_t max_bytes, const std::string& what,
                       const std::string& limit, std::vector<unsigned char>* bytes, std::string* problem) {
  bytes->clear();
  const std::string too_large = "is larger than " + limit + ": not " + what;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    *problem = errno == ENOENT ? "no such file" : std::string("cannot be read: ") + std::strerror(errno);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    *problem = S_ISDIR(st.st_mode) ? "is a folder, not " + what : "is not a regular file (a FIFO or a device)";
    return false;
  }
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    *problem = too_large;
    return false;
  }
  // O_NONBLOCK: a FIFO put in the file's place after the stat opens without waiting for a writer,
  // and the fstat below refuses it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    *problem = std::string("cannot be opened: ") + std::strerror(errno);
    return false;
  }
  problem->clear();
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    *problem = "is not a regular file (a FIFO or a device)";
  } else {
    unsigned char buf[1 << 16];
    for (;;) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) *problem = std::string("cannot be read: ") + std::strerror(errno);
      if (n <= 0) break;
      // The file may have grown since the stat: the limit holds for what is read.
      if (bytes->size() + static_cast<std::size_t>(n) > max_bytes) {
        *problem = too_large;
        break;
      }
      bytes->insert(bytes->end(), buf, buf + n);
    }
  }
  ::close(fd);
  if (!problem->empty()) bytes->clear();
  return problem->empty();
}

}  // namespace w8a16::device
