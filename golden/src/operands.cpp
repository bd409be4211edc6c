// SPDX-License-Identifier: MIT OR Apache-2.0
// Operand bundles and run-operands outputs (operands.hpp): strict readers, writers that never write
// what the readers refuse.
#include "w8a16/golden/operands.hpp"

#include <cstring>

#include "w8a16/golden/files.hpp"

namespace w8a16::golden {
namespace {

std::uint32_t get_u32(std::string_view b, std::size_t at) {
  auto u = [&](std::size_t i) { return std::uint32_t{static_cast<unsigned char>(b[at + i])}; };
  return u(0) | u(1) << 8 | u(2) << 16 | u(3) << 24;
}
void put_u32(std::string* b, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) (*b)[at + i] = static_cast<char>(v >> (8 * i));
}
bool printable(char ch) { return ch >= 0x21 && ch <= 0x7E; }

// A NUL-padded text field; false with *why when a byte is not printable or the padding is not NUL.
bool get_text(std::string_view b, std::size_t at, std::size_t width, const char* name, std::string* out,
              std::string* why) {
  std::string s;
  for (std::size_t i = at; i < at + width && b[i] != 0; ++i) {
    if (!printable(b[i])) {
      *why = std::string(name) + " name holds a byte that is not printable ASCII";
      return false;
    }
    s.push_back(b[i]);
  }
  for (std::size_t i = at + s.size(); i < at + width; ++i)
    if (b[i] != 0) {
      *why = std::string(name) + " name is not NUL-padded";
      return false;
    }
  *out = s;
  return true;
}
bool put_text(std::string* b, std::size_t at, std::size_t width, const std::string& s, const char* name,
              std::string* why) {
  // A name may fill its field ("w8a16_gemm_pipelined_m64_strided" is 32 bytes): the reader stops at
  // the first NUL or the field's end.
  if (s.size() > width) {
    *why = std::string(name) + " " + quote(s) + " is longer than its " + std::to_string(width) + "-byte field";
    return false;
  }
  for (char ch : s)
    if (!printable(ch)) {
      *why = std::string(name) + " " + quote(s) + " holds a byte that is not printable ASCII";
      return false;
    }
  std::memcpy(b->data() + at, s.data(), s.size());
  return true;
}

}  // namespace

bool parse_bundle_header(std::string_view b, BundleHeader* out, std::string* error) {
  auto fail = [&](const std::string& why) {
    *error = why;
    return false;
  };
  if (b.size() < kBundleHeaderBytes)
    return fail("shorter than the 80-byte header (" + std::to_string(b.size()) + " bytes)");
  if (b.substr(0, 8) != kBundleMagic) return fail("not an operand bundle (magic is not W8A16OPB)");
  if (get_u32(b, 8) != kOperandsVersion)
    return fail("version " + std::to_string(get_u32(b, 8)) + ": only version 1 is read");
  BundleHeader h;
  std::string entry, why;
  if (!get_text(b, 12, 32, "entry", &entry, &why)) return fail(why);
  if (entry.rfind("w8a16_", 0) == 0) entry = entry.substr(6);
  EntryPoint e;
  if (!parse_entry_point("w8a16_" + entry, &e)) return fail("unknown entry point " + quote(entry));
  h.shape = CaseSpec{}
                .entry(e)
                .shape(get_u32(b, 44), get_u32(b, 48), get_u32(b, 52))
                .strides(get_u32(b, 56), get_u32(b, 60));
  const Case& c = h.shape;
  h.launches = get_u32(b, 64);
  h.encoding = get_u32(b, 68);
  h.patches_per_row = get_u32(b, 72);
  if (get_u32(b, 76) != 0) return fail("reserved header field at byte 76 must be 0");
  if (c.m == 0 || c.n == 0 || c.k == 0) return fail("m, n and k must be at least 1");
  if (c.a_row_stride < c.k) return fail("a_row_stride < k");
  if (c.c_row_stride < c.n) return fail("c_row_stride < n");
  if (h.launches == 0) return fail("launches must be at least 1");
  if (entry_point_is_contiguous(c.entry) && (c.a_row_stride != c.k || c.c_row_stride != c.n))
    return fail(entry + " is contiguous: a_row_stride must be k and c_row_stride must be n");
  if (h.encoding > 1) return fail("a_encoding " + std::to_string(h.encoding) + ": must be 0 (dense) or 1 (patched)");
  if (h.encoding == 0 && h.patches_per_row != 0) return fail("patches_per_row must be 0 for dense A");
  if (h.encoding == 1 && (h.patches_per_row == 0 || h.patches_per_row > kBundleMaxPatchesPerRow))
    return fail("patches_per_row must be 1..64 for patched A");
  const std::uint64_t rows = h.rows();
  if (rows > kOperandsMaxElements) return fail("launches * m larger than 2^31 rows");  // before any product can wrap
  if (h.a_elements() > kOperandsMaxElements || h.w_bytes() > kOperandsMaxElements ||
      rows * c.c_row_stride > kOperandsMaxElements)
    return fail("operands larger than 2^31 elements");
  if (c.k % 128 != 0)
    return fail("k=" + std::to_string(c.k) + ": must be a multiple of 128 (one scale per 128-K block)");
  const std::uint64_t a_bytes = h.encoding == 0 ? 2 * h.a_elements()
                                                : 2 * std::uint64_t{c.a_row_stride} + 8 * rows * h.patches_per_row;
  const std::uint64_t want = kBundleHeaderBytes + a_bytes + h.w_bytes() + 4 * h.s_elements();
  if (b.size() != want)
    return fail("size " + std::to_string(b.size()) + " bytes, the header implies " + std::to_string(want) +
                " (truncated, or trailing bytes)");
  h.entry = entry;
  *out = h;
  return true;
}

