// SPDX-License-Identifier: MIT OR Apache-2.0
// `--contract` arguments into the contract a run holds each entry point to (NUMERICS.md 2.4).
#include "w8a16/properties/contract_choice.hpp"

#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/golden/files.hpp"

namespace w8a16::props {
namespace {

// A contract file is a few lines; anything larger is not one.
constexpr std::uint64_t kMaxContractFileBytes = 64 * 1024;

bool resolve(const std::string& spec, ref::Conventions* out, std::string* error) {
  if (const ref::Conventions* named = ref::find_conventions(spec)) {
    *out = *named;
    return true;
  }
  std::string text, why;
  if (!golden::read_regular_file(spec, kMaxContractFileBytes, &text, &why)) {
    std::string names;
    for (const ref::Conventions& c : ref::conventions_library()) names += (names.empty() ? "" : ", ") + c.name;
    *error = golden::quote(spec) + " is neither a named contract (" + names + ") nor a contract file: " + why;
    return false;
  }
  ref::Conventions parsed;
  if (!ref::parse_conventions(text, &parsed, &why)) {
    *error = "contract file " + golden::quote(spec) + ": " + why;
    return false;
  }
  *out = std::move(parsed);
  return true;
}

}  // namespace

const ref::Conventions& ContractChoice::for_entry(golden::EntryPoint e) const {
  const auto it = per_entry.find(e);
  return it == per_entry.end() ? all : it->second;
}

bool ContractChoice::is_canonical() const {
  const ref::Conventions& canon = ref::canonical_conventions();
  if (!all.same_numerics(canon)) return false;
  for (const auto& [e, c] : per_entry)
    if (!c.same_numerics(canon)) return false;
  return true;
}

std::string ContractChoice::describe() const {
  std::string s = all.name;
  for (const auto& [e, c] : per_entry) s += "; " + std::string(golden::entry_point_name(e)) + "=" + c.name;
  return s;
}

std::string ContractChoice::describe_for(golden::EntryPoint e) const {
  const ref::Conventions& c = for_entry(e);
  return c.name + " (" +
         (golden::entry_point_is_gemv(e) ? "gemv: " + ref::describe(c.gemv) : "tc: " + ref::describe(c.tc)) + ")";
}

std::string contract_report_text(const ContractChoice& choice) {
  std::string s = "contract: " + choice.describe() + "\n";
  if (choice.is_canonical() && choice.per_entry.empty()) return s;
  s += "  tensor-core entry points: " + choice.all.name + " (tc: " + ref::describe(choice.all.tc) + ")\n";
  s += "  GEMV entry points: " + choice.all.name + " (gemv: " + ref::describe(choice.all.gemv) + ")\n";
  for (const auto& [e, c] : choice.per_entry)
    s += "  " + std::string(golden::entry_point_name(e)) + ": " + choice.describe_for(e) + "\n";
  return s;
}

bool apply_contract_arg(const std::string& arg, ContractChoice* choice, std::string* error) {
  // ENTRY=SPEC when the part before '=' names an entry point; a path may hold '=' too.
  const std::size_t eq = arg.find('=');
  golden::EntryPoint entry{};
  bool for_entry = false;
  if (eq != std::string::npos) {
    std::string name = arg.substr(0, eq);
    for_entry = golden::parse_entry_point(name, &entry) || golden::parse_entry_point("w8a16_" + name, &entry);
  }
  const std::string spec = for_entry ? arg.substr(eq + 1) : arg;
  if (spec.empty()) {
    *error = "--contract " + golden::quote(arg) + ": names no contract";
    return false;
  }
  ref::Conventions c;
  if (!resolve(spec, &c, error)) {
    *error = "--contract: " + *error;
    return false;
  }
  if (for_entry) choice->per_entry[entry] = std::move(c);
  else choice->all = std::move(c), choice->per_entry.clear();
  choice->given.push_back(arg);
  return true;
}

bool parse_contract_args(const std::vector<std::string>& args, ContractChoice* choice, std::string* error) {
  ContractChoice next = *choice;
  for (const std::string& a : args)
    if (!apply_contract_arg(a, &next, error)) return false;
  *choice = std::move(next);
  return true;
}

std::string contract_case_problem(const golden::Case& c, const golden::CaseInputs& in, const ContractChoice& choice) {
  const ref::Conventions& conv = choice.for_entry(c.entry);
  const ref::GemmView v = golden::case_view(c, in);
  const std::string why = golden::entry_point_is_gemv(c.entry) ? ref::conventions_view_problem(conv.gemv, v)
                                                               : ref::conventions_view_problem(conv.tc, v);
  return why.empty() ? "" : "the contract " + conv.name + " does not define this case's outputs: " + why;
}

}  // namespace w8a16::props
