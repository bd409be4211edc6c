// SPDX-License-Identifier: MIT OR Apache-2.0
// The fatbin and cubin reader of module_image.hpp. The container, the ELF header and the section
// table are read and bounds-checked by the product's module check (w8a16/device/module_check.hpp,
// which the CUDA backend runs before every --module load); on top of it this reads the symbol
// tables (ELF64, the System V gABI) and NVIDIA's .nv.info records ({format, attribute}, then a
// 2-byte value or, for EIFMT_SVAL, a 2-byte length and that many bytes), as cuobjdump -elf prints them.
#include "module_image.hpp"

#include <algorithm>
#include <cstring>

#include "w8a16/device/module_check.hpp"

namespace w8a16::image {
namespace {

constexpr std::uint8_t kStoCudaEntry = 0x10;
constexpr std::uint8_t kEifmtSval = 4;
constexpr std::uint8_t kEiattrKparamInfo = 0x17;

using Bytes = device::ImageBytes;

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

bool read_cubin(const Bytes& e, std::size_t base, std::uint32_t arch, std::vector<Cubin>* out, std::string* error) {
  // The header, both tables and every section's bounds: the product's check (module_check.hpp).
  device::ElfImage elf;
  if (std::string why = device::check_elf_image(e.at(0), e.size(), base, &elf); !why.empty()) return fail(error, why);
  using Section = device::ElfSection;
  const std::vector<Section>& secs = elf.sections;
  const std::size_t shnum = secs.size(), shstrndx = elf.shstrndx;
  Cubin c;
  c.arch = arch ? arch : elf.arch;
  std::map<std::string, std::vector<KernelParamLayout>> info;  // .nv.info.<name> of every function
  for (const Section& s : secs) {
    std::string name;
    if (!name_at(e, secs[shstrndx].offset + s.name, &name))
      return fail(error, "a section name leaves the string table");
    if (s.type == 2 /* SHT_SYMTAB */) {
      if (s.entsize != 24 || s.link >= shnum) return fail(error, "a symbol table of unknown shape");
      for (std::uint64_t j = 0; j < s.size / 24; ++j) {
        const std::uint64_t sym = s.offset + j * 24;
        const std::uint8_t st_info = e.get<std::uint8_t>(sym + 4), st_other = e.get<std::uint8_t>(sym + 5);
        std::string sname;
        if (!name_at(e, secs[s.link].offset + e.get<std::uint32_t>(sym), &sname))
          return fail(error, "a symbol name leaves the string table");
        if ((st_info & 0xF) == 2 /* STT_FUNC */ && (st_other & kStoCudaEntry)) c.kernels[sname];
      }
    }
    const std::string prefix = ".nv.info.";
    if (name.compare(0, prefix.size(), prefix) == 0 && name.size() > prefix.size()) {
      std::vector<KernelParamLayout>& params = info[name.substr(prefix.size())];
      for (std::uint64_t p = s.offset; p < s.offset + s.size;) {
        if (!e.has(p, 4) || p + 4 > s.offset + s.size) return fail(error, name + ": a record leaves the section");
        const std::uint8_t format = e.get<std::uint8_t>(p), attr = e.get<std::uint8_t>(p + 1);
        std::uint64_t len = 0;
        if (format == kEifmtSval) len = e.get<std::uint16_t>(p + 2);
        if (p + 4 + len > s.offset + s.size) return fail(error, name + ": a record leaves the section");
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
    std::sort(params.begin(), params.end(),
              [](const KernelParamLayout& a, const KernelParamLayout& b) { return a.ordinal < b.ordinal; });
  }
  out->push_back(std::move(c));
  return true;
}

}  // namespace

bool read_module_image(const std::vector<unsigned char>& image, std::vector<Cubin>* out, std::string* error) {
  out->clear();
  // The container and its entries: the product's check (module_check.hpp).
  std::vector<device::ModuleEntry> entries;
  if (std::string why = device::read_module_entries(image.data(), image.size(), &entries); !why.empty())
    return fail(error, why);
  for (const device::ModuleEntry& entry : entries) {
    if (entry.kind != device::ModuleEntry::Kind::cubin) continue;
    const std::string where = entry.header_offset || entry.offset
                                  ? "the " + device::module_entry_name(entry) + " entry: "
                                  : "";
    if (entry.compressed) return fail(error, where + "compressed: this reader reads uncompressed cubins only");
    std::string why;
    if (!read_cubin(Bytes(image.data() + entry.offset, entry.size), entry.offset, entry.arch, out, &why))
      return fail(error, where + why);
  }
  if (out->empty()) return fail(error, "the fatbin holds no cubin");
  return true;
}

}  // namespace w8a16::image
