// SPDX-License-Identifier: MIT OR Apache-2.0
// Files the tool is given and files it writes: regular files only, bounded reads, atomic writes,
// and user text (paths, tokens, option values) quoted safely in messages. Errors are values.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace w8a16::golden {

// The largest input file any reader takes (every format of golden/ and every file the CLI reads):
// far above what the tool writes (the committed recordings are under 1 MB, the largest .mmav 18 MB),
// far below what would exhaust a laptop's memory.
inline constexpr std::uint64_t kMaxInputFileBytes = std::uint64_t{1} << 30;

// Every function below says why it failed in *error without naming the path (the caller does, with
// shown(path)), e.g. "is a folder, not a regular file".
//
// Reads all of `path` into *bytes. False, with why in *error and *bytes unchanged, for a
// path that does not exist, a folder, a FIFO, a device (/dev/zero), a socket, a file that cannot be
// opened (permissions) or read (an I/O error), and a file larger than max_bytes. A FIFO is opened
// without blocking and refused before anything is read, so no reader waits for a writer.
bool read_regular_file(const std::string& path, std::uint64_t max_bytes, std::string* bytes, std::string* error);

// What `path` is, for messages: "a folder", "a FIFO", "a character device", ... or "" for a regular
// file; "does not exist" when nothing is there.
std::string path_kind(const std::string& path);

// Writes `bytes` so that no reader ever sees a half-written file and a failure leaves `path` as it
// was: a temporary file in the same folder (created exclusively, mode 0666 less the umask), written,
// flushed to disk and renamed over `path`. A path that already is a character device or a FIFO
// (/dev/stdout, /dev/full, a pipe) is written in place, since nothing can be renamed onto it; a FIFO
// without a reader is an error, never a wait. Every failure (a missing folder, a full disk, a
// folder or other file kind at `path`) is false with why in *error.
bool write_file_atomic(const std::string& path, std::string_view bytes, std::string* error);

// Appends `bytes` to the regular file `path`, creating it (mode 0666 less the umask) when absent.
// Anything else at `path` (a folder, a FIFO, a device) is refused; every failure is false with why.
bool append_to_file(const std::string& path, std::string_view bytes, std::string* error);

// Whether write_file_atomic(path, ...) can succeed, checked before long work starts: the folder
// exists and takes a new file, and `path` is not a folder. A device or FIFO is taken as it is
// (only writing shows whether it accepts the bytes). False with why in *error.
bool check_writable(const std::string& path, std::string* error);

// User text inside a message, always between single quotes: bytes below 0x20, DEL, C1 controls,
// invalid UTF-8 and invisible or direction-changing code points (zero-width spaces, bidi overrides,
// the BOM, ...) are written as \n, \t, \xHH or \u{XXXX}; a quote or backslash is escaped. Text
// longer than max_bytes is cut at a character boundary and followed by "... (cut: N bytes)".
// The code point at s[i] and its length in bytes, or 0 when the bytes there are not valid UTF-8
// (overlong, a surrogate, past U+10FFFF, cut short); quote() and the reports' XML text use it.
std::size_t utf8_at(std::string_view s, std::size_t i, std::uint32_t* cp);
std::string quote(std::string_view text, std::size_t max_bytes = 200);
// A path or name for a message: as it is when it holds only characters that need no quoting
// (letters, digits, printable UTF-8 and . _ - / + , : = @ % ~) and is at most max_bytes long; else
// quote(text, max_bytes).
std::string shown(std::string_view text, std::size_t max_bytes = 200);
// Text read from a file or the command line shown without quotes (a GPU name from a recording's
// header): escaped and cut as quote() does, but spaces and quotes left as they are.
std::string escaped(std::string_view text, std::size_t max_bytes = 200);

}  // namespace w8a16::golden
