// SPDX-License-Identifier: MIT OR Apache-2.0
// The static module check (w8a16/device/module_check.hpp) over the real embedded product fatbin
// and a cubin taken out of it, without a GPU: the whole images pass; every cut of either, and each
// damaged field (a section offset, e_machine, the class, the tables, the container's sizes, the
// architecture against the GPU), fails with a message that says what and where. These are the
// images that, handed to cuModuleLoadData, crashed or hung the driver.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "w8a16/device/cuda_backend.hpp"
#include "w8a16/device/module_check.hpp"

namespace {

using namespace w8a16;
using device::check_module_image;
using device::ModuleEntry;
using Image = std::vector<unsigned char>;

std::string check(const Image& b, int major, int minor, std::vector<std::string>* notes = nullptr) {
  return check_module_image(b.data(), b.size(), major, minor, notes);
}

template <class T>
void put(Image* b, std::size_t off, T v) {
  ASSERT_LE(off + sizeof v, b->size());
  std::memcpy(b->data() + off, &v, sizeof v);
}
template <class T>
T get(const Image& b, std::size_t off) {
  T v{};
  if (off + sizeof v <= b.size()) std::memcpy(&v, b.data() + off, sizeof v);
  return v;
}

// Bytes written over an image at `off`, and what the check must then say.
struct Patch {
  std::size_t off;
  std::vector<unsigned char> bytes;
  const char* expect;
};

class ModuleCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    fatbin_ = device::CudaBackend::embedded_module();
    ASSERT_GT(fatbin_.size(), 4096u) << "the product fatbin is built with this test (device/CMakeLists.txt)";
    std::vector<ModuleEntry> entries;
    ASSERT_EQ(device::read_module_entries(fatbin_.data(), fatbin_.size(), &entries), "");
    for (const ModuleEntry& e : entries)
      if (e.kind == ModuleEntry::Kind::cubin && !e.compressed) {
        entry_ = e;
        break;
      }
    ASSERT_GT(entry_.size, 64u) << "the product fatbin holds no uncompressed cubin";
    cubin_.assign(fatbin_.begin() + entry_.offset, fatbin_.begin() + entry_.offset + entry_.size);
    major_ = static_cast<int>(entry_.arch / 10);
    minor_ = static_cast<int>(entry_.arch % 10);
  }
  // The image with c's bytes written over it fails, saying c.expect.
  void expect_patched(const Image& whole, const Patch& c) const {
    Image b = whole;
    std::copy(c.bytes.begin(), c.bytes.end(), b.begin() + c.off);
    const std::string why = check(b, major_, minor_);
    EXPECT_NE(why.find(c.expect), std::string::npos) << "want '" << c.expect << "', got '" << why << "'";
  }
  // The section header of section i, in the cubin's bytes.
  std::size_t section_header(std::size_t i) const { return get<std::uint64_t>(cubin_, 0x28) + 64 * i; }

  Image fatbin_, cubin_;
  ModuleEntry entry_;
  int major_ = 0, minor_ = 0;  // the compute capability the cubin is for
};

TEST_F(ModuleCheck, TheProductFatbinAndItsCubinPass) {
  std::vector<std::string> notes;
  EXPECT_EQ(check(fatbin_, major_, minor_, &notes), "");
  EXPECT_TRUE(notes.empty()) << notes.front();
  EXPECT_EQ(check(cubin_, major_, minor_), "");
  std::printf("product fatbin %zu bytes, its %s cubin at byte %zu: %zu bytes, both pass on compute capability %d.%d\n",
              fatbin_.size(), device::module_entry_name(entry_).c_str(), entry_.offset, cubin_.size(), major_, minor_);
}

TEST_F(ModuleCheck, EveryCutOfEitherFailsWithAMessage) {
  for (const auto& [name, whole] : {std::pair<const char*, const Image*>{"fatbin", &fatbin_}, {"cubin", &cubin_}}) {
    std::vector<std::size_t> cuts;
    for (int pct : {1, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55, 60, 65, 70, 75, 80, 85, 90, 95, 99})
      cuts.push_back(whole->size() * pct / 100);
    for (std::size_t n : {0, 16, 64, 500, 2000}) cuts.push_back(n);
    std::printf("%-6s %9s  message\n", name, "bytes");
    for (std::size_t n : cuts) {
      const Image cut(whole->begin(), whole->begin() + n);
      const std::string why = check(cut, major_, minor_);
      EXPECT_FALSE(why.empty()) << name << " cut to " << n << " of " << whole->size() << " bytes passed";
      EXPECT_EQ(why.find('\n'), std::string::npos) << why;
      std::printf("%-6s %9zu  %s\n", name, n, why.c_str());
    }
  }
  // One byte short is a cut too: the container's size is to the byte.
  EXPECT_NE(check(Image(fatbin_.begin(), fatbin_.end() - 1), major_, minor_).find("the file is cut"),
            std::string::npos);
}

