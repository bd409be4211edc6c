// SPDX-License-Identifier: MIT OR Apache-2.0
// Regular-file reading, atomic writing and message quoting (files.hpp), over POSIX calls: a
// std::ifstream on a folder throws from its first read and on a FIFO blocks in open, so neither is used.
#include "w8a16/golden/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>

namespace w8a16::golden {
namespace {

std::string errno_text(int e) { return std::strerror(e); }

std::string kind_of(const struct stat& st) {
  if (S_ISREG(st.st_mode)) return "";
  if (S_ISDIR(st.st_mode)) return "a folder";
  if (S_ISFIFO(st.st_mode)) return "a FIFO";
  if (S_ISCHR(st.st_mode)) return "a character device";
  if (S_ISBLK(st.st_mode)) return "a block device";
  if (S_ISSOCK(st.st_mode)) return "a socket";
  return "not a regular file";
}

std::string size_text(std::uint64_t bytes) {
  if (bytes >= (std::uint64_t{1} << 30) && bytes % (std::uint64_t{1} << 30) == 0)
    return std::to_string(bytes >> 30) + " GiB";
  if (bytes >= (std::uint64_t{1} << 20) && bytes % (std::uint64_t{1} << 20) == 0)
    return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}

// The folder a new file for `path` goes into, as a path that can be opened ("." for a bare name).
std::string parent_folder(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

bool write_all(int fd, std::string_view bytes, std::string* why) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      *why = "write failed: " + errno_text(errno);
      return false;
    }
    if (n == 0) {
      *why = "write failed: the file takes no more bytes";
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// A device or FIFO that exists: written where it is.
bool write_in_place(const std::string& path, const struct stat& st, std::string_view bytes, std::string* error) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    const int e = errno;
    *error = "cannot open for writing: " +
             (e == ENXIO && S_ISFIFO(st.st_mode) ? std::string("a FIFO with no reader") : errno_text(e));
    return false;
  }
  // Blocking from here on: a slow pipe reader is waited for, a full one is not an error.
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  std::string why;
  const bool ok = write_all(fd, bytes, &why);
  const bool closed = ::close(fd) == 0;
  if (!ok || !closed) {
    *error = (ok ? "close failed: " + errno_text(errno) : why);
    return false;
  }
  return true;
}

// Code points that show nothing, look like a space, or reorder the text around them (Unicode
// Cf and Zs less U+0020, the C1 controls, variation selectors, tags, noncharacters).
bool invisible(std::uint32_t cp) {
  return (cp >= 0x80 && cp <= 0xA0) || cp == 0xAD || cp == 0x34F || cp == 0x61C || cp == 0x115F || cp == 0x1160 ||
         cp == 0x1680 || cp == 0x17B4 || cp == 0x17B5 || (cp >= 0x180B && cp <= 0x180F) ||
         (cp >= 0x2000 && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202F) || (cp >= 0x205F && cp <= 0x206F) ||
         cp == 0x3000 || cp == 0x3164 || (cp >= 0xFE00 && cp <= 0xFE0F) || cp == 0xFEFF || cp == 0xFFA0 ||
         (cp >= 0xFFF0 && cp <= 0xFFFB) || (cp & 0xFFFE) == 0xFFFE || (cp >= 0x1D173 && cp <= 0x1D17A) ||
         (cp >= 0xE0000 && cp <= 0xE0FFF);
}

// Appends the escaped form of s, up to the first character boundary at or past max_bytes; returns
// how many bytes of s it took, and in *plain whether each was shown as it is and needs no quoting.
std::size_t escape(std::string_view s, std::size_t max_bytes, bool quoted, std::string* out, bool* plain_out) {
  char buf[16];
  bool plain = true;
  std::size_t i = 0;
  while (i < s.size() && i < max_bytes) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      std::uint32_t cp = 0;
      const std::size_t len = utf8_at(s, i, &cp);
      if (len == 0) {
        std::snprintf(buf, sizeof buf, "\\x%02X", c);
        *out += buf;
        plain = false;
        ++i;
      } else if (invisible(cp)) {
        std::snprintf(buf, sizeof buf, "\\u{%04X}", static_cast<unsigned>(cp));
        *out += buf;
        plain = false;
        i += len;
      } else {
        out->append(s.substr(i, len));
        i += len;
      }
      continue;
    }
    switch (c) {
      case '\n':
        *out += "\\n";
        plain = false;
        break;
      case '\r':
        *out += "\\r";
        plain = false;
        break;
      case '\t':
        *out += "\\t";
        plain = false;
        break;
      case '\\':
        *out += "\\\\";
        plain = false;
        break;
      case '\'':
        *out += quoted ? "\\'" : "'";
        plain = false;
        break;
      default:
        if (c < 0x20 || c == 0x7F) {
          std::snprintf(buf, sizeof buf, "\\x%02X", c);
          *out += buf;
          plain = false;
        } else {
          const bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                            std::strchr("._-/+,:=@%~", c) != nullptr;
          plain = plain && safe;
          *out += static_cast<char>(c);
        }
    }
    ++i;
  }
  *plain_out = plain;
  return i;
}

}  // namespace