bool expand_bundle(std::string_view b, const BundleHeader& h, OperandBundle* out, std::string* error) {
  const Case& c = h.shape;
  OperandBundle r;
  r.header = h;
  std::size_t at = kBundleHeaderBytes;
  r.a.assign(h.a_elements(), 0);
  if (h.encoding == 0) {
    std::memcpy(r.a.data(), b.data() + at, 2 * r.a.size());  // little-endian host (x86-64 and aarch64)
    at += 2 * r.a.size();
  } else {
    std::vector<std::uint16_t> base(c.a_row_stride);
    std::memcpy(base.data(), b.data() + at, 2 * base.size());
    at += 2 * base.size();
    for (std::uint64_t row = 0; row < h.rows(); ++row) {
      std::uint16_t* dst = r.a.data() + row * c.a_row_stride;
      std::memcpy(dst, base.data(), 2 * base.size());
      for (std::uint32_t p = 0; p < h.patches_per_row; ++p, at += 8) {
        const std::uint32_t col = get_u32(b, at);
        if (col >= c.a_row_stride || b[at + 6] != 0 || b[at + 7] != 0) {
          *error = "row " + std::to_string(row) + " patch " + std::to_string(p) + ": column " + std::to_string(col) +
                   " is outside the row, or its padding is not 0";
          return false;
        }
        dst[col] = static_cast<std::uint16_t>(static_cast<unsigned char>(b[at + 4]) |
                                              static_cast<unsigned char>(b[at + 5]) << 8);
      }
    }
  }
  r.w.assign(b.begin() + at, b.begin() + at + h.w_bytes());
  at += h.w_bytes();
  r.s.assign(h.s_elements(), 0.0f);
  std::memcpy(r.s.data(), b.data() + at, 4 * r.s.size());
  *out = std::move(r);
  return true;
}

bool parse_bundle(std::string_view bytes, OperandBundle* out, std::string* error) {
  BundleHeader h;
  return parse_bundle_header(bytes, &h, error) && expand_bundle(bytes, h, out, error);
}

