// SPDX-License-Identifier: MIT OR Apache-2.0
// The contract a run holds kernels to (NUMERICS.md 2.4): one value for every entry point, with
// overrides for single entry points, as `--contract NAME|FILE` and `--contract ENTRY=NAME|FILE`
// give it. The default is `canonical`, the contract of NUMERICS.md 2.1 and 2.2.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "w8a16/golden/case.hpp"
#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/reference/conventions.hpp"

namespace w8a16::props {

struct ContractChoice {
  ref::Conventions all = ref::canonical_conventions();
  std::map<golden::EntryPoint, ref::Conventions> per_entry;
  // The --contract arguments it was made from, as written and in order: what a repro line repeats.
  std::vector<std::string> given;

  const ref::Conventions& for_entry(golden::EntryPoint e) const;
  // True when every entry point is held to the canonical numerics (the harness's default).
  bool is_canonical() const;
  // "canonical", or "seed-tile; w8a16_gemv_batch4_strided=canonical": what a report prints.
  std::string describe() const;
  // The part of the contract an entry point's kernels are held to: "canonical (tc: nan=... )".
  std::string describe_for(golden::EntryPoint e) const;
};

// What a text report opens with, one line ending in a newline each: "contract: <describe()>", and
// under any contract but canonical the fields each part holds the kernels to: the tensor-core
// entry points', the GEMVs', and each overridden entry point's describe_for().
std::string contract_report_text(const ContractChoice& choice);

// One `--contract` argument: NAME (a library value), FILE (the text form) or ENTRY=NAME|FILE (one
// entry point, its name with or without the `w8a16_` prefix). A name is looked up before a file.
// On an error *choice is unchanged and *error names the argument and what is wrong.
bool apply_contract_arg(const std::string& arg, ContractChoice* choice, std::string* error);
// Every argument in order (later ones win for the same entry point); the same error rule.
bool parse_contract_args(const std::vector<std::string>& args, ContractChoice* choice, std::string* error);

// "" when the contract defines every output of the case's operands, else why not (NUMERICS.md
// 2.4: one fold at the end is defined only for per-channel scales). A case the contract does not
// define is never compared: it fails, saying this.
std::string contract_case_problem(const golden::Case& c, const golden::CaseInputs& in, const ContractChoice& choice);

}  // namespace w8a16::props
