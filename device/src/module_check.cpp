// SPDX-License-Identifier: MIT OR Apache-2.0
// The static check of a kernel module image (module_check.hpp). Every read is bounds-checked
// against the bytes actually present; offsets in the messages are bytes of the file.
#include "w8a16/device/module_check.hpp"

#include <cstdio>
#include <cstring>

namespace w8a16::device {
namespace {

constexpr std::uint32_t kFatbinMagic = 0xBA55ED50u;
constexpr std::uint16_t kFatbinVersion = 1;
constexpr std::size_t kFatbinHeaderBytes = 16;
constexpr std::uint16_t kEntryPtx = 1, kEntryElf = 2;
// Every entry header nvcc 13 writes is 64 bytes or more (80 for PTX, 112 for sm_100 and later),
// and the fields read here end at +64.
constexpr std::uint32_t kEntryHeaderMin = 64;
// Entry flags (+40) as nvcc 13 sets them, read from fatbins built for sm_90, sm_90a, sm_100f:
// 0x8000 a zstd-compressed payload (0x2000: the LZ4 compression of earlier toolkits), 0x100000
// an sm_XYa / compute_XYa target, 0x200000 an sm_XYf one.
constexpr std::uint64_t kFlagCompressedLz4 = 0x2000, kFlagCompressedZstd = 0x8000;
constexpr std::uint64_t kFlagArchSpecific = 0x100000, kFlagFamilySpecific = 0x200000;

// ELF64 (System V gABI) header fields and constants used here.
constexpr std::size_t kEhdrBytes = 64, kShdrBytes = 64, kPhdrBytes = 56;
constexpr std::uint8_t kElfClass64 = 2, kElfData2Lsb = 1;
constexpr std::uint16_t kEmCuda = 190;
constexpr std::uint32_t kShtStrtab = 3, kShtNobits = 8;
// EI_ABIVERSION 8 and later keep the SM in e_flags bits 8..15, earlier ones in bits 0..7
// (llvm/BinaryFormat/ELF.h: ELFABIVERSION_CUDA_V2, EF_CUDA_SM_MASK / EF_CUDA_SM_OFFSET, EF_CUDA_SM).
constexpr std::uint8_t kCudaAbiV2 = 8;

using Bytes = ImageBytes;

std::string at_byte(std::uint64_t off) { return "byte " + std::to_string(off); }

std::string range_text(std::uint64_t off, std::uint64_t len) {
  return "[" + std::to_string(off) + ", " + std::to_string(off + len) + ")";
}

bool is_elf(const Bytes& b) {
  return b.has(0, 4) && std::memcmp(b.at(0),
                                    "\x7f"
                                    "ELF",
                                    4) == 0;
}

// .nv.compat holds 4-byte records {format, attribute, value...}; ptxas 13 writes attribute 9 with
// value 1 for sm_XYa and 0 otherwise (compared between sm_90 / sm_90a, sm_100 / sm_100a cubins).
// A linked module (nvcc -dlink) has no .nv.compat: false then.
bool compat_says_arch_specific(const Bytes& e, const ElfSection& s) {
  for (std::uint64_t p = s.offset; p + 4 <= s.offset + s.size; p += 4) {
    const std::uint8_t format = e.get<std::uint8_t>(p), attr = e.get<std::uint8_t>(p + 1);
    if (format == 2 && attr == 9) return e.get<std::uint8_t>(p + 2) == 1;
    if (format == 4) p += e.get<std::uint16_t>(p + 2);  // a record with a value of that many bytes
  }
  return false;
}

// Whether a GPU of cc_major.cc_minor runs this entry (CUDA C++ Programming Guide, "Binary
// Compatibility": a cubin for X.Y runs on X.Z, Z >= Y; "Feature Set Compiler Targets": sm_XYa on
// X.Y only; PTX for compute_XY is compiled for any X'.Z' >= X.Y, compute_XYa for X.Y only).
bool runs_on(const ModuleEntry& e, int cc_major, int cc_minor) {
  const int major = static_cast<int>(e.arch / 10), minor = static_cast<int>(e.arch % 10);
  if (e.arch_specific) return cc_major == major && cc_minor == minor;
  if (e.kind == ModuleEntry::Kind::cubin || e.family_specific) return cc_major == major && cc_minor >= minor;
  return cc_major > major || (cc_major == major && cc_minor >= minor);
}

}  // namespace

std::string module_entry_name(const ModuleEntry& e) {
  return std::string(e.kind == ModuleEntry::Kind::ptx ? "compute_" : "sm_") + std::to_string(e.arch) +
         (e.arch_specific     ? "a"
          : e.family_specific ? "f"
                              : "");
}

std::string read_module_entries(const unsigned char* data, std::size_t size, std::vector<ModuleEntry>* out) {
  out->clear();
  const Bytes b(data, size);
  if (size == 0) return "the file is empty";
  if (is_elf(b)) {
    ModuleEntry e;
    e.kind = ModuleEntry::Kind::cubin;
    e.offset = 0;
    e.size = size;
    out->push_back(e);  // its architecture comes from e_flags (check_elf_image)
    return "";
  }
  if (!b.has(0, 4) || b.get<std::uint32_t>(0) != kFatbinMagic)
    return "neither a cubin (ELF) nor a fatbin (magic 0xBA55ED50) at byte 0";
  if (!b.has(0, kFatbinHeaderBytes))
    return "the file is cut: " + std::to_string(size) + " bytes, shorter than the fatbin header's 16";
  const std::uint16_t version = b.get<std::uint16_t>(4), header = b.get<std::uint16_t>(6);
  const std::uint64_t body = b.get<std::uint64_t>(8);
  if (version != kFatbinVersion)
    return "fatbin version " + std::to_string(version) + " at byte 4 (this check knows version 1)";
  if (header < kFatbinHeaderBytes)
    return "fatbin header size " + std::to_string(header) + " at byte 6, smaller than the header's 16 bytes";
  if (!b.has(header, body))
    return "the file is cut: the fatbin container declares " + std::to_string(header) + " + " + std::to_string(body) +
           " bytes (size at byte 8), the file has " + std::to_string(size);
  const std::uint64_t end = header + body;
  for (std::uint64_t off = header; off < end;) {
    const std::string where = "the fatbin entry at " + at_byte(off);
    if (end - off < kEntryHeaderMin)
      return where + ": its header needs " + std::to_string(kEntryHeaderMin) + " bytes, the container has " +
             std::to_string(end - off) + " left";
    const std::uint16_t kind = b.get<std::uint16_t>(off);
    const std::uint32_t entry_header = b.get<std::uint32_t>(off + 4);
    const std::uint64_t payload = b.get<std::uint64_t>(off + 8);
    const std::uint32_t compressed_size = b.get<std::uint32_t>(off + 16);
    const std::uint64_t flags = b.get<std::uint64_t>(off + 40);
    const std::uint64_t decompressed_size = b.get<std::uint64_t>(off + 56);
    if (kind != kEntryPtx && kind != kEntryElf)
      return where + ": kind " + std::to_string(kind) + " (1 is PTX, 2 is a cubin)";
    if (entry_header < kEntryHeaderMin || entry_header > end - off)
      return where + ": header size " + std::to_string(entry_header) + " (at " + at_byte(off + 4) +
             ") is below 64 or leaves the container, which ends at " + at_byte(end);
    if (payload > end - off - entry_header)
      return where + ": its payload " + range_text(off + entry_header, payload) + " (size at " + at_byte(off + 8) +
             ") leaves the container, which ends at " + at_byte(end);
    ModuleEntry e;
    e.kind = kind == kEntryPtx ? ModuleEntry::Kind::ptx : ModuleEntry::Kind::cubin;
    e.arch = b.get<std::uint32_t>(off + 28);
    e.arch_specific = (flags & kFlagArchSpecific) != 0;
    e.family_specific = (flags & kFlagFamilySpecific) != 0;
    e.compressed = (flags & (kFlagCompressedLz4 | kFlagCompressedZstd)) != 0;
    e.header_offset = off;
    e.offset = off + entry_header;
    e.size = payload;
    const std::string named = "the " + module_entry_name(e) + " entry at " + at_byte(off);
    if (e.arch < 10 || e.arch > 255)
      return named + ": SM version " + std::to_string(e.arch) + " at " + at_byte(off + 28);
    if (e.compressed && (compressed_size == 0 || compressed_size > payload || decompressed_size == 0))
      return named + ": compressed " + std::to_string(compressed_size) + " bytes (at " + at_byte(off + 16) +
             ") in a payload of " + std::to_string(payload) + ", " + std::to_string(decompressed_size) +
             " when decompressed (at " + at_byte(off + 56) + "): the sizes do not fit";
    out->push_back(e);
    off += entry_header + payload;
  }
  if (out->empty()) return "the fatbin at byte 0 holds no entry";
  return "";
}

std::string check_elf_image(const unsigned char* data, std::size_t size, std::size_t base, ElfImage* out) {
  *out = ElfImage{};
  const Bytes e(data, size);
  auto where = [&](std::uint64_t off) { return at_byte(base + off); };
  if (!is_elf(e)) return "no ELF magic at " + where(0);
  if (!e.has(0, kEhdrBytes))
    return "the ELF header at " + where(0) + " is cut: " + std::to_string(size) + " bytes of its 64";
  if (e.get<std::uint8_t>(4) != kElfClass64) return "not ELFCLASS64 (EI_CLASS at " + where(4) + ")";
  if (e.get<std::uint8_t>(5) != kElfData2Lsb) return "not little-endian (EI_DATA at " + where(5) + ")";
  if (const auto m = e.get<std::uint16_t>(18); m != kEmCuda)
    return "e_machine " + std::to_string(m) + " at " + where(18) + ", not EM_CUDA (190)";
  const std::uint64_t phoff = e.get<std::uint64_t>(0x20), shoff = e.get<std::uint64_t>(0x28);
  const std::uint32_t flags = e.get<std::uint32_t>(0x30);
  const std::uint16_t ehsize = e.get<std::uint16_t>(0x34), phentsize = e.get<std::uint16_t>(0x36),
                      phnum = e.get<std::uint16_t>(0x38), shentsize = e.get<std::uint16_t>(0x3a),
                      shnum = e.get<std::uint16_t>(0x3c), shstrndx = e.get<std::uint16_t>(0x3e);
  if (ehsize != kEhdrBytes) return "e_ehsize " + std::to_string(ehsize) + " at " + where(0x34) + ", not 64";
  if (shnum == 0) return "no section header table (e_shnum 0 at " + where(0x3c) + ")";
  if (shentsize != kShdrBytes) return "e_shentsize " + std::to_string(shentsize) + " at " + where(0x3a) + ", not 64";
  if (phnum != 0 && phentsize != kPhdrBytes)
    return "e_phentsize " + std::to_string(phentsize) + " at " + where(0x36) + ", not 56";
  if (!e.has(shoff, std::uint64_t{shnum} * kShdrBytes))
    return "the section header table " + range_text(base + shoff, std::uint64_t{shnum} * kShdrBytes) +
           " leaves the image, which ends at " + where(size);
  if (phnum != 0 && !e.has(phoff, std::uint64_t{phnum} * kPhdrBytes))
    return "the program header table " + range_text(base + phoff, std::uint64_t{phnum} * kPhdrBytes) +
           " leaves the image, which ends at " + where(size);
  if (shstrndx >= shnum)
    return "e_shstrndx " + std::to_string(shstrndx) + " at " + where(0x3e) + " is not one of the " +
           std::to_string(shnum) + " sections";
  for (std::uint16_t i = 0; i < phnum; ++i) {
    const std::uint64_t h = phoff + std::uint64_t{i} * kPhdrBytes;
    const std::uint64_t off = e.get<std::uint64_t>(h + 8), filesz = e.get<std::uint64_t>(h + 32);
    if (!e.has(off, filesz))
      return "segment " + std::to_string(i) + " (header at " + where(h) + "): its bytes " +
             range_text(base + off, filesz) + " leave the image, which ends at " + where(size);
  }
  out->sections.resize(shnum);
  for (std::uint16_t i = 0; i < shnum; ++i) {
    const std::uint64_t h = shoff + std::uint64_t{i} * kShdrBytes;
    ElfSection& s = out->sections[i];
    s = {e.get<std::uint32_t>(h),      e.get<std::uint32_t>(h + 4),  e.get<std::uint32_t>(h + 40),
         e.get<std::uint64_t>(h + 24), e.get<std::uint64_t>(h + 32), e.get<std::uint64_t>(h + 56)};
    if (s.type != kShtNobits && !e.has(s.offset, s.size))
      return "section " + std::to_string(i) + " (header at " + where(h) + "): its bytes " +
             range_text(base + s.offset, s.size) + " leave the image, which ends at " + where(size);
  }
  const ElfSection& names = out->sections[shstrndx];
  if (names.type != kShtStrtab || names.size == 0 || e.get<std::uint8_t>(names.offset + names.size - 1) != 0)
    return "section " + std::to_string(shstrndx) + " (e_shstrndx) is not a NUL-terminated string table";
  for (std::uint16_t i = 0; i < shnum; ++i) {
    const ElfSection& s = out->sections[i];
    if (s.name >= names.size)
      return "section " + std::to_string(i) + ": its name " + std::to_string(s.name) + " leaves the string table of " +
             std::to_string(names.size) + " bytes";
    if (s.type != kShtNobits &&
        std::strcmp(reinterpret_cast<const char*>(e.at(names.offset + s.name)), ".nv.compat") == 0)
      out->arch_specific = compat_says_arch_specific(e, s);
  }
  out->shstrndx = shstrndx;
  out->arch = e.get<std::uint8_t>(8) >= kCudaAbiV2 ? (flags >> 8) & 0xFF : flags & 0xFF;
  if (out->arch < 10) {
    char hex[16];
    std::snprintf(hex, sizeof hex, "%08x", static_cast<unsigned>(flags));
    return std::string("e_flags 0x") + hex + " at " + where(0x30) + " name no SM version";
  }
  return "";
}

std::string check_module_image(const unsigned char* data, std::size_t size, int cc_major, int cc_minor,
                               std::vector<std::string>* notes) {
  std::vector<ModuleEntry> entries;
  if (std::string why = read_module_entries(data, size, &entries); !why.empty()) return why;
  const bool fatbin = !is_elf(Bytes(data, size));
  std::string held;
  bool any_runs = false;
  for (ModuleEntry& e : entries) {
    const std::string where = fatbin ? "the " + module_entry_name(e) + " entry at " + at_byte(e.header_offset)
                                     : "the cubin";
    if (e.compressed) {
      if (notes)
        notes->push_back(where + " is compressed (" + std::to_string(e.size) +
                         " bytes): its sizes are inside the container, its contents are not checked");
    } else if (e.kind == ModuleEntry::Kind::cubin) {
      ElfImage elf;
      if (!is_elf(Bytes(data + e.offset, e.size)))
        return where + ": its payload at " + at_byte(e.offset) + " is not an ELF image and is not marked compressed";
      if (std::string why = check_elf_image(data + e.offset, e.size, e.offset, &elf); !why.empty())
        return where + ": " + why;
      if (!fatbin) {
        e.arch = elf.arch;
        e.arch_specific = elf.arch_specific;
      } else if (elf.arch != e.arch) {
        return where + ": its ELF's e_flags (at " + at_byte(e.offset + 0x30) + ") say sm_" + std::to_string(elf.arch) +
               ", the entry header says sm_" + std::to_string(e.arch);
      }
    }
    const bool runs = runs_on(e, cc_major, cc_minor);
    any_runs = any_runs || runs;
    held += (held.empty() ? "" : ", ") + module_entry_name(e);
  }
  if (!any_runs && cc_major != 0)
    return "no image in the module runs on this GPU (compute capability " + std::to_string(cc_major) + "." +
           std::to_string(cc_minor) + "): it holds " + held +
           " (a cubin for sm_XY runs on X.Y and later minors of X, sm_XYa on X.Y only, PTX for compute_XY on X.Y and later)";
  return "";
}

}  // namespace w8a16::device
