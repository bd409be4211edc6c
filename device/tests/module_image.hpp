// SPDX-License-Identifier: MIT OR Apache-2.0
// What a kernel module image holds, read from its bytes without the driver or cuobjdump: a fatbin's
// cubins (ELF), each one's entry kernels (symbols marked STO_CUDA_ENTRY) and each kernel's
// parameters from its .nv.info.<kernel> section (EIATTR_KPARAM_INFO records: ordinal, offset, size).
// Tests use it to hold the embedded modules to docs/KERNEL_ABI.md on a machine without a GPU.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace w8a16::image {

struct KernelParamLayout {
  std::uint32_t ordinal = 0, offset = 0, size = 0;
  friend bool operator==(const KernelParamLayout& a, const KernelParamLayout& b) {
    return a.ordinal == b.ordinal && a.offset == b.offset && a.size == b.size;
  }
};

struct Cubin {
  std::uint32_t arch = 0;  // the fatbin entry's SM version, or a cubin's e_flags' (90 for sm_90 and sm_90a)
  // Entry kernel -> its parameters in ordinal order.
  std::map<std::string, std::vector<KernelParamLayout>> kernels;
};

// The cubins of a fatbin (magic 0xBA55ED50) or of one cubin (ELF). PTX entries are skipped. False
// with *error on anything it cannot read: a truncated or unknown container, an entry that does not
// start with an ELF header (a compressed fatbin, say), an ELF that is not 64-bit little-endian, a
// section or record that leaves the image.
bool read_module_image(const std::vector<unsigned char>& image, std::vector<Cubin>* out, std::string* error);

}  // namespace w8a16::image