TEST_F(ModuleCheck, ACorruptedSectionOffsetIsNamedWithItsHeader) {
  // The first section with bytes in the file (not SHT_NOBITS), its offset moved past the end.
  const std::uint16_t shnum = get<std::uint16_t>(cubin_, 0x3c);
  std::size_t victim = 0;
  for (std::size_t i = 1; i < shnum && !victim; ++i)
    if (get<std::uint32_t>(cubin_, section_header(i) + 4) != 8 &&
        get<std::uint64_t>(cubin_, section_header(i) + 32) > 0)
      victim = i;
  ASSERT_NE(victim, 0u);
  Image cubin = cubin_;
  put<std::uint64_t>(&cubin, section_header(victim) + 24, cubin.size() - 1);
  const std::string why = check(cubin, major_, minor_);
  EXPECT_NE(why.find("section " + std::to_string(victim) + " (header at byte " +
                     std::to_string(section_header(victim)) + "): its bytes"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("leave the image"), std::string::npos) << why;
  // The same inside the fatbin: the byte offsets are the file's.
  Image fatbin = fatbin_;
  put<std::uint64_t>(&fatbin, entry_.offset + section_header(victim) + 24, std::uint64_t{1} << 40);
  const std::string in_fatbin = check(fatbin, major_, minor_);
  EXPECT_NE(in_fatbin.find("entry at byte " + std::to_string(entry_.header_offset)), std::string::npos) << in_fatbin;
  EXPECT_NE(in_fatbin.find("header at byte " + std::to_string(entry_.offset + section_header(victim))),
            std::string::npos)
      << in_fatbin;
  // A section of SHT_NOBITS occupies no file bytes: its offset may say anything.
  for (std::size_t i = 1; i < shnum; ++i)
    if (get<std::uint32_t>(cubin_, section_header(i) + 4) == 8) {
      Image nobits = cubin_;
      put<std::uint64_t>(&nobits, section_header(i) + 24, std::uint64_t{1} << 40);
      EXPECT_EQ(check(nobits, major_, minor_), "");
      break;
    }
}

TEST_F(ModuleCheck, AWrongHeaderFieldIsNamed) {
  const Patch cases[] = {
      {18, {62, 0}, "e_machine 62 at byte 18, not EM_CUDA (190)"},  // EM_X86_64
      {4, {1}, "not ELFCLASS64"},
      {5, {2}, "not little-endian"},
      {0x34, {52, 0}, "e_ehsize 52"},
      {0x3a, {40, 0}, "e_shentsize 40"},
      {0x36, {32, 0}, "e_phentsize 32"},
      {0x3c, {0, 0}, "no section header table"},
      {0x3e, {0xff, 0xff}, "e_shstrndx 65535"},
      {0x28, {0, 0, 0, 0, 0, 1, 0, 0}, "the section header table ["},
      {0x20, {0, 0, 0, 0, 0, 1, 0, 0}, "the program header table ["},
      {0, {0x7f, 'E', 'L', 'G'}, "neither a cubin (ELF) nor a fatbin"},
  };
  for (const Patch& c : cases) expect_patched(cubin_, c);
  // e_shstrndx naming a section that is not a string table.
  Image cubin = cubin_;
  put<std::uint16_t>(&cubin, 0x3e, 0);
  EXPECT_NE(check(cubin, major_, minor_).find("is not a NUL-terminated string table"), std::string::npos);
}

TEST_F(ModuleCheck, AnImageForAnotherGpuIsRefusedNamingWhatItHolds) {
  // The cubin is for sm_XY: not for a GPU of another major, nor an older minor of the same one.
  const std::string other = check(fatbin_, 1, 0);
  EXPECT_NE(other.find("no image in the module runs on this GPU (compute capability "), std::string::npos) << other;
  EXPECT_NE(other.find("it holds " + device::module_entry_name(entry_)), std::string::npos) << other;
  EXPECT_NE(check(cubin_, major_ + 1, 0).find("no image in the module runs on this GPU"), std::string::npos);
  // sm_90a runs on 9.0 only; a plain sm_XY cubin also on a later minor of X.
  const std::string later = check(fatbin_, major_, minor_ + 1);
  if (entry_.arch_specific)
    EXPECT_NE(later.find("no image in the module runs on this GPU"), std::string::npos) << later;
  else EXPECT_EQ(later, "");
  // e_flags naming another SM than the fatbin entry: the entry is inconsistent. nvcc 13 writes the
  // SM in bits 8..15 (EI_ABIVERSION 8); the cubin's own e_flags then decide where it runs.
  ASSERT_GE(cubin_[8], 8) << "EI_ABIVERSION " << int(cubin_[8]) << ": not the layout nvcc 13 writes";
  EXPECT_EQ((get<std::uint32_t>(cubin_, 0x30) >> 8) & 0xFF, entry_.arch);
  Image fatbin = fatbin_;
  fatbin[entry_.offset + 0x31] = 75;
  EXPECT_NE(check(fatbin, major_, minor_).find("say sm_75, the entry header says sm_" + std::to_string(entry_.arch)),
            std::string::npos);
  Image cubin = cubin_;
  cubin[0x31] = 80;
  EXPECT_NE(check(cubin, 9, 0).find("it holds sm_80"), std::string::npos);
  EXPECT_EQ(check(cubin, 8, 0), "");
  // No GPU known yet (compute capability 0): everything but the architecture.
  EXPECT_EQ(check(cubin, 0, 0), "");
  EXPECT_NE(check(Image(cubin.begin(), cubin.begin() + 2000), 0, 0).find("the section header table"),
            std::string::npos);
}

TEST_F(ModuleCheck, TheContainerIsCheckedEntryByEntry) {
  const std::size_t e = entry_.header_offset;
  const Patch cases[] = {
      {4, {2, 0}, "fatbin version 2 at byte 4"},
      {6, {8, 0}, "fatbin header size 8 at byte 6"},
      {e, {7, 0}, "kind 7 (1 is PTX, 2 is a cubin)"},
      {e + 4, {16, 0, 0, 0}, "header size 16"},
      {e + 8, {0, 0, 0, 0, 0, 1, 0, 0}, "its payload ["},
      {e + 28, {3, 0, 0, 0}, "SM version 3"},
      {entry_.offset, {0, 0, 0, 0}, "is not an ELF image and is not marked compressed"},
  };
  for (const Patch& c : cases) expect_patched(fatbin_, c);
  // The container declaring less than the entries take: the last entry leaves it.
  Image shorter = fatbin_;
  put<std::uint64_t>(&shorter, 8, get<std::uint64_t>(fatbin_, 8) - 8);
  EXPECT_NE(check(shorter, major_, minor_).find("leaves the container"), std::string::npos);
  // Marked compressed (nvcc 13's zstd flag): its sizes are checked, its contents cannot be, and the
  // note says so.
  Image compressed = fatbin_;
  put<std::uint64_t>(&compressed, e + 40, get<std::uint64_t>(fatbin_, e + 40) | 0x8000);
  EXPECT_NE(check(compressed, major_, minor_).find("the sizes do not fit"), std::string::npos);
  put<std::uint32_t>(&compressed, e + 16, static_cast<std::uint32_t>(entry_.size - 4));
  put<std::uint64_t>(&compressed, e + 56, entry_.size * 3);
  std::vector<std::string> notes;
  EXPECT_EQ(check(compressed, major_, minor_, &notes), "");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("is compressed"), std::string::npos) << notes[0];
  put<std::uint32_t>(&compressed, e + 16, static_cast<std::uint32_t>(entry_.size + 1));
  EXPECT_NE(check(compressed, major_, minor_).find("the sizes do not fit"), std::string::npos);
}

