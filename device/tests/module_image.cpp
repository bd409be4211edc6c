// SPDX-License-Identifier: MIT OR Apache-2.0
// The fatbin and cubin reader of module_image.hpp. Layouts: the fatbin container (a 16-byte header,
// then entries of {kind, version, header size, payload size, ..., SM version at +32}), ELF64 (the
// System V gABI) and NVIDIA's .nv.info records ({format, attribute}, then a 2-byte value or, for
// EIFMT_SVAL, a 2-byte length and that many bytes), as cuobjdump -elf prints them.
#include "module_image.hpp"

#include <algorithm>
#include <cstring>

namespace w8a16::image {
namespace {

constexpr std::uint32_t kFatbinMagic = 0xBA55ED50u;
constexpr std::uint16_t kEntryKindPtx = 1, kEntryKindElf = 2;
constexpr std::uint8_t kStoCudaEntry = 0x10;
constexpr std::uint8_t kEifmtSval = 4;
constexpr std::uint8_t kEiattrKparamInfo = 0x17;

class Bytes {
 public:
  Bytes(const unsigned char* p, std::size_t n) : p_(p), n_(n) {}
  bool has(std::uint64_t off, std::uint64_t len) const { return off <= n_ && len <= n_ - off; }
  template <class T>
  T get(std::uint64_t off) const {
    T v;
    std::memcpy(&v, p_ + off, sizeof v);
    return v;
  }
  const unsigned char* at(std::uint64_t off) const { return p_ + off; }
  std::size_t size() const { return n_; }

