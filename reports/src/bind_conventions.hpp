// SPDX-License-Identifier: MIT OR Apache-2.0
// How a binding's `contract` / `part` arguments name one part of a contract (NUMERICS.md 2.4):
// shared by bind_contract.cpp (gemm, gemm_columns) and bind_conventions.cpp; and the pieces of the
// bridge that runs a Python callable under a C++ engine (identify's, invariance's).
#pragma once
#include <string>

#include <cstdint>
#include <vector>

#include "arrays.hpp"
#include "w8a16/golden/case.hpp"
#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/reference/conventions.hpp"

namespace w8a16::py_bind {

struct ContractPart {
  ref::Conventions conventions;
  bool gemv = false;    // the GEMV part (2.2's fields), else the tensor-core tiers' (2.1's)
  bool legacy = false;  // the canonical value: the callers keep contract.hpp's fast paths and bytes
};

// contract: "canonical", "gemv" (canonical's GEMV part: the two names of every call before
// contracts were data), a library name or the text form. part: "tc", "gemv" or None (only for
// "canonical" -> tc and "gemv" -> gemv). ValueError / TypeError naming what is wrong.
ContractPart resolve_contract_part(const std::string& contract, const py::object& part);

// One output's operands as contiguous rows: A's row [K], W's row [K], its scale row [K/128]; any
// layout in, ValueError / TypeError naming the argument for a wrong dimension or length.
struct RowOperands {
  py::array_t<std::uint16_t, py::array::c_style> a;
  py::array_t<std::uint8_t, py::array::c_style> w;
  py::array_t<float, py::array::c_style> s;
  std::uint32_t k = 0;
};
RowOperands row_operands(const py::object& a_obj, const py::object& w_obj, const py::object& s_obj);

// A case's W [N, K] and S [ceil(N/128), K/128] as new arrays, for a callable.
py::array_t<std::uint8_t> w_array(const golden::Case& c, const golden::CaseInputs& in);
py::array_t<float> s_array(const golden::Case& c, const golden::CaseInputs& in);

// A callable's output `out` (BF16 bits [M, N]) as launch_case gives C: [m + guard rows]
// [c_row_stride], the sentinel outside [M, N] (a callable returns its output alone). ValueError,
// its message starting with `who`, when `out` is not [M, N].
void callable_output_bytes(const py::object& out, const golden::Case& c, const std::string& who,
                           std::vector<std::uint16_t>* bytes);

}  // namespace w8a16::py_bind