// A fatbin of one PTX entry, laid out as nvcc 13 writes one (an 80-byte header; the flags of a
// compressed compute_XY entry, plus the sm_XYa bit when asked).
Image ptx_fatbin(std::uint32_t arch, bool arch_specific) {
  Image b(16 + 80 + 64, 0);
  auto put_at = [&](std::size_t off, auto v) { std::memcpy(b.data() + off, &v, sizeof v); };
  put_at(0, std::uint32_t{0xBA55ED50u});
  put_at(4, std::uint16_t{1});
  put_at(6, std::uint16_t{16});
  put_at(8, std::uint64_t{80 + 64});
  put_at(16, std::uint16_t{1});
  put_at(18, std::uint16_t{0x0101});
  put_at(20, std::uint32_t{80});
  put_at(24, std::uint64_t{64});
  put_at(32, std::uint32_t{60});
  put_at(44, arch);
  put_at(56, std::uint64_t{0x8011} | (arch_specific ? 0x100000 : 0));
  put_at(72, std::uint64_t{200});
  return b;
}

TEST(ModuleCheckPtx, PtxRunsWhereItCanBeCompiledAndIsCheckedInsideTheContainer) {
  std::vector<std::string> notes;
  EXPECT_EQ(check(ptx_fatbin(80, false), 9, 0, &notes), "");  // JIT-compiled for a later GPU
  EXPECT_EQ(notes.size(), 1u);
  EXPECT_NE(check(ptx_fatbin(90, false), 8, 6).find("it holds compute_90"), std::string::npos);
  EXPECT_EQ(check(ptx_fatbin(90, true), 9, 0), "");
  EXPECT_NE(check(ptx_fatbin(90, true), 10, 0).find("it holds compute_90a"), std::string::npos);
  Image cut = ptx_fatbin(80, false);
  cut.resize(cut.size() - 1);
  EXPECT_NE(check(cut, 9, 0).find("the file is cut"), std::string::npos);
  EXPECT_EQ(check({}, 9, 0), "the file is empty");
}

}  // namespace
