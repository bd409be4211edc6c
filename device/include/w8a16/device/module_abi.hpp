// SPDX-License-Identifier: MIT OR Apache-2.0
// Which kernel symbols a module must hold to verify given entry points, and what it lacks
// (docs/KERNEL_ABI.md 1.2). Pure: works on any registry, so it is tested without a GPU.
#pragma once
#include <string>
#include <vector>

#include "w8a16/device/kernels.hpp"
#include "w8a16/device/plan.hpp"

namespace w8a16::device {

// The kernels an entry point cannot do without: its own kernel, and for gemm_pipelined_by_m all
// three tiles (a caller of by_m passes all three handles).
std::vector<KernelId> required_kernels(Entry e);
// The kernels an entry point tries first and may do without (the row-tile kernel of the twins).
std::vector<KernelId> optional_kernels(Entry e);

struct ModuleCoverage {
  struct Missing {
    KernelId kernel;
    std::vector<Entry> needed_by;  // the entry points that need it (required) or try it (optional)
  };
  std::vector<Missing> required;  // absent and required: the module cannot be verified
  std::vector<Missing> optional;  // absent, and legitimately so: the twins run their own bodies
  bool ok() const { return required.empty(); }
};
ModuleCoverage module_coverage(const KernelRegistry& registry, const std::vector<Entry>& entries);

// One line per problem: "the module lacks w8a16_gemm_pipelined_m32, required by gemm_pipelined_m32,
// gemm_pipelined_m32_strided (docs/KERNEL_ABI.md 1.2)"; empty when nothing required is missing.
std::string missing_required_text(const ModuleCoverage& c);
// "w8a16_tc_rows (tried first by ...): absent; the twins run their own bodies in its place" lines.
std::string missing_optional_text(const ModuleCoverage& c);
// Every "w8a16_*" name in `functions` that is not a name of the family (a misspelt kernel, say).
// The calibration probes are no exception: they live in their own module (device/probes/), so a
// product module that holds one is reported like any other stray symbol.
std::vector<std::string> foreign_family_names(const std::vector<std::string>& functions);

}  // namespace w8a16::device