bool format_bundle(const BundleSource& src, std::string* bytes, std::string* error) {
  auto fail = [&](const std::string& why) {
    *error = why;
    return false;
  };
  // The lengths are checked in 64 bits before anything is sized from them; the header rules are the
  // reader's, applied to the finished bytes below.
  const std::uint64_t rows = std::uint64_t{src.launches} * src.m;
  const std::uint64_t s_want = (std::uint64_t{src.n} + 127) / 128 * (src.k / 128);
  if (rows > kOperandsMaxElements || std::uint64_t{src.n} * src.k > kOperandsMaxElements)
    return fail("operands larger than 2^31 elements");
  if (src.patches_per_row == 0) {
    if (src.a_dense.size() != rows * src.a_row_stride)
      return fail("dense A holds " + std::to_string(src.a_dense.size()) + " elements, the shape needs " +
                  std::to_string(rows * src.a_row_stride));
  } else {
    if (src.base.size() != src.a_row_stride)
      return fail("the base row holds " + std::to_string(src.base.size()) + " elements, a_row_stride is " +
                  std::to_string(src.a_row_stride));
    if (src.patch_cols.size() != rows * src.patches_per_row || src.patch_bits.size() != src.patch_cols.size())
      return fail("patches: " + std::to_string(src.patch_cols.size()) + " columns and " +
                  std::to_string(src.patch_bits.size()) + " values, launches * m * patches_per_row is " +
                  std::to_string(rows * src.patches_per_row));
  }
  if (src.w.size() != std::uint64_t{src.n} * src.k)
    return fail("W holds " + std::to_string(src.w.size()) + " bytes, n * k is " +
                std::to_string(std::uint64_t{src.n} * src.k));
  if (src.s.size() != s_want)
    return fail("S holds " + std::to_string(src.s.size()) + " scales, ceil(n/128) * (k/128) is " +
                std::to_string(s_want));
  std::string b(kBundleHeaderBytes, '\0');
  std::memcpy(b.data(), kBundleMagic.data(), 8);
  put_u32(&b, 8, kOperandsVersion);
  std::string why;
  if (!put_text(&b, 12, 32, src.entry, "entry", &why)) return fail(why);
  const std::uint32_t fields[] = {src.m,
                                  src.n,
                                  src.k,
                                  src.a_row_stride,
                                  src.c_row_stride,
                                  src.launches,
                                  src.patches_per_row == 0 ? 0u : 1u,
                                  src.patches_per_row,
                                  0u};
  for (std::size_t i = 0; i < 9; ++i) put_u32(&b, 44 + 4 * i, fields[i]);
  auto append = [&](const void* p, std::size_t n) { b.append(static_cast<const char*>(p), n); };
  if (src.patches_per_row == 0) {
    append(src.a_dense.data(), 2 * src.a_dense.size());
  } else {
    append(src.base.data(), 2 * src.base.size());
    for (std::size_t i = 0; i < src.patch_cols.size(); ++i) {
      char patch[8] = {};
      for (int j = 0; j < 4; ++j) patch[j] = static_cast<char>(src.patch_cols[i] >> (8 * j));
      patch[4] = static_cast<char>(src.patch_bits[i] & 0xFF);
      patch[5] = static_cast<char>(src.patch_bits[i] >> 8);
      append(patch, 8);
    }
  }
  append(src.w.data(), src.w.size());
  append(src.s.data(), 4 * src.s.size());
  OperandBundle check;
  if (!parse_bundle(b, &check, &why)) return fail("the bundle would be refused: " + why);
  *bytes = std::move(b);
  return true;
}

bool write_bundle_file(const std::string& path, const BundleSource& src, std::uint64_t* size, std::string* error) {
  std::string bytes, why;
  if (!format_bundle(src, &bytes, &why) || !write_file_atomic(path, bytes, &why)) {
    *error = shown(path) + ": " + why;
    return false;
  }
  if (size) *size = bytes.size();
  return true;
}