// UTF-8 decoding (files.hpp): the code point at s[i] and its length, or length 0 when the bytes
// there are not valid UTF-8 (overlong, a surrogate, past U+10FFFF, cut short).
std::size_t utf8_at(std::string_view s, std::size_t i, std::uint32_t* cp) {
  const auto b = [&](std::size_t j) { return static_cast<unsigned char>(s[j]); };
  const unsigned char c = b(i);
  std::size_t len;
  std::uint32_t v, min;
  if (c >= 0xC2 && c <= 0xDF) len = 2, v = c & 0x1F, min = 0x80;
  else if (c >= 0xE0 && c <= 0xEF) len = 3, v = c & 0x0F, min = 0x800;
  else if (c >= 0xF0 && c <= 0xF4) len = 4, v = c & 0x07, min = 0x10000;
  else return 0;
  if (i + len > s.size()) return 0;
  for (std::size_t j = 1; j < len; ++j) {
    if ((b(i + j) & 0xC0) != 0x80) return 0;
    v = v << 6 | (b(i + j) & 0x3F);
  }
  if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
  *cp = v;
  return len;
}

std::string path_kind(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return "does not exist";
  return kind_of(st);
}

bool read_regular_file(const std::string& path, std::uint64_t max_bytes, std::string* bytes, std::string* error) {
  // stat first: a device is refused before it is opened (opening some has effects).
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    const int e = errno;
    *error = (e == ENOENT ? std::string("no such file") : "cannot read: " + errno_text(e));
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    *error = "is " + kind_of(st) + ", not a regular file";
    return false;
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    *error = "cannot open: " + errno_text(errno);
    return false;
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  // Checked again on what was opened: the path may have been replaced since the stat.
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    *error = "is " + kind_of(st) + ", not a regular file";
    return false;
  }
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    *error = "is " + std::to_string(st.st_size) + " bytes, more than the " + size_text(max_bytes) +
             " this reader takes";
    return false;
  }
  std::string text;
  text.reserve(static_cast<std::size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      *error = "read failed: " + errno_text(errno);
      return false;
    }
    if (n == 0) break;
    if (text.size() + static_cast<std::size_t>(n) > max_bytes) {  // it grew while being read
      *error = "holds more than the " + size_text(max_bytes) + " this reader takes";
      return false;
    }
    text.append(buf, static_cast<std::size_t>(n));
  }
  *bytes = std::move(text);
  return true;
}