 private:
  const unsigned char* p_;
  std::size_t n_;
};

bool fail(std::string* error, const std::string& why) {
  *error = why;
  return false;
}

// A NUL-terminated name at `off` inside [0, size).
bool name_at(const Bytes& b, std::uint64_t off, std::string* out) {
  if (off >= b.size()) return false;
  const void* end = std::memchr(b.at(off), 0, b.size() - off);
  if (!end) return false;
  out->assign(reinterpret_cast<const char*>(b.at(off)), static_cast<const unsigned char*>(end) - b.at(off));
  return true;
}

bool read_cubin(const Bytes& e, std::uint32_t arch, std::vector<Cubin>* out, std::string* error) {
  if (!e.has(0, 64) || std::memcmp(e.at(0), "\x7f" "ELF", 4) != 0) return fail(error, "no ELF header");
  if (e.get<std::uint8_t>(4) != 2 || e.get<std::uint8_t>(5) != 1) return fail(error, "not a 64-bit little-endian ELF");
  const auto shoff = e.get<std::uint64_t>(0x28);
  const auto shentsize = e.get<std::uint16_t>(0x3a), shnum = e.get<std::uint16_t>(0x3c), shstrndx = e.get<std::uint16_t>(0x3e);
  if (shentsize != 64 || !e.has(shoff, std::uint64_t{shnum} * 64) || shstrndx >= shnum)
    return fail(error, "section headers leave the image");
  struct Section {
    std::uint32_t name, type, link;
    std::uint64_t off, size, entsize;
  };
  std::vector<Section> secs(shnum);
  for (std::uint16_t i = 0; i < shnum; ++i) {
    const std::uint64_t h = shoff + std::uint64_t{i} * 64;
    secs[i] = {e.get<std::uint32_t>(h), e.get<std::uint32_t>(h + 4), e.get<std::uint32_t>(h + 40),
               e.get<std::uint64_t>(h + 24), e.get<std::uint64_t>(h + 32), e.get<std::uint64_t>(h + 56)};
    if (secs[i].type != 8 /* SHT_NOBITS */ && !e.has(secs[i].off, secs[i].size))
      return fail(error, "section " + std::to_string(i) + " leaves the image");
  }
  Cubin c;
  c.arch = arch;
  std::map<std::string, std::vector<KernelParamLayout>> info;  // .nv.info.<name> of every function
  for (const Section& s : secs) {
    std::string name;
    if (!name_at(e, secs[shstrndx].off + s.name, &name)) return fail(error, "a section name leaves the string table");
    if (s.type == 2 /* SHT_SYMTAB */) {
      if (s.entsize != 24 || s.link >= shnum) return fail(error, "a symbol table of unknown shape");
      for (std::uint64_t j = 0; j < s.size / 24; ++j) {
        const std::uint64_t sym = s.off + j * 24;
        const std::uint8_t st_info = e.get<std::uint8_t>(sym + 4), st_other = e.get<std::uint8_t>(sym + 5);
        std::string sname;
        if (!name_at(e, secs[s.link].off + e.get<std::uint32_t>(sym), &sname))
          return fail(error, "a symbol name leaves the string table");
        if ((st_info & 0xF) == 2 /* STT_FUNC */ && (st_other & kStoCudaEntry)) c.kernels[sname];
      }
    }
    const std::string prefix = ".nv.info.";
    if (name.compare(0, prefix.size(), prefix) == 0 && name.size() > prefix.size()) {
      std::vector<KernelParamLayout>& params = info[name.substr(prefix.size())];
      for (std::uint64_t p = s.off; p < s.off + s.size;) {
        if (!e.has(p, 4) || p + 4 > s.off + s.size) return fail(error, name + ": a record leaves the section");
        const std::uint8_t format = e.get<std::uint8_t>(p), attr = e.get<std::uint8_t>(p + 1);
        std::uint64_t len = 0;
        if (format == kEifmtSval) len = e.get<std::uint16_t>(p + 2);
        if (p + 4 + len > s.off + s.size) return fail(error, name + ": a record leaves the section");
        if (attr == kEiattrKparamInfo && format == kEifmtSval) {
          if (len < 12) return fail(error, name + ": a parameter record shorter than 12 bytes");
          const std::uint32_t flags = e.get<std::uint32_t>(p + 12);
          params.push_back({e.get<std::uint16_t>(p + 8), e.get<std::uint16_t>(p + 10), (flags >> 18) & 0x3FFF});
        }
        p += 4 + len;
      }
    }
  }
  for (auto& [kernel, params] : c.kernels) {
    auto it = info.find(kernel);
    if (it == info.end()) continue;  // no parameters at all
    params = it->second;
    std::sort(params.begin(), params.end(), [](const KernelParamLayout& a, const KernelParamLayout& b) {
      return a.ordinal < b.ordinal;
    });
  }
  out->push_back(std::move(c));
  return true;
}

}  // namespace

bool read_module_image(const std::vector<unsigned char>& image, std::vector<Cubin>* out, std::string* error) {
  out->clear();
  const Bytes b(image.data(), image.size());
  if (b.has(0, 4) && std::memcmp(image.data(), "\x7f" "ELF", 4) == 0) return read_cubin(b, 0, out, error);
  if (!b.has(0, 16) || b.get<std::uint32_t>(0) != kFatbinMagic) return fail(error, "neither a fatbin nor a cubin");
  const std::uint64_t header = b.get<std::uint16_t>(6), body = b.get<std::uint64_t>(8);
  if (!b.has(header, body)) return fail(error, "the fatbin's entries leave the image");
  for (std::uint64_t off = header; off < header + body;) {
    if (off + 36 > header + body) return fail(error, "a truncated fatbin entry header");
    const std::uint16_t kind = b.get<std::uint16_t>(off);
    const std::uint32_t entry_header = b.get<std::uint32_t>(off + 4);
    const std::uint64_t payload = b.get<std::uint64_t>(off + 8);
    const std::uint32_t arch = b.get<std::uint32_t>(off + 32);
    if (entry_header < 36 || off + entry_header + payload > header + body)
      return fail(error, "a fatbin entry leaves the image");
    if (kind == kEntryKindElf) {
      std::string why;
      if (!read_cubin(Bytes(b.at(off + entry_header), payload), arch, out, &why))
        return fail(error, "the sm_" + std::to_string(arch) + " entry: " + why +
                               " (a compressed entry? this reader reads uncompressed cubins only)");
    } else if (kind != kEntryKindPtx) {
      return fail(error, "a fatbin entry of unknown kind " + std::to_string(kind));
    }
    off += entry_header + payload;
  }
  if (out->empty()) return fail(error, "the fatbin holds no cubin");
  return true;
}

}  // namespace w8a16::image
