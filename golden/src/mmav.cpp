// SPDX-License-Identifier: MIT OR Apache-2.0
// `.mmav` reading and writing (little-endian, golden/mma/README.md).
#include "w8a16/golden/mmav.hpp"

#include "w8a16/golden/files.hpp"

#include <cstring>

namespace w8a16::golden {
namespace {

std::uint32_t load_u32(const std::uint8_t* p) {
  return std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 | std::uint32_t{p[3]} << 24;
}
std::uint16_t load_u16(const std::uint8_t* p) { return static_cast<std::uint16_t>(p[0] | p[1] << 8); }
void store_u32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
void store_u16(std::vector<std::uint8_t>& out, std::uint16_t v) {
  out.push_back(static_cast<std::uint8_t>(v));
  out.push_back(static_cast<std::uint8_t>(v >> 8));
}

}  // namespace

const char* mmav_kind_instruction(std::uint32_t kind) {
  switch (kind) {
    case kMmavKindM16n8k16Bf16: return "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32";
    case kMmavKindWgmmaSsD1:
      return "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16, A from shared memory, scale-d 1";
    case kMmavKindWgmmaRsD1: return "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16, A from registers, scale-d 1";
    case kMmavKindWgmmaSsD0:
      return "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16, A from shared memory, scale-d 0";
    case kMmavKindWgmmaRsD0: return "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16, A from registers, scale-d 0";
  }
  return "";
}

bool parse_mmav(const std::uint8_t* data, std::size_t size, MmavFile* out, std::string* error) {
  if (size < kMmavHeaderBytes) {
    *error = "truncated header: " + std::to_string(size) + " bytes, need " + std::to_string(kMmavHeaderBytes);
    return false;
  }
  if (std::memcmp(data, kMmavMagic, 8) != 0) {
    *error = "bad magic: expected MMAV0001";
    return false;
  }
  const std::uint32_t count = load_u32(data + 8);
  const std::uint32_t kind = load_u32(data + 12);
  if (mmav_kind_instruction(kind)[0] == '\0') {
    *error = "unknown kind " + std::to_string(kind) +
             " (known: 1 = mma.sync m16n8k16, 2..5 = wgmma m64n8k16 ss/rs with scale-d 1/0)";
    return false;
  }
  const std::size_t body = size - kMmavHeaderBytes;
  if (body / kMmavCaseBytes < count || body != std::size_t{count} * kMmavCaseBytes) {
    *error = "size mismatch: header says " + std::to_string(count) + " cases (" +
             std::to_string(std::size_t{count} * kMmavCaseBytes) + " bytes), file has " + std::to_string(body) +
             " bytes after the header";
    return false;
  }
  out->kind = kind;
  out->cases.resize(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::uint8_t* p = data + kMmavHeaderBytes + std::size_t{i} * kMmavCaseBytes;
    MmavCase& c = out->cases[i];
    for (std::size_t j = 0; j < c.a.size(); ++j) c.a[j] = load_u16(p + 2 * j);
    for (std::size_t j = 0; j < c.bt.size(); ++j) c.bt[j] = load_u16(p + 512 + 2 * j);
    for (std::size_t j = 0; j < c.c.size(); ++j) c.c[j] = load_u32(p + 768 + 4 * j);
    for (std::size_t j = 0; j < c.d.size(); ++j) c.d[j] = load_u32(p + 1280 + 4 * j);
  }
  return true;
}

bool read_mmav_file(const std::string& path, MmavFile* out, std::string* error) {
  std::string bytes;
  if (!read_regular_file(path, kMaxInputFileBytes, &bytes, error)) return false;
  return parse_mmav(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(), out, error);
}

std::vector<std::uint8_t> serialize_mmav(const MmavFile& file) {
  std::vector<std::uint8_t> out(kMmavMagic, kMmavMagic + 8);
  out.reserve(kMmavHeaderBytes + file.cases.size() * kMmavCaseBytes);
  store_u32(out, static_cast<std::uint32_t>(file.cases.size()));
  store_u32(out, file.kind);
  for (const MmavCase& c : file.cases) {
    for (auto v : c.a) store_u16(out, v);
    for (auto v : c.bt) store_u16(out, v);
    for (auto v : c.c) store_u32(out, v);
    for (auto v : c.d) store_u32(out, v);
  }
  return out;
}

}  // namespace w8a16::golden
