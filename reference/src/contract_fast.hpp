// SPDX-License-Identifier: MIT OR Apache-2.0
// Private to reference/: the SIMD whole-output paths behind gemm_canonical and gemm_gemv
// (contract_parallel.cpp). They produce the model's bytes (contract.cpp) for every input.
#pragma once
#include <cstddef>
#include <cstdint>

#include "w8a16/reference/contract.hpp"

namespace w8a16::ref::fast {

// The canonical fold (NUMERICS.md 2.1) under the sm90 policy. Returns false, writing nothing, for
// a policy it does not implement or a view gemm_view_problem rejects (the caller then runs the model).
bool gemm_canonical_sm90(const GemmView& v, Arch arch, std::uint16_t* c, std::size_t c_row_stride, unsigned threads);

// The GEMV order (NUMERICS.md 2.2, gemv.hpp). Returns false, writing nothing, for a view
// gemm_view_problem rejects.
bool gemm_gemv(const GemmView& v, std::uint16_t* c, std::size_t c_row_stride, unsigned threads);

}  // namespace w8a16::ref::fast