bool check_writable(const std::string& path, std::string* error) {
  if (path.empty()) {
    *error = "an empty path";
    return false;
  }
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return true;
    if (!S_ISREG(st.st_mode)) {
      *error = "is " + kind_of(st) + ", not a file that can be replaced";
      return false;
    }
  }
  const std::string dir = parent_folder(path);
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    *error = "the folder " + shown(dir) + " does not exist";
    return false;
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    *error = "cannot create files in " + shown(dir) + ": " + errno_text(errno);
    return false;
  }
  return true;
}

bool write_file_atomic(const std::string& path, std::string_view bytes, std::string* error) {
  if (path.empty()) {
    *error = "an empty path";
    return false;
  }
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return write_in_place(path, st, bytes, error);
    if (!S_ISREG(st.st_mode)) {
      *error = "is " + kind_of(st) + ", not a file that can be replaced";
      return false;
    }
  }
  const std::string dir = parent_folder(path);
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    *error = "the folder " + shown(dir) + " does not exist";
    return false;
  }
  // A fresh name beside the target (the rename must not cross file systems), created exclusively
  // with mode 0666 so that the umask applies as for any file the user creates.
  static std::atomic<unsigned> counter{0};
  std::random_device rd;
  const std::string base = std::filesystem::path(path).filename().string();
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 16 && fd < 0; ++attempt) {
    tmp = (std::filesystem::path(dir) / ("." + base + ".tmp-" + std::to_string(::getpid()) + "-" +
                                         std::to_string(counter++) + "-" + std::to_string(rd() % 100000)))
              .string();
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    *error = "cannot create a file in " + shown(dir) + ": " + errno_text(errno);
    return false;
  }
  std::string why;
  bool ok = write_all(fd, bytes, &why);
  if (ok && ::fsync(fd) != 0 && errno != EINVAL && errno != EROFS) {
    why = "flush to disk failed: " + errno_text(errno);
    ok = false;
  }
  if (::close(fd) != 0 && ok) {
    why = "close failed: " + errno_text(errno);
    ok = false;
  }
  if (ok && ::rename(tmp.c_str(), path.c_str()) != 0) {
    why = "cannot rename the temporary file into place: " + errno_text(errno);
    ok = false;
  }
  if (!ok) {
    ::unlink(tmp.c_str());
    *error = why + " (the file is as it was)";
    return false;
  }
  return true;
}

bool append_to_file(const std::string& path, std::string_view bytes, std::string* error) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    *error = "is " + kind_of(st) + ", not a file that can be appended to";
    return false;
  }
  // O_NONBLOCK: should a FIFO appear at `path` after the stat, the open neither waits nor writes into it.
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0666);
  if (fd < 0) {
    *error = "cannot open for appending: " + errno_text(errno);
    return false;
  }
  std::string why;
  bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  if (!ok) why = "is not a regular file";
  if (ok) ok = write_all(fd, bytes, &why);
  if (::close(fd) != 0 && ok) {
    why = "close failed: " + errno_text(errno);
    ok = false;
  }
  if (!ok) *error = why;
  return ok;
}

std::string quote(std::string_view text, std::size_t max_bytes) {
  std::string out = "'";
  bool plain = false;
  const std::size_t taken = escape(text, max_bytes, true, &out, &plain);
  if (taken < text.size()) return out + "...' (cut: " + std::to_string(text.size()) + " bytes)";
  return out + "'";
}

std::string shown(std::string_view text, std::size_t max_bytes) {
  std::string out;
  bool plain = false;
  if (!text.empty() && escape(text, max_bytes, false, &out, &plain) == text.size() && plain) return out;
  return quote(text, max_bytes);
}

}  // namespace w8a16::golden

namespace w8a16::golden {

std::string escaped(std::string_view text, std::size_t max_bytes) {
  std::string out;
  bool plain = false;
  const std::size_t taken = escape(text, max_bytes, false, &out, &plain);
  if (taken < text.size()) out += "... (cut: " + std::to_string(text.size()) + " bytes)";
  return out;
}

}  // namespace w8a16::golden
