// SPDX-License-Identifier: MIT OR Apache-2.0
// files.hpp: the readers take regular files only and never block or read forever; writes are atomic
// and every failure says so; user text in messages is escaped and cut.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "w8a16/golden/files.hpp"

namespace {

namespace fs = std::filesystem;
using namespace w8a16::golden;

std::string fresh_dir(const std::string& name) {
  const fs::path p = fs::path(::testing::TempDir()) / ("w8a16_files_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p.string();
}

std::string read_error(const std::string& path, std::uint64_t max = kMaxInputFileBytes) {
  std::string bytes = "untouched", error;
  EXPECT_FALSE(read_regular_file(path, max, &bytes, &error)) << path;
  EXPECT_EQ(bytes, "untouched");
  return error;
}

TEST(Files, ReadRefusesEveryKindThatIsNotARegularFile) {
  const std::string dir = fresh_dir("kinds");
  EXPECT_EQ(read_error(dir), "is a folder, not a regular file");
  EXPECT_EQ(read_error("/dev/zero"), "is a character device, not a regular file");
  const std::string fifo = dir + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(read_error(fifo), "is a FIFO, not a regular file");  // and returns: no writer is waited for
  EXPECT_EQ(read_error(dir + "/missing"), "no such file");
  // /proc/self/mem is a regular file whose read at offset 0 fails: an I/O error is an error value.
  EXPECT_NE(read_error("/proc/self/mem").find("read failed"), std::string::npos);
}

TEST(Files, ReadRefusesAFileLargerThanItsLimitAndReadsOneAtIt) {
  const std::string dir = fresh_dir("limit");
  std::ofstream(dir + "/f") << "0123456789";
  EXPECT_EQ(read_error(dir + "/f", 9), "is 10 bytes, more than the 9 bytes this reader takes");
  std::string bytes, error;
  ASSERT_TRUE(read_regular_file(dir + "/f", 10, &bytes, &error)) << error;
  EXPECT_EQ(bytes, "0123456789");
}

TEST(Files, AtomicWriteReplacesWholeAndLeavesNoTemporaryFile) {
  const std::string dir = fresh_dir("write");
  std::string error;
  ASSERT_TRUE(write_file_atomic(dir + "/r.json", "first", &error)) << error;
  ASSERT_TRUE(write_file_atomic(dir + "/r.json", "second", &error)) << error;
  std::string bytes;
  ASSERT_TRUE(read_regular_file(dir + "/r.json", 100, &bytes, &error)) << error;
  EXPECT_EQ(bytes, "second");
  std::size_t entries = 0;
  for (const auto& e : fs::directory_iterator(dir)) entries += !e.path().empty();
  EXPECT_EQ(entries, 1u);
  // The umask applies as for any new file (no 0600 temporary file renamed into place).
  struct stat st;
  ASSERT_EQ(::stat((dir + "/r.json").c_str(), &st), 0);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  EXPECT_EQ(st.st_mode & 0777, 0666 & ~mask);
}

TEST(Files, EveryWriteFailureIsAnErrorAndChangesNothing) {
  const std::string dir = fresh_dir("fail");
  std::string error;
  EXPECT_FALSE(write_file_atomic("/dev/full", "bytes", &error));
  EXPECT_NE(error.find("No space left"), std::string::npos) << error;
  EXPECT_FALSE(write_file_atomic(dir + "/missing/r.json", "bytes", &error));
  EXPECT_NE(error.find("does not exist"), std::string::npos) << error;
  EXPECT_FALSE(write_file_atomic(dir, "bytes", &error));
  EXPECT_EQ(error, "is a folder, not a file that can be replaced");
  EXPECT_FALSE(check_writable(dir + "/missing/r.json", &error));
  EXPECT_TRUE(check_writable(dir + "/new.json", &error)) << error;
  EXPECT_TRUE(check_writable("/dev/null", &error)) << error;
  EXPECT_TRUE(write_file_atomic("/dev/null", "bytes", &error)) << error;  // a device is written in place
  const std::string fifo = dir + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_FALSE(write_file_atomic(fifo, "bytes", &error));  // no reader: an error, never a wait
  EXPECT_NE(error.find("a FIFO with no reader"), std::string::npos) << error;
  EXPECT_FALSE(append_to_file(fifo, "bytes", &error));
  EXPECT_NE(error.find("is a FIFO"), std::string::npos) << error;
  EXPECT_TRUE(fs::is_fifo(fifo));
}

TEST(Files, QuoteEscapesControlBytesInvisibleCodePointsAndBadUtf8) {
  EXPECT_EQ(quote("plain"), "'plain'");
  EXPECT_EQ(quote("a\x1b[31m\x07"), "'a\\x1B[31m\\x07'");
  EXPECT_EQ(quote("tab\tnl\n"), "'tab\\tnl\\n'");
  EXPECT_EQ(quote("it's \\"), "'it\\'s \\\\'");
  EXPECT_EQ(quote("gemv\u202ebatch4"), "'gemv\\u{202E}batch4'");  // a right-to-left override
  EXPECT_EQ(quote("zero\u200bwidth\ufeff"), "'zero\\u{200B}width\\u{FEFF}'");
  EXPECT_EQ(quote("\xC3\xA9t\xC3\xA9"), "'\xC3\xA9t\xC3\xA9'");  // printable UTF-8 is kept
  EXPECT_EQ(quote("bad\xC3(\xFF"), "'bad\\xC3(\\xFF'");
  EXPECT_EQ(quote("\xC2\x85"), "'\\u{0085}'");  // a C1 control
}

TEST(Files, LongTextIsCutWithItsLengthStated) {
  const std::string long_text(100000, 'x');
  const std::string q = quote(long_text, 20);
  EXPECT_EQ(q, "'" + std::string(20, 'x') + "...' (cut: 100000 bytes)");
  // A cut never splits a UTF-8 character.
  const std::string e = quote(std::string(19, 'x') + "\xC3\xA9" + std::string(10, 'y'), 20);
  EXPECT_EQ(e, "'" + std::string(19, 'x') + "\xC3\xA9...' (cut: 31 bytes)");
}

TEST(Files, ShownLeavesPlainPathsAloneAndQuotesTheRest) {
  EXPECT_EQ(shown("golden/mma/h200"), "golden/mma/h200");
  EXPECT_EQ(shown("/tmp/x-1_2.case:3"), "/tmp/x-1_2.case:3");
  EXPECT_EQ(shown("my file.case"), "'my file.case'");
  EXPECT_EQ(shown("a\nb"), "'a\\nb'");
  EXPECT_EQ(shown(""), "''");
  EXPECT_EQ(escaped("NVIDIA H200"), "NVIDIA H200");
  EXPECT_EQ(escaped("NVIDIA\x1b H200"), "NVIDIA\\x1B H200");
}

}  // namespace
