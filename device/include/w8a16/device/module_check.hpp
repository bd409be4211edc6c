// SPDX-License-Identifier: MIT OR Apache-2.0
// A kernel module image (a fatbin, or one cubin) checked from its bytes before the driver sees
// them: cuModuleLoadData trusts the sizes and offsets it finds, and on a cut or damaged image it
// crashes or hangs instead of returning an error. No CUDA header and no driver: host code.
//
// The layouts read here:
// - the fatbin container: a 16-byte header {u32 magic 0xBA55ED50, u16 version 1, u16 header
//   size, u64 size of the entries that follow}, then entries that tile that size exactly, each a
//   header {u16 kind (1 PTX, 2 ELF), u16, u32 header size, u64 payload size, u32 compressed size,
//   u32, u32, u32 SM version at +28, ..., u64 flags at +40, u64 decompressed size at +56} and its
//   payload. This is the layout nvcc 13 writes (read from this repository's fatbins; NVIDIA
//   publishes no specification of it).
// - ELF64 (System V gABI, "ELF header", "Sections", "Program Header"), machine EM_CUDA (190),
//   with the SM version in e_flags: bits 8..15 for EI_ABIVERSION 8 and later (what nvcc 13
//   writes), bits 0..7 before (llvm/BinaryFormat/ELF.h: EF_CUDA_SM_MASK, EF_CUDA_SM).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace w8a16::device {

// Bytes of an image read as little-endian fields (the host's order, and the only one a CUDA ELF
// uses); callers check has() before get() or at().
class ImageBytes {
 public:
  ImageBytes(const unsigned char* p, std::size_t n) : p_(p), n_(n) {}
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

// One image of a module: a fatbin entry, or the whole file when it is a cubin.
struct ModuleEntry {
  enum class Kind { cubin, ptx };
  Kind kind = Kind::cubin;
  std::uint32_t arch = 0;            // SM version: 90 for sm_90, sm_90a and compute_90
  bool arch_specific = false;        // sm_XYa / compute_XYa: runs on compute capability X.Y only
  bool family_specific = false;      // sm_XYf / compute_XYf
  bool compressed = false;           // the payload is compressed (nvcc -Xfatbin -compress-all, PTX by default)
  std::size_t header_offset = 0;     // where the entry header starts in the file (0 for a bare cubin)
  std::size_t offset = 0, size = 0;  // the payload, in bytes of the file
};

// "sm_90a", "compute_80", "sm_100f".
std::string module_entry_name(const ModuleEntry& e);

// The entries of a fatbin or the one image of a cubin, with the container checked: magic, version,
// header size, the declared size against the file, every entry header and payload inside the
// container, entry kinds. "" on success, else the first problem and its byte offset. It does not
// look inside the payloads (check_elf_image does).
std::string read_module_entries(const unsigned char* data, std::size_t size, std::vector<ModuleEntry>* out);

struct ElfSection {
  std::uint32_t name = 0, type = 0, link = 0;
  std::uint64_t offset = 0, size = 0, entsize = 0;
};
struct ElfImage {
  std::uint32_t arch = 0;      // from e_flags
  bool arch_specific = false;  // .nv.compat says sm_XYa (only cubins ptxas wrote alone carry it)
  std::uint16_t shstrndx = 0;
  std::vector<ElfSection> sections;  // offsets relative to the image's first byte
};

// One ELF image checked: header complete, ELFCLASS64, little-endian, EM_CUDA, e_ehsize, e_shentsize
// and e_phentsize, both header tables and every section's bytes (but SHT_NOBITS) and every segment's
// file bytes inside the image, e_shstrndx a string table, every section name inside it. `base` is
// where the image starts in the file, for the byte offsets of the messages. "" on success.
std::string check_elf_image(const unsigned char* data, std::size_t size, std::size_t base, ElfImage* out);

// The whole check, before cuModuleLoadData: the container (read_module_entries), each uncompressed
// ELF image (check_elf_image) with its e_flags architecture the same as its fatbin entry's, and at
// least one image the GPU of compute capability cc_major.cc_minor can run: a cubin for sm_XY on
// X.Z with Z >= Y, one for sm_XYa on X.Y only (CUDA C++ Programming Guide, "Binary Compatibility"
// and "Feature Set Compiler Targets"), or PTX it can compile (compute_XY on X.Y and above). ""
// when the image is acceptable, else one line naming what is wrong and at which byte. *notes (when
// given) gets what could not be checked: a compressed entry's contents. cc_major 0: no GPU is known
// yet, and everything but the architecture is checked.
std::string check_module_image(const unsigned char* data, std::size_t size, int cc_major, int cc_minor,
                               std::vector<std::string>* notes = nullptr);

}  // namespace w8a16::device
