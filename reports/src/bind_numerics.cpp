// SPDX-License-Identifier: MIT OR Apache-2.0
// Scalar formats and the tensor-core step: E4M3 decode, BF16 rounding, mma_k16 (NUMERICS.md 1).
#include <cstring>
#include <string>
#include <vector>

#include "arrays.hpp"
#include "w8a16/reference/bf16.hpp"
#include "w8a16/reference/e4m3fn.hpp"
#include "w8a16/reference/mma.hpp"
#include "w8a16/reference/parallel.hpp"

namespace w8a16::py_bind {

ref::Arch parse_arch_arg(const std::string& text) {
  ref::Arch arch;
  if (!ref::parse_arch(text, &arch)) throw py::value_error("arch must be 'sm90' or 'sm80', got '" + text + "'");
  return arch;
}

namespace {

py::array_t<float> decode_e4m3(const py::object& codes_obj) {
  auto codes = checked_array<std::uint8_t>(codes_obj, "codes");
  py::array_t<float> out = new_array<float>(shape_of(codes), "the result");
  const std::uint8_t* in = codes.data();
  float* o = out.mutable_data();
  for (py::ssize_t i = 0; i < codes.size(); ++i) o[i] = ref::e4m3fn_to_f32(in[i]);
  return out;
}

py::array_t<std::uint16_t> e4m3_to_bf16_bits(const py::object& codes_obj) {
  auto codes = checked_array<std::uint8_t>(codes_obj, "codes");
  py::array_t<std::uint16_t> out = new_array<std::uint16_t>(shape_of(codes), "the result");
  const std::uint8_t* in = codes.data();
  std::uint16_t* o = out.mutable_data();
  for (py::ssize_t i = 0; i < codes.size(); ++i) o[i] = ref::e4m3fn_to_bf16_bits(in[i]);
  return out;
}

py::array_t<float> bf16_to_f32(const py::object& bits_obj) {
  auto bits = checked_array<std::uint16_t>(bits_obj, "bits");
  py::array_t<float> out = new_array<float>(shape_of(bits), "the result");
  const std::uint16_t* in = bits.data();
  float* o = out.mutable_data();
  for (py::ssize_t i = 0; i < bits.size(); ++i) {
    const std::uint32_t f = ref::bf16_bits_to_f32_bits(in[i]);
    std::memcpy(o + i, &f, sizeof f);
  }
  return out;
}

py::array_t<std::uint16_t> round_bf16(const py::object& bits_obj) {
  auto bits = checked_array<std::uint32_t>(bits_obj, "bits");
  py::array_t<std::uint16_t> out = new_array<std::uint16_t>(shape_of(bits), "the result");
  const std::uint32_t* in = bits.data();
  std::uint16_t* o = out.mutable_data();
  for (py::ssize_t i = 0; i < bits.size(); ++i) o[i] = ref::f32_bits_to_bf16_rne(in[i]);
  return out;
}

// Byte offsets of element i (row-major over `lead`) in a view with these strides: broadcast (0)
// and negative strides included, so no operand is ever copied.
struct Walk {
  std::vector<py::ssize_t> lead, stride;  // the leading dims and the view's byte strides over them
  py::ssize_t offset(std::size_t i) const {
    py::ssize_t off = 0;
    for (std::size_t d = lead.size(); d-- > 0;) {
      const auto n = static_cast<std::size_t>(lead[d]);
      off += static_cast<py::ssize_t>(i % n) * stride[d];
      i /= n;
    }
    return off;
  }
};

Walk walk_of(const py::array& x, const std::vector<py::ssize_t>& lead) {
  Walk w{lead, {}};
  for (std::size_t d = 0; d < lead.size(); ++d) w.stride.push_back(x.strides(static_cast<py::ssize_t>(d)));
  return w;
}

// d[i] = mma_k16(c[i]; a[i, 0..15], b[i, 0..15]) over equal leading shapes (the Python wrapper
// broadcasts, with views whose strides are 0 along broadcast dimensions). One output element per
// index, as one lane's element of mma.sync m16n8k16. Operands of any layout are read in place;
// the element count is a std::size_t (it may pass 2^32).
py::array_t<std::uint32_t> mma(const py::object& a_obj, const py::object& b_obj, const py::object& c_obj,
                               const std::string& arch_name, const py::object& threads_obj) {
  const unsigned threads = checked_threads(threads_obj);
  const py::array a = any_layout_array<std::uint16_t>(a_obj, "a");
  const py::array b = any_layout_array<std::uint16_t>(b_obj, "b");
  const py::array c = any_layout_array<std::uint32_t>(c_obj, "c");
  const ref::Arch arch = parse_arch_arg(arch_name);
  if (a.ndim() < 1 || a.shape(a.ndim() - 1) != 16)
    throw py::value_error("a must have shape (..., 16) (BF16 bits, k = 0..15), got " + shape_str(a));
  if (b.ndim() < 1 || b.shape(b.ndim() - 1) != 16)
    throw py::value_error("b must have shape (..., 16) (BF16 bits, k = 0..15), got " + shape_str(b));
  auto lead = shape_of(a);
  lead.pop_back();
  auto b_lead = shape_of(b);
  b_lead.pop_back();
  if (b_lead != lead || shape_of(c) != lead)
    throw py::value_error("a[..., 16], b[..., 16] and c[...] must have the same leading shape, got a " + shape_str(a) +
                          ", b " + shape_str(b) + ", c " + shape_str(c));
  py::array_t<std::uint32_t> out = new_array<std::uint32_t>(lead, "the result");
  const Walk wa = walk_of(a, lead), wb = walk_of(b, lead), wc = walk_of(c, lead);
  const py::ssize_t ka = a.strides(a.ndim() - 1), kb = b.strides(b.ndim() - 1);
  const auto* pa = static_cast<const char*>(a.data());
  const auto* pb = static_cast<const char*>(b.data());
  const auto* pc = static_cast<const char*>(c.data());
  std::uint32_t* po = out.mutable_data();
  const std::size_t count = static_cast<std::size_t>(out.size());
  {
    py::gil_scoped_release unlocked;
    ref::parallel_for(count, threads, [&](std::size_t i) {
      std::uint16_t ra[16], rb[16];
      const char* xa = pa + wa.offset(i);
      const char* xb = pb + wb.offset(i);
      for (int k = 0; k < 16; ++k) {
        std::memcpy(ra + k, xa + k * ka, sizeof ra[0]);
        std::memcpy(rb + k, xb + k * kb, sizeof rb[0]);
      }
      std::uint32_t rc;
      std::memcpy(&rc, pc + wc.offset(i), sizeof rc);
      po[i] = ref::mma_k16_bits(arch, rc, ra, rb);
    });
  }
  return out;
}

py::dict mma_policy(const std::string& arch_name) {
  const ref::MmaPolicy& p = ref::mma_policy(parse_arch_arg(arch_name));
  py::dict d;
  d["name"] = std::string(p.name);
  d["blocks"] = p.blocks;
  d["extra_bits"] = p.extra_bits;
  d["verified"] = p.verified;
  d["evidence"] = std::string(p.evidence);
  return d;
}

}  // namespace

void bind_numerics(py::module_& m) {
  m.def("decode_e4m3", &decode_e4m3, py::arg("codes"),
        "E4M3fn codes (uint8) -> their exact values (float32); 0x7F/0xFF give NaN");
  m.def("e4m3_to_bf16_bits", &e4m3_to_bf16_bits, py::arg("codes"),
        "E4M3fn codes (uint8) -> BF16 bits (uint16), as the kernels feed them to the MMA");
  m.def("bf16_to_f32", &bf16_to_f32, py::arg("bits"), "BF16 bits (uint16) -> their exact values (float32)");
  m.def("round_bf16", &round_bf16, py::arg("bits"),
        "FP32 bits (uint32) -> BF16 bits (uint16), cvt.rn.bf16.f32 (RNE; NaN -> 0x7FFF)");
  m.def("mma", &mma, py::arg("a"), py::arg("b"), py::arg("c"), py::arg("arch") = "sm90", py::arg("threads") = 0,
        "d = mma_k16(c; a, b): a, b uint16 [..., 16] BF16 bits, c uint32 [...] FP32 bits -> uint32 [...]");
  m.def("mma_policy", &mma_policy, py::arg("arch") = "sm90", "The emulator's MMA policy for an architecture");
  py::array_t<std::uint16_t> table(256);
  std::memcpy(table.mutable_data(), ref::kE4m3fnToBf16Bits, sizeof ref::kE4m3fnToBf16Bits);
  table.attr("setflags")(py::arg("write") = false);
  m.attr("E4M3FN_TO_BF16_BITS") = table;
}

}  // namespace w8a16::py_bind
