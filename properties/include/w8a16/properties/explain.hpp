// SPDX-License-Identifier: MIT OR Apache-2.0
// Explaining one output element of a case: the fold step by step and what differing bits resemble.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "w8a16/golden/case.hpp"
#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/properties/contract_choice.hpp"

namespace w8a16::props {

// Special operands of C[m][n] (A's row m, W's row n), as " A[m][k]=0x.... W[n][k]=0x.." or " none".
std::string specials_of_element(const golden::Case& c, const golden::CaseInputs& in, std::uint32_t m, std::uint32_t n);

// C[m][n]: expected (and produced, when given) bits; the canonical fold step by step (NUMERICS.md
// 2.1) for tensor-core entry points; both contracts' values; and whether the produced bits are the
// sentinel (never written), the other contract's value (the wrong contract ran) or another
// element's expected value (a misplaced write). Multi-line text ending in a newline.
//
// Under `contract` (NUMERICS.md 2.4) the element is explained in that contract's terms: its trace
// (the tensor-core fold points and windows, or the GEMV's lane sums, tree levels and warp sums),
// and, when the produced bits differ from the expected, which other library contract or which
// single-field variation of the held one gives the produced bits exactly, with the first fold
// point / window / lane / tree level where its trace and the held contract's part ways. Only the
// emulator's traces are shown: the device's intermediate values are not observed.
std::string explain_element(const golden::Case& c, const golden::CaseInputs& in,
                            const std::vector<std::uint16_t>& expected, const std::vector<std::uint16_t>* produced,
                            std::uint32_t m, std::uint32_t n, const ContractChoice& contract = {});

}  // namespace w8a16::props
