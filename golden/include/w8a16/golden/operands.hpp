// SPDX-License-Identifier: MIT OR Apache-2.0
// Operand bundles (raw A, W, S bits for one entry point) and run-operands output files: the one
// reader and writer of both formats, used by `w8a16check run-operands` and, through _core, Python.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "w8a16/golden/case.hpp"

namespace w8a16::golden {

// They exist for the reduction-order probes (golden/order/README.md): crafted A rows that no case
// distribution draws, written by Python and run on the GPU machine where no Python is available.
//
// Operand bundle, version 1 (all integers little-endian u32):
//   0   magic "W8A16OPB" (8 bytes)       8   version = 1
//   12  entry, ASCII, NUL-padded to 32 bytes (e.g. "gemm_pipelined_m32"; a "w8a16_" prefix is accepted)
//   44  m (rows per launch)  48 n  52 k  56 a_row_stride  60 c_row_stride
//   64  launches: consecutive launches of this one shape; launch i reads rows [i*m, i*m + m) of A
//       and writes the same rows of C (every launch shares W and S)
//   68  a_encoding: 0 = dense, 1 = base row + patches     72 patches_per_row (0 when dense)   76 reserved = 0
//   80  A: dense: uint16 [launches*m][a_row_stride]
//          patched: uint16 base[a_row_stride], then per row patches_per_row x (u32 column, u16 bits, u16 0):
//          the row is the base row with those elements replaced (a probe row differs from the base in 2)
//       W: uint8 [n][k] (E4M3 codes)     S: float32 [ceil(n/128)][k/128]     then end of file
// The entry must be an entry point of case.hpp; m, n, k, launches >= 1; a_row_stride >= k and
// c_row_stride >= n (equal for a contiguous entry); k a multiple of 128 (one scale per 128-K block,
// docs/NUMERICS.md 2); patches_per_row 1..64 when patched; launches * m and every operand at most 2^31
// elements (so no size below can wrap); the file exactly as long as the header implies.
//
// Output, version 1:
//   0   magic "W8A16OPC"   8 version = 1   12 entry[32]   44 kernel[48] (the plan's kernel name)
//   92  body[32] (plan.hpp body_name)   124 contract (0 canonical, NUMERICS.md 2.1; 1 gemv, 2.2)
//   128 m   132 n   136 c_row_stride   140 launches   144 backend[16] ("cuda" or "sim")
//       (run-operands --columns keeps some columns of C only: n and c_row_stride are then their count)
//   160 C: uint16 [launches*m][c_row_stride] (C starts filled with 0xFFFF: an element no launch
//       wrote reads as that NaN pattern, never as a plausible value)
// Text fields are printable ASCII, NUL-padded to their width (a name may fill its whole field).
inline constexpr std::string_view kBundleMagic = "W8A16OPB";
inline constexpr std::string_view kOperandOutputMagic = "W8A16OPC";
inline constexpr std::uint32_t kOperandsVersion = 1;
inline constexpr std::size_t kBundleHeaderBytes = 80;
inline constexpr std::size_t kOperandOutputHeaderBytes = 160;
// Keeps every size the readers compute well inside size_t and a GPU's memory; the probes use far less.
inline constexpr std::uint64_t kOperandsMaxElements = std::uint64_t{1} << 31;
inline constexpr std::uint32_t kBundleMaxPatchesPerRow = 64;

// A bundle's header, checked against the rules above and the file's size.
struct BundleHeader {
  Case shape;         // entry, m, n, k and pitches; the distribution fields are unused
  std::string entry;  // as written, without a "w8a16_" prefix
  std::uint32_t launches = 0;
  std::uint32_t encoding = 0;         // 0 dense, 1 patched
  std::uint32_t patches_per_row = 0;  // 0 when dense
  std::uint64_t rows() const { return std::uint64_t{launches} * shape.m; }
  std::uint64_t a_elements() const { return rows() * shape.a_row_stride; }
  std::uint64_t w_bytes() const { return std::uint64_t{shape.n} * shape.k; }
  std::uint64_t s_elements() const { return (std::uint64_t{shape.n} + 127) / 128 * (shape.k / 128); }
};

struct OperandBundle {
  BundleHeader header;
  std::vector<std::uint16_t> a;  // [launches*m][a_row_stride], patches applied
  std::vector<std::uint8_t> w;   // [n][k]
  std::vector<float> s;          // [ceil(n/128)][k/128]
};

// The header of `bytes` and its implied size, checked; nothing is allocated, so a caller can weigh
// what expanding it would cost first. False with *error saying which field breaks which rule.
bool parse_bundle_header(std::string_view bytes, BundleHeader* out, std::string* error);
// A expanded (each patch's column inside the row, its padding 0), W and S copied; `h` is what
// parse_bundle_header(bytes) returned. False with *error naming the row and patch.
bool expand_bundle(std::string_view bytes, const BundleHeader& h, OperandBundle* out, std::string* error);
// Both of the above; *out is unchanged on failure.
bool parse_bundle(std::string_view bytes, OperandBundle* out, std::string* error);

// What a writer gives: a patched bundle (patches_per_row > 0: base and patch_cols / patch_bits of
// [launches*m][patches_per_row]) or a dense one (patches_per_row == 0: a_dense).
struct BundleSource {
  std::string entry;
  std::uint32_t m = 0, n = 0, k = 0, a_row_stride = 0, c_row_stride = 0, launches = 0;
  std::uint32_t patches_per_row = 0;
  std::vector<std::uint16_t> a_dense;
  std::vector<std::uint16_t> base;
  std::vector<std::uint32_t> patch_cols;
  std::vector<std::uint16_t> patch_bits;
  std::vector<std::uint8_t> w;
  std::vector<float> s;
};
// The bytes of `src`; false with *error when a length disagrees with the shape or the result would
// be refused by parse_bundle (the writer never writes what the reader refuses).
bool format_bundle(const BundleSource& src, std::string* bytes, std::string* error);
// format_bundle, then files.hpp write_file_atomic; errors start with the path.
bool write_bundle_file(const std::string& path, const BundleSource& src, std::uint64_t* size, std::string* error);

struct OperandOutput {
  std::string entry, kernel, body;
  std::uint32_t contract = 0;  // 0 canonical, 1 gemv
  std::uint32_t m = 0, n = 0, c_row_stride = 0, launches = 0;
  std::string backend;
  std::vector<std::uint16_t> c;  // [launches*m][c_row_stride]
};
// False with *error when a text field does not fit its width or is not printable ASCII, or c's
// length is not launches * m * c_row_stride.
bool format_operand_output(const OperandOutput& o, std::string* bytes, std::string* error);
// The strict reader: magic, version, NUL-padded printable text, contract 0 or 1, the size the header
// implies. *out is unchanged on failure.
bool parse_operand_output(std::string_view bytes, OperandOutput* out, std::string* error);
// A regular file of at most kMaxInputFileBytes (files.hpp), parsed; errors start with the path.
bool read_operand_output_file(const std::string& path, OperandOutput* out, std::string* error);
// format_operand_output, then write_file_atomic; errors start with the path.
bool write_operand_output_file(const std::string& path, const OperandOutput& o, std::string* error);

}  // namespace w8a16::golden