bool format_operand_output(const OperandOutput& o, std::string* bytes, std::string* error) {
  const std::uint64_t elems = std::uint64_t{o.launches} * o.m * o.c_row_stride;
  if (o.c.size() != elems) {
    *error = "C holds " + std::to_string(o.c.size()) + " elements, launches * m * c_row_stride is " +
             std::to_string(elems);
    return false;
  }
  if (o.contract > 1) {
    *error = "contract " + std::to_string(o.contract) + ": must be 0 (canonical) or 1 (gemv)";
    return false;
  }
  if (o.m == 0 || o.n == 0 || o.launches == 0 || o.c_row_stride < o.n) {
    *error = "m, n and launches must be at least 1, and c_row_stride at least n";
    return false;
  }
  std::string b(kOperandOutputHeaderBytes, '\0');
  std::memcpy(b.data(), kOperandOutputMagic.data(), 8);
  put_u32(&b, 8, kOperandsVersion);
  if (!put_text(&b, 12, 32, o.entry, "entry", error) || !put_text(&b, 44, 48, o.kernel, "kernel", error) ||
      !put_text(&b, 92, 32, o.body, "body", error) || !put_text(&b, 144, 16, o.backend, "backend", error))
    return false;
  put_u32(&b, 124, o.contract);
  put_u32(&b, 128, o.m);
  put_u32(&b, 132, o.n);
  put_u32(&b, 136, o.c_row_stride);
  put_u32(&b, 140, o.launches);
  b.append(reinterpret_cast<const char*>(o.c.data()), 2 * o.c.size());
  *bytes = std::move(b);
  return true;
}

bool parse_operand_output(std::string_view b, OperandOutput* out, std::string* error) {
  auto fail = [&](const std::string& why) {
    *error = why;
    return false;
  };
  if (b.size() < kOperandOutputHeaderBytes)
    return fail("shorter than the 160-byte header (" + std::to_string(b.size()) + " bytes)");
  if (b.substr(0, 8) != kOperandOutputMagic) return fail("not a run-operands output (magic is not W8A16OPC)");
  if (get_u32(b, 8) != kOperandsVersion)
    return fail("version " + std::to_string(get_u32(b, 8)) + ": only version 1 is read");
  OperandOutput o;
  std::string why;
  if (!get_text(b, 12, 32, "entry", &o.entry, &why) || !get_text(b, 44, 48, "kernel", &o.kernel, &why) ||
      !get_text(b, 92, 32, "body", &o.body, &why) || !get_text(b, 144, 16, "backend", &o.backend, &why))
    return fail(why);
  o.contract = get_u32(b, 124);
  o.m = get_u32(b, 128);
  o.n = get_u32(b, 132);
  o.c_row_stride = get_u32(b, 136);
  o.launches = get_u32(b, 140);
  if (o.contract > 1) return fail("contract " + std::to_string(o.contract) + ": must be 0 (canonical) or 1 (gemv)");
  // run-operands writes only what it ran: at least one launch of at least one row and column.
  if (o.m == 0 || o.n == 0 || o.launches == 0) return fail("m, n and launches must be at least 1");
  if (o.c_row_stride < o.n) return fail("c_row_stride < n");
  // Each factor is below 2^32, so the product of two fits; the third is checked against the size.
  const std::uint64_t rows = std::uint64_t{o.launches} * o.m;
  if (rows > kOperandsMaxElements || rows * o.c_row_stride > kOperandsMaxElements)
    return fail("C larger than 2^31 elements");
  const std::uint64_t want = kOperandOutputHeaderBytes + 2 * rows * o.c_row_stride;
  if (b.size() != want)
    return fail("size " + std::to_string(b.size()) + " bytes, the header implies " + std::to_string(want) +
                " (truncated, or trailing bytes)");
  o.c.assign(rows * o.c_row_stride, 0);
  std::memcpy(o.c.data(), b.data() + kOperandOutputHeaderBytes, 2 * o.c.size());
  *out = std::move(o);
  return true;
}

bool read_operand_output_file(const std::string& path, OperandOutput* out, std::string* error) {
  std::string bytes, why;
  if (!read_regular_file(path, kMaxInputFileBytes, &bytes, &why) || !parse_operand_output(bytes, out, &why)) {
    *error = shown(path) + ": " + why;
    return false;
  }
  return true;
}

bool write_operand_output_file(const std::string& path, const OperandOutput& o, std::string* error) {
  std::string bytes, why;
  if (!format_operand_output(o, &bytes, &why) || !write_file_atomic(path, bytes, &why)) {
    *error = shown(path) + ": " + why;
    return false;
  }
  return true;
}

}  // namespace w8a16::golden
